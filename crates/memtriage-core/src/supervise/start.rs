//! The first step of a run: what is set up before the job's first instruction (the
//! subreaper, the signal forwarder, its cgroup under `limit`, the recording, perf
//! counters, the process-tree watch, the Python hook), then the job itself.

use std::os::fd::OwnedFd;
use std::sync::mpsc::Sender;
use std::time::Instant;

use super::{
    child, descendants, limit, oom_score, perf, python_hook, signals, timeline_file, Config, Event,
};
use crate::error::Result;
use crate::probe::root::Root;
use crate::probe::system::uptime_seconds;

/// The job, running, with everything set up around it.
pub(super) struct Job {
    pub pid: i32,
    /// memtriage's resident set when it forked the job (see `child::Started`).
    pub forked_rss: Option<u64>,
    /// When it was spawned: time 0 of its samples and events.
    pub start: Instant,
    /// Seconds since boot when it was spawned, to place its kernel log lines on the
    /// run's time axis.
    pub started_boot_seconds: Option<f64>,
    /// Its own cgroup, under `Config::limit`.
    pub cgroup: Option<limit::JobCgroup>,
    pub timeline_writer: Option<timeline_file::TimelineWriter>,
    pub python_hook: Option<python_hook::PythonHook>,
    pub perf: Option<perf::Perf>,
    pub tree_watch: descendants::DescendantWatch,
    pub forwarder: signals::Forwarder,
    /// What the report says of the run itself (an aid that could not be set up, …).
    pub notes: Vec<String>,
}

/// The read ends of the job's stdout and stderr.
pub(super) type Pipes = (OwnedFd, OwnedFd);

/// Starts the job. Errors only when it cannot be started (bad command, a limit
/// without a cgroup to make); what was set up for it is undone then.
pub(super) fn start(root: &Root, config: &Config, events: &Sender<Event>) -> Result<(Job, Pipes)> {
    signals::block();
    if let Some(value) = config.oom_score_adj {
        oom_score::check(root, value)?;
    }
    // Before the subreaper: the cgroup's guard must not be adopted by memtriage.
    let cgroup = match config.limit {
        Some(l) => Some(limit::JobCgroup::create(root, l)?),
        None => {
            limit::remove_abandoned_runs(root);
            None
        }
    };
    // SAFETY: marks this process as the subreaper of everything it starts.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
    let mut timeline_writer = match &config.timeline_file {
        Some(path) => Some(timeline_file::TimelineWriter::create(
            path,
            &config.command,
            config.interval,
            config.limit,
        )?),
        None => None,
    };
    let forwarder = signals::Forwarder::start();
    let perf = config.perf.then(perf::Perf::open);
    let tree_watch = {
        let events = events.clone();
        descendants::DescendantWatch::start(
            cgroup.as_ref().map(|c| c.dir.join("cgroup.procs")),
            Box::new(move |_pid| {
                let _ = events.send(Event::Exec);
            }),
        )
    };
    let mut notes = Vec::new();
    if let Some(cg) = &cgroup {
        notes.extend(limit_above_the_machine(root, cg.limit));
    }
    let python_hook = install_python_hook(config, &mut notes);
    let job_env = python_hook
        .as_ref()
        .map(python_hook::PythonHook::env)
        .unwrap_or_default();
    let started_boot_seconds = uptime_seconds(root).ok();
    let start = Instant::now();
    let started = match child::spawn(
        &config.command,
        &job_env,
        cgroup.as_ref().map(|c| &c.procs),
        config.oom_score_adj,
    ) {
        Ok(s) => s,
        Err(e) => {
            forwarder.abort();
            if let Some(cg) = cgroup {
                cg.remove();
            }
            if let Some(hook) = python_hook {
                hook.finish();
            }
            return Err(e);
        }
    };
    forwarder.target(started.pid);
    if let Some(r) = timeline_writer.as_mut() {
        r.event(0.0, "start", started.pid, None, None);
    }
    let job = Job {
        pid: started.pid,
        forked_rss: started.forked_rss,
        start,
        started_boot_seconds,
        cgroup,
        timeline_writer,
        python_hook,
        perf,
        tree_watch,
        forwarder,
        notes,
    };
    Ok((job, (started.stdout, started.stderr)))
}

/// The hook is an aid: where it cannot be written, the job runs without it.
fn install_python_hook(
    config: &Config,
    notes: &mut Vec<String>,
) -> Option<python_hook::PythonHook> {
    match python_hook::PythonHook::install(&config.python_hook) {
        Ok(h) => h,
        Err(e) => {
            notes.push(format!(
                "no Python hook (no CUDA snapshot on out-of-memory, no lines): {e}"
            ));
            None
        }
    }
}

/// A limit above the machine's RAM and swap never acts: the machine runs out first,
/// and the kernel's OOM killer for the whole machine picks its victim.
fn limit_above_the_machine(root: &Root, limit: u64) -> Option<String> {
    let mem = crate::probe::system::read_meminfo(root).ok()?;
    let machine = mem.total? + mem.swap_total.unwrap_or(0);
    (limit > machine).then(|| {
        format!(
            "the limit ({}) is above the machine's memory and swap ({}): it will not act; \
             the machine runs out first",
            crate::model::units::iec(limit),
            crate::model::units::iec(machine)
        )
    })
}
