//! OOM kills counted as they happen, from two sources that confirm each other: the
//! kernel log (every era's report, followed live) and the cgroups' own counters
//! (`memory.events`, v1 `memory.oom_control`). A kill either source sees alone is
//! counted after a short wait for the other; userspace killers (systemd-oomd,
//! earlyoom) are read from the log files they write to.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::model::system::OomKill;
use crate::parse::kmsg::oom_kills;
use crate::parse::userspace_oom::{self, UserspaceKill};
use crate::parse::workload::{from_cgroup_path, Workload};
use crate::probe::cgroup::{CgroupDir, Hierarchy};
use crate::probe::kmsg::{LogFollower, Start};
use crate::probe::root::Root;

use super::identity::Identities;

/// Which sources saw a kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KillSource {
    KernelLog,
    MemoryEvents,
    Both,
    /// A userspace killer's own log.
    KillerLog,
}

impl KillSource {
    pub fn as_str(self) -> &'static str {
        match self {
            KillSource::KernelLog => "kernel_log",
            KillSource::MemoryEvents => "memory_events",
            KillSource::Both => "both",
            KillSource::KillerLog => "killer_log",
        }
    }
}

/// What a kill is counted by. Empty strings where unknown (Prometheus' absent label).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KillKey {
    pub cgroup: String,
    pub victim: String,
    pub pod_uid: String,
    pub container_id: String,
    pub slurm_job: String,
    pub systemd_unit: String,
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
}

/// Distinct label sets kept; past it, kills count under `other`.
const MAX_SERIES: usize = 1000;
/// How long a kill seen by one source waits for the other before it is counted alone.
pub const CONFIRM_WINDOW: Duration = Duration::from_secs(5);

struct PendingLogKill {
    kill: OomKill,
    cgroup: Option<String>,
    deadline: Instant,
}

struct PendingEventKill {
    cgroup: String,
    seen: Instant,
    deadline: Instant,
}

pub struct OomWatcher {
    root: Root,
    hierarchy: Option<Hierarchy>,
    kmsg: Result<LogFollower, String>,
    /// A report's lines may span two reads: the tail since its `oom-kill:` line waits.
    carry: Vec<String>,
    killer_logs: Vec<(PathBuf, Result<LogFollower, String>)>,
    /// Each cgroup directory's `oom_kill` count at the last walk.
    last_counts: Option<HashMap<PathBuf, u64>>,
    /// v2's `memory.events.local` counts at the last walk.
    last_local: HashMap<PathBuf, u64>,
    last_walk: Option<Instant>,
    pending_log: Vec<PendingLogKill>,
    pending_events: Vec<PendingEventKill>,
    counts: HashMap<KillKey, u64>,
    anon_rss: HashMap<(String, String, &'static str), u64>,
    last_kill_at: Option<SystemTime>,
    /// earlyoom signals SIGTERM then SIGKILL: one kill.
    recent_userspace: Vec<(i32, Instant)>,
}

impl OomWatcher {
    /// Starts following from now: kills before this moment are not counted (a
    /// restarted exporter would count them twice).
    pub fn new(root: &Root, hierarchy: Option<Hierarchy>, killer_logs: &[PathBuf]) -> Self {
        let kmsg = LogFollower::kmsg(root, Start::Now).map_err(|e| e.to_string());
        let killer_logs = killer_logs
            .iter()
            .map(|p| {
                (
                    p.clone(),
                    LogFollower::file(p, Start::Now).map_err(|e| e.to_string()),
                )
            })
            .collect();
        OomWatcher {
            root: root.clone(),
            hierarchy,
            kmsg,
            carry: Vec::new(),
            killer_logs,
            last_counts: None,
            last_local: HashMap::new(),
            last_walk: None,
            pending_log: Vec::new(),
            pending_events: Vec::new(),
            counts: HashMap::new(),
            anon_rss: HashMap::new(),
            last_kill_at: None,
            recent_userspace: Vec::new(),
        }
    }

    /// Reads what is new in each source and counts the kills that are settled.
    /// `walk_events`: also walk the cgroups' counters this time (they cost a read per
    /// cgroup; the logs cost nothing when quiet).
    pub fn poll(&mut self, identities: &Identities, now: Instant, walk_events: bool) {
        self.read_kernel_log(identities, now);
        self.read_killer_logs(identities, now);
        if walk_events || self.last_walk.is_none() {
            self.walk_events(now);
        }
        self.settle(identities, now);
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
            kernel_log_error: self.kmsg.as_ref().err().cloned(),
            memory_events: self.last_counts.as_ref().is_some_and(|c| !c.is_empty()),
            killer_log_errors: self
                .killer_logs
                .iter()
                .filter_map(|(p, f)| f.as_ref().err().map(|e| (p.clone(), e.clone())))
                .collect(),
        }
    }

