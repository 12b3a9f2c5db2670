//! `why`'s report (`memtriage.why/v1`): a death nobody supervised, explained from the
//! machine's history with the findings `run` gives.

use serde::Serialize;

use super::finding::Finding;
use super::history::KillSource;
use super::system::OomConstraint;

pub const WHY_SCHEMA: &str = "memtriage.why/v1";

/// How a process died.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeathKind {
    /// Killed for memory: by the kernel's OOM killer or a userspace killer.
    OomKill,
    /// A signal the kernel logged: a segfault, a bus error, an illegal instruction.
    Fault,
    /// The kernel itself crashed (an oops, BUG, GPF, panic) while the process ran.
    KernelCrash,
}

/// The death explained.
#[derive(Debug, Clone, Serialize)]
pub struct Death {
    pub kind: DeathKind,
    /// The signal of a fault (`SIGSEGV`, `SIGBUS`, …); SIGKILL for an OOM kill; empty
    /// for a kernel crash.
    pub signal: &'static str,
    /// The object a fault was in (`libtorch_cpu.so`), where the kernel said.
    pub object: Option<String>,
    /// Unix milliseconds.
    pub at_ms: i64,
    pub pid: Option<i32>,
    pub victim: Option<String>,
    pub cmdline: Option<String>,
    pub cgroup: Option<String>,
    /// The cgroup whose limit was hit, and that limit, where recorded.
    pub limit_cgroup: Option<String>,
    pub limit_bytes: Option<u64>,
    /// What ran short; `None` where no report said.
    pub constraint: Option<OomConstraint>,
    pub anon_rss: Option<u64>,
    pub killer: String,
    pub source: KillSource,
}

impl Death {
    /// A death the kernel's log told of (a fault, a crash): no killer but the kernel,
    /// no limit, no OOM report.
    pub fn logged(kind: DeathKind, at_ms: i64, pid: Option<i32>, victim: Option<String>) -> Death {
        Death {
            kind,
            signal: "",
            object: None,
            at_ms,
            pid,
            victim,
            cmdline: None,
            cgroup: None,
            limit_cgroup: None,
            limit_bytes: None,
            constraint: None,
            anon_rss: None,
            killer: super::history::KERNEL_KILLER.into(),
            source: KillSource::KernelLog,
        }
    }

    /// `python3 (pid 4242)`, or what is known of it.
    pub fn label(&self) -> String {
        victim_label(self.victim.as_deref(), self.pid)
    }

    /// What happened, said in a line: `python3 (pid 4242) died`, `the kernel crashed
    /// while python3 (pid 4242) ran`.
    pub fn headline(&self) -> String {
        match self.kind {
            DeathKind::KernelCrash if self.pid.is_some() || self.victim.is_some() => {
                format!("the kernel crashed while {} ran", self.label())
            }
            DeathKind::KernelCrash => "the kernel crashed".into(),
            _ => format!("{} died", self.label()),
        }
    }
}

/// `python3 (pid 4242)`, or what is known of a victim.
pub fn victim_label(victim: Option<&str>, pid: Option<i32>) -> String {
    match (victim, pid) {
        (Some(v), Some(p)) => format!("{v} (pid {p})"),
        (Some(v), None) => v.to_string(),
        (None, Some(p)) => format!("pid {p}"),
        (None, None) => "a process".into(),
    }
}

/// How the victim's job grew before it died.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Growth {
    /// Unix ms of the last interval before the growth (its base).
    pub started_ms: i64,
    pub last_ms: i64,
    pub start_bytes: u64,
    pub end_bytes: u64,
    pub bytes_per_second: f64,
    pub r_squared: f64,
    pub points: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct WhyReport {
    pub schema: &'static str,
    pub death: Death,
    /// The job the victim was counted under, where the record has it.
    pub job: Option<String>,
    pub growth: Option<Growth>,
    pub findings: Vec<Finding>,
    /// What the record could not tell, and why.
    pub notes: Vec<String>,
}
