//! Every process as a live view shows it (`memtriage top`): its figures at the last
//! sample, its fault rates and growth over a window, a short history for sparklines,
//! its user and memory cgroup, and the findings that hold for it now. Built from the
//! sampler's samples, never from the system directly, except what a process's first
//! sight reads once (its owner, its cgroup) and its cgroup's usage each sample.

use std::collections::{HashMap, VecDeque};

use crate::diagnose::trend::{least_squares, Point};
use crate::model::ids;
use crate::model::process::CgroupMemory;
use crate::probe::cgroup::{CgroupDir, CgroupReader};
use crate::probe::procdir::ProcDir;
use crate::probe::root::Root;
use crate::probe::users::Users;
use crate::sampler::Sample;

/// One process at one sample, with what its history says.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ProcessRow {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// The owner's name, or the uid where it has none; `None` where unreadable.
    pub user: Option<String>,
    pub rss: u64,
    /// From the last PSS reading (on the sampler's budget); `None` before one, or
    /// where the process is not ours to read.
    pub pss: Option<u64>,
    pub uss: Option<u64>,
    pub swap: Option<u64>,
    /// Seconds since that reading.
    pub pss_age: Option<f64>,
    /// Faults per second since the previous sample; `None` at a first sight.
    pub minor_rate: Option<f64>,
    pub major_rate: Option<f64>,
    /// RSS growth in bytes per minute, the least-squares slope over the window;
    /// `None` until the window holds enough samples.
    pub growth: Option<f64>,
    /// GPU memory held (NVML), where there is NVML.
    pub gpu: Option<u64>,
    /// RSS at the last samples of the window (at most [`HISTORY_POINTS`]), oldest
    /// first (sparklines).
    pub rss_history: Vec<u64>,
    /// Minor and major faults per second at each sample of the window.
    pub fault_history: Vec<(f64, f64)>,
    /// Its memory cgroup, its limit and headroom (usage read at this sample).
    pub cgroup: Option<CgroupMemory>,
    /// Forked from its parent without exec: a worker sharing its parent's memory.
    pub forked_worker: bool,
    /// Bytes it copied of what it shares with its parent, at its last reading.
    pub copied_after_fork: Option<u64>,
    /// Finding ids that hold for it now (`fork.copy-on-write`,
    /// `live.growth-to-limit`, `live.major-fault-storm`).
    pub findings: Vec<&'static str>,
    /// Minutes until its cgroup's limit at the current growth, when it grows.
    pub minutes_to_limit: Option<f64>,
}

/// A worker copying at least this much of its parent's memory is marked.
pub const COPY_ON_WRITE_MARK: u64 = 64 << 20;
/// Major faults per second that make a storm.
pub const MAJOR_FAULT_STORM: f64 = 200.0;
/// Growth that reaches the limit within this many minutes is marked.
pub const LIMIT_ETA_MINUTES: f64 = 30.0;

/// What a mark of [`ProcessRow::findings`] says, in a line: the engine's text, so
/// that every view says the same.
pub fn mark_text(id: &str) -> &'static str {
    match id {
        ids::FORK_COPY_ON_WRITE => {
            "this worker has copied much of what it shared with its parent (copy-on-write)"
        }
        ids::LIVE_GROWTH_TO_LIMIT => {
            "at its current growth it reaches its cgroup's limit within 30 minutes"
        }
        ids::LIVE_MAJOR_FAULT_STORM => {
            "a storm of major faults: it is reading its memory from disk"
        }
        _ => "",
    }
}

struct History {
    /// (t, rss, minor faults, major faults)
    points: VecDeque<(f64, u64, u64, u64)>,
    rates: VecDeque<(f64, f64)>,
    user: Option<String>,
    cgroup: Option<CgroupMemory>,
    copied_after_fork: Option<u64>,
}

/// The rows kept across samples.
pub struct ProcessTable {
    root: Root,
    users: Users,
    cgroups: CgroupReader,
    /// Seconds of history kept (growth and sparklines).
    window: f64,
    history: HashMap<i32, History>,
}

