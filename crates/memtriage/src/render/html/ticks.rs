//! Axis ticks a reader takes in at a glance: steps of 1, 2 or 5 times a power of ten
//! ("0, 10k/s, 20k/s, 30k/s"; "0 s, 0.5 s, 1.0 s"), never the data's own odd maximum
//! ("31272/s") or a fifth of the run ("0.7 s").

/// One labelled position on an axis, in the axis's own units (bytes, seconds, per second).
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

/// A value axis from 0 to `top`, and its ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    pub top: f64,
    pub ticks: Vec<Tick>,
}

/// Value axes aim for about this many intervals; the time axis, being wider, more.
const VALUE_INTERVALS: f64 = 6.0;
const TIME_INTERVALS: f64 = 8.0;

/// The smallest 1-2-5 step that cuts `span` into at most `intervals` pieces.
fn step_for(span: f64, intervals: f64) -> f64 {
    let raw = span / intervals;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        // A hair of slack: 0.3 / 3 must give 0.1, not 0.2, despite floating point.
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// Decimal places that print every multiple of `step` exactly (0.5 → 1, 0.05 → 2).
fn decimals(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()).max(0.0) as usize
    }
}

/// Multiples of `step` from 0 up to `last` (inclusive, with float slack).
fn multiples(step: f64, last: f64) -> impl Iterator<Item = f64> {
    let count = (last / step + 1e-9).floor().max(0.0) as usize;
    (0..=count).map(move |i| i as f64 * step)
}

/// A value axis in `units` (each a size and its suffix, smallest first), rounded up to
/// the first tick at or above `max`. The unit is the largest that `max` reaches.
fn value_scale(max: f64, units: &[(f64, &str)], floor: f64) -> Scale {
    let max = if max.is_finite() && max > floor {
        max
    } else {
        floor
    };
    let (size, suffix) = units
        .iter()
        .copied()
        .rev()
        .find(|(size, _)| max >= *size)
        .or_else(|| units.first().copied())
        .unwrap_or((1.0, ""));
    let scaled_max = max / size;
    let step = step_for(scaled_max, VALUE_INTERVALS);
    let scaled_top = (scaled_max / step - 1e-9).ceil() * step;
    let places = decimals(step);
    let ticks = multiples(step, scaled_top)
        .map(|v| Tick {
            value: v * size,
            label: if v == 0.0 {
                "0".into()
            } else {
                format!("{v:.places$}{suffix}")
            },
        })
        .collect();
    Scale {
        top: scaled_top * size,
        ticks,
    }
}

/// Bytes in IEC units: "0", "20 MiB", "1.5 GiB".
pub fn bytes(max: f64) -> Scale {
    const KI: f64 = 1024.0;
    value_scale(
        max,
        &[
            (1.0, " B"),
            (KI, " KiB"),
            (KI * KI, " MiB"),
            (KI * KI * KI, " GiB"),
            (KI * KI * KI * KI, " TiB"),
        ],
        // An empty chart still gets a readable axis.
        KI,
    )
}

/// A rate with SI prefixes: "0/s", "10k/s", "2.5M/s".
pub fn per_second(max: f64) -> Scale {
    let mut scale = value_scale(max, &[(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G")], 1.0);
    for t in &mut scale.ticks {
        t.label.push_str("/s");
    }
    scale
}

/// Ticks on a time axis whose domain is exactly 0..`end` seconds (the run's wall time,
/// shared by every chart): multiples of a 1-2-5 step in seconds, minutes or hours.
pub fn time(end: f64) -> Vec<Tick> {
    let end = if end.is_finite() && end > 0.0 {
        end
    } else {
        0.0
    };
    let (size, suffix) = if end >= 2.0 * 3600.0 {
        (3600.0, "h")
    } else if end >= 120.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    };
    let scaled_end = end / size;
    if scaled_end == 0.0 {
        return vec![Tick {
            value: 0.0,
            label: format!("0 {suffix}"),
        }];
    }
    let step = step_for(scaled_end, TIME_INTERVALS);
    let places = decimals(step);
    multiples(step, scaled_end)
        .map(|v| Tick {
            value: v * size,
            label: if v == 0.0 {
                format!("0 {suffix}")
            } else {
                format!("{v:.places$} {suffix}")
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(ticks: &[Tick]) -> Vec<&str> {
        ticks.iter().map(|t| t.label.as_str()).collect()
    }

    #[test]
    fn regression_fault_rates_are_rounded_to_round_steps() {
        let s = per_second(31272.0);
        assert_eq!(
            labels(&s.ticks),
            ["0/s", "10k/s", "20k/s", "30k/s", "40k/s"]
        );
        assert_eq!(s.top, 40_000.0);
        let s = per_second(2.4e6);
        assert_eq!(
            labels(&s.ticks),
            ["0/s", "0.5M/s", "1.0M/s", "1.5M/s", "2.0M/s", "2.5M/s"]
        );
        assert_eq!(
            labels(&per_second(0.0).ticks),
            ["0/s", "0.2/s", "0.4/s", "0.6/s", "0.8/s", "1.0/s"]
        );
        assert_eq!(labels(&per_second(f64::NAN).ticks).len(), 6);
    }

    #[test]
    fn regression_time_ticks_are_round_seconds_not_fifths_of_the_run() {
        assert_eq!(
            labels(&time(3.5)),
            ["0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s", "2.5 s", "3.0 s", "3.5 s"]
        );
        assert_eq!(
            labels(&time(7.2)),
            ["0 s", "1 s", "2 s", "3 s", "4 s", "5 s", "6 s", "7 s"]
        );
        let short = time(0.35);
        assert_eq!(
            labels(&short),
            ["0 s", "0.05 s", "0.10 s", "0.15 s", "0.20 s", "0.25 s", "0.30 s", "0.35 s"]
        );
        assert_eq!(labels(&time(600.0))[1], "2 min");
        assert_eq!(labels(&time(0.0)), ["0 s"]);
        assert_eq!(labels(&time(f64::INFINITY)), ["0 s"]);
        // The domain is the run's: no tick past its end.
        for end in [0.37, 1.0, 3.5, 17.3, 599.0, 9000.0] {
            let ticks = time(end);
            assert!(
                ticks.iter().all(|t| t.value <= end + 1e-6),
                "{end}: {ticks:?}"
            );
            assert!(ticks.len() >= 3, "{end}: {ticks:?}");
        }
    }

    #[test]
    fn byte_axes_use_iec_units_and_cover_the_maximum() {
        let s = bytes(70.2 * 1024.0 * 1024.0);
        assert_eq!(
            labels(&s.ticks),
            ["0", "20 MiB", "40 MiB", "60 MiB", "80 MiB"]
        );
        let s = bytes(1.3 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(labels(&s.ticks).last(), Some(&"1.5 GiB"));
        assert_eq!(bytes(0.0).top, 1024.0);
        for max in [1.0, 999.0, 5e6, 3.3e9, 7e12] {
            let s = bytes(max);
            assert!(s.top >= max && s.top <= max * 1.5 + 1024.0, "{max}: {s:?}");
        }
    }
}
