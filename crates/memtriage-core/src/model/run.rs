//! A supervised job: how it ended, what it used, and the timeline it left.

use serde::{Deserialize, Serialize};

use super::finding::Finding;
use super::growth::{CeilingSnapshot, GrowthSummary};
use super::process::{process_label, RankInfo};

pub const RUN_SCHEMA: &str = "memtriage.run/v1";
pub const TIMELINE_SCHEMA: &str = "memtriage.record/v1";

/// How a process ended, as `wait(2)` told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Exit status when it exited.
    pub exit_code: Option<i32>,
    /// Signal number when a signal ended it.
    pub signal: Option<i32>,
    pub core_dumped: bool,
}

impl Outcome {
    /// What a shell reports: the exit status, or 128 + the signal.
    pub fn shell_code(&self) -> i32 {
        match (self.exit_code, self.signal) {
            (Some(code), _) => code,
            (None, Some(sig)) => 128 + sig,
            (None, None) => 1,
        }
    }

    pub fn signal_name(&self) -> Option<&'static str> {
        self.signal.map(signal_name)
    }

    pub fn describe(&self) -> String {
        match (self.exit_code, self.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(sig)) => format!(
                "killed by signal {sig} ({}){}",
                signal_name(sig),
                if self.core_dumped {
                    ", core dumped"
                } else {
                    ""
                }
            ),
            (None, None) => "ended in an unknown way".into(),
        }
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        31 => "SIGSYS",
        _ => "signal",
    }
}

/// A byte count and when it was reached, in seconds since the job started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    pub bytes: u64,
    pub at_seconds: f64,
}

impl Peak {
    pub fn update(&mut self, bytes: u64, at: f64) {
        if bytes > self.bytes {
            self.bytes = bytes;
            self.at_seconds = at;
        }
    }
}

/// One process of the job over its life.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSummary {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// The executable at the latest PSS reading (forked workers share their parent's).
    pub exe: Option<String>,
    /// The rank its launcher (torchrun) gave it, read from its environment once after
    /// its exec; absent when it has none or its environment was not ours to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<RankInfo>,
    /// First and last moment the process was known alive, in seconds since the job
    /// started: by a sample, or by the kernel's process events.
    pub first_seen_seconds: f64,
    pub last_seen_seconds: f64,
    /// When it was forked and when it exited, from the kernel's process events
    /// (`None` where they were not followed, see `RunReport::process_tracking`).
    #[serde(default)]
    pub started_seconds: Option<f64>,
    #[serde(default)]
    pub ended_seconds: Option<f64>,
    /// Highest RSS among the samples of it; `None` when it lived and ended between
    /// two samples, so its memory is unknown (not 0). Its fault counts are then 0.
    pub peak_rss: Option<Peak>,
    /// The kernel's high-water mark (`ru_maxrss` from `wait4`), for a process
    /// memtriage reaped: the most RSS it *or any child it waited for* ever had, so a
    /// parent reads as big as its largest reaped worker. Kept apart from the samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_max_rss: Option<u64>,
    /// Highest PSS among the readings taken (PSS is read on a budget; see `sampling`).
    pub peak_pss: Option<Peak>,
    /// Highest USS (private memory) among the readings taken.
    pub peak_uss: Option<Peak>,
    /// Highest private memory estimated between readings: the last USS reading plus
    /// 4 KiB per minor fault since (after fork, faults track copy-on-write closely).
    pub peak_uss_estimate: Option<Peak>,
    /// Private dirty memory at the highest USS reading: copy-on-write shows here.
    pub private_dirty_at_peak_uss: Option<u64>,
    pub shared_at_peak_uss: Option<u64>,
    /// Whether it was forked from its parent without exec (a DataLoader worker under
    /// `fork`), as last seen; `None` when that could not be told.
    #[serde(default)]
    pub forked_without_exec: Option<bool>,
    /// For a process forked without exec: the most it had copied of the memory it
    /// inherited (private dirty bytes in its parent's mappings), among the readings
    /// taken; never what it allocated itself.
    #[serde(default)]
    pub peak_copied_after_fork: Option<Peak>,
    /// RSS (from the same smaps) at that reading: the copies are part of it.
    #[serde(default)]
    pub rss_at_peak_copied_after_fork: Option<u64>,
    /// Anonymous memory and the part of it in transparent huge pages, at the latest
    /// PSS reading: the huge-page coverage that decides TLB pressure.
    pub anonymous: Option<u64>,
    pub anon_huge_pages: Option<u64>,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// Most GPU memory it held over every device among the samples (NVML); `None`
    /// when GPUs were not read (no NVML, or pids that cannot be joined).
    #[serde(default)]
    pub peak_gpu: Option<Peak>,
    /// Set when memtriage reaped it (the job's main process, or an orphan it adopted).
    pub outcome: Option<Outcome>,
}

