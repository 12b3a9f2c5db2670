//! What one tick of a sampler measured: complete, handed over whole, only read after.

use std::time::Duration;

use crate::model::gpu::GpuTick;
use crate::model::process::Rollup;
use crate::parse::stat::MemoryLayout;

/// One tick of the sampler: every process of its scope, read at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Seconds since the sampler's epoch (for `memtriage run`, the job's start).
    pub t: f64,
    /// 0 for the first sample, counting up by one.
    pub seq: u64,
    /// The scope's live processes, in the order they were first seen.
    pub processes: Vec<ProcessSample>,
    /// Minor and major faults per second of the processes, summed, since the last
    /// sample (0 for the first).
    pub minor_faults_per_second: f64,
    pub major_faults_per_second: f64,
    /// The `smaps_rollup` readings this tick made, as many as the budget allowed
    /// (at most its `per_tick`).
    pub pss_attempts: Vec<PssAttempt>,
    /// Machine-wide figures, when the sampler was asked for them.
    pub system: Option<SystemSample>,
    /// The watched cgroup, when the sampler was given one.
    pub cgroup: Option<CgroupSample>,
    /// Every NVIDIA GPU's memory and the processes holding it (the scope's and any
    /// other), when the sampler was asked for GPUs and NVML is present.
    pub gpu: Option<GpuSample>,
}

/// The GPUs at one tick, and what reading them cost.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSample {
    pub devices: Vec<GpuTick>,
    pub cost: Duration,
}

impl GpuSample {
    /// GPU memory `pid` holds over every device (0 when it holds none), or `None`
    /// when a device could not say how much.
    pub fn held_by(&self, pid: i32) -> Option<u64> {
        self.devices
            .iter()
            .flat_map(|d| d.processes.iter())
            .filter(|p| p.pid == Some(pid))
            .map(|p| p.used)
            .sum()
    }
}

/// One process at one tick.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSample {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// The executable, when the sampler was asked for it (a worker is told from an
    /// exec'd child by it); `None` also when unreadable.
    pub exe: Option<String>,
    /// Resident bytes (`stat`), every tick.
    pub rss: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// The rollup read at this tick, when it was this process's turn.
    pub rollup: Option<Rollup>,
    /// The latest PSS reading, of this tick or an earlier one.
    pub pss: Option<PssReading>,
    /// Private memory estimated between readings: the last USS reading plus a page
    /// per minor fault since (after fork, faults track copy-on-write closely); before
    /// any reading, a page per minor fault (the kernel zeroes a child's counters at
    /// fork). Taken before this tick's reading, if any; never above `rss` (private
    /// memory is resident memory).
    pub uss_estimate: u64,
    /// The layout exec gave its address space (`stat`, every tick, at no extra cost);
    /// `None` when unreadable.
    pub layout: Option<MemoryLayout>,
    /// Whether it was forked from its parent (a process of the same sample) without
    /// exec since; `None` when that is unknown (the parent is not in the scope, or a
    /// layout is unreadable).
    pub forked_without_exec: Option<bool>,
    /// With this tick's `rollup`, for a process forked without exec: the bytes it
    /// copied of the mappings it inherited (see `probe::fork`), at most the rollup's
    /// RSS. `None` when not read this tick.
    pub copied_after_fork: Option<u64>,
    /// The process exec'd since the previous tick read it: figures from before
    /// (its parent's image) are not this program's, and consumers drop them.
    pub execed: bool,
}

/// A process's PSS reading, kept until its next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PssReading {
    pub pss: u64,
    pub uss: u64,
    /// Bytes of it swapped out.
    pub swap: u64,
    /// [`Sample::t`] of the tick that read it.
    pub at: f64,
    /// The process's minor faults when it was read.
    pub minor_faults_at: u64,
}

/// One `smaps_rollup` read: whose, and what it cost of a core (its CPU time, counted
/// whether or not it gave a reading).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PssAttempt {
    pub pid: i32,
    pub cost: Duration,
}

/// Machine-wide figures at one tick; `None` where unreadable.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SystemSample {
    /// Used and total bytes of `/dev/shm`, where DataLoader workers hand over batches.
    pub shm_used: Option<u64>,
    pub shm_size: Option<u64>,
    /// `SwapTotal - SwapFree`.
    pub swap_used: Option<u64>,
    /// Pages swapped in and out since boot (`/proc/vmstat` pswpin, pswpout).
    pub swapped_in_out: Option<(u64, u64)>,
    /// PSI memory `some` and `full` avg10, in percent.
    pub psi_some_avg10: Option<f64>,
    pub psi_full_avg10: Option<f64>,
    /// `MemAvailable`, and `MemFree + Inactive(file)` (what the kubelet counts as
    /// available): what the userspace OOM killers watch.
    pub available: Option<u64>,
    pub node_available: Option<u64>,
}

/// The watched cgroup at one tick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CgroupSample {
    pub usage: Option<u64>,
    /// OOM kills the cgroup counted since it was made.
    pub oom_kills: Option<u64>,
}

impl Sample {
    /// Resident bytes of every process, summed (pages they share count twice).
    pub fn total_rss(&self) -> u64 {
        self.processes.iter().map(|p| p.rss).sum()
    }

    /// Sum of each process's latest PSS reading, once every one has one.
    pub fn total_pss(&self) -> Option<u64> {
        if self.processes.is_empty() {
            return None;
        }
        self.processes
            .iter()
            .map(|p| p.pss.map(|r| r.pss))
            .sum::<Option<u64>>()
    }

    /// Age in seconds of the oldest reading behind [`Self::total_pss`].
    pub fn oldest_pss_age(&self) -> f64 {
        self.processes
            .iter()
            .filter_map(|p| p.pss.as_ref())
            .map(|r| self.t - r.at)
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
impl ProcessSample {
    /// A process of `rss` bytes with nothing else read, for consumers' tests.
    pub(crate) fn bare(pid: i32, ppid: i32, comm: &str, rss: u64) -> Self {
        ProcessSample {
            pid,
            ppid,
            comm: comm.into(),
            exe: None,
            rss,
            minor_faults: 0,
            major_faults: 0,
            rollup: None,
            pss: None,
            uss_estimate: 0,
            layout: None,
            forked_without_exec: None,
            copied_after_fork: None,
            execed: false,
        }
    }
}

#[cfg(test)]
impl Sample {
    /// A tick at `t` of these processes and nothing machine-wide.
    pub(crate) fn bare(t: f64, processes: Vec<ProcessSample>) -> Self {
        Sample {
            t,
            seq: 0,
            processes,
            minor_faults_per_second: 0.0,
            major_faults_per_second: 0.0,
            pss_attempts: Vec::new(),
            system: None,
            cgroup: None,
            gpu: None,
        }
    }
}
