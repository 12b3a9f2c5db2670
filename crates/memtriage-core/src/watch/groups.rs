//! Processes gathered into groups for a machine-wide view: by default one group per
//! top-level job (a process and its descendants, named after the root), or by memory
//! cgroup, or by command-line patterns. Group fault counters never go down: a
//! process that ends leaves its faults counted in its group.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use regex::Regex;

use crate::model::history::ProcessBrief;
use crate::sampler::Sample;

use super::identity::Identities;
use super::largest::{largest, LARGEST};

/// How processes are grouped.
#[derive(Debug, Clone)]
pub enum Grouping {
    /// One group per top-level job: a process and its descendants, named
    /// `COMM[PID]` after the root, the first process below a launcher (a shell, sshd,
    /// tmux, sudo, a container shim, init). Launchers themselves are grouped by name.
    Job,
    /// One group per memory cgroup, named by its path.
    Cgroup,
    /// Named groups of processes whose command line matches, first match wins; the
    /// others by job.
    Patterns(Vec<(String, Regex)>),
}

/// The group of processes folded together past the cap.
pub const OTHER: &str = "other";

/// Programs that start jobs rather than being one: a job's root is the first process
/// below them.
const LAUNCHERS: &[&str] = &[
    "systemd",
    "init",
    "bash",
    "sh",
    "dash",
    "zsh",
    "fish",
    "ksh",
    "tcsh",
    "csh",
    "sshd",
    "sshd-session",
    "tmux: server",
    "tmux: client",
    "tmux",
    "screen",
    "SCREEN",
    "sudo",
    "su",
    "login",
    "containerd-shim",
    "containerd-shim-runc-v2",
    "conmon",
    "runc",
    "tini",
    "dumb-init",
    "docker-init",
    "catatonit",
    "slurmstepd",
    "srun",
];

fn is_launcher(comm: &str) -> bool {
    LAUNCHERS.contains(&comm)
}

/// One group at one sample. Figures read from PSS readings cover the members read
/// so far (`pss_coverage`); `None` where no member has a reading.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupView {
    pub name: String,
    /// Whether it has live processes; an ended group is kept (its counters only) for
    /// the grace period, so the last faults reach the scraper.
    pub live: bool,
    pub processes: usize,
    pub rss: u64,
    pub pss: Option<u64>,
    pub uss: Option<u64>,
    pub swap: Option<u64>,
    /// Members with a PSS reading, over members.
    pub pss_coverage: f64,
    /// Seconds since the oldest reading behind `pss`.
    pub pss_age: Option<f64>,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// GPU memory held, by NVML device index; `None` where NVML could not say how
    /// much a member held.
    pub gpu: Vec<(u32, Option<u64>)>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    minor: u64,
    major: u64,
}

struct Kept {
    totals: Totals,
    last_live: Instant,
}

/// Groups kept across samples.
pub struct Groups {
    grouping: Grouping,
    max_groups: usize,
    grace: Duration,
    kept: HashMap<String, Kept>,
    other: Totals,
    last_faults: HashMap<i32, (u64, u64)>,
    largest: Vec<ProcessBrief>,
}

impl Groups {
    /// `max_groups` counts the `other` group; at least 2.
    pub fn new(grouping: Grouping, max_groups: usize, grace: Duration) -> Self {
        Groups {
            grouping,
            max_groups: max_groups.max(2),
            grace,
            kept: HashMap::new(),
            other: Totals::default(),
            last_faults: HashMap::new(),
            largest: Vec::new(),
        }
    }

    /// The largest processes of the last sample absorbed, with their groups.
    pub fn largest(&self) -> &[ProcessBrief] {
        &self.largest
    }

