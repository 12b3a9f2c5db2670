//! What the machine's history holds (`memtriage record`'s SQLite database): one
//! interval's rows (the machine, each job, each memory cgroup, the largest processes,
//! each OOM kill and each fault the kernel logged), and a job's points read back.
//! Times are Unix milliseconds; bytes are bytes; `None` is unknown, never 0.

use serde::{Deserialize, Serialize};

use super::system::OomConstraint;

/// One of the machine's largest processes at a sample: who it is (name, command line,
/// memory cgroup, job) and what it holds. Kept each interval and with each OOM kill, so
/// a victim's job is named after it is gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessBrief {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// Empty where unreadable (a kernel thread has none).
    pub cmdline: String,
    /// Its memory cgroup, where known.
    pub cgroup: Option<String>,
    /// The group (job) the watch counts it under.
    pub job: String,
    pub rss: u64,
    /// From the last `smaps_rollup` read on the sampler's budget; `None` before one,
    /// or where it cannot be read (another user's process, without the capability).
    pub pss: Option<u64>,
    pub swap: Option<u64>,
    /// Forked from its parent without exec (a worker sharing the parent's pages
    /// copy-on-write); `None` where that could not be told.
    #[serde(default)]
    pub forked_without_exec: Option<bool>,
}

/// Which sources saw an OOM kill. Stored and written as its name (`kernel_log`, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KillSource {
    /// The kernel's log alone (its report of the kill).
    #[default]
    KernelLog,
    /// A cgroup's counters alone (`memory.events`, v1 `memory.oom_control`).
    MemoryEvents,
    /// Both: the kernel's report, confirmed by the cgroup's counter.
    Both,
    /// A userspace killer's own log.
    KillerLog,
}

impl KillSource {
    pub const ALL: [KillSource; 4] = [
        KillSource::KernelLog,
        KillSource::MemoryEvents,
        KillSource::Both,
        KillSource::KillerLog,
    ];

    /// The name it is stored and exported under.
    pub fn as_str(self) -> &'static str {
        match self {
            KillSource::KernelLog => "kernel_log",
            KillSource::MemoryEvents => "memory_events",
            KillSource::Both => "both",
            KillSource::KillerLog => "killer_log",
        }
    }

    /// The source stored under `name`; `None` for a name this build does not know.
    pub fn from_name(name: &str) -> Option<KillSource> {
        KillSource::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Only a cgroup's counter saw it: no report names the cgroup whose limit was
    /// hit, so it was the victim's own.
    pub fn counted_by_cgroup_alone(self) -> bool {
        self == KillSource::MemoryEvents
    }
}

/// The machine at one interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineRow {
    pub t_ms: i64,
    pub mem_available: Option<u64>,
    pub swap_used: Option<u64>,
    pub psi_some: Option<f64>,
    pub psi_full: Option<f64>,
    pub page_cache: Option<u64>,
    pub shm_used: Option<u64>,
    pub shm_size: Option<u64>,
    /// The transparent huge page mode in force (`always`, `madvise`, `never`).
    pub thp: Option<String>,
    /// `AnonHugePages` of /proc/meminfo: anonymous memory backed by huge pages.
    pub thp_anon: Option<u64>,
}

/// One job at one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    pub job: String,
    pub processes: u64,
    pub rss: u64,
    pub pss: Option<u64>,
    pub swap: Option<u64>,
    pub minor_faults: u64,
    pub major_faults: u64,
}

/// One memory cgroup at one interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CgroupRow {
    pub cgroup: String,
    pub usage: Option<u64>,
    pub limit: Option<u64>,
    pub oom_kill: Option<u64>,
    /// `memory.peak` (v2, kernel 5.19+) or `memory.max_usage_in_bytes` (v1).
    pub peak: Option<u64>,
    /// `memory.events`: times the OOM killer was invoked for it (`oom`), group kills,
    /// times usage hit the limit (`max`) and the high boundary (`high`).
    pub oom: Option<u64>,
    pub oom_group_kill: Option<u64>,
    pub max_events: Option<u64>,
    pub high_events: Option<u64>,
}

