//! The last step of a run: what the job left (processes still running, its cgroup,
//! the counters) and the report of everything seen, handed to the caller.

use super::child::Reaped;
use super::sample::Sampled;
use super::start::Job;
use super::tally::RunTally;
use super::{gpu_events, limit, perf, python_hook, timeline_file, Config, RunResult};
use crate::model::lines::ProcessLines;
use crate::model::run::{
    EnclosingCgroup, FaultStats, LeftRunning, LimitInfo, PerfCounts, ProcessSummary, RunGpu,
    RunReport, RUN_SCHEMA,
};
use crate::probe::cgroup::CgroupDir;
use crate::probe::procdir::ProcDir;
use crate::probe::root::Root;

/// How the job ended, and what the run kept after it ended.
pub(super) struct Ended<O> {
    pub main_exit: Reaped,
    /// Seconds from the job's start to its main process's exit.
    pub wall: f64,
    pub reaped: Vec<Reaped>,
    pub enclosing_cgroup: Option<EnclosingCgroup>,
    pub left_running: Vec<LeftRunning>,
    /// The observers of stdout and stderr, with what they collected.
    pub output: (O, O),
    /// The kernel log, followed from just before the job started.
    pub kernel_log: crate::error::Result<crate::probe::kmsg::LogFollower>,
}

/// Builds the report: reads what the job left, removes its cgroup, joins the
/// processes seen by the sampler, the process-tree watch and the reaper.
pub(super) fn collect<O>(
    root: &Root,
    config: &Config,
    job: Job,
    sampled: Sampled,
    ended: Ended<O>,
) -> RunResult<O> {
    let Job {
        pid,
        start,
        started_boot_seconds,
        cgroup,
        timeline_writer,
        python_hook,
        perf,
        tree_watch,
        forwarder: _,
        forked_rss: _,
        mut notes,
    } = job;
    let Sampled {
        mut tally,
        growth,
        near_ceiling,
        around,
    } = sampled;
    let descendants = tree_watch.finish(pid, start, config.interval);
    let limit = cgroup.map(|cg| limit_info(cg, &ended.left_running, &mut notes));
    let perf_counts = perf.as_ref().map(|p| perf_counts(p, &mut notes));
    if let Some(failure) = timeline_writer
        .as_ref()
        .and_then(timeline_file::TimelineWriter::failure)
    {
        notes.push(failure);
    }
    let mut processes = tally.summaries();
    let process_tracking = descendants.merge_into(&mut processes, &ended.reaped, &mut notes);
    for r in &ended.reaped {
        if let Some(p) = processes.iter_mut().find(|p| p.pid == r.pid) {
            p.outcome = Some(r.outcome);
            p.kernel_max_rss = Some(r.max_rss).filter(|b| *b > 0);
        }
    }
    let pids = processes.iter().map(|p| p.pid).collect();
    let faults = fault_stats(&tally, &processes, &ended.reaped);
    if tally.peak_tree_pss.is_none() {
        notes.push("PSS was not read: the job ended before every process had a reading".into());
    }
    let gpu = run_gpu(root, tally.gpu.take(), around.gpu_events);
    let measured_lines = python_hook.as_ref().is_some_and(|h| h.measures_lines());
    let hook = python_hook
        .map(python_hook::PythonHook::finish)
        .unwrap_or_default();
    notes.extend(
        hook.unreadable
            .iter()
            .map(|u| format!("a process's lines could not be read: {u}")),
    );
    if measured_lines {
        notes.extend(lines_not_measured(&processes, &hook.lines));
    }
    let cgroup_oom_kills = cgroup_oom_kills(&tally, limit.as_ref());
    let report = RunReport {
        schema: RUN_SCHEMA.into(),
        command: config
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        pid,
        wall_seconds: ended.wall,
        outcome: ended.main_exit.outcome,
        peak_tree_rss: tally.peak_tree_rss,
        kernel_max_rss: Some(ended.main_exit.max_rss).filter(|b| *b > 0),
        peak_tree_pss: tally.peak_tree_pss,
        peak_shm_used: tally.peak_shm_used,
        shm_size: tally.shm_size,
        peak_swap_used: tally.peak_swap_used,
        lowest_available: tally.lowest_available,
        killers: around.killers.clone(),
        signals_sent: Vec::new(),
        peak_cgroup_usage: tally.peak_cgroup_usage,
        enclosing_cgroup: ended.enclosing_cgroup,
        faults,
        cgroup_oom_kills,
        swapped_pages: match (tally.swap_in_out_start, tally.swap_in_out_end) {
            (Some((i0, o0)), Some((i1, o1))) => Some(i1.saturating_sub(i0) + o1.saturating_sub(o0)),
            _ => None,
        },
        peak_memory_stall_percent: tally.peak_psi_full_avg10,
        perf: perf_counts,
        oom_score_adj: config
            .oom_score_adj
            .and_then(|_| crate::probe::procdir::oom_score_adj(root, pid))
            .or(config.oom_score_adj),
        left_running: ended.left_running,
        processes,
        process_tracking: Some(process_tracking),
        limit,
        sampling: tally.stats,
        growth,
        near_ceiling,
        gpu,
        cuda_snapshots: Vec::new(),
        memory_by_line: hook.lines,
        findings: Vec::new(),
        notes,
    };
    let (stdout, stderr) = ended.output;
    RunResult {
        pids,
        report,
        stdout,
        stderr,
        started_boot_seconds,
        reaped: ended.reaped,
        timeline_writer,
        cuda_snapshots: hook.cuda_snapshots,
        kernel_log: Some(ended.kernel_log),
    }
}

