//! Every finding id, in one registry. The scheme is `<family>.<problem>` in kebab
//! case: the family is the doctor check's area (`shm`, `overcommit`), `run` for how a
//! supervised job ended, `log` for what a log says, `fork` for copy-on-write. A passing
//! check is `<family>.ok`, one whose inputs could not be read `<family>.unreadable`.
//! Ids are stable: JSON consumers match on them, so one changes only with a note.

// ---- doctor: memory, swap, pressure
pub const MEMORY_OK: &str = "memory.ok";
pub const MEMORY_AVAILABLE_LOW: &str = "memory.available-low";
pub const MEMORY_UNREADABLE: &str = "memory.unreadable";
pub const SWAP_OK: &str = "swap.ok";
pub const SWAP_HEAVILY_USED: &str = "swap.heavily-used";
pub const SWAP_ENABLED: &str = "swap.enabled";
pub const SWAP_DISABLED: &str = "swap.disabled";
pub const SWAPPINESS_HIGH: &str = "swappiness.high";
pub const SWAP_UNREADABLE: &str = "swap.unreadable";
pub const PRESSURE_OK: &str = "pressure.ok";
pub const PRESSURE_MEMORY_STALLS: &str = "pressure.memory-stalls";
pub const PRESSURE_UNAVAILABLE: &str = "pressure.unavailable";

// ---- doctor: OOM kills and the memory cgroup
pub const OOM_OK: &str = "oom.ok";
pub const OOM_RECENT_KILLS: &str = "oom.recent-kills";
pub const OOM_KILLS_SINCE_BOOT: &str = "oom.kills-since-boot";
pub const OOM_UNREADABLE: &str = "oom.unreadable";
pub const PANIC_ON_OOM_OK: &str = "panic-on-oom.ok";
pub const PANIC_ON_OOM_ENABLED: &str = "panic-on-oom.enabled";
pub const PANIC_ON_OOM_UNREADABLE: &str = "panic-on-oom.unreadable";
// ---- doctor: a kernel crash an earlier boot kept
pub const CRASH_OK: &str = "crash.ok";
pub const CRASH_PREVIOUS_BOOT: &str = "crash.previous-boot";
pub const CRASH_UNREADABLE: &str = "crash.unreadable";
pub const CGROUP_OK: &str = "cgroup.ok";
pub const CGROUP_OOM_KILLS: &str = "cgroup.oom-kills";
pub const CGROUP_LIMIT_NEAR: &str = "cgroup.limit-near";
pub const CGROUP_UNREADABLE: &str = "cgroup.unreadable";

// ---- doctor: /dev/shm
pub const SHM_OK: &str = "shm.ok";
pub const SHM_NOT_MOUNTED: &str = "shm.not-mounted";
pub const SHM_NOT_TMPFS: &str = "shm.not-tmpfs";
pub const SHM_TOO_SMALL: &str = "shm.too-small";
pub const SHM_MOSTLY_FULL: &str = "shm.mostly-full";
pub const SHM_LARGER_THAN_RAM: &str = "shm.larger-than-ram";
pub const SHM_UNREADABLE: &str = "shm.unreadable";

// ---- doctor: overcommit
pub const OVERCOMMIT_OK: &str = "overcommit.ok";
pub const OVERCOMMIT_NO_HEADROOM: &str = "overcommit.no-headroom";
pub const OVERCOMMIT_RATIO_LOW: &str = "overcommit.ratio-low";
pub const OVERCOMMIT_NEVER: &str = "overcommit.never";
pub const OVERCOMMIT_ALWAYS: &str = "overcommit.always";
pub const OVERCOMMIT_HEURISTIC: &str = "overcommit.heuristic";
pub const OVERCOMMIT_UNREADABLE: &str = "overcommit.unreadable";

// ---- doctor: transparent huge pages and huge page pools
pub const THP_OK: &str = "thp.ok";
pub const THP_DISABLED: &str = "thp.disabled";
pub const THP_ENABLED_ALWAYS: &str = "thp.enabled-always";
pub const THP_DEFRAG_ALWAYS: &str = "thp.defrag-always";
pub const THP_DEFRAG_MADVISE: &str = "thp.defrag-madvise";
pub const THP_UNREADABLE: &str = "thp.unreadable";
pub const HUGEPAGES_OK: &str = "hugepages.ok";
pub const HUGEPAGES_POOL_UNUSED: &str = "hugepages.pool-unused";
pub const HUGEPAGES_UNREADABLE: &str = "hugepages.unreadable";

