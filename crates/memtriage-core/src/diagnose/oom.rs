//! One OOM kill, described the same way wherever it was seen (the kernel log that
//! `doctor` reads, a supervised run, a pasted log, the machine's history), the one
//! fix for it, and the one `run.oom-killed` finding (`run`'s and `why`'s).

use crate::diagnose::growth;
use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::system::{OomConstraint, OomKill};
use crate::model::units::iec;

/// What ran out, as far as the evidence tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A memory cgroup's limit: a container, pod, Slurm job or systemd slice.
    Cgroup,
    /// The whole machine.
    Machine,
    /// A kill seen without the kernel's record of it.
    Unknown,
}

impl Limit {
    pub fn of(k: &OomKill) -> Limit {
        Limit::of_constraint(Some(k.constraint))
    }

    /// What ran out by the constraint a report gave; `Unknown` without a report.
    pub fn of_constraint(constraint: Option<OomConstraint>) -> Limit {
        match constraint {
            Some(OomConstraint::Cgroup) => Limit::Cgroup,
            Some(_) => Limit::Machine,
            None => Limit::Unknown,
        }
    }
}

/// The cgroup whose limit was hit, and that limit where known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitHit {
    pub cgroup: String,
    pub bytes: Option<u64>,
}

/// What the `run.oom-killed` finding is built from.
#[derive(Debug, Clone)]
pub struct OomKilled {
    /// The victim as named: `pid 12 (python3, rank 1)`, `python3 (pid 7)`.
    pub victim: String,
    /// The userspace killer that killed it (`systemd-oomd`); `None`: the kernel.
    pub userspace_killer: Option<String>,
    pub limit: Limit,
    /// For a cgroup's limit: which, where known.
    pub limit_hit: Option<LimitHit>,
    /// A steady growth that went on until the kill (bytes a second), where measured.
    pub grew_until_killed: Option<f64>,
    /// Seen by `run`: what grew is already in its figures, so the fix points there
    /// instead of at running `run`.
    pub supervised: bool,
    pub evidence: Vec<Evidence>,
}

/// `run.oom-killed`: who killed whom, at which limit, and the fix for it.
pub fn killed(kill: OomKilled) -> Finding {
    let killer = kill.userspace_killer.as_deref().unwrap_or("the kernel");
    let what = format!("out of memory: {killer} killed {}", kill.victim);
    let title = match (kill.limit, &kill.limit_hit) {
        (Limit::Cgroup, Some(hit)) => format!(
            "{what} at its cgroup's memory limit ({}{})",
            hit.cgroup,
            hit.bytes
                .map(|b| format!(", {}", iec(b)))
                .unwrap_or_default()
        ),
        (Limit::Cgroup, None) => format!("{what} at its cgroup's memory limit"),
        (Limit::Machine, _) => format!("{what} (the machine ran out of memory)"),
        (Limit::Unknown, _) => what,
    };
    let limit_fix = if kill.supervised {
        fix(kill.limit).replacen(see_what_grew!(), WHAT_GREW_IN_THIS_RUN, 1)
    } else {
        fix(kill.limit).to_string()
    };
    let fix = match kill.grew_until_killed.filter(|r| *r > 0.0) {
        Some(rate) => format!(
            "Its memory grew steadily until it was killed, {}: more room only delays a growth \
             like this; find what grows (in Python, compare two `tracemalloc` snapshots).\n{}",
            growth::rate(rate),
            limit_fix
        ),
        None => limit_fix,
    };
    Finding {
        id: ids::RUN_OOM_KILLED.into(),
        severity: Severity::Error,
        title,
        evidence: kill.evidence,
        why: "An OOM kill is SIGKILL: no Python traceback, just `Killed` and exit 137.".into(),
        fix,
        assessment: Some(Assessment {
            certainty: Certainty::Confirmed,
            cause: CauseKind::Capacity,
            confirm: String::new(),
        }),
    }
}

