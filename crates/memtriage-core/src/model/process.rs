//! One process at one moment. Sizes are bytes; `None` is "unreadable" (the reason is
//! in [`ProcessSnapshot::unreadable`]), never zero.

use serde::{Deserialize, Serialize};

pub const PROCESS_SCHEMA: &str = "memtriage.process/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSnapshot {
    pub pid: i32,
    pub ppid: i32,
    /// Kernel's short name (`/proc/PID/comm`, at most 15 bytes).
    pub comm: String,
    /// Arguments, with bytes that are not UTF-8 escaped as `\xNN`. Empty for kernel
    /// threads; `None` when not asked for.
    pub cmdline: Option<Vec<String>>,
    /// The executable (`/proc/PID/exe`); a forked worker that did not exec shares
    /// its parent's. `None` for kernel threads, in listings, or when not ours to read.
    #[serde(default)]
    pub exe: Option<String>,
    /// One-letter state from `/proc/PID/stat` (R, S, D, Z, T, I, ...).
    pub state: char,
    pub uid: Option<u32>,
    pub user: Option<String>,
    pub threads: u64,
    /// Kernel threads have no user memory; their memory fields are `None`.
    pub kernel_thread: bool,
    /// From `/proc/PID/status` (cheap: no page-table walk).
    pub memory: Option<StatusMemory>,
    /// From `/proc/PID/smaps_rollup` (walks the page tables: PSS, USS, huge pages).
    pub rollup: Option<Rollup>,
    /// From `stat`; `None` when not asked for (`status` said who the process is).
    pub faults: Option<Faults>,
    pub oom: Option<Oom>,
    pub cgroup: Option<CgroupMemory>,
    /// GPU memory it holds (NVML); `None` when NVML could not be read or its pids
    /// joined (the report's `gpu` says why): unknown, not 0.
    #[serde(default)]
    pub gpu: Option<super::gpu::ProcessGpuMemory>,
    /// What could not be read, and why.
    pub unreadable: Vec<Unreadable>,
}

impl ProcessSnapshot {
    pub fn rss(&self) -> Option<u64> {
        self.rollup
            .as_ref()
            .map(|r| r.rss)
            .or_else(|| self.memory.as_ref().and_then(|m| m.rss))
    }
    pub fn pss(&self) -> Option<u64> {
        self.rollup.as_ref().map(|r| r.pss)
    }
    pub fn uss(&self) -> Option<u64> {
        self.rollup.as_ref().map(|r| r.uss())
    }
    pub fn swap(&self) -> Option<u64> {
        self.rollup
            .as_ref()
            .map(|r| r.swap)
            .or_else(|| self.memory.as_ref().and_then(|m| m.swap))
    }
    /// The command line as a shell would read it back (arguments quoted where they
    /// must be), `[comm]` for kernel threads and zombies, or the comm where the
    /// command line was not read.
    pub fn command(&self) -> String {
        match self.cmdline.as_deref() {
            None => super::shell::quote(&self.comm).into_owned(),
            Some([]) => format!("[{}]", super::shell::quote(&self.comm)),
            Some(args) => super::shell::join(args),
        }
    }
}

/// `/proc/PID/status` memory lines (kernel ≥ 4.5 for the Rss split).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusMemory {
    pub rss: Option<u64>,
    pub rss_anon: Option<u64>,
    pub rss_file: Option<u64>,
    pub rss_shmem: Option<u64>,
    pub vm_peak: Option<u64>,
    pub vm_size: Option<u64>,
    /// Peak RSS ("high water mark").
    pub vm_hwm: Option<u64>,
    pub swap: Option<u64>,
    pub locked: Option<u64>,
    pub page_tables: Option<u64>,
    pub hugetlb: Option<u64>,
}

/// `/proc/PID/smaps_rollup` (kernel ≥ 4.14; the Pss split ≥ 5.14).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rollup {
    pub rss: u64,
    /// Proportional set size: each page divided by the number of processes mapping it.
    pub pss: u64,
    pub pss_anon: Option<u64>,
    pub pss_file: Option<u64>,
    pub pss_shmem: Option<u64>,
    pub shared_clean: u64,
    pub shared_dirty: u64,
    pub private_clean: u64,
    pub private_dirty: u64,
    pub referenced: u64,
    pub anonymous: u64,
    pub anon_huge_pages: u64,
    pub shmem_pmd_mapped: u64,
    pub file_pmd_mapped: u64,
    pub shared_hugetlb: u64,
    pub private_hugetlb: u64,
    pub swap: u64,
    pub swap_pss: u64,
    pub locked: u64,
}

