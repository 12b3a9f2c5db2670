//! `memtriage explain [FILE|DIR|-]...`: the engine's diagnosis of saved logs, rendered.
//! One log: its report, exit 0 whenever it could be read. Several (or a directory):
//! each log's report, then which logs show which failure; exit 2 when one could not
//! be read.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::bail;
use memtriage_core::usecase::explain::{self, ExplainReport};
use memtriage_core::usecase::explain_many::{self, Explained};

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
    let stdin_named = args.files.iter().filter(|f| is_stdin(f)).count();
    if stdin_named > 1 {
        bail!("explain: standard input (-) can be read once; name it once");
    }
    let one_log = match args.files.as_slice() {
        [] => true,
        [only] => !only.is_dir(),
        _ => false,
    };
    if one_log {
        let report = one(args.files.first().map(PathBuf::as_path))?;
        write_report(p, args.json, &report, false)?;
        return Ok(ExitStatus::Success);
    }
    many(args, p)
}

fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// One log, a file or standard input.
fn one(path: Option<&Path>) -> anyhow::Result<ExplainReport> {
    match path.filter(|p| !is_stdin(p)) {
        Some(path) => Ok(explain::file(path)?),
        None => {
            let stdin = io::stdin();
            if path.is_none() && stdin.is_terminal() {
                bail!(
                    "explain: no log given: name a file (memtriage explain train.log) or pipe one in \
                     (dmesg | memtriage explain, kubectl logs POD | memtriage explain -)"
                );
            }
            Ok(explain::read("-", "stdin", "standard input", stdin.lock())?)
        }
    }
}

/// Several logs: standard input first where named, then the files on both cores.
fn many(args: &ExplainArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let mut explained = Vec::new();
    if args.files.iter().any(|f| is_stdin(f)) {
        explained.push(Explained {
            source: "-".into(),
            report: explain::read("-", "stdin", "standard input", io::stdin().lock()),
        });
    }
    let files: Vec<PathBuf> = args
        .files
        .iter()
        .filter(|f| !is_stdin(f))
        .cloned()
        .collect();
    let logs = explain_many::logs_named(&files);
    if logs.is_empty() && explained.is_empty() {
        let named: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        bail!("explain: {}: no log files in it", named.join(", "));
    }
    explained.extend(explain_many::explain_all(
        logs,
        explain_many::default_threads(),
    ));
    let style = p.out.style();
    for e in &explained {
        match &e.report {
            Ok(report) => write_report(p, args.json, report, true)?,
            Err(err) if args.json => {
                let line = serde_json::json!({"source": e.source, "error": err.to_string()});
                serde_json::to_writer(&mut p.out, &line)?;
                writeln!(p.out)?;
            }
            Err(err) => {
                writeln!(p.out, "{}", style.bold(&format!("== {} ==", e.source)))?;
                writeln!(p.out, "not read: {err}\n")?;
            }
        }
    }
    let summary = explain_many::summary(&explained);
    if args.json {
        serde_json::to_writer(&mut p.out, &summary)?;
        writeln!(p.out)?;
    } else {
        render::explain::write_summary(&mut p.out, &style, &summary)?;
    }
    Ok(match summary.unreadable {
        0 => ExitStatus::Success,
        _ => ExitStatus::BadInput,
    })
}

/// A log's report: pretty JSON alone, a JSON line among many; in text, under its
/// name when there are many.
fn write_report(
    p: &mut Printer,
    json: bool,
    report: &ExplainReport,
    among_many: bool,
) -> anyhow::Result<()> {
    if json {
        match among_many {
            true => serde_json::to_writer(&mut p.out, report)?,
            false => serde_json::to_writer_pretty(&mut p.out, report)?,
        }
        writeln!(p.out)?;
        return Ok(());
    }
    let style = p.out.style();
    if among_many {
        writeln!(p.out, "{}", style.bold(&format!("== {} ==", report.source)))?;
    }
    render::explain::write(
        &mut p.out,
        &style,
        &report.findings,
        report.lines,
        report.bytes,
    )?;
    if among_many {
        writeln!(p.out)?;
    }
    Ok(())
}
