//! Supervising a job (`memtriage run`): spawn it (`child`), pass its output through
//! byte for byte to observers (`passthrough`), forward signals (`signals`), follow its
//! process tree with the engine's sampler and tally what `run` reports of it
//! (`tally`), measure where its Python processes' memory grew (`python_hook`), warn
//! before its memory reaches its ceiling (`growth`), reap every
//! process, optionally under a memory limit (`limit`), with perf counters (`perf`)
//! and its timeline written to a file (`timeline_file`). [`run`] hands everything seen to
//! the caller; `usecase::run` diagnoses it.
//!
//! [`run`] reads as its steps, one module each: `start` (everything set up around the
//! job, then the job), `output` (watch its output), `reap` (every process of it that
//! ends), `sample` (the sampler until the main process is reaped) and `collect` (what
//! the job left, and the report).

pub mod child;
pub mod descendants;
pub mod gpu_events;
pub mod growth;
pub mod limit;
pub mod oom_score;
pub mod passthrough;
pub mod perf;
pub mod python_hook;
pub mod signal_trace;
pub mod signals;
pub mod tally;
pub mod timeline_file;

mod collect;
mod guard;
mod output;
mod reap;
mod sample;
mod start;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use crate::error::Result;
use crate::model::run::RunReport;
use crate::probe::root::Root;

use crate::sampler::Sample;
use child::Reaped;
use passthrough::OutputObserver;

pub struct Config {
    pub command: Vec<OsString>,
    pub interval: Duration,
    pub limit: Option<u64>,
    /// Where the run's timeline is written as JSON lines (`--record` in the CLI).
    pub timeline_file: Option<PathBuf>,
    /// Count page faults, context switches and (where the PMU allows) dTLB misses.
    pub perf: bool,
    /// The job's `oom_score_adj`, set before exec and inherited by its workers.
    pub oom_score_adj: Option<i32>,
    /// Record who sends the signals that end the job's processes (a tracefs instance
    /// of the run's own: root, tracefs mounted).
    pub trace_signals: bool,
    /// Where the early warning before an OOM kill goes, one line without a prefix.
    pub on_warning: Option<Box<growth::WarningSink>>,
    /// What the startup hook does in the job's Python processes
    /// (`supervise::python_hook`): CUDA out-of-memory snapshots, and where memory grew
    /// line by line. Nothing asked: no hook.
    pub python_hook: python_hook::HookParts,
}

/// Everything a run saw, for diagnosis and rendering.
pub struct RunResult<O> {
    pub report: RunReport,
    /// The observers of stdout and stderr, handed back with what they collected.
    pub stdout: O,
    pub stderr: O,
    /// Pids of every process of the job seen.
    pub pids: Vec<i32>,
    /// Seconds since boot when the job started, to place its kernel log lines on the
    /// run's time axis.
    pub started_boot_seconds: Option<f64>,
    pub reaped: Vec<Reaped>,
    /// The `--record` file, its samples and events written, waiting for the final
    /// report once it is diagnosed ([`timeline_file::TimelineWriter::finish`]).
    pub timeline_writer: Option<timeline_file::TimelineWriter>,
    /// CUDA out-of-memory snapshots the job's Python processes saved.
    pub cuda_snapshots: Vec<python_hook::SavedSnapshot>,
    /// The kernel log, followed from just before the job started (or why it could
    /// not be): at the end only the run's records are read, not the whole ring.
    /// Taken by [`kernel_log_of_run`].
    pub kernel_log: Option<Result<crate::probe::kmsg::LogFollower>>,
}

/// What the run loop waits on.
enum Event {
    Sample(Box<Sample>),
    /// A failure line the job printed, seen for the first time: sampled at once.
    FailureLine(String),
    /// A process of the job exec'd: the program it became is sampled at once.
    Exec,
    Reaped(Reaped),
    /// The reaper has nothing left to wait for.
    ReaperDone,
}