impl ProcessTable {
    pub fn new(root: &Root, window_seconds: f64) -> Self {
        ProcessTable {
            root: root.clone(),
            users: Users::new(root),
            cgroups: CgroupReader::discover(root),
            window: window_seconds.max(1.0),
            history: HashMap::new(),
        }
    }

    /// The rows of this sample, in the sample's order.
    pub fn absorb(&mut self, sample: &Sample) -> Vec<ProcessRow> {
        let live: std::collections::HashSet<i32> = sample.processes.iter().map(|p| p.pid).collect();
        self.history.retain(|pid, _| live.contains(pid));
        // A cgroup's usage is read once per sample however many processes it holds.
        let mut usage: HashMap<String, Option<u64>> = HashMap::new();
        let mut rows = Vec::with_capacity(sample.processes.len());
        for p in &sample.processes {
            if !self.history.contains_key(&p.pid) {
                let user = ProcDir::open(&self.root, p.pid)
                    .ok()
                    .and_then(|dir| dir.owner_uid())
                    .map(|uid| self.users.name(uid).unwrap_or_else(|| uid.to_string()));
                let cgroup = self.cgroups.for_pid(p.pid).ok().flatten();
                self.history.insert(
                    p.pid,
                    History {
                        points: VecDeque::new(),
                        rates: VecDeque::new(),
                        user,
                        cgroup,
                        copied_after_fork: None,
                    },
                );
            }
            let Some(h) = self.history.get_mut(&p.pid) else {
                continue;
            };
            if p.execed {
                h.points.clear();
                h.rates.clear();
            }
            let rate = h.points.back().and_then(|&(t0, _, minor, major)| {
                let dt = sample.t - t0;
                (dt > 0.0).then(|| {
                    (
                        p.minor_faults.saturating_sub(minor) as f64 / dt,
                        p.major_faults.saturating_sub(major) as f64 / dt,
                    )
                })
            });
            h.points
                .push_back((sample.t, p.rss, p.minor_faults, p.major_faults));
            if let Some(r) = rate {
                h.rates.push_back(r);
            }
            while h
                .points
                .front()
                .is_some_and(|(t, ..)| sample.t - t > self.window)
            {
                h.points.pop_front();
            }
            while h.rates.len() > h.points.len() {
                h.rates.pop_front();
            }
            if p.copied_after_fork.is_some() {
                h.copied_after_fork = p.copied_after_fork;
            }
            let growth = slope_per_minute(&h.points);
            let mut cgroup = h.cgroup.clone();
            if let Some(cg) = cgroup.as_mut() {
                let mut read = |dir: &str| {
                    *usage.entry(dir.to_string()).or_insert_with(|| {
                        CgroupDir {
                            version: cg.version,
                            dir: dir.into(),
                        }
                        .usage()
                    })
                };
                cg.usage = read(&cg.dir);
                // Headroom is the limiting cgroup's: a pod's limit counts the pod's
                // usage, not only this container's.
                if let Some(limit) = cg.limit {
                    let limiting = limiting_dir(cg).unwrap_or_else(|| cg.dir.clone());
                    cg.headroom = read(&limiting).map(|u| limit.saturating_sub(u));
                }
            }
            let minutes_to_limit = match (growth, cgroup.as_ref().and_then(|c| c.headroom)) {
                (Some(g), Some(room)) if g >= MIN_GROWTH => Some(room as f64 / g),
                _ => None,
            };
            let forked_worker = p.forked_without_exec == Some(true);
            let mut findings = Vec::new();
            if forked_worker && h.copied_after_fork.is_some_and(|c| c >= COPY_ON_WRITE_MARK) {
                findings.push(ids::FORK_COPY_ON_WRITE);
            }
            if minutes_to_limit.is_some_and(|m| m <= LIMIT_ETA_MINUTES) {
                findings.push(ids::LIVE_GROWTH_TO_LIMIT);
            }
            if rate.is_some_and(|(_, major)| major >= MAJOR_FAULT_STORM) {
                findings.push(ids::LIVE_MAJOR_FAULT_STORM);
            }
            rows.push(ProcessRow {
                pid: p.pid,
                ppid: p.ppid,
                comm: p.comm.clone(),
                user: h.user.clone(),
                rss: p.rss,
                pss: p.pss.map(|r| r.pss),
                uss: p.pss.map(|r| r.uss),
                swap: p.pss.map(|r| r.swap),
                pss_age: p.pss.map(|r| (sample.t - r.at).max(0.0)),
                minor_rate: rate.map(|r| r.0),
                major_rate: rate.map(|r| r.1),
                growth,
                gpu: sample.gpu.as_ref().and_then(|g| g.held_by(p.pid)),
                rss_history: tail(h.points.iter().map(|&(_, rss, ..)| rss), h.points.len()),
                fault_history: tail(h.rates.iter().copied(), h.rates.len()),
                cgroup,
                forked_worker,
                copied_after_fork: h.copied_after_fork,
                findings,
                minutes_to_limit,
            });
        }
        rows
    }
}