    fn read_kernel_log(&mut self, identities: &Identities, now: Instant) {
        let Ok(follower) = &mut self.kmsg else {
            return;
        };
        let lines = match follower.read_new() {
            Ok(l) => l,
            Err(e) => {
                self.kmsg = Err(e.to_string());
                return;
            }
        };
        if lines.is_empty() && self.carry.is_empty() {
            return;
        }
        let mut all = std::mem::take(&mut self.carry);
        let carried = all.len();
        all.extend(lines);
        // A report whose `Killed process` line is not logged yet waits one read.
        if carried == 0 {
            if let Some(last) = all.iter().rposition(|l| l.contains("oom-kill:")) {
                if !all[last..].iter().any(|l| l.contains("Killed process")) {
                    self.carry = all.split_off(last);
                }
            }
        }
        for kill in oom_kills(all.iter().map(String::as_str)) {
            let cgroup = kill
                .memcg
                .clone()
                .or_else(|| identities.get(kill.pid).and_then(|id| id.cgroup.clone()));
            self.pending_log.push(PendingLogKill {
                kill,
                cgroup,
                deadline: now + CONFIRM_WINDOW,
            });
        }
    }

    fn read_killer_logs(&mut self, identities: &Identities, now: Instant) {
        let mut found: Vec<UserspaceKill> = Vec::new();
        for (_, follower) in &mut self.killer_logs {
            let Ok(f) = follower else { continue };
            match f.read_new() {
                Ok(lines) => {
                    found.extend(lines.iter().filter_map(|l| userspace_oom::parse_line(l)))
                }
                Err(e) => *follower = Err(e.to_string()),
            }
        }
        self.recent_userspace
            .retain(|(_, at)| now.saturating_duration_since(*at) < Duration::from_secs(60));
        for kill in found {
            if let Some(pid) = kill.pid {
                if self.recent_userspace.iter().any(|(p, _)| *p == pid) {
                    continue;
                }
                self.recent_userspace.push((pid, now));
            }
            let cached = kill.pid.and_then(|pid| identities.get(pid));
            let cgroup = kill
                .cgroup
                .clone()
                .or_else(|| cached.and_then(|id| id.cgroup.clone()));
            let victim = kill
                .comm
                .clone()
                .or_else(|| cached.map(|id| id.comm.clone()))
                .unwrap_or_default();
            self.count(
                cgroup,
                victim,
                kill.killer.name(),
                KillSource::KillerLog,
                None,
            );
        }
    }

    /// Compares each cgroup's `oom_kill` count with the last walk; what rose in a
    /// cgroup and not in the cgroups below it happened in it.
    fn walk_events(&mut self, now: Instant) {
        let Some(h) = &self.hierarchy else {
            self.last_walk = Some(now);
            return;
        };
        let top = h.dir(&self.root, "/");
        let mut counts: HashMap<PathBuf, u64> = HashMap::new();
        let mut local: HashMap<PathBuf, u64> = HashMap::new();
        walk(&top, h, 0, &mut counts, &mut local);
        if let Some(before) = &self.last_counts {
            // New directories count from 0: they were made since the last walk.
            let rise = |d: &Path, now_count: u64| {
                now_count.saturating_sub(before.get(d).copied().unwrap_or(0))
            };
            let rises: HashMap<&Path, u64> = counts
                .iter()
                .map(|(d, c)| (d.as_path(), rise(d, *c)))
                .collect();
            for (dir, &r) in &rises {
                if r == 0 || dir == &top.as_path() {
                    continue;
                }
                let own = match local.get(*dir) {
                    Some(&l) => {
                        let before_local = self.last_local.get(*dir).copied().unwrap_or(0);
                        l.saturating_sub(before_local)
                    }
                    None => {
                        let below: u64 = rises
                            .iter()
                            .filter(|(d, _)| d.parent() == Some(*dir))
                            .map(|(_, r)| *r)
                            .sum();
                        r.saturating_sub(below)
                    }
                };
                let Some(path) = h.path_of(&self.root, dir) else {
                    continue;
                };
                for _ in 0..own.min(64) {
                    self.pending_events.push(PendingEventKill {
                        cgroup: path.clone(),
                        seen: self.last_walk.unwrap_or(now),
                        deadline: now + CONFIRM_WINDOW,
                    });
                }
            }
        }
        self.last_local = local;
        self.last_counts = Some(counts);
        self.last_walk = Some(now);
    }