/// `python (pid 48213)`.
pub fn victim(k: &OomKill) -> String {
    format!("{} (pid {})", k.comm, k.pid)
}

/// `pid 48213 (python)`, for an evidence label.
pub fn pid_label(k: &OomKill) -> String {
    crate::model::process::process_label(k.pid, &k.comm, None)
}

/// The victim's memory as the kernel printed it, in the kernel's order and names.
pub fn sizes(k: &OomKill) -> [(&'static str, Option<u64>); 4] {
    [
        ("anon-rss", k.anon_rss),
        ("total-vm", k.total_vm),
        ("file-rss", k.file_rss),
        ("shmem-rss", k.shmem_rss),
    ]
}

/// Which limit was hit, in words and in the kernel's constraint name.
pub fn constraint(k: &OomKill) -> String {
    match (k.constraint, &k.oom_memcg, &k.memcg) {
        (OomConstraint::Global, _, _) => {
            "global out of memory: the whole machine ran out (CONSTRAINT_NONE)".into()
        }
        (OomConstraint::Cgroup, Some(limit), _) => {
            format!("cgroup limit of {limit} (CONSTRAINT_MEMCG)")
        }
        (OomConstraint::Cgroup, None, Some(cg)) => {
            format!("cgroup limit, in {cg} (CONSTRAINT_MEMCG)")
        }
        (OomConstraint::Cgroup, None, None) => "a memory cgroup limit (CONSTRAINT_MEMCG)".into(),
        (OomConstraint::Cpuset, _, _) => {
            "cpuset out of memory: its memory nodes ran out (CONSTRAINT_CPUSET)".into()
        }
        (OomConstraint::MemoryPolicy, _, _) => {
            "memory policy out of memory: its NUMA nodes ran out (CONSTRAINT_MEMORY_POLICY)".into()
        }
    }
}

/// The kernel stamps its log with the scheduler clock and /proc/uptime reads the
/// boot-time clock; the first can run a few milliseconds ahead, so a kill stamped
/// up to this much "after now" happened just now.
const LOG_CLOCK_AHEAD: f64 = 1.0;

/// Seconds since the kill, from its log timestamp and the machine's uptime; `None`
/// when it cannot be a kill of this boot's past.
pub fn age(timestamp: f64, uptime: f64) -> Option<f64> {
    let age = uptime - timestamp;
    (age >= -LOG_CLOCK_AHEAD).then_some(age.max(0.0))
}

/// A short age: `42 s`, `17 min`, `5 h`, `3 days`.
pub fn ago(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..120 => format!("{s} s"),
        120..7200 => format!("{} min", s / 60),
        7200..172_800 => format!("{} h", s / 3600),
        _ => format!("{} days", s / 86_400),
    }
}

/// When it happened: the log's wall time, or seconds after boot, and how long ago
/// when the machine's uptime is known.
pub fn when(k: &OomKill, uptime: Option<f64>) -> Option<Evidence> {
    let ago = match (k.timestamp, uptime) {
        (Some(t), Some(up)) => age(t, up).map_or(String::new(), |a| format!(", {} ago", ago(a))),
        _ => String::new(),
    };
    if let Some(w) = &k.wall_time {
        return Some(Evidence::text("when", format!("{w}{ago}"), ""));
    }
    let t = k.timestamp?;
    Some(
        Evidence::text("when", format!("{t:.1} s after boot{ago}"), "")
            .with_quantity(Quantity::Seconds(t)),
    )
}

/// The kill in one line: the victim's memory, the limit it hit, when.
pub fn summary(k: &OomKill, uptime: Option<f64>) -> String {
    let mut parts: Vec<String> = sizes(k)
        .into_iter()
        .filter(|(name, _)| *name != "total-vm")
        .filter_map(|(name, v)| Some(format!("{name} {}", iec(v?))))
        .collect();
    parts.push(constraint(k));
    if let Some(w) = when(k, uptime) {
        parts.push(w.value);
    }
    parts.join(", ")
}

