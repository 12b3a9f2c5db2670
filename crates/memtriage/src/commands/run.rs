//! `memtriage run -- CMD…`: the engine's run use case; its summary goes to stderr
//! (stdout belongs to the job).

use std::io::Write;

use memtriage_core::supervise::Config;
use memtriage_core::usecase::run;

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
        record: args.record.clone(),
        perf: args.perf,
        // The job's stderr and this line share the terminal; a failed write is no
        // reason to stop the job.
        on_warning: Some(Box::new(|line: &str| {
            let _ = writeln!(std::io::stderr().lock(), "memtriage: {line}");
        })),
    };
    let outcome = run::run(&ctx.root, &config)?;
    let report = &outcome.report;
    // Stdout belongs to the job: the summary goes to stderr, styled for stderr.
    if args.json {
        serde_json::to_writer_pretty(&mut p.err, report)?;
        writeln!(p.err)?;
    } else {
        let style = p.err.style();
        render::run::write(&mut p.err, &style, report, &outcome.stderr_tail)?;
    }
    Ok(ExitStatus::job(report.outcome.shell_code()))
}
