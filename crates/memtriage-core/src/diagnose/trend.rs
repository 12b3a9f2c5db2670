//! The trend of a memory series: a least-squares line through its points (two passes,
//! exact at any byte count), a running fit for a growth longer than any window, and
//! the growth that ends a series. One fit for `run`'s growth watch, `top`'s growth
//! column and `why`'s growth before a death.

/// One reading of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Seconds (since the job started, or since the series' first point).
    pub t: f64,
    pub bytes: f64,
}

/// A least-squares line through some points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Bytes per second.
    pub slope: f64,
    /// The line's value at the last point's time (less noisy than the point itself).
    pub value_at_last: f64,
    pub r_squared: f64,
    pub first: Point,
    pub last: Point,
}

/// Ordinary least squares (two passes over the points: exact at any byte count).
/// `None` for fewer than three points or a single instant.
pub fn least_squares(points: impl Iterator<Item = Point> + Clone) -> Option<Line> {
    let (mut n, mut st, mut sy) = (0usize, 0.0, 0.0);
    let (mut first, mut last) = (None, None);
    for p in points.clone() {
        n += 1;
        st += p.t;
        sy += p.bytes;
        first.get_or_insert(p);
        last = Some(p);
    }
    let (first, last) = (first?, last?);
    if n < 3 {
        return None;
    }
    let (mt, my) = (st / n as f64, sy / n as f64);
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for p in points {
        let (dt, dy) = (p.t - mt, p.bytes - my);
        sxx += dt * dt;
        sxy += dt * dy;
        syy += dy * dy;
    }
    if sxx <= f64::EPSILON {
        return None;
    }
    let slope = sxy / sxx;
    Some(Line {
        slope,
        value_at_last: my + slope * (last.t - mt),
        r_squared: r_squared(sxy, sxx, syy),
        first,
        last,
    })
}

fn r_squared(sxy: f64, sxx: f64, syy: f64) -> f64 {
    if syy <= 0.0 {
        // Every point on one level: a flat line fits perfectly, and it is no growth.
        return 1.0;
    }
    (sxy * sxy / (sxx * syy)).clamp(0.0, 1.0)
}

/// Running sums of a least-squares fit over any number of points, for a growth
/// that lasts longer than a window. Values are kept relative to the first point so
/// large byte counts do not cancel out.
#[derive(Debug, Clone, Copy)]
pub struct RunningFit {
    origin: Point,
    last: Point,
    n: f64,
    st: f64,
    sy: f64,
    stt: f64,
    sty: f64,
    syy: f64,
}

impl RunningFit {
    pub fn new(origin: Point) -> Self {
        let mut fit = RunningFit {
            origin,
            last: origin,
            n: 0.0,
            st: 0.0,
            sy: 0.0,
            stt: 0.0,
            sty: 0.0,
            syy: 0.0,
        };
        fit.add(origin);
        fit
    }

    pub fn add(&mut self, p: Point) {
        let (t, y) = (p.t - self.origin.t, p.bytes - self.origin.bytes);
        self.n += 1.0;
        self.st += t;
        self.sy += y;
        self.stt += t * t;
        self.sty += t * y;
        self.syy += y * y;
        self.last = p;
    }

    pub fn first(&self) -> Point {
        self.origin
    }

    pub fn last(&self) -> Point {
        self.last
    }

    /// Slope and r² once two distinct times are in.
    pub fn line(&self) -> Option<(f64, f64)> {
        let sxx = self.stt - self.st * self.st / self.n;
        let sxy = self.sty - self.st * self.sy / self.n;
        let syy = self.syy - self.sy * self.sy / self.n;
        if sxx <= f64::EPSILON {
            return None;
        }
        let slope = sxy / sxx;
        Some((slope, r_squared(sxy, sxx, syy)))
    }
}

/// A value this close to the growth's base is still the base: noise, not growth.
const BASE_NOISE_SHARE: f64 = 0.05;
const BASE_NOISE_MIN: f64 = (2 << 20) as f64;

/// The growth that ends a series: from `start` (the last point of its base) to the
/// series' last point, and the line through them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrowthToEnd {
    /// Index of the growth's first point in the series.
    pub start: usize,
    pub line: Line,
}

