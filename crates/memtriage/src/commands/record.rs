//! `memtriage record`: the machine's memory history, one interval at a time, into a
//! bounded SQLite database (`history::store`), on the same watch as `serve`. Runs
//! until SIGTERM or SIGINT. A write that fails (a full disk) pauses recording and
//! says so; it resumes when writes succeed again.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use memtriage_core::watch::{WatchConfig, Watcher};

use super::recording::{default_db, Recording};
use super::Context;
use crate::cli::RecordArgs;
use crate::exit::ExitStatus;
use crate::render::printer::Printer;

/// How often the machine is read between intervals, and recorded while memory
/// pressure rises.
const PRESSURE_CHECK: Duration = Duration::from_secs(1);
/// The recorder's own `oom_score_adj`: it holds a few MiB and must outlive the jobs
/// whose deaths it records. Lowering it needs CAP_SYS_RESOURCE (root has it).
pub const OOM_SCORE_ADJ: i32 = -500;
/// `ioprio_set(2)`: the idle I/O class, served only when no one else wants the disk.
const IOPRIO_WHO_PROCESS: libc::c_long = 1;
const IOPRIO_CLASS_IDLE: libc::c_long = 3;
const IOPRIO_CLASS_SHIFT: libc::c_long = 13;

/// Nice 10 and idle I/O for every thread (set before any starts: both are inherited
/// at thread creation), and a low `oom_score_adj` where permitted. Returns what could
/// not be done, to say once.
fn be_a_good_citizen() -> Vec<String> {
    let mut said = Vec::new();
    // SAFETY: plain syscalls on the calling thread, no memory passed.
    unsafe {
        if libc::setpriority(libc::PRIO_PROCESS, 0, 10) != 0 {
            said.push(format!(
                "could not lower its CPU priority: {}",
                std::io::Error::last_os_error()
            ));
        }
        let idle = IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT;
        if libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            idle,
        ) != 0
        {
            said.push(format!(
                "could not take the idle I/O class: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    if let Err(e) = std::fs::write("/proc/self/oom_score_adj", OOM_SCORE_ADJ.to_string()) {
        said.push(format!(
            "kept its oom_score_adj (setting {OOM_SCORE_ADJ} needs CAP_SYS_RESOURCE: {e})"
        ));
    }
    said
}

pub fn run(ctx: &Context, args: &RecordArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let db = args.db.clone().unwrap_or_else(default_db);
    let (mut recording, said) =
        Recording::open(&ctx.root, &db, args.retain.0, args.max_size.map(|s| s.0))?;
    // Before the watch's threads start: they inherit the priorities.
    let courtesy = be_a_good_citizen();
    let mut config = WatchConfig::new(ctx.root.clone());
    config.interval = args.interval.0;
    config.doctor = None;
    let watcher = Watcher::start(config).context("cannot start the sampler")?;
    super::stop::install();
    writeln!(
        p.err,
        "memtriage record: every {} into {} (keeping {} h{}); SIGTERM or Ctrl-C stops",
        crate::values::Interval(args.interval.0),
        db.display(),
        args.retain.0.as_secs() / 3600,
        args.max_size
            .map(|s| format!(", at most {}", memtriage_core::model::units::iec(s.0)))
            .unwrap_or_default()
    )?;
    for line in courtesy.iter().chain(&said) {
        writeln!(p.err, "memtriage record: {line}")?;
    }
    p.err.flush()?;
    let mut next = Instant::now();
    let mut next_pressure = Instant::now() + PRESSURE_CHECK;
    while !super::stop::requested() {
        std::thread::sleep(Duration::from_millis(100));
        let now = Instant::now();
        let mut said = Vec::new();
        if now >= next {
            next += args.interval.0;
            said = recording.tick(&watcher.view());
        } else if now >= next_pressure {
            said = recording.pressure_tick(&ctx.root, &watcher.view(), || watcher.sample_now());
        }
        if now >= next_pressure {
            next_pressure = now + PRESSURE_CHECK;
        }
        for line in said {
            writeln!(p.err, "memtriage record: {line}")?;
        }
    }
    watcher.stop()?;
    Ok(ExitStatus::Success)
}