impl ProcessSummary {
    /// A process first seen `t` seconds into the job, before anything is read of it.
    pub fn new(pid: i32, t: f64) -> Self {
        ProcessSummary {
            pid,
            ppid: 0,
            comm: String::new(),
            exe: None,
            rank: None,
            first_seen_seconds: t,
            last_seen_seconds: t,
            started_seconds: None,
            ended_seconds: None,
            peak_rss: None,
            kernel_max_rss: None,
            peak_pss: None,
            peak_uss: None,
            peak_uss_estimate: None,
            private_dirty_at_peak_uss: None,
            shared_at_peak_uss: None,
            forked_without_exec: None,
            peak_copied_after_fork: None,
            rss_at_peak_copied_after_fork: None,
            anonymous: None,
            anon_huge_pages: None,
            minor_faults: 0,
            major_faults: 0,
            peak_gpu: None,
            outcome: None,
        }
    }

    /// `pid 812 (python3, rank 1)`: see [`process_label`].
    pub fn label(&self) -> String {
        process_label(self.pid, &self.comm, self.rank.as_ref())
    }
}

/// Fault counts and the highest rate seen between two samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultStats {
    /// Whole job, from the kernel's accounting of reaped processes (`wait4`).
    pub minor: u64,
    pub major: u64,
    pub peak_minor_per_second: f64,
    pub peak_major_per_second: f64,
    pub peak_major_at_seconds: f64,
}

/// The memory cgroup `--limit` made for the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitInfo {
    pub version: super::process::CgroupVersion,
    pub dir: String,
    pub limit: u64,
    pub peak: Option<u64>,
    pub oom_kills: Option<u64>,
    /// Whether the cgroup was removed afterwards.
    pub removed: bool,
}

/// How `run` found the job's processes (`process_tracking` in `memtriage.run/v1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrackingMethod {
    /// The kernel's process events (proc connector): every fork, exec and exit of
    /// the job's tree, however short-lived. Needs the host's namespaces, and root
    /// before Linux 6.6.
    ProcEvents,
    /// The `--limit` cgroup's `cgroup.procs`, read every `poll_ms`.
    CgroupProcs,
    /// The sampler's walk of memtriage's descendants, at each sample.
    DescendantWalk,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessTracking {
    pub method: TrackingMethod,
    /// How often the tree was looked at when it was polled; `None` for events.
    pub poll_ms: Option<u64>,
    /// Why the kernel's process events were not used, when they were not.
    pub events_unavailable: Option<String>,
    /// Events the kernel dropped (its buffer was full), so processes may be missing
    /// even with [`TrackingMethod::ProcEvents`].
    pub events_lost: bool,
}

impl ProcessTracking {
    /// Whether every process of the job is counted, however briefly it lived.
    pub fn complete(&self) -> bool {
        self.method == TrackingMethod::ProcEvents && !self.events_lost
    }
}

