//! The engine's one sampler: its own thread follows a [`Scope`] of processes at an
//! interval and hands over complete [`Sample`]s, which `memtriage run`, Python's
//! `track()` and any live view consume (as py-spy's `Sampler` and bottom's collection
//! thread do). Every tick reads each process's `stat` (RSS and faults, microseconds);
//! PSS comes from `smaps_rollup`, rationed by a [`PssBudget`]: one process per tick,
//! the one whose minor faults moved most since its last reading, never-read first.
//!
//! - `scope`: which processes (a supervised tree, a tree, all, pids, cgroups)
//! - `budget`: the PSS read budget and its ledger
//! - `collect`: one tick without a thread ([`Collector`])
//! - `sample`: the data a tick hands over
//! - `system`: the machine-wide figures a tick may add (a cgroup's are read through
//!   `probe::cgroup::CgroupDir`)
//!
//! What a consumer keeps across samples (peaks, summaries) is the consumer's.

mod budget;
mod collect;
mod sample;
mod scope;
mod system;

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::probe::cgroup::CgroupDir;
use crate::probe::root::Root;

pub use budget::PssBudget;
pub use collect::{Collector, KEEP_OPEN_UP_TO};
pub use sample::{GpuSample, ProcessSample, Sample};
pub use scope::Scope;

/// Every descendant of this process now: what [`Scope::Supervised`] would sample.
pub fn supervised_descendants(root: &Root) -> Vec<i32> {
    scope::Members::new(root, Scope::Supervised).pids()
}

/// Raises this process's soft limit of open files as far as its hard limit allows
/// (up to 65536), and returns how many processes a machine-wide sampler may then
/// keep open ([`SamplerConfig::keep_open`], three descriptors each), leaving room for
/// everything else.
pub fn open_files_for() -> usize {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let want = limit.maximum.unwrap_or(65536).min(65536);
    let soft = match limit.current {
        Some(current) if current >= want => current,
        _ => {
            let raised = Rlimit {
                current: Some(want),
                maximum: limit.maximum,
            };
            match setrlimit(Resource::Nofile, raised) {
                Ok(()) => want,
                Err(_) => limit.current.unwrap_or(1024),
            }
        }
    };
    (soft.saturating_sub(256) / 3) as usize
}

/// The interval `memtriage run` samples at unless told otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(500);

/// Ticks hold a few buffers and a map of processes; 2 MiB of stack is not needed.
const THREAD_STACK: usize = 256 << 10;

/// What a sampler follows and reads.
#[derive(Debug, Clone)]
pub struct SamplerConfig {
    pub scope: Scope,
    pub interval: Duration,
    /// `None`: PSS is never read (no `smaps_rollup`, no page-table walks).
    pub pss: Option<PssBudget>,
    /// Machine-wide figures at each tick: /dev/shm, swap, PSI.
    pub system: bool,
    /// Each process's executable at each tick (one `readlink`).
    pub exe: bool,
    /// A memory cgroup whose usage and OOM kills each tick reads.
    pub cgroup: Option<CgroupDir>,
    /// Every NVIDIA GPU's memory and who holds it, each tick (NVML; skipped at no
    /// cost where there is none).
    pub gpu: bool,
    /// Processes whose `/proc` directory and `stat` (and `statm`, see
    /// `skip_unchanged`) stay open between ticks (an open file is re-read without a
    /// path lookup). Default 256 (`KEEP_OPEN_UP_TO`), or what the open-file limit
    /// allows.
    pub keep_open: usize,
    /// A process whose `statm` (sizes, a fifth of `stat`'s cost) has not changed
    /// since its last full reading keeps that reading, for at most 5 s
    /// (`FULL_READ_EVERY`): its faults and parent may then lag by that much. For a
    /// live view of every process, where most sleep; a job's sampler reads all.
    pub skip_unchanged: bool,
    /// The zero of [`Sample::t`].
    pub epoch: Instant,
    pub root: Root,
}

