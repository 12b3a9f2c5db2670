//! The machine's memory settings and state at one moment, as `memtriage doctor` audits
//! them. Sizes are `u64` bytes. `None` means the value could not be read or the
//! kernel does not have it; the reason is in [`SystemSnapshot::unreadable`], keyed by
//! the field's name. Never zero in its place.

use serde::{Deserialize, Serialize};

use crate::model::gpu::{GpuReport, KernelXid};
use crate::model::process::{CgroupMemory, Unreadable};

// The files these figures come from, as findings cite them in their evidence.
pub const MEMINFO: &str = "/proc/meminfo";
pub const PRESSURE: &str = "/proc/pressure/memory";
pub const VMSTAT: &str = "/proc/vmstat";
pub const MOUNTINFO: &str = "/proc/self/mountinfo";
pub const HUGEPAGES: &str = "/sys/kernel/mm/hugepages";

pub const SYSTEM_SCHEMA: &str = "memtriage.system/v1";

/// The `unreadable` reason for `shm` when mountinfo was read and nothing is mounted
/// at /dev/shm (as opposed to mountinfo itself being unreadable).
pub const SHM_NOT_MOUNTED: &str = "/dev/shm is not a mount point (/proc/self/mountinfo)";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemSnapshot {
    /// Always [`SYSTEM_SCHEMA`], so the snapshot stands alone in JSON.
    pub schema: String,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel_release: Option<String>,
    /// Seconds since boot, `/proc/uptime`; lets OOM kill timestamps read as "ago".
    pub uptime_seconds: Option<f64>,
    /// `/proc/meminfo`.
    pub memory: Option<MemInfo>,
    /// Active swap areas, `/proc/swaps` (an empty list: no swap).
    pub swaps: Option<Vec<SwapDevice>>,
    /// Pressure stall information, `/proc/pressure/memory` (kernel ≥ 4.20 with PSI on).
    pub pressure: Option<MemoryPressure>,
    /// `/sys/kernel/mm/transparent_hugepage/*`.
    pub thp: Thp,
    /// One entry per page size, `/sys/kernel/mm/hugepages/hugepages-*kB/`.
    pub hugepages: Option<Vec<HugePagePool>>,
    /// `/proc/sys/vm/*`.
    pub vm: VmSettings,
    /// `/proc/sys/kernel/numa_balancing`: 0 off, 1 on (2 = memory tiering mode, ≥ 5.18).
    pub numa_balancing: Option<u32>,
    /// Count of `/sys/devices/system/node/node*` directories.
    pub numa_nodes: Option<u32>,
    /// The tmpfs at /dev/shm that PyTorch DataLoader workers and NCCL use.
    pub shm: Option<ShmMount>,
    /// The resource limits of this process (`/proc/self/limits`); jobs started from
    /// the same shell inherit them.
    pub limits: Limits,
    /// The memory cgroup this process lives in (`/proc/self/cgroup`), `None` when it
    /// is in none that can be seen, or when the cgroup could not be read.
    pub cgroup: Option<CgroupMemory>,
    /// `oom_kill` of `/proc/vmstat`: OOM kills since boot, global and cgroup (≥ 4.13).
    pub oom_kill_count: Option<u64>,
    /// OOM kills found in the kernel log (`/dev/kmsg`), oldest first. `None` when the
    /// log could not be read (it needs root or CAP_SYSLOG where dmesg_restrict=1).
    pub oom_kills: Option<Vec<OomKill>>,
    /// Kernel agents that reclaim idle memory without memory pressure (DAMON
    /// `pageout` schemes, the DAMON_RECLAIM module); empty when none runs.
    #[serde(default)]
    pub proactive_reclaim: Vec<ProactiveReclaim>,
    /// The NVIDIA GPUs (NVML), or why none could be read; `None` for a captured tree.
    #[serde(default)]
    pub gpu: Option<GpuReport>,
    /// Xid errors the NVIDIA driver logged since boot, oldest first; `None` when the
    /// kernel log could not be read.
    #[serde(default)]
    pub xids: Option<Vec<KernelXid>>,
    /// Kernel logs kept from earlier boots (pstore, kdump's `vmcore-dmesg.txt`, the
    /// journal's previous boot), where a node that rebooted after a panic keeps the
    /// oops; `None` where none of them could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_boot_logs: Option<Vec<BootLog>>,
    /// The OOM killers that act here: the kernel's (for memtriage's own cgroup) and
    /// the userspace ones, running or installed; `None` where not looked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_killers: Option<Vec<super::killers::OomKiller>>,
    /// What could not be read, and why. `field` names the snapshot field.
    pub unreadable: Vec<Unreadable>,
}