/// What sampling cost and how fresh its PSS readings were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingStats {
    pub interval_ms: u64,
    pub ticks: u64,
    pub pss_readings: u64,
    /// Total time spent reading smaps_rollup (the kernel walks page tables under the
    /// target's mmap lock meanwhile).
    pub pss_read_seconds: f64,
    pub pss_read_max_ms: f64,
    /// Oldest PSS reading behind the peak tree PSS.
    pub peak_pss_max_age_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub schema: String,
    pub command: Vec<String>,
    pub pid: i32,
    pub wall_seconds: f64,
    pub outcome: Outcome,
    /// Highest sum of the job's processes' RSS among the samples; `None` where no
    /// sample read any (the job ended first): unknown, not 0 B.
    pub peak_tree_rss: Option<Peak>,
    /// The kernel's high-water mark of the job's main process and the children it
    /// waited for (`ru_maxrss`): not a sum, and not sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_max_rss: Option<u64>,
    /// Sum of each process's latest PSS reading, at its highest.
    pub peak_tree_pss: Option<Peak>,
    pub peak_shm_used: Option<Peak>,
    pub shm_size: Option<u64>,
    pub peak_swap_used: Option<Peak>,
    pub peak_cgroup_usage: Option<Peak>,
    /// The machine's `MemAvailable` at its lowest during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lowest_available: Option<LowestAvailable>,
    /// The OOM killers on the machine as the job started: the kernel's and the
    /// userspace ones (earlyoom, systemd-oomd, the kubelet, Ray, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub killers: Vec<super::killers::OomKiller>,
    /// The signals sent to the job's processes and who sent them (`--trace-signals`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals_sent: Vec<SignalSent>,
    /// Without `--limit`: the cgroup the job ran in (a Slurm job step, a container,
    /// a login session), whose usage `peak_cgroup_usage` is: the job's own only when
    /// nothing else ran there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enclosing_cgroup: Option<EnclosingCgroup>,
    pub faults: FaultStats,
    /// OOM kills counted by the job's memory cgroup while it ran.
    pub cgroup_oom_kills: Option<u64>,
    /// Pages swapped in plus out, machine-wide, while the job ran (/proc/vmstat).
    pub swapped_pages: Option<u64>,
    /// Highest PSI `full avg10` (percent of time every task stalled on memory).
    pub peak_memory_stall_percent: Option<f64>,
    /// `--perf` counters for the whole job.
    pub perf: Option<PerfCounts>,
    /// The job's `oom_score_adj` when one was asked for, as the kernel has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_score_adj: Option<i32>,
    /// Processes of the job still running when it ended (as a shell leaves
    /// background jobs running).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_running: Vec<LeftRunning>,
    /// Every process of the job seen, sampled or not.
    pub processes: Vec<ProcessSummary>,
    /// How the processes were found, and whether short-lived ones may be missing.
    /// Absent in reports written before memtriage said so.
    #[serde(default)]
    pub process_tracking: Option<ProcessTracking>,
    pub limit: Option<LimitInfo>,
    pub sampling: SamplingStats,
    /// How the tree's memory grew against its ceiling, and the early warning given.
    #[serde(default)]
    pub growth: Option<GrowthSummary>,
    /// The tree read in full when its memory reached 90% of the ceiling.
    #[serde(default)]
    pub near_ceiling: Option<CeilingSnapshot>,
    /// GPU memory while the job ran (NVML), or why it could not be read.
    #[serde(default)]
    pub gpu: Option<RunGpu>,
    /// CUDA allocator snapshots the job's Python processes saved on an out-of-memory
    /// (`memtriage explain-snapshot FILE` reads each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuda_snapshots: Vec<String>,
    /// Where each Python process's memory grew, line by line (`run`'s startup hook),
    /// the lines' kinds told by the diagnosis. Empty where the hook was off or the
    /// job ran no Python; the notes say which Python processes have no lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_by_line: Vec<super::lines::ProcessLines>,
    pub findings: Vec<Finding>,
    /// What could not be measured, and why.
    pub notes: Vec<String>,
}

