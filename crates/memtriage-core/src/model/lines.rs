//! Where a Python process's memory went, line by line: what `run`'s startup hook
//! measured in each Python process of the job (see `supervise::python_hook`), and the
//! kind of growth the diagnosis told each line's to be.
//!
//! A line is the innermost frame in the user's code that was running when the memory
//! grew (native allocations are charged to the Python line that called them), with the
//! path of the user's frames that led there. Memory given back is credited to the
//! lines that grew most recently, so `kept` is what a line grew and never gave back.

use serde::{Deserialize, Serialize};

/// A place in the code: `frames.py:17 in __getitem__`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CodeLocation {
    pub file: String,
    pub line: u32,
    pub function: String,
    /// The line's source text, where the process could read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl CodeLocation {
    /// `frames.py:17 in __getitem__`: the file's name without its directory.
    pub fn short(&self) -> String {
        let name = self.file.rsplit('/').next().unwrap_or(&self.file);
        format!("{name}:{} in {}", self.line, self.function)
    }
}

/// One kind of resident memory (anonymous, file-backed or shared) under one line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindGrowth {
    /// Every rise charged to the line.
    pub grown: u64,
    /// What of it was not given back by the end of the measurement.
    pub kept: u64,
}

/// What a line's growth was, as the diagnosis tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Memory that is never given back and keeps rising with items or steps.
    Leak,
    /// Memory that rises and falls with each step (a batch, activations, a buffer).
    Peak,
    /// A forked worker's private copies of its parent's pages, made where it touched them.
    CopyOnWrite,
    /// Taken once and held (a working set, a model, a loaded dataset): not a fault.
    Held,
}

impl LineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::Leak => "leak",
            LineKind::Peak => "peak",
            LineKind::CopyOnWrite => "copy-on-write",
            LineKind::Held => "held",
        }
    }
}

/// A point of a line's growth over time: seconds since the job started, and the
/// bytes it held then (kept anonymous and shared memory, and copies after a fork).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HeldAt(pub f64, pub i64);

/// One line of a process: how its memory grew under it, by kind, and the faults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineGrowth {
    /// The innermost frame in the user's code (the innermost frame at all where no
    /// frame was the user's).
    pub at: CodeLocation,
    /// The user's frames that led there, outermost first, ending at `at`: the path
    /// charged most often.
    #[serde(default)]
    pub path: Vec<CodeLocation>,
    /// The thread it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// Set by the diagnosis; `None` where the growth is too small to tell.
    #[serde(default)]
    pub kind: Option<LineKind>,
    pub anon: KindGrowth,
    pub file: KindGrowth,
    pub shmem: KindGrowth,
    /// In a forked process: pages copied on write (faults that added no resident
    /// memory), an estimate from the fault counters.
    #[serde(default)]
    pub copied_after_fork: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// Measurements that charged it.
    pub ticks: u64,
    /// Times it grew again after another line had, or after a pause: a loop's line
    /// has many, one long call one.
    #[serde(default)]
    pub episodes: u64,
    /// When it first and last grew, seconds since the job started.
    pub first_seconds: f64,
    pub last_seconds: f64,
    /// What it held over time, at most 64 points.
    #[serde(default)]
    pub series: Vec<HeldAt>,
}

impl LineGrowth {
    /// What it holds at the end: kept anonymous, file-backed and shared memory, and
    /// the pages it copied after a fork.
    pub fn held(&self) -> u64 {
        self.anon.kept + self.file.kept + self.shmem.kept + self.copied_after_fork
    }

    /// Everything that rose under it, given back or not.
    pub fn grown(&self) -> u64 {
        self.anon.grown + self.file.grown + self.shmem.grown + self.copied_after_fork
    }
}

/// Bytes torch's pinned host allocator held (`torch.cuda.host_memory_stats()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedHost {
    pub current: u64,
    pub peak: u64,
}

/// How a process of the job started its Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PythonStart {
    /// A Python interpreter that started (a main process, a spawned worker, a rank).
    Exec,
    /// A copy of its parent made by fork without exec (a forked DataLoader worker).
    Fork,
}

/// One Python process of the job, as its hook measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessLines {
    pub pid: i32,
    pub ppid: i32,
    pub started: PythonStart,
    /// What it was to the job: `DataLoader worker 1 of 2`, `ForkPoolWorker-3`, `rank 1`.
    #[serde(default)]
    pub role: Option<String>,
    pub python: String,
    /// How often the hook's thread measured; the fault signals come between.
    pub interval_ms: u64,
    pub ticks: u64,
    /// The first and last measurement, seconds since the job started.
    #[serde(default)]
    pub first_seconds: Option<f64>,
    #[serde(default)]
    pub last_seconds: Option<f64>,
    /// CPU time of the hook's thread (the fault signals' handler runs on the
    /// main thread and is not in it).
    #[serde(default)]
    pub hook_cpu_seconds: Option<f64>,
    /// Whether it wrote at its exit; `false` for a process killed (SIGKILL), whose
    /// figures end at its last write, at most half a second before.
    pub complete: bool,
    /// Signals taken every `fault_period` page faults of its main thread, which
    /// charge growth to the line that faulted rather than the line running at the
    /// next measurement.
    #[serde(default)]
    pub fault_signals: u64,
    #[serde(default)]
    pub fault_period: Option<u64>,
    /// Why the fault signals were not used: lines are then charged by time alone.
    #[serde(default)]
    pub fault_signals_unavailable: Option<String>,
    /// torch's pinned host memory (cudaHostAlloc) where the process used CUDA: it is
    /// resident as shared memory (`shmem`), never in /dev/shm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_host: Option<PinnedHost>,
    /// Lines measured beyond those kept (the smallest).
    #[serde(default)]
    pub lines_not_kept: u64,
    /// Why the measurement stopped early, where it did.
    #[serde(default)]
    pub failed: Option<String>,
    /// Most held first.
    pub lines: Vec<LineGrowth>,
}

impl ProcessLines {
    /// The lines of a kind, most held first.
    pub fn of_kind(&self, kind: LineKind) -> impl Iterator<Item = &LineGrowth> {
        self.lines.iter().filter(move |l| l.kind == Some(kind))
    }
}
