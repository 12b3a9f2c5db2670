//! Supervising a job (`memtriage run`): spawn it (`child`), pass its output through
//! byte for byte to observers (`passthrough`), forward signals (`signals`), follow its
//! process tree with the engine's sampler and keep what `run` reports of it
//! (`timeline`), warn before its memory reaches its ceiling (`growth`), reap every
//! process, optionally under a memory limit (`limit`), with
//! perf counters (`perf`) and a recording (`record`). [`run`] hands everything seen to
//! the caller; `usecase::run` diagnoses it.

pub mod child;
pub mod cuda_hook;
pub mod descendants;
pub mod gpu_events;
pub mod growth;
pub mod limit;
pub mod oom_score;
pub mod passthrough;
pub mod perf;
pub mod record;
pub mod signals;
pub mod timeline;

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::model::run::{
    EnclosingCgroup, FaultStats, LeftRunning, LimitInfo, RunReport, RUN_SCHEMA,
};
use crate::probe::cgroup::{CgroupDir, CgroupReader};
use crate::probe::procdir::ProcDir;
use crate::probe::root::Root;
use crate::probe::system::uptime_seconds;

use crate::sampler::{PssBudget, Sample, SamplerConfig, SamplerThread, Scope};
use child::Reaped;
use passthrough::OutputObserver;
use timeline::RunTimeline;
/// After the job's main process exits, how long descendants that still hold its
/// output open are waited for before their output is handed to a forwarder and the
/// run ends, as a shell ends a script whose background jobs live on.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);
/// The least time between two samples taken because a process of the job exec'd.
const EXEC_SAMPLE_SPACING: Duration = Duration::from_millis(50);

pub struct Config {
    pub command: Vec<OsString>,
    pub interval: Duration,
    pub limit: Option<u64>,
    pub record: Option<PathBuf>,
    /// Count page faults, context switches and (where the PMU allows) dTLB misses.
    pub perf: bool,
    /// The job's `oom_score_adj`, set before exec and inherited by its workers.
    pub oom_score_adj: Option<i32>,
    /// Where the early warning before an OOM kill goes, one line without a prefix.
    pub on_warning: Option<Box<growth::WarningSink>>,
    /// Where a Python job's CUDA out-of-memory snapshots go (the zero-code hook,
    /// `supervise::cuda_hook`); `None` installs no hook.
    pub cuda_snapshots: Option<PathBuf>,
}

/// Everything a run saw, for diagnosis and rendering.
pub struct RunResult<O> {
    pub report: RunReport,
    /// The observers of stdout and stderr, handed back with what they collected.
    pub stdout: O,
    pub stderr: O,
    /// Pids of every process of the job seen.
    pub pids: Vec<i32>,
    /// Seconds since boot when the job started, to pick its kernel log lines.
    pub started_boot_seconds: Option<f64>,
    pub reaped: Vec<Reaped>,
    /// The `--record` file, its samples and events written, waiting for the final
    /// report once it is diagnosed ([`record::Recorder::finish`]).
    pub recording: Option<record::Recorder>,
    /// CUDA out-of-memory snapshots the job's Python processes saved.
    pub cuda_snapshots: Vec<cuda_hook::SavedSnapshot>,
}

