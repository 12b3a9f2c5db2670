//! `explain`: the diagnosis of a saved log (a file, a stream or text in memory).

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

use serde::Serialize;

use crate::diagnose::logs::{LogMatch, LogScanner};
use crate::error::{Error, Result};
use crate::model::finding::{Certainty, Finding, Severity};

/// Every class of failure a log can show, with its finding id, title, why and fix.
pub use crate::diagnose::logs::{ClassInfo, FailureClass, CLASSES};

pub const EXPLAIN_SCHEMA: &str = "memtriage.explain/v1";
pub const RULES_SCHEMA: &str = "memtriage.rules/v1";

/// The rule table `explain` reads logs with (`memtriage.rules/v1`), in match order.
#[derive(Debug, Serialize)]
pub struct RuleTable {
    pub schema: &'static str,
    pub rules: Vec<RuleSummary>,
}

/// One rule: what it recognises and the literals a line must hold for its regex to
/// be tried.
#[derive(Debug, Serialize)]
pub struct RuleSummary {
    pub id: &'static str,
    pub class: FailureClass,
    pub severity: Severity,
    pub certainty: Certainty,
    pub literals: Vec<&'static str>,
}

/// The rule table; an error where it did not compile.
pub fn rules() -> Result<RuleTable> {
    crate::diagnose::logs::compile_all_rules().map_err(Error::internal)?;
    let rules = crate::diagnose::logs::RULES
        .iter()
        .map(|r| RuleSummary {
            id: r.id,
            class: r.class,
            severity: r.severity,
            certainty: r.certainty,
            // The NUL-led literal of a rule reached only through a table header.
            literals: r
                .literals
                .iter()
                .copied()
                .filter(|l| !l.starts_with('\0'))
                .collect(),
        })
        .collect();
    Ok(RuleTable {
        schema: RULES_SCHEMA,
        rules,
    })
}

/// Large enough that the scanner's prefilter groups search each chunk in parallel
/// (from 1 MiB), small enough to stay a bounded buffer.
const CHUNK: usize = 4 << 20;

/// What a log showed (`memtriage.explain/v1`).
#[derive(Debug, Serialize)]
pub struct ExplainReport {
    pub schema: &'static str,
    /// The log as the caller named it (`-` for standard input).
    pub source: String,
    pub lines: u64,
    pub bytes: u64,
    /// Rules in the table the log was read with.
    pub rules: usize,
    pub matches: Vec<LogMatch>,
    pub findings: Vec<Finding>,
}

/// Scans a log file; the errors say whether it is missing, unreadable or a directory.
pub fn file(path: &Path) -> Result<ExplainReport> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Error::not_found(shown.clone(), "no such file"),
        ErrorKind::PermissionDenied => Error::refused(
            shown.clone(),
            "permission denied",
            "read it as its owner, or with sudo; for the kernel log, sudo dmesg | memtriage explain",
        ),
        _ => Error::io(format!("{shown}: cannot open"), e),
    })?;
    // Opening a directory succeeds; reading it does not, with a less clear message.
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Error::bad_input(shown, "is a directory (give a log file)"));
    }
    let mut file = file;
    let mut start = [0u8; 8];
    let got = file.read(&mut start).map_err(|e| Error::io(&shown, e))?;
    let named_a_dump = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dmp"));
    if super::explain_dump::is_kernel_dump(&start[..got]) || named_a_dump {
        return super::explain_dump::read(&shown, file);
    }
    // The bytes already read go first: a pipe (`explain <(dmesg)`) cannot seek back.
    let whole = (&start[..got]).chain(file);
    match Compression::of(&start[..got]) {
        // Every member: `cat a.gz b.gz` and bgzip write several.
        Some(Compression::Gzip) => read(
            &shown,
            &shown,
            &shown,
            flate2::read::MultiGzDecoder::new(whole),
        ),
        Some(Compression::Zstd) => {
            let decoder = ruzstd::decoding::StreamingDecoder::new(whole).map_err(|e| {
                Error::malformed(
                    path,
                    format!("not a zstd stream its header says it is: {e}"),
                )
            })?;
            read(&shown, &shown, &shown, decoder)
        }
        None => read(&shown, &shown, &shown, whole),
    }
}

/// How a log was compressed, told from its first bytes (a rotated log's `.gz`, a
/// `kubectl logs` archive's `.zst`), whatever its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    fn of(start: &[u8]) -> Option<Compression> {
        if start.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if start.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }
}

/// Scans a stream to its end. `source` names it in the report, `evidence` in each
/// finding's evidence, `what` in a read error.
pub fn read(
    source: &str,
    evidence: &str,
    what: &str,
    mut from: impl Read,
) -> Result<ExplainReport> {
    crate::diagnose::logs::check_prefilter().map_err(Error::internal)?;
    let mut scanner = LogScanner::with_source(evidence);
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => scanner.feed(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Error::io(
                    format!("{what}: read failed after {} bytes", scanner.bytes()),
                    e,
                ))
            }
        }
    }
    Ok(report(source, scanner))
}

/// Scans log text held in memory; `source` names it in the report and the evidence.
/// An error only where the rule table did not compile.
pub fn checked_text(source: &str, log: &[u8]) -> Result<ExplainReport> {
    crate::diagnose::logs::check_prefilter().map_err(Error::internal)?;
    Ok(text(source, log))
}

/// Scans log text held in memory, with the rule table as built (see
/// [`checked_text`]); `source` names it in the report and the evidence.
pub fn text(source: &str, log: &[u8]) -> ExplainReport {
    let mut scanner = LogScanner::with_source(source);
    // Chunks as a file is read; the scanner does not depend on the chunking.
    for chunk in log.chunks(CHUNK) {
        scanner.feed(chunk);
    }
    report(source, scanner)
}

fn report(source: &str, mut scanner: LogScanner) -> ExplainReport {
    scanner.finish();
    ExplainReport {
        schema: EXPLAIN_SCHEMA,
        source: source.to_string(),
        lines: scanner.lines(),
        rules: crate::diagnose::logs::RULES.len(),
        bytes: scanner.bytes(),
        findings: scanner.findings(),
        matches: scanner.matches().to_vec(),
    }
}