// ---- doctor: vm sysctls
pub const MAX_MAP_COUNT_OK: &str = "max-map-count.ok";
pub const MAX_MAP_COUNT_LOW: &str = "max-map-count.low";
pub const MAX_MAP_COUNT_UNREADABLE: &str = "max-map-count.unreadable";
pub const DIRTY_OK: &str = "dirty.ok";
pub const DIRTY_THRESHOLDS_HIGH: &str = "dirty.thresholds-high";
pub const DIRTY_UNREADABLE: &str = "dirty.unreadable";

// ---- doctor: resource limits
pub const MEMLOCK_OK: &str = "memlock.ok";
pub const MEMLOCK_LOW: &str = "memlock.low";
pub const MEMLOCK_UNREADABLE: &str = "memlock.unreadable";
pub const NOFILE_OK: &str = "nofile.ok";
pub const NOFILE_LOW: &str = "nofile.low";
pub const NOFILE_UNREADABLE: &str = "nofile.unreadable";

// ---- doctor: NUMA
pub const NUMA_OK: &str = "numa.ok";
pub const NUMA_ZONE_RECLAIM: &str = "numa.zone-reclaim";
pub const NUMA_BALANCING: &str = "numa.balancing";

// ---- doctor: proactive reclaim
pub const PROACTIVE_RECLAIM_OK: &str = "proactive-reclaim.ok";
pub const PROACTIVE_RECLAIM_ACTIVE: &str = "proactive-reclaim.active";
pub const PROACTIVE_RECLAIM_UNREADABLE: &str = "proactive-reclaim.unreadable";
pub const KILLERS_KERNEL_ONLY: &str = "killers.kernel-only";
pub const KILLERS_USERSPACE: &str = "killers.userspace";
pub const KILLERS_GROUP_KILL: &str = "killers.group-kill";
pub const KILLERS_FALSE_ALARM: &str = "killers.false-alarm";

// ---- why --slurm-job: a Slurm job's death on its node
pub const SLURM_OOM_KILLED: &str = "slurm.oom-killed";

// ---- run: how a supervised job ended, confirmed from the system
pub const RUN_OOM_KILLED: &str = "run.oom-killed";
pub const RUN_SEGFAULT: &str = "run.segfault";
pub const RUN_ABORT: &str = "run.abort";
pub const RUN_BUS_ERROR_SHM: &str = "run.bus-error-shm";
pub const RUN_BUS_ERROR_MMAP: &str = "run.bus-error-mmap";
pub const RUN_KILLED: &str = "run.killed";
pub const RUN_USERSPACE_OOM_KILL: &str = "run.userspace-oom-kill";
pub const RUN_TERMINATED: &str = "run.terminated";
pub const RUN_SIGNAL: &str = "run.signal";
pub const RUN_SHM_FULL: &str = "run.shm-full";
pub const RUN_NEAR_LIMIT: &str = "run.near-limit";
pub const RUN_MAJOR_FAULT_STORM: &str = "run.major-fault-storm";
pub const RUN_SWAP_THRASHING: &str = "run.swap-thrashing";
pub const RUN_LEAK_LIKE_GROWTH: &str = "run.leak-like-growth";
pub const RUN_PYTHON_LEAK: &str = "run.python-leak";
/// The kernel logged an oops, BUG, GPF or panic while the job ran (`run`, `why`); a
/// WARN is said with it at severity warn.
pub const RUN_KERNEL_CRASH: &str = "run.kernel-crash";

// ---- fork: copy-on-write after fork (a tree or a run)
pub const FORK_COPY_ON_WRITE: &str = "fork.copy-on-write";
pub const FORK_COPY_ON_WRITE_UNKNOWN: &str = "fork.copy-on-write-unknown";

// ---- live: what a live view (`top`) marks on a process now
pub const LIVE_GROWTH_TO_LIMIT: &str = "live.growth-to-limit";
pub const LIVE_MAJOR_FAULT_STORM: &str = "live.major-fault-storm";

