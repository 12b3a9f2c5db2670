//! Where a Python process's memory went, line by line: what `run`'s startup hook
//! measured in each Python process of the job (see `supervise::python_hook`), and the
//! kind of growth the diagnosis told each line's to be.
//!
//! A line is the innermost frame in the user's code that was running when the memory
//! grew (native allocations are charged to the Python line that called them), with the
//! path of the user's frames that led there. Memory given back is credited to the
//! lines that grew most recently, so `kept` is what a line grew and never gave back.

use serde::{Deserialize, Serialize};

/// A place in the code: `frames.py:17 in __getitem__`. Line 0 is a thread's growth
/// that no frame of the job's code could be charged with (`<thread NAME>`).
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
        if self.line == 0 {
            // `<thread QueueFeederThread> outside the job's code`: growth placed only by
            // where a thread waited.
            return format!("{name} {}", self.function);
        }
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
    /// Whether `at` is in the job's own code; `false` where no frame was (the
    /// innermost frame then: a library's, as torch's collate in a DataLoader worker).
    #[serde(default = "in_the_jobs_code")]
    pub user_code: bool,
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
    /// Of what grew under it, what grew while a module was being imported (importlib
    /// inside the line): a line that runs an import is loading code, however long.
    #[serde(default)]
    pub grown_importing: u64,
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

    /// What the line counts for when lines are ranked: what it holds, and for a peak
    /// (which gave back what it took) what it takes at a time.
    pub fn weight(&self) -> u64 {
        match self.kind {
            Some(LineKind::Peak) => self.rise(),
            _ => self.held(),
        }
    }

    /// What it takes at a time: its growth over the times it grew.
    pub fn rise(&self) -> u64 {
        self.grown() / self.episodes.max(1)
    }

    /// The path that led to the line, `train.py:40 in main → frames.py:17 in
    /// __getitem__`, when there is more to it than the line itself.
    pub fn path_text(&self) -> Option<String> {
        (self.path.len() > 1).then(|| {
            self.path
                .iter()
                .map(CodeLocation::short)
                .collect::<Vec<_>>()
                .join(" → ")
        })
    }
}

/// Bytes torch's pinned host allocator held (`torch.cuda.host_memory_stats()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedHost {
    pub current: u64,
    pub peak: u64,
}

fn in_the_jobs_code() -> bool {
    true
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
    /// The process's own anonymous and shared memory over time (at most 64
    /// points): no line can have kept more than the process grew.
    #[serde(default)]
    pub held_series: Vec<HeldAt>,
    /// Most held first.
    pub lines: Vec<LineGrowth>,
}

impl ProcessLines {
    /// The lines of a kind, most held first.
    pub fn of_kind(&self, kind: LineKind) -> impl Iterator<Item = &LineGrowth> {
        self.lines.iter().filter(move |l| l.kind == Some(kind))
    }

    /// The lines the diagnosis told a kind, weightiest first ([`LineGrowth::weight`]).
    pub fn told(&self) -> Vec<&LineGrowth> {
        let mut lines: Vec<&LineGrowth> = self.lines.iter().filter(|l| l.kind.is_some()).collect();
        lines.sort_by_key(|l| std::cmp::Reverse(l.weight()));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: u32, function: &str) -> CodeLocation {
        CodeLocation {
            file: file.into(),
            line,
            function: function.into(),
            text: None,
        }
    }

    fn line(n: u32, kind: Option<LineKind>, kept: u64, grown: u64) -> LineGrowth {
        LineGrowth {
            user_code: true,
            at: at("/srv/job/train.py", n, "step"),
            path: vec![at("/srv/job/train.py", n, "step")],
            thread: None,
            kind,
            anon: KindGrowth { grown, kept },
            file: KindGrowth::default(),
            shmem: KindGrowth::default(),
            copied_after_fork: 0,
            minor_faults: 0,
            major_faults: 0,
            ticks: 1,
            episodes: 1,
            grown_importing: 0,
            first_seconds: 0.0,
            last_seconds: 1.0,
            series: Vec::new(),
        }
    }

    #[test]
    fn told_lines_have_a_kind_and_a_peak_weighs_what_it_takes_at_a_time() {
        let mut p = ProcessLines {
            pid: 7,
            ppid: 1,
            started: PythonStart::Exec,
            role: None,
            python: "3.11".into(),
            interval_ms: 40,
            ticks: 10,
            first_seconds: None,
            last_seconds: None,
            hook_cpu_seconds: None,
            complete: true,
            fault_signals: 0,
            fault_period: None,
            fault_signals_unavailable: None,
            pinned_host: None,
            lines_not_kept: 0,
            held_series: Vec::new(),
            failed: None,
            lines: vec![
                line(1, None, 900 << 20, 900 << 20),
                line(2, Some(LineKind::Held), 100 << 20, 100 << 20),
                line(3, Some(LineKind::Peak), 0, 3000 << 20),
                line(4, Some(LineKind::Leak), 200 << 20, 200 << 20),
            ],
        };
        p.lines[2].episodes = 20;
        let order: Vec<u32> = p.told().iter().map(|l| l.at.line).collect();
        assert_eq!(
            order,
            [4, 3, 2],
            "no kind, no place; the peak weighs the 150 MiB it takes at a time"
        );
    }

    #[test]
    fn a_path_is_told_only_when_it_is_more_than_the_line() {
        let mut l = line(17, Some(LineKind::Leak), 1, 1);
        assert_eq!(l.path_text(), None);
        l.path.insert(0, at("/srv/job/train.py", 40, "main"));
        assert_eq!(
            l.path_text().as_deref(),
            Some("train.py:40 in main → train.py:17 in step")
        );
    }
}