    /// The groups of this sample, largest RSS first, and how many were folded into
    /// [`OTHER`] by the cap.
    pub fn absorb(
        &mut self,
        sample: &Sample,
        identities: &Identities,
        now: Instant,
    ) -> (Vec<GroupView>, usize) {
        let names = self.name_processes(sample, identities);
        self.largest = largest(sample, &names, identities, LARGEST);
        let mut views: HashMap<&str, GroupView> = HashMap::new();
        let mut read: HashMap<&str, usize> = HashMap::new();
        for (p, name) in sample.processes.iter().zip(&names) {
            let v = views.entry(name).or_insert_with(|| empty_view(name));
            v.processes += 1;
            v.rss += p.rss;
            if let Some(r) = &p.pss {
                *read.entry(name).or_default() += 1;
                v.pss = Some(v.pss.unwrap_or(0) + r.pss);
                v.uss = Some(v.uss.unwrap_or(0) + r.uss);
                v.swap = Some(v.swap.unwrap_or(0) + r.swap);
                let age = (sample.t - r.at).max(0.0);
                v.pss_age = Some(v.pss_age.map_or(age, |a| a.max(age)));
            }
        }
        for v in views.values_mut() {
            v.pss_coverage =
                read.get(v.name.as_str()).copied().unwrap_or(0) as f64 / v.processes as f64;
        }
        if let Some(gpu) = &sample.gpu {
            let by_pid: HashMap<i32, &str> = sample
                .processes
                .iter()
                .zip(&names)
                .map(|(p, n)| (p.pid, n.as_str()))
                .collect();
            for device in &gpu.devices {
                for holder in &device.processes {
                    let Some(name) = holder.pid.and_then(|pid| by_pid.get(&pid)) else {
                        continue;
                    };
                    let Some(v) = views.get_mut(name) else {
                        continue;
                    };
                    add_gpu(&mut v.gpu, device.index, holder.used);
                }
            }
        }

        // The cap: the largest groups keep their names.
        let mut live: Vec<GroupView> = views.into_values().collect();
        live.sort_by(|a, b| b.rss.cmp(&a.rss).then(a.name.cmp(&b.name)));
        let folded_names: HashSet<String> = if live.len() > self.max_groups {
            live[self.max_groups - 1..]
                .iter()
                .map(|v| v.name.clone())
                .collect()
        } else {
            HashSet::new()
        };

        // Counters: each process's faults since it was last seen go to its group.
        let mut seen = HashMap::with_capacity(sample.processes.len());
        for (p, name) in sample.processes.iter().zip(&names) {
            let (minor, major) = match self.last_faults.get(&p.pid) {
                Some(&(m, j)) => (
                    p.minor_faults.saturating_sub(m),
                    p.major_faults.saturating_sub(j),
                ),
                None => (p.minor_faults, p.major_faults),
            };
            seen.insert(p.pid, (p.minor_faults, p.major_faults));
            let kept = self.kept.entry(name.clone()).or_insert(Kept {
                totals: Totals::default(),
                last_live: now,
            });
            kept.last_live = now;
            // Faults of a folded group are `other`'s, and only its: counted under the
            // group's own name too, they would be counted twice in a sum.
            if folded_names.contains(name) {
                self.other.minor += minor;
                self.other.major += major;
            } else {
                kept.totals.minor += minor;
                kept.totals.major += major;
            }
        }
        self.last_faults = seen;
        let grace = self.grace;
        self.kept
            .retain(|_, k| now.saturating_duration_since(k.last_live) <= grace);

        let folded = folded_names.len();
        let mut out: Vec<GroupView> = Vec::with_capacity(live.len().min(self.max_groups) + 1);
        let mut other: Option<GroupView> = None;
        for mut v in live {
            if folded_names.contains(&v.name) {
                let o = other.get_or_insert_with(|| empty_view(OTHER));
                merge(o, &v);
                continue;
            }
            if let Some(k) = self.kept.get(&v.name) {
                v.minor_faults = k.totals.minor;
                v.major_faults = k.totals.major;
            }
            out.push(v);
        }
        if let Some(mut o) = other {
            o.minor_faults = self.other.minor;
            o.major_faults = self.other.major;
            out.push(o);
        }
        let live_names: HashSet<&str> = out.iter().map(|v| v.name.as_str()).collect();
        let mut ended: Vec<GroupView> = self
            .kept
            .iter()
            .filter(|(name, _)| {
                !live_names.contains(name.as_str()) && !folded_names.contains(*name)
            })
            .map(|(name, k)| GroupView {
                live: false,
                minor_faults: k.totals.minor,
                major_faults: k.totals.major,
                ..empty_view(name)
            })
            .collect();
        ended.sort_by(|a, b| a.name.cmp(&b.name));
        out.extend(ended);
        (out, folded)
    }

    /// Each process's group name, in the sample's order.
    fn name_processes(&self, sample: &Sample, identities: &Identities) -> Vec<String> {
        let by_pid: HashMap<i32, (i32, &str)> = sample
            .processes
            .iter()
            .map(|p| (p.pid, (p.ppid, p.comm.as_str())))
            .collect();
        let mut roots: HashMap<i32, i32> = HashMap::new();
        sample
            .processes
            .iter()
            .map(|p| match &self.grouping {
                Grouping::Job => job_name(p.pid, &by_pid, &mut roots),
                Grouping::Cgroup => identities
                    .get(p.pid)
                    .and_then(|id| id.cgroup.clone())
                    .unwrap_or_else(|| "(unknown)".into()),
                Grouping::Patterns(patterns) => identities
                    .get(p.pid)
                    .and_then(|id| {
                        patterns
                            .iter()
                            .find(|(_, re)| re.is_match(&id.cmdline) || re.is_match(&id.comm))
                            .map(|(name, _)| name.clone())
                    })
                    .unwrap_or_else(|| job_name(p.pid, &by_pid, &mut roots)),
            })
            .collect()
    }
}

