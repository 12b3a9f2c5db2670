//! [`GrowthWatch`]: fed one sample at a time, it follows the tree's memory (PSS where
//! read, RSS between readings), fits its trend, and says when to warn and when the
//! tree is near its ceiling. Pure: it reads nothing and prints nothing.

use std::collections::HashMap;
use std::fmt;

use super::fit::{Trend, Window, WINDOW_SECONDS};
use crate::diagnose::trend::{Point, RunningFit};
use crate::model::growth::{
    CeilingSource, EarlyWarning, GrowthEpisode, GrowthSummary, MemoryCeiling,
};
use crate::model::killers::PredictedVictim;
use crate::model::units::iec;
use crate::sampler::Sample;

/// Warn when the ceiling is this close at the current slope.
pub const WARN_WITHIN_SECONDS: f64 = 300.0;
/// The tree read in full at this share of its ceiling.
pub const SNAPSHOT_SHARE: f64 = 0.9;

/// A process's latest PSS reading and its RSS then: between readings its memory is
/// that PSS moved by what its RSS did since.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    pss: u64,
    rss: u64,
    /// The tick it was last seen at, to forget processes that are gone.
    seen: u64,
}

/// What one sample changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tick {
    pub warning: Option<GrowthWarning>,
    /// Set once: the tree's memory just reached [`SNAPSHOT_SHARE`] of the ceiling.
    pub near_ceiling: Option<NearCeiling>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NearCeiling {
    pub tree_bytes: u64,
    pub ceiling_bytes: u64,
}

/// "The tree grows this fast and reaches its ceiling in about this long."
#[derive(Debug, Clone, PartialEq)]
pub struct GrowthWarning {
    /// Seconds since the job started.
    pub at_seconds: f64,
    pub pid: i32,
    /// The tree's other processes.
    pub workers: usize,
    pub bytes_per_second: f64,
    pub tree_bytes: u64,
    pub ceiling: MemoryCeiling,
    pub seconds_to_ceiling: f64,
    /// Whom the ceiling's killer would pick, read when the warning is given.
    pub victim: Option<PredictedVictim>,
}

impl GrowthWarning {
    pub fn message(&self) -> String {
        self.to_string()
    }

    pub fn record(&self) -> EarlyWarning {
        EarlyWarning {
            at_seconds: self.at_seconds,
            bytes_per_second: self.bytes_per_second,
            tree_bytes: self.tree_bytes,
            seconds_to_ceiling: self.seconds_to_ceiling,
            message: self.message(),
        }
    }
}

impl fmt::Display for GrowthWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = match self.workers {
            0 => format!("pid {} grows", self.pid),
            1 => format!("pid {} and 1 worker grow", self.pid),
            n => format!("pid {} and {n} workers grow", self.pid),
        };
        let per_minute = iec((self.bytes_per_second * 60.0).round() as u64);
        let when = approximately(self.seconds_to_ceiling);
        let c = &self.ceiling;
        if let Some(k) = &c.killer {
            let whom = match &self.victim {
                Some(v) if v.in_job => format!("{} (this job, pid {})", k.victim_rule, v.pid),
                Some(v) => format!(
                    "{} ({}, pid {}, not this job)",
                    k.victim_rule, v.comm, v.pid
                ),
                None => k.victim_rule.clone(),
            };
            let kernel = (k.kernel_bytes as f64 - self.tree_bytes as f64) / self.bytes_per_second;
            return write!(
                f,
                "{who} {per_minute}/min; {} will {} {whom} when {}: {when} at this rate; \
                 the kernel's OOM killer would act at {}",
                k.label,
                k.action,
                k.threshold,
                approximately(kernel.max(self.seconds_to_ceiling))
            );
        }
        let reached = match (c.source, c.limit, &c.cgroup) {
            (CeilingSource::JobLimit, _, _) => {
                format!("the {} limit is reached in {when}", iec(c.bytes))
            }
            (CeilingSource::EnclosingCgroup, Some(limit), Some(cgroup)) => format!(
                "the {} limit of cgroup {cgroup} is reached in {when}",
                iec(limit)
            ),
            _ => format!(
                "the {} of memory available when it started is used up in {when}",
                iec(c.bytes)
            ),
        };
        write!(f, "{who} {per_minute}/min; {reached}")?;
        if c.group_kill {
            write!(
                f,
                " (memory.oom.group is set there: the kernel then kills every process of the \
                 cgroup, not one)"
            )?;
        }
        Ok(())
    }
}

