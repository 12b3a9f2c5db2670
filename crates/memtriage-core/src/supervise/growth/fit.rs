//! A straight line through the last half minute of the tree's memory (the fit is
//! `diagnose::trend`'s), and whether it shows steady growth. The window is a fixed
//! ring of points thinned to a minimum spacing, so one tick costs the same at any
//! interval and any run length.

use std::collections::VecDeque;

use crate::diagnose::trend::{least_squares, Line, Point};

/// How far back the fit looks.
pub const WINDOW_SECONDS: f64 = 30.0;
/// Points the window holds at most.
pub const CAPACITY: usize = 64;
/// Points closer together than this replace the newest instead of adding one, so the
/// ring spans the whole window at a fast interval.
const MIN_SPACING: f64 = WINDOW_SECONDS / CAPACITY as f64;
/// Fewer points, or a shorter span, says nothing about a trend.
pub const MIN_POINTS: usize = 6;
pub const MIN_SPAN_SECONDS: f64 = 3.0;
/// A line must explain this share of the variance to count as steady growth: a
/// single spike, a step, or noise around a level explain far less.
pub const MIN_R_SQUARED: f64 = 0.8;
/// Each half of the window must grow at no less than this share of the whole
/// window's slope: growth that stopped (a plateau) or only started (a step) is not
/// sustained.
const MIN_HALF_SHARE: f64 = 0.25;

/// What the window shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trend {
    /// Sustained, steady growth: enough points over enough time, a line that fits
    /// them, and both halves of the window growing.
    Steady(Line),
    /// Growing, less cleanly (noisy, or slowing), but the newer half still grows.
    Rising(Line),
    /// Flat, falling, or too little to tell.
    Other,
}

#[derive(Debug, Clone, Default)]
pub struct Window {
    points: VecDeque<Point>,
}

impl Window {
    pub fn new() -> Self {
        Window {
            points: VecDeque::with_capacity(CAPACITY),
        }
    }

    pub fn push(&mut self, point: Point) {
        let n = self.points.len();
        if n >= 2 && point.t - self.points[n - 2].t < MIN_SPACING {
            self.points[n - 1] = point;
        } else {
            if n == CAPACITY {
                self.points.pop_front();
            }
            self.points.push_back(point);
        }
        while self
            .points
            .front()
            .is_some_and(|p| p.t < point.t - WINDOW_SECONDS)
        {
            self.points.pop_front();
        }
    }

