//! `doctor` for people: a headline, the machine in one line, the problems in full,
//! the passed checks one line each, and the count by severity.

use std::io::{self, Write};

use memtriage_core::model::finding::{Finding, Severity};
use memtriage_core::model::system::SystemSnapshot;
use memtriage_core::usecase::doctor::Profile;

use super::findings;
use super::style::Style;
use super::table;
use super::units::{iec_opt, percent};
use memtriage_core::model::units::iec;

pub fn write(
    out: &mut dyn Write,
    style: &Style,
    sys: &SystemSnapshot,
    profile: Profile,
    found: &[Finding],
) -> io::Result<()> {
    writeln!(
        out,
        "{}",
        style.bold(&format!("memtriage doctor --profile {}", profile.as_str()))
    )?;
    writeln!(out, "{}", summary(sys))?;
    writeln!(out)?;
    let (ok, problems): (Vec<Finding>, Vec<Finding>) = found
        .iter()
        .cloned()
        .partition(|f| f.severity == Severity::Ok);
    findings::write(out, style, &problems)?;
    // Passed checks, one line each: the title carries the value that was checked.
    if !ok.is_empty() {
        let mut t = table::new(&["", "id", "passed check"], 3);
        for f in &ok {
            // Repeat the key evidence only when the title does not already show it.
            let key = f
                .evidence
                .first()
                .filter(|e| !f.title.contains(e.value.as_str()))
                .map(|e| format!("  ({}: {})", e.label, e.value))
                .unwrap_or_default();
            t.add_row(vec![
                style.severity(f.severity),
                f.id.clone(),
                format!("{}{}", f.title, style.dim(&key)),
            ]);
        }
        writeln!(out, "{}", table::to_string(&t))?;
        writeln!(out)?;
    }
    let count = |s: Severity| found.iter().filter(|f| f.severity == s).count();
    writeln!(
        out,
        "{} error, {} warn, {} info, {} ok",
        count(Severity::Error),
        count(Severity::Warn),
        count(Severity::Info),
        count(Severity::Ok)
    )
}

/// One line: RAM, swap, /dev/shm and the cgroup limit, `-` where unreadable.
fn summary(sys: &SystemSnapshot) -> String {
    let m = sys.memory.clone().unwrap_or_default();
    let ram = format!(
        "memory {} total, {} available",
        iec_opt(m.total),
        iec_opt(m.available)
    );
    let swap = match (m.swap_total, m.swap_used()) {
        (Some(0), _) => "swap off".to_string(),
        (Some(t), Some(u)) => format!("swap {} ({} used)", iec(t), iec(u)),
        (t, _) => format!("swap {}", iec_opt(t)),
    };
    let shm = match &sys.shm {
        Some(s) => match (s.size(), s.used) {
            (Some(size), Some(used)) => {
                format!("/dev/shm {} ({} used)", iec(size), percent(used, size))
            }
            (size, _) => format!("/dev/shm {}", iec_opt(size)),
        },
        None => "/dev/shm -".to_string(),
    };
    let cgroup = match &sys.cgroup {
        Some(c) => match c.limit {
            Some(l) => format!("cgroup limit {}", iec(l)),
            None => "cgroup no limit".to_string(),
        },
        None if sys.unreadable_reason("cgroup").is_some() => "cgroup -".to_string(),
        None => "cgroup no limit".to_string(),
    };
    format!("{ram} · {swap} · {shm} · {cgroup}")
}
