//! OOM kills counted as they happen, from two sources that confirm each other: the
//! kernel log (every era's report, followed live) and the cgroups' own counters
//! (`memory.events`, v1 `memory.oom_control`). A kill either source sees alone is
//! counted after a short wait for the other; userspace killers (systemd-oomd,
//! earlyoom) are read from the log files they write to.
//!
//! Reading ([`OomWatcher::read`]) needs nothing shared; only settling
//! ([`OomWatcher::settle`]) looks processes up, so the cgroup walk never holds the
//! watch's lock. The kernel log's reports are read by `kernel_log`, the counters by
//! `counters`; this module pairs what they saw and counts.

mod counters;
mod kernel_log;
mod killers;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::model::history::{KillSource, KERNEL_KILLER};
use crate::model::killers::{KillerKind, OomKiller};
use crate::model::system::{cgroup_is_within, OomKill};
use crate::parse::fatal_signal::FatalSignal;
use crate::parse::userspace_oom::{self, Killer, UserspaceKill};
use crate::parse::workload::{from_cgroup_path, Workload};
use crate::probe::cgroup::Hierarchy;
use crate::probe::kmsg::{LogFollower, Start};
use crate::probe::root::Root;

use super::identity::Identities;
use counters::Walk;
pub use kernel_log::CrashText;
use kernel_log::KernelLog;
use killers::KillerFinder;

/// What a kill is counted by. Empty strings where unknown (Prometheus' absent label).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KillKey {
    pub cgroup: String,
    pub victim: String,
    pub pod_uid: String,
    pub container_id: String,
    pub slurm_job: String,
    pub systemd_unit: String,
    /// What ran short, as the kernel's report said (`cgroup`: a limit; `global`: the
    /// machine; `cpuset`, `memory_policy`); empty without a report.
    pub constraint: String,
    /// The cgroup whose limit was hit (`oom_memcg=`), which may be an ancestor of the
    /// victim's: a pod's limit, say.
    pub limit_cgroup: String,
    pub killer: &'static str,
    pub source: &'static str,
}

/// The kills counted so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OomCounts {
    pub kills: Vec<(KillKey, u64)>,
    /// The last victim's anonymous resident bytes at the kill, by (cgroup, victim,
    /// killer), where the report said.
    pub last_anon_rss: Vec<((String, String, &'static str), u64)>,
    pub last_kill_at: Option<SystemTime>,
    /// Why the kernel log cannot be followed, if it cannot.
    pub kernel_log_error: Option<String>,
    /// Whether the cgroups' counters can be read.
    pub memory_events: bool,
    /// Userspace killers' logs that could not be read, with why.
    pub killer_log_errors: Vec<(PathBuf, String)>,
    /// The last kills one by one, oldest first (at most 64).
    pub recent: Vec<KillRecord>,
    /// The last processes the kernel logged dying of a fault (a segfault, a bus
    /// error), oldest first (at most 64).
    pub faults: Vec<FaultRecord>,
    /// The last kernel crashes (oops, BUG, GPF, panic) logged, oldest first (at most
    /// 64).
    pub crashes: Vec<CrashRecord>,
}

/// A kernel crash the kernel logged, its lines kept.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashRecord {
    /// Counts up from 1 for each crash this watch saw.
    pub seq: u64,
    pub at: SystemTime,
    pub crash: CrashText,
    /// The named process's command line and memory cgroup, where the watch had read
    /// them.
    pub cmdline: Option<String>,
    pub cgroup: Option<String>,
}

/// A process the kernel logged dying of a fault.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultRecord {
    /// Counts up from 1 for each fault this watch saw.
    pub seq: u64,
    pub at: SystemTime,
    pub fault: FatalSignal,
    /// Its command line and memory cgroup, where the watch had read them.
    pub cmdline: Option<String>,
    pub cgroup: Option<String>,
}

/// Kills kept one by one for a recorder that reads the view less often than they come.
pub const RECENT_KILLS: usize = 64;