/// Python processes of the job with no lines, and why: nothing is invented for them.
fn lines_not_measured(processes: &[ProcessSummary], lines: &[ProcessLines]) -> Vec<String> {
    processes
        .iter()
        .filter(|p| looks_like_python(p) && !lines.iter().any(|l| l.pid == p.pid))
        .map(|p| {
            format!(
                "{}: no lines: its Python did not load memtriage's hook (python -I or -S, \
                 a PYTHONPATH the job reset, or it exited before the hook started)",
                p.label()
            )
        })
        .collect()
}

fn looks_like_python(p: &ProcessSummary) -> bool {
    let named = |s: &str| {
        let base = s.rsplit('/').next().unwrap_or(s);
        base.starts_with("python") || base.starts_with("pypy")
    };
    named(&p.comm) || p.exe.as_deref().is_some_and(named)
}

/// The job's own cgroup, read for the report, then removed unless processes the job
/// left running are still in it.
fn limit_info(
    cg: limit::JobCgroup,
    left_running: &[LeftRunning],
    notes: &mut Vec<String>,
) -> LimitInfo {
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
}

/// The perf counters, with a note for each kind that could not be counted.
fn perf_counts(perf: &perf::Perf, notes: &mut Vec<String>) -> PerfCounts {
    let counts = perf.counts();
    if let Some(e) = perf.software_error() {
        notes.push(format!("perf counters: software counters unavailable: {e} (see /proc/sys/kernel/perf_event_paranoid)"));
    }
    if let Some(hw) = &counts.hardware_unavailable {
        notes.push(format!("perf counters: {hw}"));
    }
    counts
}

/// The job's faults: the kernel's accounting of reaped processes, or the samples'
/// where they saw more (processes not reaped by us), with the sampled peak rates.
fn fault_stats(tally: &RunTally, processes: &[ProcessSummary], reaped: &[Reaped]) -> FaultStats {
    let sampled_minor: u64 = processes.iter().map(|p| p.minor_faults).sum();
    let sampled_major: u64 = processes.iter().map(|p| p.major_faults).sum();
    let reaped_minor: u64 = reaped.iter().map(|r| r.minor_faults).sum();
    let reaped_major: u64 = reaped.iter().map(|r| r.major_faults).sum();
    FaultStats {
        minor: reaped_minor.max(sampled_minor),
        major: reaped_major.max(sampled_major),
        peak_minor_per_second: tally.peak_minor_rate,
        peak_major_per_second: tally.peak_major_rate,
        peak_major_at_seconds: tally.peak_major_at,
    }
}

/// OOM kills in the job's cgroup: its own cgroup's count, or the enclosing one's
/// increase while the job ran.
fn cgroup_oom_kills(tally: &RunTally, limit: Option<&LimitInfo>) -> Option<u64> {
    match (
        tally.first_cgroup_oom_kills,
        limit.and_then(|l| l.oom_kills),
    ) {
        (_, Some(k)) => Some(k),
        (Some(first), _) => tally
            .last_cgroup_oom_kills
            .map(|last| last.saturating_sub(first)),
        (None, None) => None,
    }
}

/// The GPUs' part of the report: what the samples kept, the driver's events, or why
/// there was nothing to read.
fn run_gpu(
    root: &Root,
    sampled: Option<RunGpu>,
    events: Option<gpu_events::GpuEventWatch>,
) -> Option<RunGpu> {
    let mut gpu = match (sampled, crate::probe::gpu::gpus()) {
        (Some(g), _) => g,
        (None, Ok(_)) => RunGpu {
            available: true,
            // Read but not attributable: say why rather than report 0 for the job.
            reason: match crate::probe::gpu::pid_join(root) {
                crate::model::gpu::PidJoin::Impossible { reason } => Some(reason),
                crate::model::gpu::PidJoin::Host => None,
            },
            ..Default::default()
        },
        (None, Err(reason)) => {
            return Some(RunGpu {
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

/// The cgroup the job ran in without a limit of its own, and whether other
/// processes shared it (at the start or now).
pub(super) fn enclosing_cgroup(
    root: &Root,
    sampled: &Sampled,
    reaped: &[Reaped],
) -> Option<EnclosingCgroup> {
    let cg = sampled.around.enclosing.as_ref()?;
    let mut job_pids = sampled.tally.pids();
    job_pids.extend(reaped.iter().map(|r| r.pid));
    let at_end = others_in(root, cg, &job_pids);
    Some(EnclosingCgroup {
        dir: cg.dir.display().to_string(),
        limit: cg.limit().flatten(),
        other_processes: match (sampled.around.others_at_start, at_end) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        },
    })
}

/// Processes in a cgroup (and below it) that are neither memtriage nor the job's
/// (`job_pids`, and their descendants now); `None` when it cannot be listed.
pub(super) fn others_in(root: &Root, cg: &CgroupDir, job_pids: &[i32]) -> Option<usize> {
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
pub(super) fn left_running(root: &Root) -> Vec<LeftRunning> {
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