// ---- log: what a log says, one per failure class
pub const LOG_OOM_KILL: &str = "log.oom-kill";
pub const LOG_DATALOADER_SHM: &str = "log.dataloader-shm";
pub const LOG_DATALOADER_WORKER_KILLED: &str = "log.dataloader-worker-killed";
pub const LOG_NATIVE_CRASH: &str = "log.native-crash";
pub const LOG_MMAP_BUS_ERROR: &str = "log.mmap-bus-error";
pub const LOG_CUDA_OOM: &str = "log.cuda-oom";
pub const LOG_CUDA_ILLEGAL_MEMORY_ACCESS: &str = "log.cuda-illegal-memory-access";
pub const LOG_CUDA_DEVICE_ASSERT: &str = "log.cuda-device-assert";
pub const LOG_GPU_XID: &str = "log.gpu-xid";
pub const LOG_NCCL_FAILURE: &str = "log.nccl-failure";
pub const LOG_MEMORY_PRESSURE: &str = "log.memory-pressure";
pub const LOG_MAX_MAP_COUNT: &str = "log.max-map-count";
pub const LOG_TOO_MANY_OPEN_FILES: &str = "log.too-many-open-files";
pub const LOG_MEMLOCK_LIMIT: &str = "log.memlock-limit";
pub const LOG_KERNEL_OOPS: &str = "log.kernel-oops";
pub const LOG_SIGKILL: &str = "log.sigkill";
pub const LOG_USERSPACE_OOM_KILL: &str = "log.userspace-oom-kill";
pub const LOG_HOST_ALLOC_FAILURE: &str = "log.host-alloc-failure";
pub const LOG_MEMORY_GROWTH: &str = "log.memory-growth";
pub const LOG_GPU_ECC: &str = "log.gpu-ecc";
pub const LOG_SWAP_THRASHING: &str = "log.swap-thrashing";
pub const LOG_WINDOWS_MEMORY_FAULT: &str = "log.windows-memory-fault";
// ---- explain: a Windows crash dump
pub const DUMP_WINDOWS_BUGCHECK: &str = "dump.windows-bugcheck";

// ---- doctor, inspect, run: NVIDIA GPUs (NVML, the driver's Xids)
pub const GPU_OK: &str = "gpu.ok";
pub const GPU_ABSENT: &str = "gpu.absent";
pub const GPU_NVML_FAILED: &str = "gpu.nvml-failed";
pub const GPU_PERSISTENCE_OFF: &str = "gpu.persistence-off";
pub const GPU_ECC_UNCORRECTED: &str = "gpu.ecc-uncorrected";
pub const GPU_REMAP_PENDING: &str = "gpu.remap-pending";
pub const GPU_REMAP_FAILED: &str = "gpu.remap-failed";
pub const GPU_XID: &str = "gpu.xid";
pub const GPU_ORPHAN_MEMORY: &str = "gpu.orphan-memory";
pub const GPU_MIG: &str = "gpu.mig";
pub const GPU_PIDS_UNJOINABLE: &str = "gpu.pids-unjoinable";
pub const GPU_WORKER_CONTEXT: &str = "gpu.worker-context";
pub const GPU_XIDS_UNREADABLE: &str = "gpu.xids-unreadable";

// ---- explain-snapshot, explain_oom(): the CUDA caching allocator's snapshot
pub const CUDA_SNAPSHOT_FRAGMENTATION: &str = "cuda-snapshot.fragmentation";
pub const CUDA_SNAPSHOT_REAL_DEMAND: &str = "cuda-snapshot.real-demand";
pub const CUDA_SNAPSHOT_STATE: &str = "cuda-snapshot.state";
pub const CUDA_SNAPSHOT_MEMORY_CAP: &str = "cuda-snapshot.memory-cap";