/// One kill with what was known of it when it was counted.
#[derive(Debug, Clone, PartialEq)]
pub struct KillRecord {
    /// Counts up from 1 for each kill this watch saw: a reader keeps the last it took.
    pub seq: u64,
    pub at: SystemTime,
    pub pid: Option<i32>,
    /// The victim's short name; empty where no source named it.
    pub victim: String,
    /// Its command line, where the watch had read it while the process lived.
    pub cmdline: Option<String>,
    /// The victim's memory cgroup; empty where unknown.
    pub cgroup: String,
    pub killer: &'static str,
    pub source: KillSource,
    /// The kernel's report, where the kernel log had one.
    pub report: Option<OomKill>,
    /// The report's task table: its header and largest rows.
    pub task_table: Vec<String>,
    /// The victim cgroup's `memory.stat` as read when the kill was counted (empty
    /// where it was already removed, or unreadable).
    pub memory_stat: Vec<(String, u64)>,
    /// The signal a userspace killer said it sent (`SIGTERM`).
    pub signal: Option<String>,
    /// A userspace killer's settings when it killed, where it was found running.
    pub killer_settings: Option<OomKiller>,
}

/// What a source knew of a kill beyond its labels.
#[derive(Default)]
struct KillDetail {
    /// When it was seen (the log read, the counter walk); `None`: now.
    seen_at: Option<SystemTime>,
    pid: Option<i32>,
    cmdline: Option<String>,
    report: Option<OomKill>,
    task_table: Vec<String>,
    signal: Option<String>,
    killer_settings: Option<OomKiller>,
}

/// Distinct label sets kept; past it, kills count under `other`.
const MAX_SERIES: usize = 1000;
/// How long a kill seen by one source waits for the other before it is counted alone.
pub const CONFIRM_WINDOW: Duration = Duration::from_secs(5);

struct PendingLogKill {
    kill: OomKill,
    task_table: Vec<String>,
    /// When its report was read: within a read of the kill (the log is polled each
    /// second), where counting waits for the other source.
    read_at: SystemTime,
    deadline: Instant,
}

struct PendingUserKill {
    kill: UserspaceKill,
}

struct PendingEventKill {
    cgroup: String,
    /// The rise was in this cgroup's own counter; otherwise it was in one below it
    /// that is gone (a container removed right after its kill), so a kill the log
    /// names anywhere below matches.
    exact: bool,
    seen: Instant,
    /// When the rise was found: within a walk (2 s) of the kill.
    found_at: SystemTime,
    deadline: Instant,
}

struct KillerLog {
    path: PathBuf,
    follower: Result<LogFollower, String>,
}

pub struct OomWatcher {
    root: Root,
    hierarchy: Option<Hierarchy>,
    kmsg: KernelLog,
    killer_logs: Vec<KillerLog>,
    /// The killers running, whose logs are read without being named.
    finder: KillerFinder,
    last_walk: Option<Walk>,
    pending_log: Vec<PendingLogKill>,
    pending_user: Vec<PendingUserKill>,
    pending_events: Vec<PendingEventKill>,
    counts: HashMap<KillKey, u64>,
    anon_rss: HashMap<(String, String, &'static str), u64>,
    last_kill_at: Option<SystemTime>,
    recent: VecDeque<KillRecord>,
    kills_seen: u64,
    pending_faults: Vec<(SystemTime, FatalSignal)>,
    faults: VecDeque<FaultRecord>,
    faults_seen: u64,
    pending_crashes: Vec<(SystemTime, CrashText)>,
    crashes: VecDeque<CrashRecord>,
    crashes_seen: u64,
    /// earlyoom signals SIGTERM then SIGKILL: one kill.
    recent_userspace: Vec<(i32, Instant)>,
}

impl OomWatcher {
    /// Starts following from now: kills before this moment are not counted (a
    /// restarted exporter would count them twice). `crashes`: keep the kernel's crash
    /// reports too.
    pub fn new(
        root: &Root,
        hierarchy: Option<Hierarchy>,
        killer_logs: &[PathBuf],
        crashes: bool,
    ) -> Self {
        let kmsg = KernelLog::follow(root, crashes);
        let killer_logs = killer_logs
            .iter()
            .map(|p| KillerLog {
                path: p.clone(),
                follower: LogFollower::file(p, Start::Now).map_err(|e| e.to_string()),
            })
            .collect();
        OomWatcher {
            root: root.clone(),
            hierarchy,
            kmsg,
            killer_logs,
            finder: KillerFinder::new(root),
            last_walk: None,
            pending_log: Vec::new(),
            pending_user: Vec::new(),
            pending_events: Vec::new(),
            counts: HashMap::new(),
            anon_rss: HashMap::new(),
            last_kill_at: None,
            recent: VecDeque::new(),
            kills_seen: 0,
            pending_faults: Vec::new(),
            faults: VecDeque::new(),
            faults_seen: 0,
            pending_crashes: Vec::new(),
            crashes: VecDeque::new(),
            crashes_seen: 0,
            recent_userspace: Vec::new(),
        }
    }