impl SamplerConfig {
    /// Everything read (PSS on the default budget, machine-wide figures, executables, GPUs),
    /// on the host, with `t` counted from now.
    pub fn new(scope: Scope, interval: Duration) -> Self {
        SamplerConfig {
            scope,
            interval,
            pss: Some(PssBudget::DEFAULT),
            system: true,
            exe: true,
            cgroup: None,
            gpu: true,
            keep_open: collect::KEEP_OPEN_UP_TO,
            skip_unchanged: false,
            epoch: Instant::now(),
            root: Root::host(),
        }
    }
}

/// The sampling thread, handing each sample to a sink of the caller's. Stopping or
/// dropping it ends the thread and joins it (a tick in progress is finished first).
pub struct SamplerThread {
    control: Option<Sender<Control>>,
    thread: Option<JoinHandle<()>>,
}

/// What the sampling thread is told between ticks.
enum Control {
    Stop,
    /// Take a sample now, outside the schedule (the schedule is kept).
    SampleNow,
}

impl SamplerThread {
    /// Starts sampling: the first sample is taken at once, then one per interval
    /// (a late tick is followed by the next at once, not by a burst). The sink runs on
    /// the sampler's thread; sampling ends when it returns `false`.
    pub fn spawn<F>(config: SamplerConfig, mut sink: F) -> std::io::Result<Self>
    where
        F: FnMut(Sample) -> bool + Send + 'static,
    {
        let (control, told) = mpsc::channel::<Control>();
        let thread = std::thread::Builder::new()
            .name("memtriage-sampler".into())
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let interval = config.interval;
                let mut collector = Collector::new(config);
                let mut next = Instant::now();
                loop {
                    if !sink(collector.sample()) {
                        return;
                    }
                    next = (next + interval).max(Instant::now());
                    loop {
                        match told.recv_timeout(next.saturating_duration_since(Instant::now())) {
                            Err(RecvTimeoutError::Timeout) => break,
                            Ok(Control::SampleNow) => {
                                if !sink(collector.sample()) {
                                    return;
                                }
                            }
                            Ok(Control::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                }
            })?;
        Ok(SamplerThread {
            control: Some(control),
            thread: Some(thread),
        })
    }

    /// Takes a sample at once, outside the schedule: the moment a failure shows
    /// (a full /dev/shm is freed as soon as its workers die) is read, not the next tick.
    pub fn sample_now(&self) {
        if let Some(control) = &self.control {
            let _ = control.send(Control::SampleNow);
        }
    }

    /// Ends sampling and waits for the thread. An error says the thread had died
    /// of a bug (a panic, in the sampler or the sink), so sampling ended early.
    pub fn stop(mut self) -> crate::Result<()> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> crate::Result<()> {
        if let Some(control) = self.control.take() {
            let _ = control.send(Control::Stop);
        }
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        thread.join().map_err(|payload| {
            let what = crate::Error::panic_message(&*payload);
            crate::Error::internal(format!("the sampling thread panicked: {what}"))
        })
    }
}

impl Drop for SamplerThread {
    fn drop(&mut self) {
        // Whoever wanted to know how it ended called stop().
        let _ = self.shut_down();
    }
}

/// A sampler whose samples are consumed as an iterator (or with `recv_timeout`):
/// `for sample in Sampler::start(config)? { … }`. Samples queue until taken. The
/// tests read samples this way; the front ends' consumers are sinks of a
/// [`SamplerThread`], which keep no queue.
#[cfg(test)]
pub struct Sampler {
    samples: mpsc::Receiver<Sample>,
    thread: SamplerThread,
}

#[cfg(test)]
impl Sampler {
    pub fn start(config: SamplerConfig) -> std::io::Result<Self> {
        let (tx, samples) = mpsc::channel();
        let thread = SamplerThread::spawn(config, move |s| tx.send(s).is_ok())?;
        Ok(Sampler { samples, thread })
    }

    /// The next sample, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Sample, RecvTimeoutError> {
        self.samples.recv_timeout(timeout)
    }

    /// Ends sampling, joins the thread, and returns the samples not consumed yet; an
    /// error when the thread had died of a bug.
    pub fn stop(self) -> crate::Result<Vec<Sample>> {
        self.thread.stop()?;
        Ok(self.samples.try_iter().collect())
    }
}

#[cfg(test)]
impl Iterator for Sampler {
    type Item = Sample;

    /// Waits for the next sample.
    fn next(&mut self) -> Option<Sample> {
        self.samples.recv().ok()
    }
}
