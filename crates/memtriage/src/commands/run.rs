//! `memtriage run -- CMD…`: the engine's run use case; its summary goes to stderr
//! (stdout belongs to the job). The exit status is always the job's: memtriage's
//! own output failing (a closed or full stderr) never replaces it.

use std::io::Write;

use memtriage_core::model::run::RunReport;
use memtriage_core::usecase::run;
use memtriage_core::usecase::run::{Config, HookParts};

use super::Context;
use crate::cli::RunArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(ctx: &Context, args: &RunArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let config = Config {
        command: args.command.clone(),
        interval: args.interval.0,
        limit: args.limit.map(|l| l.0),
        timeline_file: args.record.clone(),
        perf: args.perf,
        trace_signals: args.trace_signals,
        oom_score_adj: args.oom_score_adj,
        // The job's stderr and this line share the terminal; a failed write is no
        // reason to stop the job.
        on_warning: Some(Box::new(|line: &str| {
            let _ = writeln!(std::io::stderr().lock(), "memtriage: {line}");
        })),
        python_hook: HookParts {
            cuda_snapshots: (!args.no_cuda_snapshot).then(|| match &args.record {
                Some(record) => {
                    let mut dir = record.clone().into_os_string();
                    dir.push(".cuda-oom");
                    dir.into()
                }
                // A name nobody can guess ahead: the hook's code runs in the job.
                None => std::env::temp_dir().join(format!(
                    "memtriage-cuda-oom-{}-{:016x}",
                    std::process::id(),
                    unguessable()
                )),
            }),
            lines: !args.no_python_lines,
        },
    };
    let outcome = match run::run(&ctx.root, &config) {
        Ok(outcome) => outcome,
        // A command that cannot start fails as it would in a shell (127, 126).
        Err(e) => match e.shell_code() {
            Some(code) => {
                let _ = p.error(format_args!("{e}"));
                return Ok(ExitStatus::Job(code));
            }
            None => return Err(e.into()),
        },
    };
    let report = &outcome.report;
    if let Some(path) = &args.report {
        if let Err(e) = write_report_file(path, report) {
            let _ = p.error(format_args!(
                "{}: the report could not be written: {e}",
                path.display()
            ));
        }
    }
    if let Some(failure) = &outcome.recording_failed {
        let _ = p.error(format_args!("{failure}"));
    }
    // Stdout belongs to the job: the summary goes to stderr, styled for stderr.
    let _ = if args.json {
        serde_json::to_writer_pretty(&mut p.err, report)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(p.err))
    } else {
        let style = p.err.style();
        render::run::write(&mut p.err, &style, report, &outcome.stderr_tail)
    };
    Ok(ExitStatus::job(report.outcome.shell_code()))
}

/// `--report FILE`: the report alone in a file of its own, parseable whatever the
/// job printed (as `/usr/bin/time -o` keeps its figures apart).
fn write_report_file(path: &std::path::Path, report: &RunReport) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = serde_json::to_vec_pretty(report).map_err(std::io::Error::other)?;
    text.push(b'\n');
    // 0644 whatever the umask, as the history database is.
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(path)?
        .write_all(&text)
}

/// 64 random bits from the standard library's per-process hash keys (seeded by the OS).
fn unguessable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    h.finish()
}
