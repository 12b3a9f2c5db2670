//! `memtriage explain [FILE|-]`: the diagnosis of a saved log. Reads the file (or
//! standard input) in large chunks into the engine's log scanner and renders what it
//! found. Exits 0 whenever it could read the log, findings or not.

use std::fs::File;
use std::io::{self, ErrorKind, IsTerminal, Read, Write};
use std::path::Path;

use anyhow::bail;
use memtriage_core::diagnose::logs::{LogMatch, LogScanner};
use memtriage_core::model::finding::Finding;
use serde::Serialize;

use super::Context;
use crate::cli::ExplainArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub const EXPLAIN_SCHEMA: &str = "memtriage.explain/v1";

/// Large enough that syscalls are noise next to the scan, small enough that the chunk
/// is still in the CPU's cache when the scanner reads it after the kernel's copy
/// (measured: 64 KiB reads spent a quarter of the system time of 256 KiB ones).
const CHUNK: usize = 64 << 10;

#[derive(Serialize)]
struct Report<'a> {
    schema: &'static str,
    /// The path as given, or `-` for standard input.
    source: &'a str,
    lines: u64,
    bytes: u64,
    matches: &'a [LogMatch],
    findings: &'a [Finding],
}

pub fn run(_ctx: &Context, args: &ExplainArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let path = args.file.as_deref().filter(|p| *p != Path::new("-"));
    let (source, mut scanner) = match path {
        Some(p) => {
            let shown = p.display().to_string();
            let file = open(p)?;
            let mut scanner = LogScanner::with_source(shown.clone());
            read_all(file, &mut scanner, &shown)?;
            (shown, scanner)
        }
        None => {
            let stdin = io::stdin();
            if args.file.is_none() && stdin.is_terminal() {
                bail!(
                    "explain: no log given: name a file (memtriage explain train.log) or pipe one in \
                     (dmesg | memtriage explain, kubectl logs POD | memtriage explain -)"
                );
            }
            let mut scanner = LogScanner::with_source("stdin");
            read_all(stdin.lock(), &mut scanner, "standard input")?;
            ("-".to_string(), scanner)
        }
    };
    scanner.finish();
    let found = scanner.findings();
    if args.json {
        let report = Report {
            schema: EXPLAIN_SCHEMA,
            source: &source,
            lines: scanner.lines(),
            bytes: scanner.bytes(),
            matches: scanner.matches(),
            findings: &found,
        };
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::explain::write(&mut p.out, &style, &found, scanner.lines(), scanner.bytes())?;
    }
    Ok(ExitStatus::Success)
}

fn open(path: &Path) -> anyhow::Result<File> {
    let shown = path.display();
    let file = File::open(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => anyhow::anyhow!("{shown}: no such file"),
        ErrorKind::PermissionDenied => anyhow::anyhow!(
            "{shown}: permission denied (read it as its owner, or with sudo; for the kernel log, \
             sudo dmesg | memtriage explain)"
        ),
        _ => anyhow::anyhow!("{shown}: cannot open: {e}"),
    })?;
    // Opening a directory succeeds; reading it does not, with a less clear message.
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        bail!("{shown}: is a directory (give a log file)");
    }
    Ok(file)
}

fn read_all(mut from: impl Read, scanner: &mut LogScanner, what: &str) -> anyhow::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => scanner.feed(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => bail!("{what}: read failed after {} bytes: {e}", scanner.bytes()),
        }
    }
}
