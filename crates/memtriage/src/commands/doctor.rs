//! `memtriage doctor`: audits this machine's memory settings for ML jobs. Reads a
//! system snapshot, hands it to the engine's rules, renders the findings. Exits 1
//! when any finding is at error severity.

use std::io::Write;

use memtriage_core::diagnose::doctor::{self, Profile};
use memtriage_core::model::finding::{Finding, Severity};
use memtriage_core::model::system::SystemSnapshot;
use memtriage_core::probe;
use serde::Serialize;

use super::Context;
use crate::cli::DoctorArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub const DOCTOR_SCHEMA: &str = "memtriage.doctor/v1";

#[derive(Serialize)]
struct Report<'a> {
    schema: &'static str,
    profile: Profile,
    system: &'a SystemSnapshot,
    findings: &'a [Finding],
}

pub fn run(ctx: &Context, args: &DoctorArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let profile = args.profile;
    let sys = probe::system::read(&ctx.root);
    let found = doctor::audit(&sys, profile);
    if args.json {
        let report = Report {
            schema: DOCTOR_SCHEMA,
            profile,
            system: &sys,
            findings: &found,
        };
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::doctor::write(&mut p.out, &style, &sys, profile, &found)?;
    }
    Ok(if found.iter().any(|f| f.severity == Severity::Error) {
        ExitStatus::ErrorFinding
    } else {
        ExitStatus::Success
    })
}
