//! `memtriage inspect`: the engine's inspect use case, rendered.

use std::io::Write;

use memtriage_core::usecase::inspect::{self, InspectRequest, SortKey, Targets};

use super::Context;
use crate::cli::InspectArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(ctx: &Context, args: &InspectArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let targets = if args.all {
        Targets::All
    } else if args.pids.is_empty() && args.name.is_none() {
        // The engine's message names no flags; the CLI's can.
        anyhow::bail!(
            "name what to inspect: PID…, --name PATTERN, or --all (see `memtriage inspect --help`)"
        );
    } else {
        Targets::Named {
            pids: args.pids.clone(),
            name: args.name.clone(),
        }
    };
    let request = InspectRequest {
        targets,
        tree: args.tree,
        maps: args.maps,
        sort: args.sort,
    };
    let report = inspect::inspect(&ctx.root, &request)?;
    // Nothing read (every pid gone): the errors alone, not a GPU line above them.
    let nothing_read =
        report.processes.is_empty() && report.trees.is_empty() && report.maps.is_empty();
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else if !nothing_read || report.errors.is_empty() {
        let (style, width) = (p.out.style(), p.out.width());
        render::inspect::write(
            &mut p.out,
            &style,
            args.all,
            args.sort == SortKey::Faults,
            width,
            &report,
        )?;
    }
    for e in &report.errors {
        p.error(&e.error)?;
    }
    Ok(if report.failed() {
        ExitStatus::BadInput
    } else {
        ExitStatus::Success
    })
}