/// What perf_event_open(2) counters counted for the whole job; `None` where a
/// counter could not be opened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerfCounts {
    pub page_faults: Option<u64>,
    pub minor_faults: Option<u64>,
    pub major_faults: Option<u64>,
    pub context_switches: Option<u64>,
    pub instructions: Option<u64>,
    pub dtlb_load_misses: Option<u64>,
    pub dtlb_store_misses: Option<u64>,
    /// Why hardware counters are missing (no PMU exposed, as in many VMs).
    pub hardware_unavailable: Option<String>,
}

/// The machine's memory at its lowest while the job ran: what the userspace OOM
/// killers watch, to tell which of them stood at its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LowestAvailable {
    /// `MemAvailable`, and when (seconds since the job started).
    pub bytes: u64,
    pub at_seconds: f64,
    /// `MemFree + Inactive(file)` at the same sample.
    pub node_available: Option<u64>,
}

/// A signal sent to a process of the job, and by whom: the kernel's
/// `signal_generate` tracepoint (`run --trace-signals`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalSent {
    pub signal: i32,
    pub target_pid: i32,
    /// The task that sent it (for a signal of the kernel's own, the task running
    /// when it was raised).
    pub sender_pid: i32,
    pub sender_comm: String,
    /// The kernel raised it (`SI_KERNEL`: the OOM killer, a fault), not a process's
    /// kill().
    pub by_kernel: bool,
    /// The tracepoint's clock: seconds since boot.
    pub at_boot_seconds: f64,
}

/// The cgroup a job ran in when memtriage made none for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnclosingCgroup {
    pub dir: String,
    /// Its memory limit; `None` when it has none or it could not be read.
    pub limit: Option<u64>,
    /// Processes in it (and below it) other than memtriage and the job's, at most
    /// at the job's start or end; `None` when they could not be listed.
    pub other_processes: Option<usize>,
}

impl EnclosingCgroup {
    /// Its usage measured the job alone (plus its page cache): nothing else ran there.
    pub fn is_the_jobs_own(&self) -> bool {
        self.other_processes == Some(0)
    }
}

/// A process of the job that outlived it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftRunning {
    pub pid: i32,
    pub comm: String,
    pub command: Vec<String>,
}

/// A `--record` file read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    pub command: Vec<String>,
    pub interval_ms: u64,
    pub samples: Vec<TimelineSample>,
    pub events: Vec<TimelineEvent>,
    /// Absent when the run was cut short before it ended.
    pub summary: Option<RunReport>,
    /// The file ends in the middle of a line: a write failed (a full disk) or the
    /// writer was killed while writing, rather than stopped between lines.
    pub truncated: bool,
}

impl Timeline {
    /// Why the recording has no final report, for people; `None` when it has one.
    pub fn cut_short_reason(&self) -> Option<&'static str> {
        match (&self.summary, self.truncated) {
            (Some(_), _) => None,
            (None, true) => Some(
                "the file is truncated: it ends mid-line, where a write failed (a full disk?) or memtriage was killed while writing",
            ),
            (None, false) => Some("the recording ends before the job did (memtriage was stopped)"),
        }
    }
}

/// One sample of the job's tree: what the sampler measured in one tick, written to
/// `--record` files (as a `"type": "sample"` line) and read back by `report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineSample {
    /// Seconds since the job started.
    pub t: f64,
    pub processes: Vec<TimelineProcess>,
    pub tree_rss: u64,
    /// Sum of each live process's latest PSS reading, once every one has one.
    pub tree_pss: Option<u64>,
    pub shm_used: Option<u64>,
    pub swap_used: Option<u64>,
    pub cgroup_usage: Option<u64>,
    #[serde(default)]
    pub psi_some_avg10: Option<f64>,
    #[serde(default)]
    pub minor_faults_per_second: f64,
    #[serde(default)]
    pub major_faults_per_second: f64,
    /// GPU memory the job's processes held, summed over devices; `None` when GPUs
    /// were not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_used: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineProcess {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// Its rank under a distributed launcher, when it has one (see
    /// [`ProcessSummary::rank`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<RankInfo>,
    pub rss: u64,
    /// Fault counters since the process started; `None` where they were not kept (a
    /// window of `record`'s history keeps none per process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minflt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub majflt: Option<u64>,
    /// Set in the sample whose tick read this process's smaps_rollup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uss: Option<u64>,
}