/// The GPUs' part of the report: what the samples kept, the driver's events, or why
/// there was nothing to read.
fn run_gpu(
    root: &Root,
    sampled: Option<crate::model::run::RunGpu>,
    events: Option<gpu_events::GpuEventWatch>,
) -> Option<crate::model::run::RunGpu> {
    let mut gpu = match (sampled, crate::probe::gpu::gpus()) {
        (Some(g), _) => g,
        (None, Ok(_)) => crate::model::run::RunGpu {
            available: true,
            // Read but not attributable: say why rather than report 0 for the job.
            reason: match crate::probe::gpu::pid_join(root) {
                crate::model::gpu::PidJoin::Impossible { reason } => Some(reason),
                crate::model::gpu::PidJoin::Host => None,
            },
            ..Default::default()
        },
        (None, Err(reason)) => {
            return Some(crate::model::run::RunGpu {
                available: false,
                reason: Some(reason.to_string()),
                ..Default::default()
            })
        }
    };
    if let Some(watch) = events {
        let (seen, unavailable) = watch.finish();
        gpu.events = seen;
        gpu.events_unavailable = unavailable;
    }
    Some(gpu)
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
    signals::block();
    // SAFETY: marks this process as the subreaper of everything it starts.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
    if let Some(value) = config.oom_score_adj {
        oom_score::check(root, value)?;
    }
    let job_cgroup = config
        .limit
        .map(|l| limit::JobCgroup::create(root, l))
        .transpose()?;
    let mut recorder = match &config.record {
        Some(path) => Some(record::Recorder::create(
            path,
            &config.command,
            config.interval,
            config.limit,
        )?),
        None => None,
    };

    let target = Arc::new(AtomicI32::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let forwarder = {
        let (target, stop) = (target.clone(), stop.clone());
        std::thread::spawn(move || signals::forward(target, stop))
    };
    let perf = config.perf.then(perf::Perf::open);
    // Samples, exits, execs and failure lines arrive on one channel, in the order
    // they happen: an exit is seen at once, never after a wait for the next sample.
    let (events, arrived) = mpsc::channel();
    let tree_watch = {
        let events = events.clone();
        descendants::DescendantWatch::start(
            job_cgroup.as_ref().map(|c| c.dir.join("cgroup.procs")),
            Box::new(move |_pid| {
                let _ = events.send(Event::Exec);
            }),
        )
    };
    // The hook is an aid: where it cannot be written, the job runs without it.
    let mut early_notes = Vec::new();
    let cuda_hook =
        config
            .cuda_snapshots
            .as_deref()
            .and_then(|dir| match cuda_hook::CudaHook::install(dir) {
                Ok(h) => Some(h),
                Err(e) => {
                    early_notes.push(format!("no CUDA snapshot on out-of-memory: {e}"));
                    None
                }
            });
    let job_env = cuda_hook
        .as_ref()
        .map(cuda_hook::CudaHook::env)
        .unwrap_or_default();
    let started_boot_seconds = uptime_seconds(root).ok();
    let start = Instant::now();
    let started = match child::spawn(
        &config.command,
        &job_env,
        job_cgroup.as_ref().map(|c| &c.procs),
        config.oom_score_adj,
    ) {
        Ok(s) => s,
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            let _ = forwarder.join();
            if let Some(cg) = job_cgroup {
                cg.remove();
            }
            if let Some(hook) = cuda_hook {
                hook.finish();
            }
            return Err(e);
        }
    };
    let job = started.pid;
    target.store(job, Ordering::Relaxed);
    if let Some(r) = recorder.as_mut() {
        r.event(0.0, "start", job, None, None);
    }

    let (out_done_tx, out_done_rx) = mpsc::channel();
    let (stop_out, out_stopped) = passthrough::stop_signal().map_err(|e| Error::io("pipe", e))?;
    let (stop_err, err_stopped) = passthrough::stop_signal().map_err(|e| Error::io("pipe", e))?;
    let spawn_copy = |fd, mut observer: O, to_stderr: bool, stop, done: mpsc::Sender<()>| {
        let events = events.clone();
        std::thread::spawn(move || {
            let noticed = |line: String| {
                let _ = events.send(Event::FailureLine(line));
            };
            let stats = if to_stderr {
                passthrough::copy(
                    fd,
                    std::io::stderr().as_fd(),
                    &mut observer,
                    &stop,
                    &noticed,
                )
            } else {
                passthrough::copy(
                    fd,
                    std::io::stdout().as_fd(),
                    &mut observer,
                    &stop,
                    &noticed,
                )
            };
            let _ = done.send(());
            (observer, stats)
        })
    };
    let out_thread = spawn_copy(
        started.stdout,
        stdout_observer,
        false,
        out_stopped,
        out_done_tx.clone(),
    );
    let err_thread = spawn_copy(
        started.stderr,
        stderr_observer,
        true,
        err_stopped,
        out_done_tx,
    );

    let (reaped_tx, reaped_rx) = mpsc::channel();
    std::thread::spawn(move || child::reap_all(reaped_tx));
    {
        let events = events.clone();
        std::thread::spawn(move || {
            for r in reaped_rx {
                if events.send(Event::Reaped(r)).is_err() {
                    return;
                }
            }
            let _ = events.send(Event::ReaperDone);
        });
    }

    let watch = job_cgroup
        .as_ref()
        .map(limit::JobCgroup::watch)
        .or_else(|| {
            let mut reader = CgroupReader::discover(root);
            let cg = reader.for_pid(job).ok().flatten()?;
            Some(CgroupDir::of(&cg))
        });
    let enclosing = job_cgroup.is_none().then(|| watch.clone()).flatten();
    let others_at_start = enclosing
        .as_ref()
        .and_then(|cg| others_in(root, cg, &[job]));
    let sampler = SamplerThread::spawn(
        SamplerConfig {
            scope: Scope::Supervised,
            interval: config.interval,
            pss: Some(PssBudget::DEFAULT),
            system: true,
            exe: true,
            cgroup: watch,
            gpu: true,
            keep_open: crate::sampler::KEEP_OPEN_UP_TO,
            epoch: start,
            root: root.clone(),
        },
        move |sample| events.send(Event::Sample(Box::new(sample))).is_ok(),
    );
    // The job is running by now: without a sampler it is still supervised to its end.
    let mut notes = early_notes;
    let sampler = match sampler {
        Ok(s) => Some(s),
        Err(e) => {
            notes.push(format!(
                "memory was not sampled: the sampling thread could not start ({e})"
            ));
            None
        }
    };
    let gpu_events = gpu_events::GpuEventWatch::start(start);
    let mut timeline = RunTimeline::new(config.interval.as_millis() as u64, root);
    let mut reaped: Vec<Reaped> = Vec::new();
    let mut main_exit: Option<Reaped> = None;
    let mut growth = growth::Monitor::start(root, job, config.limit, config.on_warning.as_deref());
    let mut on_sample = |sample: Sample, recorder: &mut Option<record::Recorder>| {
        timeline.feed(&sample);
        if let Some(r) = recorder.as_mut() {
            r.sample(&timeline.recorded(&sample));
        }
        growth.on_sample(&sample, recorder.as_mut());
    };
    let mut last_exec_sample = None;
    while main_exit.is_none() {
        match arrived.recv() {
            Ok(Event::Sample(sample)) => on_sample(*sample, &mut recorder),
            Ok(Event::Reaped(r)) => {
                if let Some(rec) = recorder.as_mut() {
                    rec.event(
                        start.elapsed().as_secs_f64(),
                        "exit",
                        r.pid,
                        Some(r.outcome),
                        None,
                    );
                }
                if r.pid == job {
                    main_exit = Some(r);
                }
                reaped.push(r);
            }
            Ok(Event::Exec) => {
                // Bounded: a script that execs a thousand commands costs at most one
                // extra sample per EXEC_SAMPLE_SPACING.
                if last_exec_sample.is_none_or(|t: Instant| t.elapsed() >= EXEC_SAMPLE_SPACING) {
                    if let Some(s) = &sampler {
                        s.sample_now();
                    }
                    last_exec_sample = Some(Instant::now());
                }
            }
            Ok(Event::FailureLine(line)) => {
                if let Some(s) = &sampler {
                    s.sample_now();
                }
                record_failure_line(&mut recorder, start, job, &line);
            }
            // The reaper saw no child at all: treat as an exit we did not see.
            Ok(Event::ReaperDone) | Err(_) => main_exit = Some(Reaped::unseen(job)),
        }
    }
    let wall = start.elapsed().as_secs_f64();
    // The tick in progress, if any, is finished and kept: the last sample is in the
    // timeline before the reaped processes' figures are joined to it.
    if let Some(Err(e)) = sampler.map(SamplerThread::stop) {
        notes.push(format!("memory sampling ended early: {e}"));
    }
    let mut late_exits = Vec::new();
    while let Ok(event) = arrived.try_recv() {
        match event {
            Event::Sample(sample) => on_sample(*sample, &mut recorder),
            Event::Reaped(r) => late_exits.push(r),
            Event::FailureLine(line) => record_failure_line(&mut recorder, start, job, &line),
            Event::Exec => {}
            Event::ReaperDone => {}
        }
    }
    let main_exit = main_exit.unwrap_or(Reaped::unseen(job));
    reaped.extend(late_exits);
    let (growth, near_ceiling) = growth.finish();

    // Descendants that outlive the job may still hold its output open.
    let deadline = Instant::now() + OUTPUT_DRAIN;
    let mut ended = 0;
    while ended < 2 {
        match out_done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) => ended += 1,
            Err(_) => break,
        }
    }
    let enclosing_cgroup = enclosing.map(|cg| {
        let mut job_pids = timeline.pids();
        job_pids.extend(reaped.iter().map(|r| r.pid));
        let at_end = others_in(root, &cg, &job_pids);
        EnclosingCgroup {
            dir: cg.dir.display().to_string(),
            limit: cg.limit().flatten(),
            other_processes: match (others_at_start, at_end) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            },
        }
    });
    let left_running = left_running(root);
    stop_out.stop();
    stop_err.stop();
    let (Ok((stdout_observer, out_stats)), Ok((stderr_observer, err_stats))) =
        (out_thread.join(), err_thread.join())
    else {
        return Err(Error::internal("an output thread failed"));
    };
    if out_stats.downstream_closed || err_stats.downstream_closed {
        notes.push("memtriage's own output was closed early; the job's pipe was closed too, as it would have been".into());
    }
    let still_open: Vec<_> = [
        out_stats.still_open.map(|fd| (fd, libc::STDOUT_FILENO)),
        err_stats.still_open.map(|fd| (fd, libc::STDERR_FILENO)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !still_open.is_empty() {
        match passthrough::forward_after_exit(still_open) {
            Ok(_) => notes.push(
                "processes the job left behind still hold its output open: what they print \
                 still passes through, after this summary"
                    .into(),
            ),
            Err(e) => notes.push(format!(
                "processes the job left behind still hold its output open, and their \
                 output could not be passed on after memtriage ends ({e})"
            )),
        }
    }
    while let Ok(event) = arrived.try_recv() {
        if let Event::Reaped(r) = event {
            reaped.push(r);
        }
    }
    // Not joined: it may sit up to 100 ms in sigtimedwait; it ends with the process.
    stop.store(true, Ordering::Relaxed);
    drop(forwarder);

    let descendants = tree_watch.finish(job, start, config.interval);
    let limit = job_cgroup.map(|cg| {
        let watch = cg.watch();
        let (version, dir, limit) = (cg.version, cg.dir.display().to_string(), cg.limit);
        let peak = watch.peak();
        let oom_kills = watch.oom_kills();
        let removed = cg.remove();
        if !removed {
            notes.push(if left_running.is_empty() {
                format!("could not remove the job's cgroup {dir}")
            } else {
                format!(
                    "the job's cgroup {dir} is left for the processes still running in it \
                     (their memory stays limited); the next `memtriage run` removes it once \
                     they have ended"
                )
            });
        }
        LimitInfo {
            version,
            dir,
            limit,
            peak,
            oom_kills,
            removed,
        }
    });

    let mut perf_counts = perf.as_ref().map(perf::Perf::counts);
    if let (Some(p), Some(counts)) = (perf.as_ref(), perf_counts.as_mut()) {
        if let Some(e) = p.software_error() {
            notes.push(format!("perf counters: software counters unavailable: {e} (see /proc/sys/kernel/perf_event_paranoid)"));
        }
        if let Some(hw) = &counts.hardware_unavailable {
            notes.push(format!("perf counters: {hw}"));
        }
    }
    if let Some(failure) = recorder.as_ref().and_then(record::Recorder::failure) {
        notes.push(failure);
    }
    let mut processes = timeline.summaries();
    let process_tracking = descendants.merge_into(&mut processes, &reaped, &mut notes);
    for r in &reaped {
        if let Some(p) = processes.iter_mut().find(|p| p.pid == r.pid) {
            p.outcome = Some(r.outcome);
            p.kernel_max_rss = Some(r.max_rss).filter(|b| *b > 0);
        }
    }
    let pids = processes.iter().map(|p| p.pid).collect();
    let sampled_minor: u64 = processes.iter().map(|p| p.minor_faults).sum();
    let sampled_major: u64 = processes.iter().map(|p| p.major_faults).sum();
    let reaped_minor: u64 = reaped.iter().map(|r| r.minor_faults).sum();
    let reaped_major: u64 = reaped.iter().map(|r| r.major_faults).sum();
    if timeline.peak_tree_pss.is_none() {
        notes.push("PSS was not read: the job ended before every process had a reading".into());
    }
    let gpu = run_gpu(root, timeline.gpu.take(), gpu_events);
    let report = RunReport {
        schema: RUN_SCHEMA.into(),
        command: config
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        pid: job,
        wall_seconds: wall,
        outcome: main_exit.outcome,
        peak_tree_rss: timeline.peak_tree_rss,
        kernel_max_rss: Some(main_exit.max_rss).filter(|b| *b > 0),
        peak_tree_pss: timeline.peak_tree_pss,
        peak_shm_used: timeline.peak_shm_used,
        shm_size: timeline.shm_size,
        peak_swap_used: timeline.peak_swap_used,
        peak_cgroup_usage: timeline.peak_cgroup_usage,
        enclosing_cgroup,
        faults: FaultStats {
            minor: reaped_minor.max(sampled_minor),
            major: reaped_major.max(sampled_major),
            peak_minor_per_second: timeline.peak_minor_rate,
            peak_major_per_second: timeline.peak_major_rate,
            peak_major_at_seconds: timeline.peak_major_at,
        },
        cgroup_oom_kills: match (
            timeline.first_cgroup_oom_kills,
            limit.as_ref().and_then(|l| l.oom_kills),
        ) {
            (_, Some(k)) => Some(k),
            (Some(first), _) => timeline
                .last_cgroup_oom_kills
                .map(|last| last.saturating_sub(first)),
            (None, None) => None,
        },
        swapped_pages: match (timeline.swap_in_out_start, timeline.swap_in_out_end) {
            (Some((i0, o0)), Some((i1, o1))) => Some(i1.saturating_sub(i0) + o1.saturating_sub(o0)),
            _ => None,
        },
        peak_memory_stall_percent: timeline.peak_psi_full_avg10,
        perf: perf_counts,
        oom_score_adj: config
            .oom_score_adj
            .and_then(|_| oom_score::of_pid(root, job))
            .or(config.oom_score_adj),
        left_running,
        processes,
        process_tracking: Some(process_tracking),
        limit,
        sampling: timeline.stats,
        growth,
        near_ceiling,
        gpu,
        cuda_snapshots: Vec::new(),
        findings: Vec::new(),
        notes,
    };
    Ok(RunResult {
        pids,
        report,
        stdout: stdout_observer,
        stderr: stderr_observer,
        started_boot_seconds,
        reaped,
        recording: recorder,
        cuda_snapshots: cuda_hook
            .map(cuda_hook::CudaHook::finish)
            .unwrap_or_default(),
    })
}

fn record_failure_line(
    recorder: &mut Option<record::Recorder>,
    start: Instant,
    job: i32,
    line: &str,
) {
    if let Some(r) = recorder.as_mut() {
        let t = start.elapsed().as_secs_f64();
        r.event(t, "failure-line", job, None, Some(line));
    }
}

/// Processes in a cgroup (and below it) that are neither memtriage nor the job's
/// (`job_pids`, and their descendants now); `None` when it cannot be listed.
fn others_in(root: &Root, cg: &CgroupDir, job_pids: &[i32]) -> Option<usize> {
    let mut pids = Vec::new();
    crate::probe::cgroup::procs_below(&cg.dir, &mut pids);
    if pids.is_empty() {
        // memtriage itself is there: an empty list is a list that was not read.
        return None;
    }
    let me = std::process::id() as i32;
    let mine = crate::sampler::supervised_descendants(root);
    Some(
        pids.iter()
            .filter(|p| **p != me && !job_pids.contains(p) && !mine.contains(p))
            .count(),
    )
}

/// The job's processes still alive after it ended: orphans reparented to memtriage
/// (their subreaper) and their descendants.
fn left_running(root: &Root) -> Vec<LeftRunning> {
    crate::sampler::supervised_descendants(root)
        .into_iter()
        .filter_map(|pid| {
            let dir = ProcDir::open(root, pid).ok()?;
            Some(LeftRunning {
                pid,
                comm: dir.comm()?,
                command: dir.args().unwrap_or_default(),
            })
        })
        .collect()
}

/// OOM kills the kernel logged for this job: of its processes or in its cgroup,
/// since it started. `Err` says why the kernel log could not be read.
pub fn kernel_oom_kills<O>(
    root: &Root,
    result: &RunResult<O>,
) -> Result<Vec<crate::model::system::OomKill>> {
    let lines = crate::probe::kmsg::read_kmsg(root)?;
    let kills = crate::parse::kmsg::oom_kills(lines.iter().map(String::as_str));
    let limit_dir = result.report.limit.as_ref().map(|l| l.dir.clone());
    Ok(kills
        .into_iter()
        .filter(|k| match (k.timestamp, result.started_boot_seconds) {
            (Some(t), Some(start)) => t + 1.0 >= start,
            _ => true,
        })
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
        .collect())
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