/// Points of history a row carries (a sparkline's width).
pub const HISTORY_POINTS: usize = 16;
/// Growth below this (bytes a minute) is not read as heading for a limit: a cgroup
/// full of page cache has no headroom, and every process in it wobbles.
const MIN_GROWTH: f64 = (1 << 20) as f64;

fn tail<T>(items: impl Iterator<Item = T>, len: usize) -> Vec<T> {
    items.skip(len.saturating_sub(HISTORY_POINTS)).collect()
}

/// The directory of the cgroup that sets `cg`'s limit (`limit_set_by` is its path
/// from the hierarchy's top; `dir` ends with `path`).
fn limiting_dir(cg: &CgroupMemory) -> Option<String> {
    let by = cg.limit_set_by.as_deref()?;
    let top = cg.dir.strip_suffix(cg.path.trim_end_matches('/'))?;
    Some(format!(
        "{}{}",
        top.trim_end_matches('/'),
        if by == "/" { "" } else { by }
    ))
}

/// Least-squares slope of RSS over the points, per minute; `None` with fewer than 3
/// points or less than 5 s between the first and the last.
fn slope_per_minute(points: &VecDeque<(f64, u64, u64, u64)>) -> Option<f64> {
    let (t0, t1) = (points.front()?.0, points.back()?.0);
    if t1 - t0 < 5.0 {
        return None;
    }
    let line = least_squares(points.iter().map(|&(t, rss, ..)| Point {
        t,
        bytes: rss as f64,
    }))?;
    Some(line.slope * 60.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::ProcessSample;

    #[test]
    fn growth_and_fault_rates_come_from_the_history() {
        let mut table = ProcessTable::new(&Root::at("/nonexistent"), 60.0);
        let mut rows = Vec::new();
        for i in 0..7 {
            let mut p = ProcessSample::bare(42, 1, "grower", 100 << 20);
            p.rss = (100 << 20) + i * (1 << 20);
            p.minor_faults = i * 500;
            p.major_faults = i * 300;
            rows = table.absorb(&Sample::bare(i as f64 * 2.0, vec![p]));
        }
        let r = &rows[0];
        // 1 MiB every 2 s: 30 MiB a minute.
        let growth = r.growth.unwrap();
        assert!((growth - 30.0 * (1 << 20) as f64).abs() < 1.0, "{growth}");
        assert_eq!(r.minor_rate, Some(250.0));
        assert_eq!(r.major_rate, Some(150.0));
        assert_eq!(r.rss_history.len(), 7);
        assert!(r.rss_history.len() <= HISTORY_POINTS);
        assert!(
            r.findings.is_empty(),
            "150 major faults a second is no storm"
        );
        assert_eq!(r.pss, None, "never read is unknown, not 0");
    }

    #[test]
    fn a_limit_set_above_is_measured_against_that_cgroups_usage() {
        let cg = CgroupMemory {
            version: crate::model::process::CgroupVersion::V2,
            path: "/kubepods.slice/pod/ctr".into(),
            dir: "/sys/fs/cgroup/kubepods.slice/pod/ctr".into(),
            usage: None,
            peak: None,
            limit: Some(1 << 30),
            limit_set_by: Some("/kubepods.slice/pod".into()),
            headroom: None,
            high: None,
            swap_limit: None,
            oom_kills: None,
        };
        assert_eq!(
            limiting_dir(&cg).as_deref(),
            Some("/sys/fs/cgroup/kubepods.slice/pod")
        );
    }
}