/// `~40 s`, `~3 min`: as precise as an extrapolation deserves.
fn approximately(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("~{:.0} s", seconds.max(1.0))
    } else {
        format!("~{:.0} min", seconds / 60.0)
    }
}

/// Follows a job's tree sample by sample.
#[derive(Debug)]
pub struct GrowthWatch {
    job: i32,
    ceiling: Option<MemoryCeiling>,
    window: Window,
    anchors: HashMap<i32, Anchor>,
    ticks: u64,
    /// The growth under way, and the longest one that ended.
    current: Option<RunningFit>,
    longest: Option<GrowthEpisode>,
    last_warning: Option<GrowthWarning>,
    warnings: u32,
    near_ceiling_seen: bool,
    /// The ceiling was read again since the last warning (a killer came with the
    /// job): the next warning names it without waiting.
    ceiling_changed: bool,
}

impl GrowthWatch {
    /// `ceiling`: what the tree can reach ([`super::ceiling::discover`]); without one
    /// the watch still measures growth but never warns.
    pub fn new(job: i32, ceiling: Option<MemoryCeiling>) -> Self {
        GrowthWatch {
            job,
            ceiling,
            window: Window::new(),
            anchors: HashMap::new(),
            ticks: 0,
            current: None,
            longest: None,
            last_warning: None,
            warnings: 0,
            near_ceiling_seen: false,
            ceiling_changed: false,
        }
    }

    /// Takes one sample: O(processes + window), no allocation once warmed up.
    pub fn feed(&mut self, sample: &Sample) -> Tick {
        let Some(bytes) = self.tree_bytes(sample) else {
            // The tree is gone (the last sample after the job's exit): memory freed by
            // an exit is not a trend.
            return Tick::default();
        };
        let point = Point {
            t: sample.t,
            bytes: bytes as f64,
        };
        self.window.push(point);
        let trend = self.window.trend();
        self.follow_episode(trend, point);
        let mut tick = Tick::default();
        if let Trend::Steady(line) = trend {
            tick.warning = self.warning(sample, line.slope, line.value_at_last);
        }
        if let Some(c) = &self.ceiling {
            if !self.near_ceiling_seen && bytes as f64 >= SNAPSHOT_SHARE * c.bytes as f64 {
                self.near_ceiling_seen = true;
                tick.near_ceiling = Some(NearCeiling {
                    tree_bytes: bytes,
                    ceiling_bytes: c.bytes,
                });
            }
        }
        tick
    }

    /// PSS where read, RSS between: each process at its latest PSS reading, moved by
    /// how much its RSS changed since; RSS for a process not read yet.
    fn tree_bytes(&mut self, sample: &Sample) -> Option<u64> {
        if sample.processes.is_empty() {
            return None;
        }
        self.ticks += 1;
        let tick = self.ticks;
        let mut total: u64 = 0;
        for p in &sample.processes {
            if let Some(r) = &p.rollup {
                self.anchors.insert(
                    p.pid,
                    Anchor {
                        pss: r.pss,
                        rss: p.rss,
                        seen: tick,
                    },
                );
            }
            total += match self.anchors.get_mut(&p.pid) {
                Some(a) => {
                    a.seen = tick;
                    (a.pss + p.rss).saturating_sub(a.rss)
                }
                None => p.rss,
            };
        }
        self.anchors.retain(|_, a| a.seen == tick);
        Some(total)
    }