/// One OOM kill, with what the machine held at that moment (`snapshot_json`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KillRow {
    pub t_ms: i64,
    pub pid: Option<i32>,
    pub victim: Option<String>,
    pub cmdline: Option<String>,
    pub cgroup: Option<String>,
    /// The cgroup whose limit was hit, for a cgroup's kill.
    pub limit_cgroup: Option<String>,
    /// What ran short, as the kernel's report said; `None` without a report.
    pub constraint: Option<OomConstraint>,
    pub anon_rss: Option<u64>,
    pub total_vm: Option<u64>,
    /// [`KERNEL_KILLER`], or a userspace killer's name (`systemd-oomd`, `earlyoom`).
    pub killer: String,
    /// Which sources saw it.
    pub source: KillSource,
    pub snapshot_json: Option<String>,
}

/// The killer's name for the kernel's own OOM killer.
pub const KERNEL_KILLER: &str = "kernel";

impl KillRow {
    /// The userspace killer that killed it; `None` where it was the kernel.
    pub fn userspace_killer(&self) -> Option<&str> {
        Some(self.killer.as_str()).filter(|k| *k != KERNEL_KILLER)
    }
}

/// A process the kernel logged dying of a fault.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultRow {
    pub t_ms: i64,
    pub pid: i32,
    pub comm: String,
    pub signal: i32,
    /// The object the fault was in, where the kernel said.
    pub object: Option<String>,
    pub cmdline: Option<String>,
    pub cgroup: Option<String>,
}

/// A kernel crash (an oops, BUG, GPF, panic) the kernel logged, with its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashRow {
    pub t_ms: i64,
    /// The process the report names as running, where it names one.
    pub pid: Option<i32>,
    pub comm: Option<String>,
    /// The report's lines as `dmesg` prints them.
    pub text: String,
    pub cmdline: Option<String>,
    pub cgroup: Option<String>,
}

/// What one interval adds, written in one transaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    pub machine: MachineRow,
    pub jobs: Vec<JobRow>,
    pub cgroups: Vec<CgroupRow>,
    /// The largest processes.
    pub processes: Vec<ProcessBrief>,
    pub kills: Vec<KillRow>,
    pub faults: Vec<FaultRow>,
    pub crashes: Vec<CrashRow>,
}

/// What the machine held when a kill was recorded: `oom_kills.snapshot_json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KillSnapshot {
    /// The largest processes then, with their jobs and cgroups.
    pub largest: Vec<ProcessBrief>,
    /// The victim cgroup's `memory.stat` (empty where it was already gone).
    pub memory_stat: Vec<(String, u64)>,
    /// The kernel report's task table: its header and largest rows.
    pub task_table: Vec<String>,
    /// The victim's sizes at the kill, as the kernel reported them.
    pub file_rss: Option<u64>,
    pub shmem_rss: Option<u64>,
    pub oom_score_adj: Option<i64>,
    /// When `largest` was read (Unix ms): the last sample before the kill where the
    /// recorder had one, else the first after it.
    #[serde(default)]
    pub largest_at_ms: Option<i64>,
    /// The signal a userspace killer said it sent (`SIGTERM`).
    #[serde(default)]
    pub signal: Option<String>,
    /// A userspace killer's settings when it killed (its threshold), where the
    /// recorder found it running.
    #[serde(default)]
    pub killer_settings: Option<crate::model::killers::OomKiller>,
}

/// One point of a job's memory over time (or of a cgroup's usage).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobPoint {
    pub t_ms: i64,
    pub processes: u64,
    pub rss: u64,
    pub pss: Option<u64>,
    /// The job's major-fault counter; `None` in a cgroup's series.
    pub major_faults: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kill_source_is_stored_and_serialized_under_one_name() {
        for s in KillSource::ALL {
            assert_eq!(KillSource::from_name(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::String(s.as_str().into())
            );
        }
        assert_eq!(KillSource::from_name("carrier_pigeon"), None);
    }
}