/// The kill as evidence, one value a line, each from `source`.
pub fn evidence(k: &OomKill, source: &str, uptime: Option<f64>) -> Vec<Evidence> {
    let mut out = vec![Evidence::text("killed", victim(k), source)];
    for (label, v) in sizes(k) {
        if let Some(v) = v {
            out.push(Evidence::bytes(label, v, source));
        }
    }
    out.push(Evidence::text("constraint", constraint(k), source));
    if let Some(m) = &k.oom_memcg {
        out.push(Evidence::text(
            "cgroup whose limit was hit",
            m.clone(),
            source,
        ));
    }
    if let Some(m) = &k.memcg {
        out.push(Evidence::text("victim's cgroup", m.clone(), source));
    }
    if let Some(mut w) = when(k, uptime) {
        w.source = source.to_string();
        out.push(w);
    }
    out
}

// The fix is assembled from literals so that each variant is a `&'static str` that
// the log rule table (a static) can hold too.
macro_rules! see_what_grew {
    () => {
        "See what grew and when: memtriage run -- python train.py (samples the job's whole \
         process tree: parent, DataLoader workers, NCCL helpers)."
    };
}
macro_rules! raise_the_limit {
    () => {
        "docker run --memory=…, Kubernetes resources.limits.memory, Slurm #SBATCH --mem=… \
         (or --mem-per-gpu), systemd MemoryMax="
    };
}
macro_rules! lower_the_peak {
    () => {
        "Or lower the peak: fewer DataLoader workers (num_workers; each holds its own copy of \
         what it touched), a smaller batch, load checkpoints with torch.load(path, mmap=True) \
         or safetensors instead of a full copy in RAM, keep datasets in numpy arrays, Arrow \
         tables or memory-mapped files instead of Python objects."
    };
}
/// The fix when what ran out is not known: also the tail of the fix for a SIGKILL
/// seen without the kernel's record of it.
macro_rules! unknown_limit_fix {
    () => {
        concat!(
            $crate::diagnose::oom::see_what_grew!(),
            "\nIf a limit was hit, raise it: ",
            $crate::diagnose::oom::raise_the_limit!(),
            ".\n",
            $crate::diagnose::oom::lower_the_peak!()
        )
    };
}
pub(crate) use {lower_the_peak, raise_the_limit, see_what_grew, unknown_limit_fix};

/// In place of [`see_what_grew`] inside `run`: the user is already there.
const WHAT_GREW_IN_THIS_RUN: &str = "What grew, and when, is in this run's figures: the \
     processes above and, for Python, the lines they grew under (`--record FILE` keeps them; \
     `memtriage report FILE --html` draws them over time).";