/// Back from the last point while the series rises, then forward past points still
/// at its base; a least-squares line from the base's last point to the end. `None`
/// where the series did not grow (or has fewer than three points).
pub fn growth_to_end(series: &[Point]) -> Option<GrowthToEnd> {
    let n = series.len();
    if n < 3 {
        return None;
    }
    let value = |i: usize| series[i].bytes;
    let mut start = n - 1;
    while start > 0 && value(start - 1) <= value(start) * (1.0 + BASE_NOISE_SHARE / 5.0) {
        start -= 1;
    }
    let grown = value(n - 1) - value(start);
    let noise = (grown * BASE_NOISE_SHARE).max(BASE_NOISE_MIN);
    // Against the base, not the point before: a slow leak's steps are each small.
    let base = value(start);
    while start + 1 < n && value(start + 1) - base <= noise {
        start += 1;
    }
    if n - start < 3 || value(n - 1) - value(start) <= noise {
        return None;
    }
    let line = least_squares(series[start..].iter().copied())?;
    Some(GrowthToEnd { start, line })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1048576.0;

    /// Deterministic noise in [-1, 1].
    fn noise(t: f64) -> f64 {
        ((t * 12.9898).sin() * 43758.5453).fract() * 2.0 - 1.0
    }

    #[test]
    fn the_running_fit_matches_least_squares() {
        let pts: Vec<Point> = (0..200)
            .map(|i| {
                let t = i as f64 * 0.5;
                Point {
                    t,
                    bytes: 64e9 + 3.0 * MIB * t + MIB * noise(t),
                }
            })
            .collect();
        let mut run = RunningFit::new(pts[0]);
        for p in &pts[1..] {
            run.add(*p);
        }
        let (slope, r2) = run.line().unwrap();
        let exact = least_squares(pts.iter().copied()).unwrap();
        assert!(
            (slope - exact.slope).abs() / exact.slope < 1e-6,
            "{slope} {exact:?}"
        );
        assert!((r2 - exact.r_squared).abs() < 1e-6);
    }

    /// A point every 10 s, in MiB.
    fn series(values: &[u64]) -> Vec<Point> {
        values
            .iter()
            .enumerate()
            .map(|(i, &mib)| Point {
                t: i as f64 * 10.0,
                bytes: (mib << 20) as f64,
            })
            .collect()
    }

    #[test]
    fn the_growth_starts_at_the_last_point_of_its_base_and_its_slope_is_the_line() {
        // Flat at 100 MiB (with noise), then 50 MiB per 10 s interval.
        let s = series(&[100, 101, 100, 100, 150, 200, 250, 300, 350]);
        let g = growth_to_end(&s).unwrap();
        assert_eq!(g.start, 3, "{g:?}");
        let per_second = 5.0 * MIB;
        assert!(
            (g.line.slope - per_second).abs() < per_second * 0.05,
            "{g:?}"
        );
        assert!(g.line.r_squared > 0.98);
    }

    #[test]
    fn a_slow_leak_in_small_steps_is_growth_from_its_base() {
        // 100 MiB flat, then 1 MiB per interval for 60 intervals.
        let mut values = vec![100u64; 5];
        values.extend((1..=60).map(|i| 100 + i));
        let g = growth_to_end(&series(&values)).unwrap();
        assert!(g.start <= 7, "{g:?}");
        let per_second = MIB / 10.0;
        assert!(
            (g.line.slope - per_second).abs() < per_second * 0.1,
            "{g:?}"
        );
    }

    #[test]
    fn a_flat_or_falling_series_and_too_few_points_have_no_growth() {
        assert_eq!(growth_to_end(&series(&[100, 100, 101, 100])), None);
        assert_eq!(growth_to_end(&series(&[300, 250, 200])), None);
        assert_eq!(growth_to_end(&series(&[100, 200])), None);
    }

    #[test]
    fn a_series_that_grew_from_its_first_point_starts_there() {
        let g = growth_to_end(&series(&[10, 20, 30, 40])).unwrap();
        assert_eq!(g.start, 0);
    }
}
