//! `memtriage explain [FILE|-]`: the engine's diagnosis of a saved log, rendered.
//! Exits 0 whenever it could read the log, findings or not.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use anyhow::bail;
use memtriage_core::usecase::explain;

use super::Context;
use crate::cli::ExplainArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(_ctx: &Context, args: &ExplainArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    if args.rules {
        let table = explain::rules()?;
        if args.json {
            serde_json::to_writer_pretty(&mut p.out, &table)?;
            writeln!(p.out)?;
        } else {
            render::explain::write_rules(&mut p.out, &table)?;
        }
        return Ok(ExitStatus::Success);
    }
    let path = args.file.as_deref().filter(|p| *p != Path::new("-"));
    let report = match path {
        Some(path) => explain::file(path)?,
        None => {
            let stdin = io::stdin();
            if args.file.is_none() && stdin.is_terminal() {
                bail!(
                    "explain: no log given: name a file (memtriage explain train.log) or pipe one in \
                     (dmesg | memtriage explain, kubectl logs POD | memtriage explain -)"
                );
            }
            explain::read("-", "stdin", "standard input", stdin.lock())?
        }
    };
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::explain::write(
            &mut p.out,
            &style,
            &report.findings,
            report.lines,
            report.bytes,
        )?;
    }
    Ok(ExitStatus::Success)
}
