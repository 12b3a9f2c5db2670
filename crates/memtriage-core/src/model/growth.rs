//! How a supervised job's memory grew: the ceiling it was measured against, the
//! steady growth seen, the early warning given before the ceiling, and the snapshot
//! of the tree taken near it. The tree's memory here is PSS where it was read, RSS
//! between readings (see `supervise::growth`).

use serde::{Deserialize, Serialize};

use super::maps::{FileGroup, KindGroup};

/// What bounds the job's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CeilingSource {
    /// `--limit`: the job's own memory cgroup.
    JobLimit,
    /// The cgroup memtriage and the job run in (a Slurm job step, a container).
    EnclosingCgroup,
    /// No limit anywhere: the machine's `MemAvailable` when the job started.
    MemAvailable,
    /// A userspace OOM killer acts first (earlyoom, the kubelet, Ray): the room it
    /// left when the job started.
    Killer,
}

/// The userspace killer whose threshold is the ceiling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillerCeiling {
    pub kind: super::killers::KillerKind,
    /// `earlyoom (pid 812, -m 72)`.
    pub label: String,
    /// What it watches crossing what: `MemAvailable falls under 17.3 GiB (72% of 24.0 GiB)`.
    pub threshold: String,
    /// What it then does: `send SIGTERM to`, `kill`, `evict`.
    pub action: String,
    /// Whom it picks, by its own rule.
    pub victim_rule: String,
    /// The room the kernel's OOM killer leaves, which it would reach later.
    pub kernel_bytes: u64,
}

/// The memory the job's tree can reach before the kernel steps in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryCeiling {
    pub source: CeilingSource,
    /// Bytes the tree's memory can reach: the job's limit, or the room left (under the
    /// enclosing cgroup's limit, or `MemAvailable`) when the job started.
    pub bytes: u64,
    /// The limit as set, for a cgroup (a job's room under an enclosing cgroup is less
    /// when other processes share it).
    pub limit: Option<u64>,
    /// The cgroup whose limit it is.
    pub cgroup: Option<String>,
    /// `memory.oom.group` is set on that cgroup: one kill ends every process in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_kill: bool,
    /// The userspace killer that acts at this ceiling, before the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killer: Option<KillerCeiling>,
}

/// A stretch of steady growth of the tree's memory: from when it was first seen (the
/// start of the window that showed it) to the last sample that still grew.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GrowthEpisode {
    /// Seconds since the job started.
    pub started_seconds: f64,
    pub last_seen_seconds: f64,
    /// The tree's memory at both ends.
    pub start_bytes: u64,
    pub end_bytes: u64,
    /// Least-squares slope over the episode's samples, bytes per second.
    pub bytes_per_second: f64,
    /// How well a straight line fits them (1 is a perfectly steady growth).
    pub r_squared: f64,
}

impl GrowthEpisode {
    pub fn seconds(&self) -> f64 {
        self.last_seen_seconds - self.started_seconds
    }

    pub fn grown_bytes(&self) -> u64 {
        self.end_bytes.saturating_sub(self.start_bytes)
    }
}

/// The one line printed (and recorded) when the tree's memory, at its current slope,
/// was to reach the ceiling within minutes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlyWarning {
    /// Seconds since the job started.
    pub at_seconds: f64,
    pub bytes_per_second: f64,
    /// The tree's memory then (the fitted value at that sample).
    pub tree_bytes: u64,
    /// Estimated seconds until the ceiling, from `at_seconds`.
    pub seconds_to_ceiling: f64,
    pub message: String,
}

/// How the job's memory grew over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowthSummary {
    /// `None` where no limit was found and `MemAvailable` was unreadable.
    pub ceiling: Option<MemoryCeiling>,
    /// The longest steady growth seen.
    pub episode: Option<GrowthEpisode>,
    /// The last early warning given (a second one only when the estimate halved).
    pub warning: Option<EarlyWarning>,
    /// How many early warnings were given.
    pub warnings: u32,
    /// What was said of systemd-oomd's pressure limit, where one runs and pressure
    /// rose half way to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_warning: Option<String>,
}

/// One process of the tree near the ceiling: its regions grouped by kind and the
/// files (and anonymous memory) that hold the most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotProcess {
    pub pid: i32,
    pub comm: String,
    /// Resident bytes at the sample that triggered the snapshot.
    pub rss: u64,
    pub by_kind: Vec<KindGroup>,
    /// The largest mapped files, by resident size.
    pub by_file: Vec<FileGroup>,
    /// Where its memory went then, line by line (its Python hook's figures so far).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<super::lines::LineGrowth>,
}

/// The tree read in full once, when its memory reached 90% of the ceiling, so the
/// post-mortem says what grew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CeilingSnapshot {
    pub at_seconds: f64,
    pub tree_bytes: u64,
    pub ceiling_bytes: u64,
    /// The largest processes, largest first.
    pub processes: Vec<SnapshotProcess>,
    /// Processes whose regions could not be read, and why.
    pub unreadable: Vec<String>,
}
