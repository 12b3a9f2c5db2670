//! `memtriage record`: the machine's memory history, one interval at a time, into a
//! bounded SQLite database (`history::store`), on the same watch as `serve`. Runs
//! until SIGTERM or SIGINT. A write that fails (a full disk) pauses recording and
//! says so; it resumes when writes succeed again.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use memtriage_core::history::recorder::{interval_from, last_kill, now_ms};
use memtriage_core::history::store::Store;
use memtriage_core::probe::system::has_capability;
use memtriage_core::watch::{WatchConfig, Watcher};

use super::Context;
use crate::cli::RecordArgs;
use crate::exit::ExitStatus;
use crate::render::printer::Printer;

/// Retention runs every this many intervals.
const RETAIN_EVERY: u32 = 60;

/// Where history goes unless `--db` says: the system's state directory for root,
/// the user's otherwise.
pub fn default_db() -> PathBuf {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/lib/memtriage/history.db");
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    state.join("memtriage/history.db")
}

/// CAP_SYS_PTRACE (capabilities(7)): reading other users' `smaps_rollup`.
const CAP_SYS_PTRACE: u32 = 19;
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
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| {
            format!(
                "{}: cannot make the directory for the database",
                dir.display()
            )
        })?;
    }
    let mut store = Store::open(&db)?;
    let courtesy = be_a_good_citizen();
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let reads_all_pss = uid == 0 || has_capability(&ctx.root, CAP_SYS_PTRACE);
    store.note("recorder_uid", &uid.to_string())?;
    store.note(
        "reads_all_pss",
        if reads_all_pss { "true" } else { "false" },
    )?;
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
    for line in courtesy {
        writeln!(p.err, "memtriage record: {line}")?;
    }
    if !reads_all_pss {
        writeln!(
            p.err,
            "memtriage record: as uid {uid} without CAP_SYS_PTRACE, other users' processes are \
             recorded without PSS or swap (RSS only); `why` will say so"
        )?;
    }
    p.err.flush()?;
    let mut last_written = None;
    let mut kills_written = 0u64;
    let mut intervals = 0u32;
    let mut paused: Option<String> = None;
    let mut next = Instant::now();
    while !super::stop::requested() {
        std::thread::sleep(Duration::from_millis(100));
        if Instant::now() < next {
            continue;
        }
        next += args.interval.0;
        let view = watcher.view();
        if view.sampled_at.is_none() || view.sampled_at == last_written {
            continue;
        }
        let Some(interval) = interval_from(&view, kills_written) else {
            continue;
        };
        match store.write(&interval) {
            Ok(()) => {
                last_written = view.sampled_at;
                kills_written = last_kill(&view);
                if let Some(why) = paused.take() {
                    writeln!(p.err, "memtriage record: resumed (was: {why})")?;
                }
            }
            Err(e) => {
                let why = e.to_string();
                if paused.as_deref() != Some(why.as_str()) {
                    writeln!(p.err, "memtriage record: paused, nothing written: {why}")?;
                }
                paused = Some(why);
            }
        }
        intervals += 1;
        // Past --max-size it is trimmed at once (a page count: cheap); by age, now
        // and then.
        let over_size = args
            .max_size
            .is_some_and(|max| store.size().is_ok_and(|size| size > max.0));
        if over_size || intervals % RETAIN_EVERY == 0 {
            let before = now_ms() - args.retain.0.as_millis().min(i64::MAX as u128) as i64;
            if let Err(e) = store.retain(before, args.max_size.map(|s| s.0)) {
                writeln!(p.err, "memtriage record: could not trim the history: {e}")?;
            }
        }
    }
    watcher.stop()?;
    Ok(ExitStatus::Success)
}