impl TimelineProcess {
    /// `pid 812 (python3, rank 1)`: see [`process_label`].
    pub fn label(&self) -> String {
        process_label(self.pid, &self.comm, self.rank.as_ref())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEvent {
    pub t: f64,
    pub event: String,
    pub pid: i32,
    pub outcome: Option<Outcome>,
    /// What happened, in words for people (the early warning's estimate, the failure
    /// line seen); absent from recordings that predate it and from plain exits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl RunReport {
    /// A process named by pid and comm elsewhere (the kernel's OOM record, the
    /// snapshot near the ceiling), labelled as its summary would be: with its rank
    /// where the run read one.
    pub fn label_of(&self, pid: i32, comm: &str) -> String {
        let rank = self
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .and_then(|p| p.rank.as_ref());
        process_label(pid, comm, rank)
    }

    /// A Python process whose lines were measured: `pid 4412 (pt_data_worker,
    /// DataLoader worker 1 of 2)`, its role in the job where its hook knew it.
    pub fn label_of_lines(&self, p: &super::lines::ProcessLines) -> String {
        let comm = self
            .processes
            .iter()
            .find(|s| s.pid == p.pid)
            .map_or("python", |s| s.comm.as_str());
        let label = self.label_of(p.pid, comm);
        match &p.role {
            Some(role) if !label.contains(role.as_str()) => {
                format!("{}, {role})", label.trim_end_matches(')'))
            }
            _ => label,
        }
    }

    /// Share of the job's anonymous memory in transparent huge pages, over the
    /// latest PSS reading of each process.
    pub fn huge_page_coverage(&self) -> Option<f64> {
        let (huge, anon) = self
            .processes
            .iter()
            .filter_map(|p| Some((p.anon_huge_pages?, p.anonymous?)))
            .fold((0u64, 0u64), |(h, a), (ph, pa)| (h + ph, a + pa));
        (anon > 0).then(|| huge as f64 / anon as f64)
    }
}

/// The GPUs while a job ran: each device's peak, the job's share, who else held
/// memory when the job held the most, and the driver's events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunGpu {
    pub available: bool,
    /// Why GPUs were not read (`available` false): no NVML, or NVML refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub devices: Vec<RunGpuDevice>,
    /// Every holder of GPU memory at the tick when the job's processes held the most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_job_peak: Option<GpuAtPeak>,
    /// Xid and ECC events NVML reported while the job ran.
    #[serde(default)]
    pub events: Vec<GpuEvent>,
    /// Why events were not followed, when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_unavailable: Option<String>,
    /// NVML reads: how many, their total and slowest time.
    pub reads: u64,
    pub read_seconds: f64,
    pub read_max_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunGpuDevice {
    pub index: u32,
    pub total: Option<u64>,
    /// Memory used on the device by everyone, at its highest.
    pub peak_used: Option<Peak>,
    /// Memory the job's processes held on it, at its highest.
    pub peak_job: Option<Peak>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuAtPeak {
    pub at_seconds: f64,
    pub devices: Vec<super::gpu::GpuTick>,
}

/// An event NVML delivered while the job ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuEvent {
    pub at_seconds: f64,
    pub index: Option<u32>,
    /// `xid`, `ecc-double-bit` or `ecc-single-bit`.
    pub kind: String,
    /// The Xid's number, for `xid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xid: Option<u64>,
}