    fn follow_episode(&mut self, trend: Trend, point: Point) {
        match (trend, self.current.as_mut()) {
            (Trend::Steady(_) | Trend::Rising(_), Some(fit)) => fit.add(point),
            (Trend::Steady(_), None) => {
                // The growth began where the window that shows it begins.
                let mut points = self.window.points();
                if let Some(first) = points.next() {
                    let mut fit = RunningFit::new(first);
                    points.for_each(|p| fit.add(p));
                    self.current = Some(fit);
                }
            }
            (Trend::Rising(_), None) | (Trend::Other, None) => {}
            (Trend::Other, Some(_)) => self.end_episode(),
        }
    }

    fn end_episode(&mut self) {
        let Some(episode) = self.current.take().and_then(|fit| episode(&fit)) else {
            return;
        };
        if self.longest.is_none_or(|l| episode.seconds() > l.seconds()) {
            self.longest = Some(episode);
        }
    }

    fn warning(&mut self, sample: &Sample, slope: f64, now: f64) -> Option<GrowthWarning> {
        let ceiling = self.ceiling.as_ref()?;
        let seconds = ((ceiling.bytes as f64 - now) / slope).max(0.0);
        if seconds > WARN_WITHIN_SECONDS {
            return None;
        }
        // Once, and again only when the ceiling comes at least twice as soon as the
        // last warning said (the growth sped up), on a window of new samples only.
        if let Some(last) = self.last_warning.as_ref().filter(|_| !self.ceiling_changed) {
            let promised = last.at_seconds + last.seconds_to_ceiling - sample.t;
            if seconds > promised / 2.0 || sample.t - last.at_seconds < WINDOW_SECONDS {
                return None;
            }
        }
        self.ceiling_changed = false;
        let warning = GrowthWarning {
            at_seconds: sample.t,
            pid: self.job,
            workers: sample
                .processes
                .iter()
                .filter(|p| p.pid != self.job)
                .count(),
            bytes_per_second: slope,
            tree_bytes: now.max(0.0).round() as u64,
            ceiling: ceiling.clone(),
            seconds_to_ceiling: seconds,
            victim: None,
        };
        self.last_warning = Some(warning.clone());
        self.warnings += 1;
        Some(warning)
    }

    /// A ceiling read again after the job started (a killer that came with the job,
    /// as Ray's raylet does): the room it leaves is counted from the tree's memory at
    /// the last sample; a job's own `--limit` stays what it is.
    pub fn reset_ceiling(&mut self, ceiling: Option<MemoryCeiling>) {
        self.ceiling_changed = true;
        let now = self
            .window
            .points()
            .last()
            .map_or(0, |p| p.bytes.max(0.0) as u64);
        self.ceiling = ceiling.map(|mut c| {
            if c.source != CeilingSource::JobLimit {
                c.bytes = c.bytes.saturating_add(now);
                if let Some(k) = c.killer.as_mut() {
                    k.kernel_bytes = k.kernel_bytes.saturating_add(now);
                }
            }
            c
        });
    }

    /// Whom the ceiling's killer would pick, as read for the last warning.
    pub fn set_victim(&mut self, victim: Option<PredictedVictim>) {
        if let Some(w) = self.last_warning.as_mut() {
            w.victim = victim;
        }
    }

    /// What the run's growth came to; `None` when there is nothing to say (no
    /// ceiling known and no growth seen).
    pub fn summary(&self) -> Option<GrowthSummary> {
        let open = self.current.as_ref().and_then(episode);
        let episode = match (open, self.longest) {
            (Some(o), Some(l)) if l.seconds() > o.seconds() => Some(l),
            (Some(o), _) => Some(o),
            (None, l) => l,
        };
        if self.ceiling.is_none() && episode.is_none() {
            return None;
        }
        Some(GrowthSummary {
            ceiling: self.ceiling.clone(),
            episode,
            warning: self.last_warning.as_ref().map(GrowthWarning::record),
            warnings: self.warnings,
            pressure_warning: None,
        })
    }
}