/// The root of each process's job: the first process below a launcher (a shell,
/// sshd, tmux, sudo, a container shim, init); a launcher is its own root.
pub fn job_roots<'a>(
    processes: impl IntoIterator<Item = (i32, i32, &'a str)>,
) -> HashMap<i32, i32> {
    let by_pid: HashMap<i32, (i32, &str)> = processes
        .into_iter()
        .map(|(pid, ppid, comm)| (pid, (ppid, comm)))
        .collect();
    let mut roots = HashMap::new();
    let pids: Vec<i32> = by_pid.keys().copied().collect();
    for pid in pids {
        let launcher = by_pid.get(&pid).is_some_and(|(_, c)| is_launcher(c)) || pid == 1;
        let root = if launcher {
            pid
        } else {
            job_root(pid, &by_pid, &mut roots)
        };
        roots.insert(pid, root);
    }
    roots
}

/// `COMM[ROOT]` of the job `pid` belongs to; a launcher's own name.
fn job_name(pid: i32, by_pid: &HashMap<i32, (i32, &str)>, roots: &mut HashMap<i32, i32>) -> String {
    let Some(&(_, comm)) = by_pid.get(&pid) else {
        return "(unknown)".into();
    };
    if is_launcher(comm) || pid == 1 {
        return comm.to_string();
    }
    let root = job_root(pid, by_pid, roots);
    let root_comm = by_pid.get(&root).map_or(comm, |(_, c)| c);
    format!("{root_comm}[{root}]")
}

fn job_root(pid: i32, by_pid: &HashMap<i32, (i32, &str)>, roots: &mut HashMap<i32, i32>) -> i32 {
    let mut chain = Vec::new();
    let mut cur = pid;
    let root = loop {
        if let Some(&r) = roots.get(&cur) {
            break r;
        }
        chain.push(cur);
        let parent = by_pid.get(&cur).map(|(ppid, _)| *ppid);
        match parent.and_then(|pp| by_pid.get(&pp).map(|(_, c)| (pp, *c))) {
            Some((pp, pcomm)) if pp > 1 && !is_launcher(pcomm) && chain.len() < 4096 => cur = pp,
            _ => break cur,
        }
    };
    for p in chain {
        roots.insert(p, root);
    }
    root
}

fn empty_view(name: &str) -> GroupView {
    GroupView {
        name: name.to_string(),
        live: true,
        processes: 0,
        rss: 0,
        pss: None,
        uss: None,
        swap: None,
        pss_coverage: 0.0,
        pss_age: None,
        minor_faults: 0,
        major_faults: 0,
        gpu: Vec::new(),
    }
}

fn merge(into: &mut GroupView, v: &GroupView) {
    let covered = |g: &GroupView| g.pss_coverage * g.processes as f64;
    let read = covered(into) + covered(v);
    into.processes += v.processes;
    into.rss += v.rss;
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    into.pss = add(into.pss, v.pss);
    into.uss = add(into.uss, v.uss);
    into.swap = add(into.swap, v.swap);
    into.pss_coverage = if into.processes == 0 {
        0.0
    } else {
        read / into.processes as f64
    };
    into.pss_age = match (into.pss_age, v.pss_age) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    for &(i, used) in &v.gpu {
        add_gpu(&mut into.gpu, i, used);
    }
}