/// Something that pages out memory once it has been idle long enough, whether or not
/// memory is short: a warmed model file that waits between requests is dropped again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProactiveReclaim {
    /// The sysfs directory that configures it.
    pub source: String,
    /// What it monitors: `paddr` (all physical memory, page cache included), `vaddr`
    /// or `fvaddr` (the memory of chosen processes); `damon_reclaim` for the module.
    pub operations: String,
    /// Memory idle at least this long is reclaimed; `None` when it cannot be known.
    pub min_idle_seconds: Option<f64>,
}

impl ProactiveReclaim {
    /// Whether it watches physical memory, unmapped page cache included; schemes over
    /// processes' address spaces reach only what those processes map.
    pub fn reaches_page_cache(&self) -> bool {
        matches!(self.operations.as_str(), "paddr" | "damon_reclaim")
    }
}

impl SystemSnapshot {
    /// An empty snapshot, every value unread.
    pub fn empty() -> Self {
        SystemSnapshot {
            schema: SYSTEM_SCHEMA.to_string(),
            kernel_release: None,
            uptime_seconds: None,
            memory: None,
            swaps: None,
            pressure: None,
            thp: Thp::default(),
            hugepages: None,
            vm: VmSettings::default(),
            numa_balancing: None,
            numa_nodes: None,
            shm: None,
            limits: Limits::default(),
            cgroup: None,
            oom_kill_count: None,
            oom_kills: None,
            proactive_reclaim: Vec::new(),
            gpu: None,
            xids: None,
            previous_boot_logs: None,
            oom_killers: None,
            unreadable: Vec::new(),
        }
    }

    /// The reason `field` could not be read, if it was recorded.
    pub fn unreadable_reason(&self, field: &str) -> Option<&str> {
        self.unreadable
            .iter()
            .find(|u| u.field == field)
            .map(|u| u.reason.as_str())
    }
}

/// `/proc/meminfo`, in bytes. Each value is `None` when its line is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemInfo {
    /// `MemTotal`: usable RAM.
    pub total: Option<u64>,
    /// `MemAvailable` (≥ 3.14): what can be allocated without swapping.
    pub available: Option<u64>,
    /// `MemFree`.
    pub free: Option<u64>,
    /// `SwapTotal`.
    pub swap_total: Option<u64>,
    /// `SwapFree`.
    pub swap_free: Option<u64>,
    /// `Shmem`: tmpfs (/dev/shm included) and shared anonymous memory.
    pub shmem: Option<u64>,
    /// `CommitLimit`: what may be committed under `vm.overcommit_memory=2`.
    pub commit_limit: Option<u64>,
    /// `Committed_AS`: memory promised to processes now.
    pub committed_as: Option<u64>,
    /// `Hugepagesize`: the default huge page size.
    pub hugepage_size: Option<u64>,
    /// `AnonHugePages`: anonymous memory backed by transparent huge pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anon_huge_pages: Option<u64>,
    /// `Cached`: the page cache (file pages in memory, tmpfs included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<u64>,
    /// `Inactive(file)`: page cache the kernel reclaims first; the kubelet counts the
    /// rest of the page cache as used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inactive_file: Option<u64>,
    /// `AnonPages`: anonymous memory mapped by processes (earlyoom 1.8 and later take
    /// its percentages of MemAvailable + AnonPages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anon_pages: Option<u64>,
}

impl MemInfo {
    /// `CommitLimit - Committed_AS`; negative when more is promised than the limit
    /// (normal under overcommit 0 or 1, refused allocations under 2).
    pub fn commit_headroom(&self) -> Option<i128> {
        Some(i128::from(self.commit_limit?) - i128::from(self.committed_as?))
    }

