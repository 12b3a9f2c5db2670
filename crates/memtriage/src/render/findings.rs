//! Findings for people: severity, title, evidence, why, fix.

use std::io::{self, Write};

use memtriage_core::model::finding::Finding;

use super::style::Style;

pub fn write(out: &mut dyn Write, style: &Style, findings: &[Finding]) -> io::Result<()> {
    for f in findings {
        writeln!(
            out,
            "{} {}",
            style.severity(f.severity),
            style.bold(&f.title)
        )?;
        for e in &f.evidence {
            writeln!(
                out,
                "      {}: {}  {}",
                e.label,
                e.value,
                style.dim(&format!("({})", e.source))
            )?;
        }
        if let Some(a) = &f.assessment {
            writeln!(
                out,
                "      {}: {}, points at {}",
                style.dim("certainty"),
                a.certainty.as_str(),
                a.cause.as_str()
            )?;
            if !a.confirm.is_empty() {
                writeln!(out, "      confirm: {}", a.confirm)?;
            }
        }
        if !f.why.is_empty() {
            writeln!(out, "      why: {}", f.why)?;
        }
        if !f.fix.is_empty() {
            let mut lines = f.fix.lines();
            if let Some(first) = lines.next() {
                writeln!(out, "      fix: {first}")?;
            }
            for line in lines {
                writeln!(out, "           {line}")?;
            }
        }
        writeln!(out)?;
    }
    Ok(())
}