/// Every id above, for tests that hold the registry to its scheme.
pub const ALL: &[&str] = &[
    LIVE_GROWTH_TO_LIMIT,
    LIVE_MAJOR_FAULT_STORM,
    MEMORY_OK,
    MEMORY_AVAILABLE_LOW,
    MEMORY_UNREADABLE,
    SWAP_OK,
    SWAP_HEAVILY_USED,
    SWAP_ENABLED,
    SWAP_DISABLED,
    SWAPPINESS_HIGH,
    SWAP_UNREADABLE,
    PRESSURE_OK,
    PRESSURE_MEMORY_STALLS,
    PRESSURE_UNAVAILABLE,
    OOM_OK,
    OOM_RECENT_KILLS,
    OOM_KILLS_SINCE_BOOT,
    OOM_UNREADABLE,
    PANIC_ON_OOM_OK,
    PANIC_ON_OOM_ENABLED,
    PANIC_ON_OOM_UNREADABLE,
    CRASH_OK,
    CRASH_PREVIOUS_BOOT,
    CRASH_UNREADABLE,
    CGROUP_OK,
    CGROUP_OOM_KILLS,
    CGROUP_LIMIT_NEAR,
    CGROUP_UNREADABLE,
    SHM_OK,
    SHM_NOT_MOUNTED,
    SHM_NOT_TMPFS,
    SHM_TOO_SMALL,
    SHM_MOSTLY_FULL,
    SHM_LARGER_THAN_RAM,
    SHM_UNREADABLE,
    OVERCOMMIT_OK,
    OVERCOMMIT_NO_HEADROOM,
    OVERCOMMIT_RATIO_LOW,
    OVERCOMMIT_NEVER,
    OVERCOMMIT_ALWAYS,
    OVERCOMMIT_HEURISTIC,
    OVERCOMMIT_UNREADABLE,
    THP_OK,
    THP_DISABLED,
    THP_ENABLED_ALWAYS,
    THP_DEFRAG_ALWAYS,
    THP_DEFRAG_MADVISE,
    THP_UNREADABLE,
    HUGEPAGES_OK,
    HUGEPAGES_POOL_UNUSED,
    HUGEPAGES_UNREADABLE,
    MAX_MAP_COUNT_OK,
    MAX_MAP_COUNT_LOW,
    MAX_MAP_COUNT_UNREADABLE,
    DIRTY_OK,
    DIRTY_THRESHOLDS_HIGH,
    DIRTY_UNREADABLE,
    MEMLOCK_OK,
    MEMLOCK_LOW,
    MEMLOCK_UNREADABLE,
    NOFILE_OK,
    NOFILE_LOW,
    NOFILE_UNREADABLE,
    NUMA_OK,
    NUMA_ZONE_RECLAIM,
    NUMA_BALANCING,
    PROACTIVE_RECLAIM_OK,
    PROACTIVE_RECLAIM_ACTIVE,
    PROACTIVE_RECLAIM_UNREADABLE,
    KILLERS_KERNEL_ONLY,
    KILLERS_USERSPACE,
    KILLERS_GROUP_KILL,
    KILLERS_FALSE_ALARM,
    SLURM_OOM_KILLED,
    RUN_OOM_KILLED,
    RUN_SEGFAULT,
    RUN_ABORT,
    RUN_BUS_ERROR_SHM,
    RUN_BUS_ERROR_MMAP,
    RUN_KILLED,
    RUN_USERSPACE_OOM_KILL,
    RUN_TERMINATED,
    RUN_SIGNAL,
    RUN_SHM_FULL,
    RUN_NEAR_LIMIT,
    RUN_MAJOR_FAULT_STORM,
    RUN_SWAP_THRASHING,
    RUN_LEAK_LIKE_GROWTH,
    RUN_PYTHON_LEAK,
    RUN_KERNEL_CRASH,
    FORK_COPY_ON_WRITE,
    FORK_COPY_ON_WRITE_UNKNOWN,
    LOG_OOM_KILL,
    LOG_DATALOADER_SHM,
    LOG_DATALOADER_WORKER_KILLED,
    LOG_NATIVE_CRASH,
    LOG_MMAP_BUS_ERROR,
    LOG_CUDA_OOM,
    LOG_CUDA_ILLEGAL_MEMORY_ACCESS,
    LOG_CUDA_DEVICE_ASSERT,
    LOG_GPU_XID,
    LOG_NCCL_FAILURE,
    LOG_MEMORY_PRESSURE,
    LOG_MAX_MAP_COUNT,
    LOG_TOO_MANY_OPEN_FILES,
    LOG_MEMLOCK_LIMIT,
    LOG_KERNEL_OOPS,
    LOG_SIGKILL,
    LOG_USERSPACE_OOM_KILL,
    LOG_HOST_ALLOC_FAILURE,
    LOG_MEMORY_GROWTH,
    LOG_GPU_ECC,
    LOG_SWAP_THRASHING,
    LOG_WINDOWS_MEMORY_FAULT,
    DUMP_WINDOWS_BUGCHECK,
    GPU_OK,
    GPU_ABSENT,
    GPU_NVML_FAILED,
    GPU_PERSISTENCE_OFF,
    GPU_ECC_UNCORRECTED,
    GPU_REMAP_PENDING,
    GPU_REMAP_FAILED,
    GPU_XID,
    GPU_ORPHAN_MEMORY,
    GPU_MIG,
    GPU_PIDS_UNJOINABLE,
    GPU_WORKER_CONTEXT,
    GPU_XIDS_UNREADABLE,
    CUDA_SNAPSHOT_FRAGMENTATION,
    CUDA_SNAPSHOT_REAL_DEMAND,
    CUDA_SNAPSHOT_STATE,
    CUDA_SNAPSHOT_MEMORY_CAP,
];

#[cfg(test)]
mod tests {
    use super::ALL;

    fn kebab(part: &str) -> bool {
        !part.is_empty()
            && part
                .split('-')
                .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()))
    }

    #[test]
    fn every_id_is_family_dot_kebab_case_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for id in ALL {
            let (family, problem) = id.split_once('.').unwrap_or(("", ""));
            assert!(
                kebab(family) && kebab(problem),
                "{id} is not <family>.<kebab-case>"
            );
            assert!(seen.insert(id), "{id} twice");
        }
    }
}
