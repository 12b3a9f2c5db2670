//! systemd-oomd acts on pressure, not on a size: it kills a cgroup it watches, whole,
//! when that cgroup's memory pressure stays over its limit for its duration. Followed
//! sample by sample on the machine's PSI (`full avg10`: a job that stalls on memory
//! stalls the slices above it too): one warning once pressure is half way to the
//! limit and rising, saying when it would pass the limit at this rate and how long
//! systemd-oomd then waits. Pure: it reads nothing.

use std::collections::VecDeque;

use crate::diagnose::trend::{least_squares, Point};
use crate::model::killers::{KillerKind, OomKiller, Trigger};

/// Seconds of pressure the rise is measured over.
const WINDOW: f64 = 10.0;
/// The shortest span a rise is told from.
const MIN_SPAN: f64 = 2.0;

pub struct PressureWatch {
    label: String,
    /// Percent of time all tasks stalled, and for how long, before it acts.
    limit: f64,
    seconds: f64,
    points: VecDeque<Point>,
    warned: bool,
}

impl PressureWatch {
    /// The watch of the first running systemd-oomd among `killers`; `None` without one.
    pub fn of(killers: &[OomKiller]) -> Option<PressureWatch> {
        killers.iter().filter(|k| k.running).find_map(|k| {
            let Some(Trigger::Pressure {
                percent, seconds, ..
            }) = &k.trigger
            else {
                return None;
            };
            (k.kind == KillerKind::SystemdOomd).then(|| PressureWatch {
                label: k.label(),
                limit: *percent,
                seconds: *seconds,
                points: VecDeque::new(),
                warned: false,
            })
        })
    }

    /// Takes the pressure at `t` (seconds since the job started); the warning, once.
    pub fn feed(&mut self, t: f64, full_avg10: Option<f64>) -> Option<String> {
        let pressure = full_avg10?;
        self.points.push_back(Point { t, bytes: pressure });
        while self.points.front().is_some_and(|p| t - p.t > WINDOW) {
            self.points.pop_front();
        }
        if self.warned || pressure < self.limit / 2.0 {
            return None;
        }
        let span = t - self.points.front()?.t;
        let slope = match span >= MIN_SPAN {
            true => least_squares(self.points.iter().copied())?.slope,
            false => return None,
        };
        let when = if pressure >= self.limit {
            format!("over it now: it acts if that lasts {:.0} s", self.seconds)
        } else if slope > 0.0 {
            format!(
                "rising {slope:.1} points a second: over {:.0}% in ~{:.0} s at this rate, then {:.0} s to act",
                self.limit,
                (self.limit - pressure) / slope,
                self.seconds
            )
        } else {
            return None;
        };
        self.warned = true;
        Some(format!(
            "{} kills the whole cgroup it watches when its memory pressure stays over {:.0}% \
             for {:.0} s; the machine's memory pressure (full, avg10) is {pressure:.0}%, {when}",
            self.label, self.limit, self.seconds
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oomd(running: bool) -> OomKiller {
        OomKiller {
            kind: KillerKind::SystemdOomd,
            pid: Some(501),
            running,
            settings_from: "/etc/systemd/oomd.conf".into(),
            settings: "defaults".into(),
            trigger: Some(Trigger::Pressure {
                percent: 60.0,
                seconds: 30.0,
                swap_used_percent: 90.0,
                cgroups: Vec::new(),
            }),
            victim: crate::model::killers::VictimRule::WholeCgroup,
            poll_seconds: Some(1.0),
        }
    }

    #[test]
    fn pressure_half_way_and_rising_is_told_once_with_when_it_passes_the_limit() {
        let mut watch = PressureWatch::of(&[oomd(true)]).unwrap();
        let mut said = Vec::new();
        // 20% rising 2 points a second.
        for i in 0..12 {
            let t = i as f64 * 0.5;
            said.extend(watch.feed(t, Some(20.0 + 2.0 * t)));
        }
        assert_eq!(said.len(), 1, "{said:?}");
        let line = &said[0];
        assert!(
            line.starts_with("systemd-oomd (pid 501) kills the whole cgroup"),
            "{line}"
        );
        // At 5 s: 30%, 30 points to go at 2 a second.
        assert!(line.contains("is 30%, rising 2.0 points a second: over 60% in ~15 s at this rate, then 30 s to act"), "{line}");
        assert!(watch.feed(7.0, Some(70.0)).is_none(), "once");
    }

    #[test]
    fn calm_or_falling_pressure_and_no_running_oomd_say_nothing() {
        assert!(PressureWatch::of(&[oomd(false)]).is_none());
        let mut calm = PressureWatch::of(&[oomd(true)]).unwrap();
        let mut falling = PressureWatch::of(&[oomd(true)]).unwrap();
        for i in 0..20 {
            let t = i as f64 * 0.5;
            assert!(calm.feed(t, Some(10.0)).is_none());
            assert!(falling.feed(t, Some(45.0 - t)).is_none(), "at {t} s");
        }
        assert!(calm.feed(11.0, None).is_none());
    }
}