    pub fn points(&self) -> impl Iterator<Item = Point> + Clone + '_ {
        self.points.iter().copied()
    }

    pub fn trend(&self) -> Trend {
        let n = self.points.len();
        if n < MIN_POINTS {
            return Trend::Other;
        }
        let Some(line) = least_squares(self.points()) else {
            return Trend::Other;
        };
        let half = n / 2;
        let older = least_squares(self.points().take(half)).map(|l| l.slope);
        let newer = least_squares(self.points().skip(half)).map(|l| l.slope);
        let (Some(older), Some(newer)) = (older, newer) else {
            return Trend::Other;
        };
        if line.slope <= 0.0 || newer <= 0.0 {
            return Trend::Other;
        }
        let floor = MIN_HALF_SHARE * line.slope;
        let steady = line.last.t - line.first.t >= MIN_SPAN_SECONDS
            && line.r_squared >= MIN_R_SQUARED
            && older >= floor
            && newer >= floor;
        if steady {
            Trend::Steady(line)
        } else {
            Trend::Rising(line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1048576.0;

    /// A window fed every `dt` seconds for `seconds` with `bytes(t)`.
    fn window(seconds: f64, dt: f64, bytes: impl Fn(f64) -> f64) -> Window {
        let mut w = Window::new();
        let mut t = 0.0;
        while t <= seconds + 1e-9 {
            w.push(Point { t, bytes: bytes(t) });
            t += dt;
        }
        w
    }

    /// Deterministic noise in [-1, 1].
    fn noise(t: f64) -> f64 {
        ((t * 12.9898).sin() * 43758.5453).fract() * 2.0 - 1.0
    }

    fn steady(trend: Trend) -> Line {
        match trend {
            Trend::Steady(line) => line,
            other => panic!("not steady: {other:?}"),
        }
    }

    #[test]
    fn steady_growth_is_steady_with_its_slope() {
        let line = steady(window(20.0, 0.5, |t| 100.0 * MIB + 40.0 * MIB * t).trend());
        assert!((line.slope / MIB - 40.0).abs() < 1e-6, "{line:?}");
        assert!(line.r_squared > 0.999);
        assert!((line.value_at_last / MIB - 900.0).abs() < 1e-6);
    }

    #[test]
    fn steady_growth_under_noise_is_steady_and_its_slope_close() {
        // 10 MiB/s under ±20 MiB of noise: the line sees through it.
        let line = steady(
            window(30.0, 0.5, |t| {
                500.0 * MIB + 10.0 * MIB * t + 20.0 * MIB * noise(t)
            })
            .trend(),
        );
        assert!((line.slope / MIB - 10.0).abs() < 1.5, "{line:?}");
    }

    #[test]
    fn noise_around_a_level_is_not_growth() {
        let w = window(30.0, 0.5, |t| 500.0 * MIB + 20.0 * MIB * noise(t));
        assert!(!matches!(w.trend(), Trend::Steady(_)), "{:?}", w.trend());
    }

    #[test]
    fn a_single_spike_is_never_growth() {
        for spike_at in [2.0, 10.0, 19.5, 20.0] {
            let w = window(20.0, 0.5, |t| {
                if (t - spike_at).abs() < 1e-9 {
                    2000.0 * MIB
                } else {
                    300.0 * MIB
                }
            });
            assert!(
                !matches!(w.trend(), Trend::Steady(_)),
                "spike at {spike_at}: {:?}",
                w.trend()
            );
        }
        // Nor early, when the window has only the few points it needs.
        let w = window(
            3.0,
            0.5,
            |t| if t >= 3.0 { 900.0 * MIB } else { 300.0 * MIB },
        );
        assert!(!matches!(w.trend(), Trend::Steady(_)), "{:?}", w.trend());
    }

    #[test]
    fn a_plateau_after_growth_or_a_step_is_not_sustained() {
        // Grew for 10 s, then flat for 15 s: the newer half does not grow.
        let w = window(25.0, 0.5, |t| 100.0 * MIB + 40.0 * MIB * t.min(10.0));
        assert!(!matches!(w.trend(), Trend::Steady(_)), "{:?}", w.trend());
        // One allocation (a model loaded) between two levels.
        let w = window(
            20.0,
            0.5,
            |t| if t < 14.0 { 100.0 * MIB } else { 900.0 * MIB },
        );
        assert!(!matches!(w.trend(), Trend::Steady(_)), "{:?}", w.trend());
    }

    #[test]
    fn a_drop_is_not_growth() {
        let w = window(20.0, 0.5, |t| 900.0 * MIB - 30.0 * MIB * t);
        assert_eq!(w.trend(), Trend::Other);
        // Grew, then freed most of it.
        let w = window(20.0, 0.5, |t| {
            if t < 15.0 {
                100.0 * MIB + 40.0 * MIB * t
            } else {
                100.0 * MIB
            }
        });
        assert!(!matches!(w.trend(), Trend::Steady(_)), "{:?}", w.trend());
    }

    #[test]
    fn too_short_a_window_says_nothing() {
        let w = window(2.0, 0.5, |t| 100.0 * MIB + 40.0 * MIB * t);
        assert!(!matches!(w.trend(), Trend::Steady(_)));
        let mut w = Window::new();
        for _ in 0..10 {
            w.push(Point { t: 1.0, bytes: MIB });
        }
        assert_eq!(w.trend(), Trend::Other);
    }

    #[test]
    fn the_window_is_a_bounded_ring_over_the_last_half_minute_at_any_interval() {
        let w = window(600.0, 0.01, |t| t * MIB);
        let points: Vec<Point> = w.points().collect();
        assert!(points.len() <= CAPACITY);
        let span = points[points.len() - 1].t - points[0].t;
        assert!(
            span <= WINDOW_SECONDS && span > WINDOW_SECONDS * 0.8,
            "{span}"
        );
        assert!(
            (points[points.len() - 1].t - 600.0).abs() < 1e-6,
            "the newest is the latest"
        );
        let w = window(600.0, 5.0, |t| t * MIB);
        assert!(w.points().count() <= 7);
    }
}