/// The one fix for an OOM kill.
pub const fn fix(limit: Limit) -> &'static str {
    match limit {
        Limit::Cgroup => concat!(
            see_what_grew!(),
            "\nThe job hit its memory limit: raise it above the peak (",
            raise_the_limit!(),
            ").\n",
            lower_the_peak!()
        ),
        Limit::Machine => concat!(
            see_what_grew!(),
            "\nThe machine ran out of RAM: stop other memory users or add RAM; memtriage doctor \
             checks the machine's swap and overcommit settings.\n",
            lower_the_peak!()
        ),
        Limit::Unknown => unknown_limit_fix!(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kill(constraint: OomConstraint) -> OomKill {
        OomKill {
            pid: 7,
            comm: "python".into(),
            anon_rss: Some(1 << 30),
            total_vm: Some(4 << 30),
            file_rss: None,
            shmem_rss: Some(0),
            uid: None,
            oom_score_adj: None,
            constraint,
            oom_memcg: Some("/job".into()),
            memcg: None,
            timestamp: Some(100.0),
            wall_time: None,
        }
    }

    #[test]
    fn the_summary_leaves_out_what_the_kernel_did_not_print() {
        let s = summary(&kill(OomConstraint::Cgroup), Some(160.0));
        assert_eq!(
            s,
            "anon-rss 1.0 GiB, shmem-rss 0 B, cgroup limit of /job (CONSTRAINT_MEMCG), \
             100.0 s after boot, 60 s ago"
        );
    }

    #[test]
    fn a_kill_stamped_a_few_ms_after_now_happened_just_now() {
        assert_eq!(age(100.0015, 100.0), Some(0.0));
        assert_eq!(age(100.0, 160.0), Some(60.0));
        assert_eq!(age(200.0, 100.0), None, "not a kill of this boot's past");
        let s = summary(&kill(OomConstraint::Cgroup), Some(99.999));
        assert!(s.ends_with("100.0 s after boot, 0 s ago"), "{s}");
    }

    #[test]
    fn evidence_carries_bytes_as_numbers() {
        let e = evidence(&kill(OomConstraint::Global), "dmesg:3", None);
        let anon = e.iter().find(|e| e.label == "anon-rss");
        assert_eq!(
            anon.and_then(|e| e.quantity),
            Some(Quantity::Bytes(1 << 30))
        );
        assert!(e.iter().all(|e| e.source == "dmesg:3"));
        assert!(e.iter().any(|e| e.value.contains("CONSTRAINT_NONE")));
    }

    #[test]
    fn each_limit_has_its_own_first_step_and_the_same_rest() {
        assert!(fix(Limit::Cgroup).contains("resources.limits.memory"));
        assert!(fix(Limit::Machine).contains("add RAM"));
        for l in [Limit::Cgroup, Limit::Machine, Limit::Unknown] {
            assert!(fix(l).contains("torch.load(path, mmap=True)"));
            assert!(!fix(l).contains("--limit"));
        }
    }

    #[test]
    fn the_finding_names_the_killer_the_limit_and_a_growth_that_ran_until_the_kill() {
        let kill = |limit, limit_hit, grew| OomKilled {
            victim: "python3 (pid 7)".into(),
            userspace_killer: None,
            limit,
            limit_hit,
            grew_until_killed: grew,
            supervised: false,
            evidence: Vec::new(),
        };
        let hit = LimitHit {
            cgroup: "/train".into(),
            bytes: Some(800 << 20),
        };
        let f = killed(kill(Limit::Cgroup, Some(hit), None));
        assert_eq!(f.id, ids::RUN_OOM_KILLED);
        assert_eq!(
            f.title,
            "out of memory: the kernel killed python3 (pid 7) at its cgroup's memory limit \
             (/train, 800 MiB)"
        );
        assert_eq!(f.fix, fix(Limit::Cgroup));
        let f = killed(kill(Limit::Machine, None, Some(10.0 * (1 << 20) as f64)));
        assert!(
            f.title.ends_with("(the machine ran out of memory)"),
            "{}",
            f.title
        );
        assert!(
            f.fix
                .starts_with("Its memory grew steadily until it was killed, 10.0 MiB/s")
                && f.fix.ends_with(fix(Limit::Machine)),
            "{}",
            f.fix
        );
        let by_oomd = OomKilled {
            userspace_killer: Some("systemd-oomd".into()),
            ..kill(Limit::Unknown, None, None)
        };
        assert_eq!(
            killed(by_oomd).title,
            "out of memory: systemd-oomd killed python3 (pid 7)"
        );
    }

    #[test]
    fn inside_run_the_fix_points_at_its_figures_not_at_running_run() {
        let kill = OomKilled {
            victim: "python3 (pid 7)".into(),
            userspace_killer: None,
            limit: Limit::Cgroup,
            limit_hit: None,
            grew_until_killed: None,
            supervised: true,
            evidence: Vec::new(),
        };
        let f = killed(kill);
        assert!(!f.fix.contains("memtriage run --"), "{}", f.fix);
        assert!(f
            .fix
            .starts_with("What grew, and when, is in this run's figures"));
        assert!(f.fix.contains("raise it above the peak"), "{}", f.fix);
    }
}
