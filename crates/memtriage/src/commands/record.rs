//! `memtriage record`: the machine's memory history, one interval at a time, into a
//! bounded SQLite database (`history::store`), on the same watch as `serve`. Runs
//! until SIGTERM or SIGINT. A write that fails (a full disk) pauses recording and
//! says so; it resumes when writes succeed again.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use memtriage_core::history::recorder::{interval_from, now_ms};
use memtriage_core::history::store::Store;
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
    p.err.flush()?;
    let mut last_written = None;
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
        let Some(interval) = interval_from(&view) else {
            continue;
        };
        match store.write(&interval) {
            Ok(()) => {
                last_written = view.sampled_at;
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
        if intervals % RETAIN_EVERY == 0 {
            let before = now_ms() - args.retain.0.as_millis().min(i64::MAX as u128) as i64;
            if let Err(e) = store.retain(before, args.max_size.map(|s| s.0)) {
                writeln!(p.err, "memtriage record: could not trim the history: {e}")?;
            }
        }
    }
    watcher.stop()?;
    Ok(ExitStatus::Success)
}