impl Rollup {
    /// Unique set size: the memory only this process maps.
    pub fn uss(&self) -> u64 {
        self.private_clean + self.private_dirty
    }
    /// Share of anonymous memory backed by transparent huge pages, 0.0 to 1.0.
    pub fn anon_huge_coverage(&self) -> Option<f64> {
        (self.anonymous > 0).then(|| self.anon_huge_pages as f64 / self.anonymous as f64)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Faults {
    pub minor: u64,
    pub major: u64,
    /// Faults of children that have exited and were reaped (waited for).
    pub children_minor: u64,
    pub children_major: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Oom {
    /// 0..=1000 (plus adj); the kernel kills the highest first.
    pub score: i64,
    /// -1000..=1000; -1000 exempts the process.
    pub score_adj: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    V1,
    V2,
}

/// The memory cgroup a process lives in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupMemory {
    pub version: CgroupVersion,
    /// Path inside the hierarchy, e.g. `/kubepods/pod123/abc`.
    pub path: String,
    /// Directory it was read from.
    pub dir: String,
    pub usage: Option<u64>,
    /// Peak usage (v2 `memory.peak`, kernel ≥ 5.19; v1 `memory.max_usage_in_bytes`).
    pub peak: Option<u64>,
    /// The lowest limit on the way to the root, `None` when nothing limits it.
    pub limit: Option<u64>,
    /// The cgroup whose limit applies (the process's own or an ancestor's).
    pub limit_set_by: Option<String>,
    /// `limit - usage` of the cgroup that sets the limit.
    pub headroom: Option<u64>,
    /// v2 `memory.high` throttling threshold.
    pub high: Option<u64>,
    pub swap_limit: Option<u64>,
    /// OOM kills inside this cgroup (v2 `memory.events`, v1 `memory.oom_control`, kernel ≥ 4.13).
    pub oom_kills: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreadable {
    /// What is missing, e.g. `smaps_rollup`.
    pub field: String,
    pub reason: String,
}

/// Which rank of a distributed job a process works for, from the environment its
/// launcher gave it at exec (torchrun's `RANK`, `LOCAL_RANK`, `WORLD_SIZE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankInfo {
    /// `RANK`: the global rank, unique across the job.
    pub rank: u32,
    /// `LOCAL_RANK`: the rank on this machine (the GPU it usually takes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rank: Option<u32>,
    /// `WORLD_SIZE`: how many ranks the job has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_size: Option<u32>,
    /// Started by a process of the same rank, whose environment it inherited (a
    /// DataLoader worker): it works for the rank, it is not the rank.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub worker: bool,
}

impl RankInfo {
    /// `rank 1`, or `rank 1 worker` for a process the rank started.
    pub fn describe(&self) -> String {
        if self.worker {
            format!("rank {} worker", self.rank)
        } else {
            format!("rank {}", self.rank)
        }
    }
}

/// How every report names a process: `pid 812 (python3)`, with its rank under a
/// distributed launcher (`pid 812 (python3, rank 1)`, `pid 815 (pt_data_worker,
/// rank 1 worker)`).
pub fn process_label(pid: i32, comm: &str, rank: Option<&RankInfo>) -> String {
    let about: Vec<String> = (!comm.is_empty())
        .then(|| comm.to_string())
        .into_iter()
        .chain(rank.map(RankInfo::describe))
        .collect();
    if about.is_empty() {
        format!("pid {pid}")
    } else {
        format!("pid {pid} ({})", about.join(", "))
    }
}

#[cfg(test)]
mod rank_tests {
    use super::*;

    fn rank(rank: u32, worker: bool) -> RankInfo {
        RankInfo {
            rank,
            local_rank: Some(rank),
            world_size: Some(2),
            worker,
        }
    }

    #[test]
    fn a_process_is_named_with_its_rank_when_it_has_one() {
        assert_eq!(process_label(812, "python3", None), "pid 812 (python3)");
        assert_eq!(
            process_label(812, "python3", Some(&rank(1, false))),
            "pid 812 (python3, rank 1)"
        );
        assert_eq!(
            process_label(815, "pt_data_worker", Some(&rank(1, true))),
            "pid 815 (pt_data_worker, rank 1 worker)"
        );
        assert_eq!(process_label(9, "", None), "pid 9");
        assert_eq!(
            process_label(9, "", Some(&rank(0, false))),
            "pid 9 (rank 0)"
        );
    }

    #[test]
    fn rank_json_leaves_out_what_is_unknown() {
        let only_rank = RankInfo {
            rank: 3,
            local_rank: None,
            world_size: None,
            worker: false,
        };
        assert_eq!(serde_json::to_string(&only_rank).unwrap(), r#"{"rank":3}"#);
        let worker = rank(1, true);
        let json = serde_json::to_string(&worker).unwrap();
        assert_eq!(
            json,
            r#"{"rank":1,"local_rank":1,"world_size":2,"worker":true}"#
        );
        assert_eq!(serde_json::from_str::<RankInfo>(&json).unwrap(), worker);
    }
}