/// Runs the job to its end. Errors only when it cannot be started (bad command,
/// `--limit` without a cgroup to make); everything after that is in the result.
pub fn run<O: OutputObserver + 'static>(
    root: &Root,
    config: &Config,
    stdout_observer: O,
    stderr_observer: O,
) -> Result<RunResult<O>> {
    // Samples, exits, execs and failure lines arrive on one channel, in the order
    // they happen: an exit is seen at once, never after a wait for the next sample.
    let (events, arrived) = mpsc::channel();
    // Before the job starts, so no signal to it goes unseen.
    let trace = config
        .trace_signals
        .then(|| signal_trace::SignalTrace::start(root));
    // The kernel log from now: reading all of /dev/kmsg at the end, a record per
    // read(2), was most of the time a short run took.
    let kernel_log = crate::probe::kmsg::LogFollower::kmsg(root, crate::probe::kmsg::Start::Now);
    let (mut job, pipes) = start::start(root, config, &events)?;
    let trace = match trace {
        Some(Ok(t)) => Some(t),
        Some(Err(why)) => {
            job.notes
                .push(format!("the signals' senders were not traced: {why}"));
            None
        }
        None => None,
    };
    let output = output::Output::start(pipes, (stdout_observer, stderr_observer), &events)?;
    reap::start(&events);
    let mut sampling = sample::Sampling::start(root, config, &mut job, events);

    let mut reaped = Vec::new();
    let mut main_exit = sampling.until_exit(&arrived, &mut job, &mut reaped);
    let wall = job.start.elapsed().as_secs_f64();
    let sampled = sampling.stop(&arrived, &mut job, &mut reaped);

    output.drain();
    let enclosing_cgroup = collect::enclosing_cgroup(root, &sampled, &reaped);
    let left_running = collect::left_running(root);
    let observers = output.finish(&mut job.notes)?;
    reap::late_exits(&arrived, &mut reaped);
    job.forwarder.finish();

    // The job's high-water mark holds the copy of memtriage it was forked as: one no
    // higher than that copy is not known to be the job's (0: unknown).
    for exit in std::iter::once(&mut main_exit).chain(reaped.iter_mut()) {
        if exit.pid == job.pid && job.forked_rss.is_none_or(|copy| exit.max_rss <= copy) {
            exit.max_rss = 0;
        }
    }
    let ended = collect::Ended {
        main_exit,
        wall,
        reaped,
        enclosing_cgroup,
        left_running,
        output: observers,
        kernel_log,
    };
    let mut result = collect::collect(root, config, job, sampled, ended);
    if let Some(trace) = trace {
        let pids: std::collections::HashSet<i32> = result.pids.iter().copied().collect();
        result.report.signals_sent = trace.finish(&pids);
    }
    Ok(result)
}

/// The kernel log's records since the job started: the log was followed from just
/// before, so nothing older is read. `Err` says why the kernel log could not be read.
pub fn kernel_log_of_run<O>(result: &mut RunResult<O>) -> Result<Vec<String>> {
    match result.kernel_log.take() {
        Some(Ok(mut since_start)) => since_start.read_new(),
        Some(Err(why)) => Err(why),
        None => Err(crate::error::Error::internal(
            "the run's kernel log was read already",
        )),
    }
}

/// OOM kills the kernel logged for this job (`log`: [`kernel_log_of_run`]): of its
/// processes or in its cgroup.
pub fn kernel_oom_kills<O>(
    log: &[String],
    result: &RunResult<O>,
) -> Vec<crate::model::system::OomKill> {
    let kills = crate::parse::kmsg::oom_kills(log.iter().map(String::as_str));
    let limit_dir = result.report.limit.as_ref().map(|l| l.dir.clone());
    kills
        .into_iter()
        .filter(|k| {
            result.pids.contains(&k.pid)
                || result.reaped.iter().any(|r| r.pid == k.pid)
                || limit_dir.as_deref().is_some_and(|dir| {
                    [&k.memcg, &k.oom_memcg].iter().any(|m| {
                        m.as_deref()
                            .is_some_and(|m| m.len() > 1 && dir.ends_with(m))
                    })
                })
        })
        .collect()
}

/// Whether `pid` was one of the job's processes.
pub fn was_the_jobs<O>(result: &RunResult<O>, pid: i32) -> bool {
    result.pids.contains(&pid) || result.reaped.iter().any(|r| r.pid == pid)
}

/// Keeps the last bytes of a stream, for evidence when nothing else explains a
/// failure: a fixed ring filled by at most two copies per chunk, so a job printing
/// gigabytes costs it almost nothing.
#[derive(Debug)]
pub struct Tail {
    ring: Vec<u8>,
    /// Where the next byte goes.
    head: usize,
    filled: bool,
}

impl Default for Tail {
    fn default() -> Self {
        Tail {
            ring: vec![0; Self::KEEP],
            head: 0,
            filled: false,
        }
    }
}

impl Tail {
    pub const KEEP: usize = 16 * 1024;

    pub fn push(&mut self, chunk: &[u8]) {
        let chunk = &chunk[chunk.len().saturating_sub(Self::KEEP)..];
        let first = chunk.len().min(Self::KEEP - self.head);
        self.ring[self.head..self.head + first].copy_from_slice(&chunk[..first]);
        let rest = &chunk[first..];
        self.ring[..rest.len()].copy_from_slice(rest);
        let end = self.head + chunk.len();
        self.filled |= end >= Self::KEEP;
        self.head = end % Self::KEEP;
    }

    fn bytes(&self) -> Vec<u8> {
        if self.filled {
            [&self.ring[self.head..], &self.ring[..self.head]].concat()
        } else {
            self.ring[..self.head].to_vec()
        }
    }

    /// The last `n` lines kept, as text.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let text = crate::parse::text::escape_bytes(&self.bytes());
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Tail;

    #[test]
    fn tail_keeps_only_the_last_bytes() {
        let mut t = Tail::default();
        for i in 0..10_000 {
            t.push(format!("line {i}\n").as_bytes());
        }
        assert_eq!(t.last_lines(2), vec!["line 9998", "line 9999"]);
        assert_eq!(t.bytes().len(), Tail::KEEP);
        t.push(&vec![b'x'; 100_000]);
        assert!(t.bytes().iter().all(|b| *b == b'x'));
        let mut short = Tail::default();
        short.push(b"only\n");
        assert_eq!(short.last_lines(5), vec!["only"]);
    }
}