    /// Reads and settles in one step.
    #[cfg(test)]
    pub fn poll(&mut self, identities: &Identities, now: Instant, walk_events: bool) {
        self.read(now, walk_events);
        self.settle(identities, now);
    }

    /// Reads what is new in each source. `walk_events`: also walk the cgroups'
    /// counters this time (a read per cgroup; the logs cost nothing when quiet).
    pub fn read(&mut self, now: Instant, walk_events: bool) {
        self.read_kernel_log(now);
        self.read_killer_logs(now);
        if walk_events || self.last_walk.is_none() {
            self.walk_events(now);
        }
    }

    pub fn counts(&self) -> OomCounts {
        let mut kills: Vec<(KillKey, u64)> =
            self.counts.iter().map(|(k, v)| (k.clone(), *v)).collect();
        kills.sort();
        let mut last_anon_rss: Vec<_> =
            self.anon_rss.iter().map(|(k, v)| (k.clone(), *v)).collect();
        last_anon_rss.sort();
        OomCounts {
            kills,
            last_anon_rss,
            last_kill_at: self.last_kill_at,
            kernel_log_error: self.kmsg.error().cloned(),
            memory_events: self.last_walk.as_ref().is_some_and(Walk::read_any),
            killer_log_errors: self
                .killer_logs
                .iter()
                .filter_map(|l| {
                    l.follower
                        .as_ref()
                        .err()
                        .map(|e| (l.path.clone(), e.clone()))
                })
                .collect(),
            recent: self.recent.iter().cloned().collect(),
            faults: self.faults.iter().cloned().collect(),
            crashes: self.crashes.iter().cloned().collect(),
        }
    }

    fn read_kernel_log(&mut self, now: Instant) {
        let Some(read) = self.kmsg.read() else {
            return;
        };
        self.pending_faults
            .extend(read.faults.into_iter().map(|f| (read.at, f)));
        self.pending_crashes
            .extend(read.crash.map(|c| (read.at, c)));
        for (kill, task_table) in read.kills {
            self.pending_log.push(PendingLogKill {
                kill,
                task_table,
                read_at: read.at,
                deadline: now + CONFIRM_WINDOW,
            });
        }
    }

    fn read_killer_logs(&mut self, now: Instant) {
        let mut found: Vec<UserspaceKill> = Vec::new();
        for log in &mut self.killer_logs {
            // A log missing or unreadable at first is tried again: all of it is new.
            if log.follower.is_err() {
                if let Ok(f) = LogFollower::file(&log.path, Start::Oldest) {
                    log.follower = Ok(f);
                }
            }
            let Ok(f) = &mut log.follower else { continue };
            match f.read_new() {
                Ok(lines) => {
                    found.extend(lines.iter().filter_map(|l| userspace_oom::parse_line(l)))
                }
                Err(e) => log.follower = Err(e.to_string()),
            }
        }
        let named: Vec<PathBuf> = self.killer_logs.iter().map(|l| l.path.clone()).collect();
        let own = self.finder.read_new(now, &named);
        found.extend(own.iter().filter_map(|l| userspace_oom::parse_line(l)));
        self.recent_userspace
            .retain(|(_, at)| now.saturating_duration_since(*at) < Duration::from_secs(60));
        for kill in found {
            if let Some(pid) = kill.pid {
                if self.recent_userspace.iter().any(|(p, _)| *p == pid) {
                    continue;
                }
                self.recent_userspace.push((pid, now));
            }
            self.pending_user.push(PendingUserKill { kill });
        }
    }