    /// `SwapTotal - SwapFree`.
    pub fn swap_used(&self) -> Option<u64> {
        Some(self.swap_total?.saturating_sub(self.swap_free?))
    }
}

/// A line of `/proc/swaps`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapDevice {
    /// Device or file, octal escapes decoded.
    pub filename: String,
    /// `partition` or `file`.
    pub kind: String,
    /// Bytes.
    pub size: u64,
    /// Bytes.
    pub used: u64,
    pub priority: i64,
}

/// `/proc/pressure/memory`: share of wall time in which tasks stalled on memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPressure {
    /// At least one task stalled.
    pub some: Option<PressureLine>,
    /// All non-idle tasks stalled at once (thrashing).
    pub full: Option<PressureLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PressureLine {
    /// Percent of the last 10 s, 60 s and 300 s.
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Microseconds stalled since boot.
    pub total_us: u64,
}

/// The selected (bracketed) value of each transparent huge page setting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thp {
    /// `enabled`: always, madvise or never.
    pub enabled: Option<String>,
    /// `defrag`: always, defer, defer+madvise, madvise or never.
    pub defrag: Option<String>,
    /// `shmem_enabled`: always, within_size, advise, never, deny or force.
    pub shmem_enabled: Option<String>,
}

/// A persistent huge page pool (`hugepages-<size>kB`). Pages in a pool are taken
/// from RAM when the pool is sized, whether or not anything uses them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HugePagePool {
    /// Bytes per page.
    pub page_size: u64,
    /// `nr_hugepages`: pages in the pool.
    pub total: u64,
    /// `free_hugepages`: pages not faulted in by anyone.
    pub free: u64,
    /// `resv_hugepages`: free pages already promised to a mapping; `None` if absent.
    pub reserved: Option<u64>,
}

impl HugePagePool {
    /// Bytes of RAM the pool holds.
    pub fn bytes(&self) -> u64 {
        self.total.saturating_mul(self.page_size)
    }
}

/// `/proc/sys/vm/*` values as the kernel prints them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmSettings {
    /// 0 heuristic, 1 always, 2 never (strict accounting against CommitLimit).
    pub overcommit_memory: Option<u32>,
    /// Percent of RAM counted in CommitLimit under mode 2 (unless overcommit_kbytes).
    pub overcommit_ratio: Option<u64>,
    /// Bytes, `vm.overcommit_kbytes` × 1024; when non-zero it replaces overcommit_ratio.
    pub overcommit_bytes: Option<u64>,
    /// 0..=200: how readily anonymous memory is swapped rather than cache dropped.
    pub swappiness: Option<u64>,
    /// Percent of available memory that may be dirty before writers block.
    pub dirty_ratio: Option<u64>,
    /// Percent at which background writeback starts.
    pub dirty_background_ratio: Option<u64>,
    /// Bytes; when non-zero it replaces dirty_ratio.
    pub dirty_bytes: Option<u64>,
    /// Bytes; when non-zero it replaces dirty_background_ratio.
    pub dirty_background_bytes: Option<u64>,
    /// Most memory mappings one process may have.
    pub max_map_count: Option<u64>,
    /// Bitmask; non-zero reclaims a node's memory before allocating on another node.
    pub zone_reclaim_mode: Option<u64>,
    /// Bytes, `vm.min_free_kbytes` × 1024: kept free for the kernel.
    pub min_free_bytes: Option<u64>,
    /// 0: OOM kills a task; 1 or 2: the kernel panics instead.
    pub panic_on_oom: Option<u64>,
}

/// The tmpfs mounted at /dev/shm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShmMount {
    /// Filesystem type from `/proc/self/mountinfo` (`tmpfs` expected).
    pub fs_type: String,
    /// Bytes, the `size=` mount option (`/proc/self/mountinfo`); `None` when absent.
    pub size_option: Option<u64>,
    /// Bytes, total size from statvfs(2) of the directory.
    pub total: Option<u64>,
    /// Bytes in use, from statvfs(2) (blocks - free blocks).
    pub used: Option<u64>,
}

