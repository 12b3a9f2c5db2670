//! `explain` for people: the findings, then what was read.

use std::io::{self, Write};

use memtriage_core::model::finding::Finding;
use memtriage_core::usecase::explain::RuleTable;
use memtriage_core::usecase::explain_many::Summary;

use super::findings;
use super::style::Style;

/// `lines` and `bytes`: how much of the log was read.
pub fn write(
    out: &mut dyn Write,
    style: &Style,
    found: &[Finding],
    lines: u64,
    bytes: u64,
) -> io::Result<()> {
    findings::write(out, style, found)?;
    // A crash dump has bytes and no lines: its header and triage data were read.
    if lines == 0 && bytes > 0 {
        return match found.len() {
            0 => writeln!(
                out,
                "no bug check found in the dump ({:.1} MB)",
                bytes as f64 / 1e6
            ),
            n => writeln!(
                out,
                "{n} finding{} in a {:.1} MB crash dump (its header and triage data read)",
                if n == 1 { "" } else { "s" },
                bytes as f64 / 1e6
            ),
        };
    }
    let line_word = if lines == 1 { "line" } else { "lines" };
    if found.is_empty() {
        writeln!(out, "no known failure found in {lines} {line_word}")
    } else {
        writeln!(
            out,
            "{} finding{} in {} {line_word} ({:.1} MB)",
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            lines,
            bytes as f64 / 1e6
        )
    }
}

/// Which logs show which failure: the counts, then one line a log.
pub fn write_summary(out: &mut dyn Write, style: &Style, s: &Summary) -> io::Result<()> {
    writeln!(
        out,
        "{}",
        style.bold(&format!(
            "{} logs: {} with a failure, {} healthy, {} unreadable",
            s.logs, s.with_failure, s.healthy, s.unreadable
        ))
    )?;
    let width = s.files.iter().map(|f| f.source.len()).max().unwrap_or(0);
    for f in &s.files {
        let verdict = match (&f.error, &f.severity, &f.title) {
            (Some(e), _, _) => format!("not read: {e}"),
            (None, Some(severity), Some(title)) => format!("{} {title}", severity.as_str()),
            _ => "no known failure".to_string(),
        };
        writeln!(out, "  {:<width$}  {verdict}", f.source)?;
    }
    Ok(())
}

/// One rule a line, in match order: id, class, severity, certainty, literals.
pub fn write_rules(out: &mut dyn Write, table: &RuleTable) -> io::Result<()> {
    for r in &table.rules {
        let literals: Vec<String> = r.literals.iter().map(|l| format!("{l:?}")).collect();
        writeln!(
            out,
            "{:<40} {:<22} {:<5} {:<9} {}",
            r.id,
            r.class.as_str(),
            r.severity.as_str(),
            r.certainty.as_str(),
            literals.join(" ")
        )?;
    }
    writeln!(out, "{} rules", table.rules.len())
}