    /// Walks the cgroups' counters and compares them with the last walk: each kill a
    /// counter rose by waits for the kernel log to name it (see [`counters`]).
    fn walk_events(&mut self, now: Instant) {
        let Some(h) = &self.hierarchy else {
            return;
        };
        let walk = Walk::take(&self.root, h, now);
        if let Some(before) = &self.last_walk {
            for rise in walk.rises_since(before) {
                let Some(path) = h.path_of(&self.root, &rise.dir) else {
                    continue;
                };
                for _ in 0..rise.kills.min(64) {
                    self.pending_events.push(PendingEventKill {
                        cgroup: path.clone(),
                        exact: rise.exact,
                        seen: before.at,
                        found_at: SystemTime::now(),
                        deadline: now + CONFIRM_WINDOW,
                    });
                }
            }
        }
        self.last_walk = Some(walk);
    }

    /// Pairs kills both sources saw; counts those past their wait alone.
    pub fn settle(&mut self, identities: &Identities, now: Instant) {
        for (at, fault) in std::mem::take(&mut self.pending_faults) {
            let id = identities.get(fault.pid);
            self.faults_seen += 1;
            if self.faults.len() == RECENT_KILLS {
                self.faults.pop_front();
            }
            self.faults.push_back(FaultRecord {
                seq: self.faults_seen,
                at,
                cmdline: id.map(|i| i.cmdline.clone()).filter(|c| !c.is_empty()),
                cgroup: id.and_then(|i| i.cgroup.clone()),
                fault,
            });
        }
        for (at, crash) in std::mem::take(&mut self.pending_crashes) {
            let id = crash.pid.and_then(|pid| identities.get(pid));
            self.crashes_seen += 1;
            if self.crashes.len() == RECENT_KILLS {
                self.crashes.pop_front();
            }
            self.crashes.push_back(CrashRecord {
                seq: self.crashes_seen,
                at,
                cmdline: id.map(|i| i.cmdline.clone()).filter(|c| !c.is_empty()),
                cgroup: id.and_then(|i| i.cgroup.clone()),
                crash,
            });
        }
        for p in std::mem::take(&mut self.pending_user) {
            let cached = p.kill.pid.and_then(|pid| identities.get(pid));
            let cgroup = p
                .kill
                .cgroup
                .clone()
                .or_else(|| cached.and_then(|id| id.cgroup.clone()));
            let victim = p
                .kill
                .comm
                .clone()
                .or_else(|| cached.map(|id| id.comm.clone()))
                .unwrap_or_default();
            let kind = match p.kill.killer {
                Killer::Earlyoom => KillerKind::Earlyoom,
                Killer::SystemdOomd => KillerKind::SystemdOomd,
                Killer::Ray => KillerKind::Ray,
            };
            let detail = KillDetail {
                pid: p.kill.pid,
                cmdline: cached.map(|id| id.cmdline.clone()),
                signal: p.kill.signal.clone(),
                killer_settings: self.finder.settings(kind).cloned(),
                ..KillDetail::default()
            };
            self.count(
                cgroup,
                victim,
                p.kill.killer.name(),
                KillSource::KillerLog,
                detail,
            );
        }

        let mut waiting = Vec::new();
        for p in std::mem::take(&mut self.pending_log) {
            // Kernels before 4.19 do not name the victim's cgroup: what it was in
            // while it lived.
            let cgroup = p
                .kill
                .memcg
                .clone()
                .or_else(|| identities.get(p.kill.pid).and_then(|id| id.cgroup.clone()));
            let matched = match &cgroup {
                Some(c) => self
                    .pending_events
                    .iter()
                    .position(|e| e.exact && &e.cgroup == c)
                    .or_else(|| {
                        self.pending_events
                            .iter()
                            .position(|e| !e.exact && cgroup_is_within(c, &e.cgroup))
                    }),
                // Nothing to match by: a lone counter rise in the same moments is it.
                None if self.pending_events.len() == 1 => Some(0),
                None => None,
            };
            if let Some(j) = matched {
                let e = self.pending_events.remove(j);
                let cgroup = cgroup.or(Some(e.cgroup));
                self.count_log_kill(p, cgroup, KillSource::Both, identities);
            } else if p.deadline <= now {
                self.count_log_kill(p, cgroup, KillSource::KernelLog, identities);
            } else {
                waiting.push(p);
            }
        }
        self.pending_log = waiting;

        let (due, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending_events)
            .into_iter()
            .partition(|p| p.deadline <= now);
        self.pending_events = wait;
        for e in due {
            // The victim: the one process of that cgroup seen to end since the walk
            // before, when there is exactly one.
            let since = e
                .seen
                .checked_sub(Duration::from_secs(10))
                .unwrap_or(e.seen);
            let (victim, detail) = match identities.ended_in(&e.cgroup, since).as_slice() {
                [(pid, id)] if e.exact => (
                    id.comm.clone(),
                    KillDetail {
                        seen_at: Some(e.found_at),
                        pid: Some(*pid),
                        cmdline: Some(id.cmdline.clone()),
                        ..KillDetail::default()
                    },
                ),
                _ => (
                    String::new(),
                    KillDetail {
                        seen_at: Some(e.found_at),
                        ..KillDetail::default()
                    },
                ),
            };
            self.count(
                Some(e.cgroup),
                victim,
                KERNEL_KILLER,
                KillSource::MemoryEvents,
                detail,
            );
        }
    }

