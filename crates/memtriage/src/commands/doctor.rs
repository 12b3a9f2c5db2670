//! `memtriage doctor`: audits this machine's memory settings for ML jobs. Reads a
//! system snapshot, hands it to the engine's rules, renders the findings. Exits 1
//! when any finding is at error severity.

use std::io::Write;
use std::process::ExitCode;

use memtriage_core::diagnose::doctor::{self, Profile};
use memtriage_core::model::finding::{Finding, Severity};
use memtriage_core::model::system::SystemSnapshot;
use memtriage_core::probe;
use serde::Serialize;

use super::Context;
use crate::cli::{DoctorArgs, ProfileArg};
use crate::render::findings;
use crate::render::style::Style;
use crate::render::table;
use crate::render::units::{iec, iec_opt, percent};

pub const DOCTOR_SCHEMA: &str = "memtriage.doctor/v1";

#[derive(Serialize)]
struct Report<'a> {
    schema: &'static str,
    profile: Profile,
    system: &'a SystemSnapshot,
    findings: &'a [Finding],
}

pub fn run(ctx: &Context, args: &DoctorArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let profile = match args.profile {
        ProfileArg::Training => Profile::Training,
        ProfileArg::Inference => Profile::Inference,
        ProfileArg::Shared => Profile::Shared,
    };
    let sys = probe::system::read(&ctx.root);
    let found = doctor::audit(&sys, profile);
    if args.json {
        let report = Report {
            schema: DOCTOR_SCHEMA,
            profile,
            system: &sys,
            findings: &found,
        };
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        write_text(out, &ctx.style, &sys, profile, &found)?;
    }
    Ok(if found.iter().any(|f| f.severity == Severity::Error) {
        ExitCode::from(crate::EXIT_FINDING)
    } else {
        ExitCode::SUCCESS
    })
}

fn write_text(
    out: &mut dyn Write,
    style: &Style,
    sys: &SystemSnapshot,
    profile: Profile,
    found: &[Finding],
) -> std::io::Result<()> {
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