impl ShmMount {
    /// The size that limits writers: what statvfs says, else the mount option.
    pub fn size(&self) -> Option<u64> {
        self.total.or(self.size_option)
    }
}

/// A soft and hard resource limit; `None` within means unlimited (RLIM_INFINITY).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// Limits from `/proc/self/limits`; `None` when the line could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// RLIMIT_MEMLOCK, bytes: what mlock(2) and RDMA memory registration may pin.
    pub memlock: Option<Rlimit>,
    /// RLIMIT_NOFILE, files.
    pub nofile: Option<Rlimit>,
}

/// What restricted the memory the OOM killer was acting on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OomConstraint {
    /// The whole machine ran out (CONSTRAINT_NONE).
    Global,
    /// A memory cgroup hit its limit (CONSTRAINT_MEMCG).
    Cgroup,
    /// The cpuset's memory nodes ran out (CONSTRAINT_CPUSET).
    Cpuset,
    /// A NUMA memory policy's nodes ran out (CONSTRAINT_MEMORY_POLICY).
    MemoryPolicy,
}

impl OomConstraint {
    pub fn as_str(self) -> &'static str {
        match self {
            OomConstraint::Global => "global",
            OomConstraint::Cgroup => "cgroup",
            OomConstraint::Cpuset => "cpuset",
            OomConstraint::MemoryPolicy => "memory_policy",
        }
    }

    /// The constraint named `name` (as [`as_str`](Self::as_str) writes it); `None`
    /// for a name this build does not know.
    pub fn from_name(name: &str) -> Option<OomConstraint> {
        [
            OomConstraint::Global,
            OomConstraint::Cgroup,
            OomConstraint::Cpuset,
            OomConstraint::MemoryPolicy,
        ]
        .into_iter()
        .find(|c| c.as_str() == name)
    }
}

/// A kernel log kept from an earlier boot: where it was read, and its last bytes
/// (the crash is at its end). The text stays out of JSON: the finding quotes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootLog {
    /// A path, or the command that printed it (`journalctl -k -b -1`).
    pub source: String,
    #[serde(skip)]
    pub text: String,
}

/// One process the kernel OOM killer killed, from the kernel log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OomKill {
    pub pid: i32,
    /// The victim's short name.
    pub comm: String,
    /// Bytes at the moment of the kill; `None` when the line lacked the field
    /// (kernels before 4.9 do not print shmem-rss, for one).
    pub total_vm: Option<u64>,
    pub anon_rss: Option<u64>,
    pub file_rss: Option<u64>,
    pub shmem_rss: Option<u64>,
    pub uid: Option<u32>,
    pub oom_score_adj: Option<i64>,
    pub constraint: OomConstraint,
    /// The cgroup of the victim (`task_memcg=`, kernel ≥ 4.19).
    pub memcg: Option<String>,
    /// The cgroup whose limit was hit (`oom_memcg=`), for cgroup kills.
    pub oom_memcg: Option<String>,
    /// Seconds since boot, when the log line had a monotonic timestamp.
    pub timestamp: Option<f64>,
    /// Wall-clock time as printed (`dmesg -T`, journalctl), when that is all there was.
    pub wall_time: Option<String>,
}

/// The cgroup `path` is `ancestor` or below it (paths as the kernel prints them).
pub fn cgroup_is_within(path: &str, ancestor: &str) -> bool {
    ancestor == "/"
        || path == ancestor
        || path
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The name `memtriage run --limit` gives the cgroup it makes, followed by its pid.
pub const RUN_LIMIT_CGROUP_PREFIX: &str = "memtriage-run-";

impl OomKill {
    /// The kill happened inside a cgroup that `memtriage run --limit` made: a limit
    /// chosen to reproduce a failure, not the machine running short.
    pub fn in_run_limit_cgroup(&self) -> bool {
        [&self.oom_memcg, &self.memcg].iter().any(|m| {
            m.as_deref().is_some_and(|m| {
                m.rsplit('/')
                    .next()
                    .is_some_and(|last| last.starts_with(RUN_LIMIT_CGROUP_PREFIX))
            })
        })
    }
}