    /// Pairs kills both sources saw; counts those past their wait alone.
    fn settle(&mut self, identities: &Identities, now: Instant) {
        let mut i = 0;
        while i < self.pending_log.len() {
            let cg = self.pending_log[i].cgroup.clone();
            let matched = cg
                .as_ref()
                .and_then(|c| self.pending_events.iter().position(|e| &e.cgroup == c));
            if let Some(j) = matched {
                self.pending_events.remove(j);
                let p = self.pending_log.remove(i);
                self.count_log_kill(p, KillSource::Both);
                continue;
            }
            i += 1;
        }
        let (due, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending_log)
            .into_iter()
            .partition(|p| p.deadline <= now);
        self.pending_log = wait;
        for p in due {
            self.count_log_kill(p, KillSource::KernelLog);
        }
        let (due, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending_events)
            .into_iter()
            .partition(|p| p.deadline <= now);
        self.pending_events = wait;
        for e in due {
            // The victim: the one process of that cgroup seen to end since the walk
            // before, when there is exactly one.
            let ended = identities.ended_in(
                &e.cgroup,
                e.seen
                    .checked_sub(Duration::from_secs(10))
                    .unwrap_or(e.seen),
            );
            let victim = match ended.as_slice() {
                [(_, id)] => id.comm.clone(),
                _ => String::new(),
            };
            self.count(
                Some(e.cgroup),
                victim,
                "kernel",
                KillSource::MemoryEvents,
                None,
            );
        }
    }

    fn count_log_kill(&mut self, p: PendingLogKill, source: KillSource) {
        let anon = p.kill.anon_rss;
        self.count(p.cgroup, p.kill.comm, "kernel", source, anon);
    }