fn add_gpu(held: &mut Vec<(u32, Option<u64>)>, device: u32, used: Option<u64>) {
    match held.iter_mut().find(|(i, _)| *i == device) {
        Some((_, sum)) => *sum = sum.zip(used).map(|(a, b)| a + b),
        None => held.push((device, used)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::ProcessSample;

    fn proc(pid: i32, ppid: i32, comm: &str, rss: u64, minor: u64) -> ProcessSample {
        let mut p = ProcessSample::bare(pid, ppid, comm, rss);
        p.minor_faults = minor;
        p
    }

    fn identities() -> Identities {
        Identities::new(
            &crate::Root::at("/nonexistent-root"),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn a_job_is_its_root_below_a_launcher_and_workers_fold_into_it() {
        let sample = Sample::bare(
            1.0,
            vec![
                proc(10, 1, "sshd", 100, 0),
                proc(20, 10, "bash", 100, 0),
                proc(30, 20, "python", 1000, 5),
                proc(31, 30, "pt_data_worker", 500, 7),
                proc(40, 1, "containerd", 50, 0),
            ],
        );
        let mut g = Groups::new(Grouping::Job, 100, Duration::from_secs(60));
        let (views, folded) = g.absorb(&sample, &identities(), Instant::now());
        assert_eq!(folded, 0);
        let job = views.iter().find(|v| v.name == "python[30]").unwrap();
        assert_eq!((job.processes, job.rss, job.minor_faults), (2, 1500, 12));
        assert!(views.iter().any(|v| v.name == "containerd[40]"));
        assert!(views.iter().any(|v| v.name == "bash" && v.processes == 1));
        assert_eq!(job.pss, None, "no reading yet is unknown, not 0");
    }

    #[test]
    fn counters_keep_the_faults_of_ended_workers_and_ended_groups_expire() {
        let mut g = Groups::new(Grouping::Job, 100, Duration::from_secs(60));
        let t0 = Instant::now();
        let one = Sample::bare(
            1.0,
            vec![
                proc(30, 1, "python", 10, 100),
                proc(31, 30, "python", 10, 50),
            ],
        );
        g.absorb(&one, &identities(), t0);
        let two = Sample::bare(2.0, vec![proc(30, 1, "python", 10, 110)]);
        let (views, _) = g.absorb(&two, &identities(), t0 + Duration::from_secs(1));
        assert_eq!(
            views[0].minor_faults, 160,
            "the ended worker's 50 stay counted"
        );
        let three = Sample::bare(3.0, vec![]);
        let (views, _) = g.absorb(&three, &identities(), t0 + Duration::from_secs(30));
        assert_eq!(views.len(), 1);
        assert!(!views[0].live);
        let (views, _) = g.absorb(&three, &identities(), t0 + Duration::from_secs(200));
        assert!(views.is_empty(), "dropped after the grace period");
    }

    #[test]
    fn the_cap_folds_the_smallest_groups_into_other() {
        let processes = (0..10)
            .map(|i| proc(100 + i, 1, "job", (i as u64 + 1) * 100, 1))
            .collect();
        let mut g = Groups::new(Grouping::Job, 4, Duration::from_secs(60));
        let (views, folded) =
            g.absorb(&Sample::bare(1.0, processes), &identities(), Instant::now());
        assert_eq!(folded, 7);
        assert_eq!(views.len(), 4);
        let other = views.iter().find(|v| v.name == OTHER).unwrap();
        assert_eq!(
            (other.processes, other.rss, other.minor_faults),
            (7, 2800, 7)
        );
        assert_eq!(views[0].name, "job[109]");
    }

    #[test]
    fn faults_of_a_group_folded_for_a_while_are_counted_once_in_a_sum() {
        let mut g = Groups::new(Grouping::Job, 2, Duration::from_secs(60));
        let t0 = Instant::now();
        let ids = identities();
        let sum = |views: &[GroupView]| views.iter().map(|v| v.minor_faults).sum::<u64>();
        // Three jobs, cap 2 (one named group and `other`).
        let tick = |big: u64, mid: u64, mid_rss: u64| {
            Sample::bare(
                1.0,
                vec![
                    proc(10, 1, "big", 1000, big),
                    proc(20, 1, "mid", mid_rss, mid),
                    proc(30, 1, "small", 1, 5),
                ],
            )
        };
        let (v, folded) = g.absorb(&tick(100, 10, 10), &ids, t0);
        assert_eq!((folded, sum(&v)), (2, 115));
        let (v, _) = g.absorb(&tick(100, 30, 10), &ids, t0 + Duration::from_secs(1));
        assert_eq!(sum(&v), 135);
        let mut last: HashMap<String, u64> = HashMap::new();
        for v in &v {
            last.insert(v.name.clone(), v.minor_faults);
        }
        // The middle job grows past the big one: now the big one is folded. What
        // every series ever exported counted, summed, is what the processes did.
        let (v, folded) = g.absorb(&tick(150, 40, 5000), &ids, t0 + Duration::from_secs(2));
        assert_eq!(folded, 2);
        for v in &v {
            last.insert(v.name.clone(), v.minor_faults);
        }
        assert_eq!(last.values().sum::<u64>(), 150 + 40 + 5, "{last:?}");
    }
}