fn episode(fit: &RunningFit) -> Option<GrowthEpisode> {
    let (slope, r_squared) = fit.line()?;
    let (first, last) = (fit.first(), fit.last());
    Some(GrowthEpisode {
        started_seconds: first.t,
        last_seen_seconds: last.t,
        start_bytes: first.bytes.max(0.0) as u64,
        end_bytes: last.bytes.max(0.0) as u64,
        bytes_per_second: slope,
        r_squared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::process::Rollup;
    use crate::sampler::ProcessSample;

    const MIB: u64 = 1 << 20;

    fn process(pid: i32, rss: u64) -> ProcessSample {
        ProcessSample::bare(pid, 1, "python3", rss)
    }

    fn sample(t: f64, processes: Vec<ProcessSample>) -> Sample {
        Sample::bare(t, processes)
    }

    fn limit(bytes: u64) -> Option<MemoryCeiling> {
        super::super::ceiling::choose(Some(bytes), None, None)
    }

    /// Feeds a job of pid 812 with `workers` idle workers whose main process holds
    /// `bytes(t)`, every 0.5 s, until `until`; returns every tick.
    fn feed(
        watch: &mut GrowthWatch,
        until: f64,
        workers: usize,
        bytes: impl Fn(f64) -> u64,
    ) -> Vec<(f64, Tick)> {
        let mut out = Vec::new();
        for i in 0..=(until * 2.0) as usize {
            let t = i as f64 * 0.5;
            let mut ps = vec![process(812, bytes(t))];
            ps.extend((0..workers).map(|w| process(900 + w as i32, 0)));
            out.push((t, watch.feed(&sample(t, ps))));
        }
        out
    }

    #[test]
    fn steady_growth_to_a_limit_warns_once_with_a_close_estimate() {
        let mut w = GrowthWatch::new(812, limit(400 * MIB));
        let ticks = feed(&mut w, 9.5, 4, |t| 20 * MIB + (40.0 * t) as u64 * MIB);
        let warnings: Vec<&GrowthWarning> = ticks
            .iter()
            .filter_map(|(_, t)| t.warning.as_ref())
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let warning = warnings[0];
        let real = (400.0 - 20.0) / 40.0 - warning.at_seconds;
        assert!(
            (warning.seconds_to_ceiling - real).abs() < 0.1 * real,
            "{warning:?} vs {real}"
        );
        assert!(warning.at_seconds <= 4.0, "{warning:?}");
        assert_eq!(warning.workers, 4);
        let text = warning.message();
        assert!(
            text.starts_with(
                "pid 812 and 4 workers grow 2.3 GiB/min; the 400 MiB limit is reached in ~"
            ),
            "{text}"
        );
        let near: Vec<f64> = ticks
            .iter()
            .filter(|(_, t)| t.near_ceiling.is_some())
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(near, vec![8.5], "once, at 360 MiB of 400");
        let s = w.summary().unwrap();
        assert_eq!(s.warnings, 1);
        assert_eq!(s.warning.unwrap().message, text);
    }

    /// A killer that came with the job (Ray's raylet) is named at once, not after a
    /// window: it may act before one passes.
    #[test]
    fn a_ceiling_read_again_is_warned_of_without_waiting() {
        let mut w = GrowthWatch::new(812, limit(4 << 30));
        let grow = |t: f64| 20 * MIB + (40.0 * t) as u64 * MIB;
        let first = feed(&mut w, 5.0, 0, grow);
        let at = first
            .iter()
            .find_map(|(_, t)| t.warning.as_ref())
            .unwrap()
            .at_seconds;
        w.reset_ceiling(limit(300 * MIB));
        let t = at + 1.0;
        let again = w.feed(&sample(t, vec![process(812, grow(t))]));
        let warning = again
            .warning
            .expect("the nearer ceiling, named a second later");
        assert_eq!(warning.ceiling.bytes, 300 * MIB);
        assert_eq!(w.summary().unwrap().warnings, 2);
    }

    #[test]
    fn a_growth_that_speeds_up_warns_again_and_one_that_stays_far_never() {
        let mut w = GrowthWatch::new(812, limit(100 << 30));
        // 1 GiB/min toward 100 GiB: ~100 min away.
        let ticks = feed(&mut w, 30.0, 0, |t| (t / 60.0 * (1u64 << 30) as f64) as u64);
        assert!(ticks.iter().all(|(_, t)| t.warning.is_none()));

        // 400 MiB/s toward 100 GiB (~4 min), then ten times faster from 60 s.
        let mut w = GrowthWatch::new(812, limit(100 << 30));
        let ticks = feed(&mut w, 78.0, 0, |t| {
            let mib = if t < 60.0 {
                400.0 * t
            } else {
                400.0 * 60.0 + 4000.0 * (t - 60.0)
            };
            (mib * MIB as f64) as u64
        });
        let warnings: Vec<&GrowthWarning> = ticks
            .iter()
            .filter_map(|(_, t)| t.warning.as_ref())
            .collect();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].at_seconds < 5.0, "{warnings:?}");
        assert!(warnings[1].at_seconds > 60.0, "{warnings:?}");
        let msg = warnings[0].message();
        assert_eq!(
            msg,
            "pid 812 grows 23.4 GiB/min; the 100 GiB limit is reached in ~4 min"
        );
    }

    #[test]
    fn a_flat_job_and_a_spike_give_nothing() {
        let mut w = GrowthWatch::new(812, limit(400 * MIB));
        let ticks = feed(&mut w, 20.0, 2, |t| {
            if (t - 10.0).abs() < 1e-9 {
                390 * MIB
            } else {
                100 * MIB
            }
        });
        assert!(ticks.iter().all(|(_, t)| t.warning.is_none()));
        let s = w.summary().unwrap();
        assert_eq!(s.episode, None);
        assert_eq!(s.warning, None);
    }

    #[test]
    fn a_growth_that_ends_well_is_one_episode_with_its_slope() {
        let mut w = GrowthWatch::new(812, None);
        feed(&mut w, 12.0, 0, |t| {
            50 * MIB + (10.0 * t * MIB as f64) as u64
        });
        // The tree is gone after the exit: that sample is no drop.
        assert_eq!(w.feed(&sample(12.5, vec![])), Tick::default());
        let e = w.summary().unwrap().episode.unwrap();
        assert!(e.started_seconds < 1e-9, "{e:?}");
        assert!((e.last_seen_seconds - 12.0).abs() < 1e-9);
        assert!(
            (e.bytes_per_second / MIB as f64 - 10.0).abs() < 0.01,
            "{e:?}"
        );
        assert!(e.r_squared > 0.99);
        assert_eq!(e.grown_bytes(), 120 * MIB);
    }

    #[test]
    fn without_a_ceiling_there_is_no_warning_and_no_snapshot() {
        let mut w = GrowthWatch::new(812, None);
        let ticks = feed(&mut w, 10.0, 0, |t| (40.0 * t) as u64 * MIB);
        assert!(ticks.iter().all(|(_, t)| *t == Tick::default()));
    }

    #[test]
    fn pss_where_read_and_rss_moves_between_readings() {
        let mut w = GrowthWatch::new(812, None);
        let mut read = process(812, 100 * MIB);
        read.rollup = Some(Rollup {
            pss: 60 * MIB,
            ..Rollup::default()
        });
        let mut ps = vec![read, process(813, 30 * MIB)];
        assert_eq!(w.tree_bytes(&sample(0.0, ps.clone())), Some(90 * MIB));
        ps[0].rollup = None;
        ps[0].rss = 110 * MIB;
        assert_eq!(w.tree_bytes(&sample(0.5, ps.clone())), Some(100 * MIB));
        // A process that left and came back under the same pid starts over from RSS.
        assert_eq!(
            w.tree_bytes(&sample(1.0, vec![ps[1].clone()])),
            Some(30 * MIB)
        );
        assert_eq!(w.tree_bytes(&sample(1.5, ps)), Some(140 * MIB));
    }
}
