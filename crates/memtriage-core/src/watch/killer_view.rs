//! The machine's OOM killers as a live view shows them: found again every
//! [`FIND_EVERY`] seconds (a daemon may start or stop), each one's room from the
//! memory of the moment, the process the first to act would pick, and how fast
//! `MemAvailable` falls, so the view can say which acts first and when.

use std::collections::VecDeque;

use serde::Serialize;

use crate::diagnose::killers::reaches;
use crate::diagnose::trend::{least_squares, Point};
use crate::model::killers::{KillerKind, KillerReach, OomKiller, PredictedVictim};
use crate::model::system::MemInfo;
use crate::probe::killers::find_among;
use crate::probe::root::Root;
use crate::probe::victim::predict_among;
use crate::sampler::ProcessSample;

/// How often the killers are looked for again, and the victim predicted again (a walk
/// of every process's `oom_score`).
pub const FIND_EVERY: f64 = 10.0;
/// How far back the rate `MemAvailable` falls at is taken.
const RATE_WINDOW: f64 = 30.0;
/// The shortest span a rate is told from: a few samples are noise.
const RATE_MIN_SPAN: f64 = 5.0;

/// The killers at one sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KillersNow {
    /// Every killer's reach, the first to act first.
    pub reach: Vec<KillerReach>,
    /// Whom the first to act would pick, where it picks a process by score, and which
    /// killer that was when it was predicted (the first may have changed since).
    pub first_victim: Option<PredictedVictim>,
    pub victim_of: Option<KillerKind>,
    /// Bytes per second `MemAvailable` falls at over the last half minute (negative:
    /// it rises); `None` until that long was sampled.
    pub available_falling: Option<f64>,
}

impl KillersNow {
    /// Seconds until the first killer with room acts at the present rate; `None`
    /// where memory is not falling or no killer acts on size.
    pub fn first_acts_in(&self) -> Option<(&KillerReach, f64)> {
        let first = self.reach.iter().find(|r| r.room.is_some())?;
        let rate = self.available_falling.filter(|r| *r > 0.0)?;
        Some((first, first.room? as f64 / rate))
    }
}

pub struct KillerView {
    root: Root,
    found: Vec<OomKiller>,
    found_at: Option<f64>,
    victim: Option<(KillerKind, PredictedVictim)>,
    available: VecDeque<Point>,
}

impl KillerView {
    pub fn new(root: &Root) -> Self {
        KillerView {
            root: root.clone(),
            found: Vec::new(),
            found_at: None,
            victim: None,
            available: VecDeque::new(),
        }
    }

    /// The killers at `t` (seconds since the view started), the machine's memory
    /// being `mem` and its processes `processes` (the daemons are found among them).
    pub fn at(&mut self, t: f64, mem: Option<&MemInfo>, processes: &[ProcessSample]) -> KillersNow {
        let Some(mem) = mem else {
            return KillersNow::default();
        };
        let stale = self.found_at.is_none_or(|at| t - at >= FIND_EVERY);
        if stale {
            let names = processes.iter().map(|p| (p.pid, p.comm.as_str()));
            self.found = find_among(&self.root, None, names);
            self.found_at = Some(t);
        }
        let reach = reaches(self.found.clone(), mem, None);
        if stale {
            self.victim = reach.iter().find(|r| r.room.is_some()).and_then(|r| {
                let sized = processes.iter().map(|p| (p.pid, Some(p.rss)));
                let victim = predict_among(
                    &self.root,
                    &r.killer.victim,
                    r.killer.pid,
                    &[],
                    0,
                    mem.total.unwrap_or(0),
                    sized,
                )?;
                Some((r.killer.kind, victim))
            });
        }
        KillersNow {
            reach,
            first_victim: self.victim.as_ref().map(|v| v.1.clone()),
            victim_of: self.victim.as_ref().map(|v| v.0),
            available_falling: self.falling(t, mem.available),
        }
    }

    fn falling(&mut self, t: f64, available: Option<u64>) -> Option<f64> {
        let available = available?;
        self.available.push_back(Point {
            t,
            bytes: available as f64,
        });
        while self
            .available
            .front()
            .is_some_and(|p| t - p.t > RATE_WINDOW)
        {
            self.available.pop_front();
        }
        let span = t - self.available.front()?.t;
        if span < RATE_MIN_SPAN {
            return None;
        }
        least_squares(self.available.iter().copied()).map(|line| -line.slope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::root::Root;

    const GIB: u64 = 1 << 30;

    fn meminfo(available: u64) -> MemInfo {
        crate::diagnose::killers::meminfo_for_tests(available)
    }

    /// A view of an empty machine that has found earlyoom acting under 17 GiB.
    fn earlyoom_view() -> (tempfile::TempDir, KillerView) {
        let empty = tempfile::tempdir().unwrap();
        let mut view = KillerView::new(&Root::at(empty.path()));
        view.found = vec![crate::diagnose::killers::earlyoom_for_tests(17 * GIB)];
        view.found_at = Some(0.0);
        (empty, view)
    }

    #[test]
    fn the_rate_memavailable_falls_at_is_told_after_five_seconds_and_gives_the_time_left() {
        let (_empty, mut view) = earlyoom_view();
        let mut now = KillersNow::default();
        for second in 0..=6u64 {
            // 20 GiB falling 256 MiB a second.
            now = view.at(
                second as f64,
                Some(&meminfo(20 * GIB - second * (256 << 20))),
                &[],
            );
            if second < 5 {
                assert_eq!(now.available_falling, None, "at {second} s");
            }
        }
        let rate = now.available_falling.unwrap();
        assert!((rate - (256u64 << 20) as f64).abs() < 1.0, "{rate}");
        let (first, seconds) = now.first_acts_in().unwrap();
        assert_eq!(
            first.killer.kind,
            crate::model::killers::KillerKind::Earlyoom
        );
        // 20 - 1.5 = 18.5 GiB available, 1.5 GiB above the floor: 6 s at 256 MiB/s.
        assert!((seconds - 6.0).abs() < 0.01, "{seconds}");
    }

    #[test]
    fn memory_that_rises_names_no_time() {
        let (_empty, mut view) = earlyoom_view();
        let mut now = KillersNow::default();
        for second in 0..=8u64 {
            now = view.at(second as f64, Some(&meminfo(18 * GIB + second * GIB)), &[]);
        }
        assert!(now.available_falling.unwrap() < 0.0);
        assert!(now.first_acts_in().is_none());
        assert_eq!(view.at(9.0, None, &[]), KillersNow::default());
    }
}