    /// `memory.stat` of the cgroup the kernel names `cgroup`, while it is there.
    fn memory_stat(&self, cgroup: &str) -> Vec<(String, u64)> {
        self.hierarchy
            .as_ref()
            .filter(|_| !cgroup.is_empty())
            .and_then(|h| h.cgroup(&self.root, cgroup)?.stat())
            .unwrap_or_default()
    }

    fn count_log_kill(
        &mut self,
        pending: PendingLogKill,
        cgroup: Option<String>,
        source: KillSource,
        identities: &Identities,
    ) {
        let kill = pending.kill;
        let detail = KillDetail {
            seen_at: Some(pending.read_at),
            pid: Some(kill.pid),
            cmdline: identities.get(kill.pid).map(|id| id.cmdline.clone()),
            task_table: pending.task_table,
            report: Some(kill.clone()),
            ..KillDetail::default()
        };
        self.count(cgroup, kill.comm, KERNEL_KILLER, source, detail);
    }

    fn count(
        &mut self,
        cgroup: Option<String>,
        victim: String,
        killer: &'static str,
        source: KillSource,
        detail: KillDetail,
    ) {
        let cgroup = cgroup.unwrap_or_default();
        self.kills_seen += 1;
        let memory_stat = self.memory_stat(&cgroup);
        if self.recent.len() == RECENT_KILLS {
            self.recent.pop_front();
        }
        self.recent.push_back(KillRecord {
            seq: self.kills_seen,
            at: detail.seen_at.unwrap_or_else(SystemTime::now),
            pid: detail.pid,
            victim: victim.clone(),
            cmdline: detail.cmdline.filter(|c| !c.is_empty()),
            cgroup: cgroup.clone(),
            killer,
            source,
            task_table: detail.task_table,
            report: detail.report.clone(),
            memory_stat,
            signal: detail.signal,
            killer_settings: detail.killer_settings,
        });
        let report = detail.report.as_ref();
        let anon_rss = report.and_then(|r| r.anon_rss);
        let constraint = report
            .map(|r| r.constraint.as_str().to_string())
            .unwrap_or_default();
        let limit_cgroup = report.and_then(|r| r.oom_memcg.clone()).unwrap_or_default();
        let w: Workload = from_cgroup_path(&cgroup);
        let mut key = KillKey {
            cgroup,
            victim,
            pod_uid: w.pod_uid.unwrap_or_default(),
            container_id: w.container_id.unwrap_or_default(),
            slurm_job: w.slurm_job.unwrap_or_default(),
            systemd_unit: w.systemd_unit.unwrap_or_default(),
            constraint,
            limit_cgroup,
            killer,
            source: source.as_str(),
        };
        if !self.counts.contains_key(&key) && self.counts.len() >= MAX_SERIES {
            key = KillKey {
                cgroup: "other".into(),
                victim: "other".into(),
                pod_uid: String::new(),
                container_id: String::new(),
                slurm_job: String::new(),
                systemd_unit: String::new(),
                constraint: String::new(),
                limit_cgroup: String::new(),
                killer,
                source: source.as_str(),
            };
        }
        if let Some(rss) = anon_rss {
            let k = (key.cgroup.clone(), key.victim.clone(), killer);
            if self.anon_rss.len() < MAX_SERIES || self.anon_rss.contains_key(&k) {
                self.anon_rss.insert(k, rss);
            }
        }
        *self.counts.entry(key).or_default() += 1;
        self.last_kill_at = Some(SystemTime::now());
    }
}

/// `path` is `ancestor` or below it.
#[cfg(test)]
mod tests;
