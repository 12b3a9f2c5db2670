//! `memtriage record`: the machine's memory history, one interval at a time, into a
//! bounded SQLite database (`usecase::record`), on the same watch as `serve`. Runs
//! until SIGTERM or SIGINT. A write that fails (a full disk) pauses recording and
//! says so; it resumes when writes succeed again.

use std::io::Write;

use anyhow::Context as _;
use memtriage_core::usecase::record::{check_max_size, default_db, lower_priority, Recording};
use memtriage_core::usecase::watch::{WatchConfig, Watcher};

use super::Context;
use crate::cli::RecordArgs;
use crate::exit::ExitStatus;
use crate::render::printer::Printer;

pub fn run(ctx: &Context, args: &RecordArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let db = args.db.clone().unwrap_or_else(default_db);
    check_max_size(args.max_size.map(|s| s.0)).map_err(|e| anyhow::anyhow!("{e} (--max-size)"))?;
    let (mut recording, said) =
        Recording::open(&ctx.root, &db, args.retain.0, args.max_size.map(|s| s.0))
            .map_err(|e| super::history_error(e, "--db", &db))?;
    // Before the watch's threads start: they inherit the priorities.
    let courtesy = lower_priority();
    let mut config = WatchConfig::new(ctx.root.clone());
    config.interval = args.interval.0;
    config.doctor = None;
    config.kernel_crashes = true;
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
    // The recorder's stderr is its log: a line lost to a closed one is no reason to
    // stop recording.
    recording.record_until(
        &ctx.root,
        &watcher,
        args.interval.0,
        super::stop::wait_for,
        |line| {
            let _ = writeln!(p.err, "memtriage record: {line}");
        },
    );
    watcher.stop()?;
    Ok(ExitStatus::Success)
}