    fn count(
        &mut self,
        cgroup: Option<String>,
        victim: String,
        killer: &'static str,
        source: KillSource,
        anon_rss: Option<u64>,
    ) {
        let cgroup = cgroup.unwrap_or_default();
        let w: Workload = from_cgroup_path(&cgroup);
        let mut key = KillKey {
            cgroup,
            victim,
            pod_uid: w.pod_uid.unwrap_or_default(),
            container_id: w.container_id.unwrap_or_default(),
            slurm_job: w.slurm_job.unwrap_or_default(),
            systemd_unit: w.systemd_unit.unwrap_or_default(),
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

/// Directories below (and with) `dir`: their `oom_kill` counts, and v2's local ones.
fn walk(
    dir: &Path,
    h: &Hierarchy,
    depth: usize,
    counts: &mut HashMap<PathBuf, u64>,
    local: &mut HashMap<PathBuf, u64>,
) {
    const MAX_DIRS: usize = 50_000;
    if depth > 32 || counts.len() >= MAX_DIRS {
        return;
    }
    let cg = CgroupDir {
        version: h.version,
        dir: dir.to_path_buf(),
    };
    if let Some(n) = cg.oom_kills() {
        counts.insert(dir.to_path_buf(), n);
    }
    if let Some(n) = cg.local_oom_kills() {
        local.insert(dir.to_path_buf(), n);
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&entry.path(), h, depth + 1, counts, local);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::cgroup::Hierarchies;
    use std::io::Write;

    /// A captured tree: a cgroup2 hierarchy with a memory controller, and a kernel log
    /// that is a plain file the test appends to.
    struct Tree {
        dir: tempfile::TempDir,
        root: Root,
    }

    impl Tree {
        fn new() -> Tree {
            let dir = tempfile::tempdir().unwrap();
            let root = Root::at(dir.path());
            let t = Tree { dir, root };
            t.write(
                "proc/self/mountinfo",
                "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            );
            t.write("sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
            t.write("sys/fs/cgroup/memory.events", "oom 0\noom_kill 0\n");
            t.write("dev/kmsg", "6,1,1,-;booted\n");
            t
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }

        fn kills_in(&self, cgroup: &str, hierarchical: u64, local: u64) {
            let base = format!("sys/fs/cgroup{cgroup}");
            self.write(
                &format!("{base}/memory.events"),
                &format!("oom {hierarchical}\noom_kill {hierarchical}\n"),
            );
            self.write(
                &format!("{base}/memory.events.local"),
                &format!("oom {local}\noom_kill {local}\n"),
            );
        }

        fn log(&self, lines: &[&str]) {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(self.dir.path().join("dev/kmsg"))
                .unwrap();
            for l in lines {
                writeln!(f, "{l}").unwrap();
            }
        }

        fn watcher(&self) -> (OomWatcher, Identities) {
            let h = Hierarchies::discover(&self.root)
                .unwrap()
                .preferred()
                .cloned();
            assert!(h.is_some(), "the captured hierarchy is found");
            let ids = Identities::new(&self.root, Duration::from_secs(60));
            (OomWatcher::new(&self.root, h, &[]), ids)
        }
    }

    const CONSTRAINT: &str = "3,10,100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods.slice/pod,task_memcg=/kubepods.slice/pod/worker,task=python,pid=4242,uid=0";
    const KILLED: &str = "3,11,101,-;Memory cgroup out of memory: Killed process 4242 (python) total-vm:9000kB, anon-rss:51200kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0";

    fn kills(w: &OomWatcher) -> Vec<(String, String, &'static str, u64)> {
        w.counts()
            .kills
            .into_iter()
            .map(|(k, n)| (k.cgroup, k.victim, k.source, n))
            .collect()
    }

    #[test]
    fn a_kill_both_sources_see_counts_once_as_both() {
        let t = Tree::new();
        t.kills_in("/kubepods.slice", 0, 0);
        t.kills_in("/kubepods.slice/pod", 0, 0);
        t.kills_in("/kubepods.slice/pod/worker", 0, 0);
        let (mut w, ids) = t.watcher();
        let t0 = Instant::now();
        w.poll(&ids, t0, true);
        // The report's two lines arrive in two reads; the counters rise all the way up.
        t.log(&[CONSTRAINT]);
        w.poll(&ids, t0 + Duration::from_secs(1), false);
        t.log(&[KILLED]);
        t.kills_in("/kubepods.slice", 1, 0);
        t.kills_in("/kubepods.slice/pod", 1, 0);
        t.kills_in("/kubepods.slice/pod/worker", 1, 1);
        w.poll(&ids, t0 + Duration::from_secs(2), true);
        w.poll(&ids, t0 + Duration::from_secs(20), true);
        assert_eq!(
            kills(&w),
            vec![(
                "/kubepods.slice/pod/worker".into(),
                "python".into(),
                "both",
                1
            )]
        );
        let c = w.counts();
        assert_eq!(c.last_anon_rss[0].1, 51200 * 1024);
    }

    #[test]
    fn one_source_alone_counts_after_the_wait_and_v1_counters_are_told_apart() {
        let t = Tree::new();
        // No `.local` files: the rise in the parent that its child explains is the child's.
        t.write("sys/fs/cgroup/job/memory.events", "oom_kill 0\n");
        t.write("sys/fs/cgroup/job/step/memory.events", "oom_kill 0\n");
        let (mut w, ids) = t.watcher();
        let t0 = Instant::now();
        w.poll(&ids, t0, true);
        t.write("sys/fs/cgroup/job/memory.events", "oom_kill 2\n");
        t.write("sys/fs/cgroup/job/step/memory.events", "oom_kill 1\n");
        w.poll(&ids, t0 + Duration::from_secs(2), true);
        assert!(kills(&w).is_empty(), "waits for the kernel log");
        w.poll(&ids, t0 + Duration::from_secs(10), true);
        let mut got = kills(&w);
        got.sort();
        assert_eq!(
            got,
            vec![
                ("/job".into(), String::new(), "memory_events", 1),
                ("/job/step".into(), String::new(), "memory_events", 1),
            ]
        );

        t.log(&[
            "[ 99.1] Out of memory: Killed process 77 (trainer) total-vm:1kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB",
        ]);
        w.poll(&ids, t0 + Duration::from_secs(11), false);
        w.poll(&ids, t0 + Duration::from_secs(30), false);
        assert!(kills(&w).contains(&(String::new(), "trainer".into(), "kernel_log", 1)));
    }

    #[test]
    fn kills_before_the_watch_began_are_not_counted() {
        let t = Tree::new();
        t.log(&[CONSTRAINT, KILLED]);
        t.kills_in("/kubepods.slice/pod/worker", 1, 1);
        let (mut w, ids) = t.watcher();
        let t0 = Instant::now();
        w.poll(&ids, t0, true);
        w.poll(&ids, t0 + Duration::from_secs(30), true);
        assert!(kills(&w).is_empty(), "{:?}", kills(&w));
    }
}
