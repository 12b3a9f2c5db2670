//! `memtriage doctor`: the engine's audit of this machine's memory settings,
//! rendered. Exits 1 when any finding is at error severity.

use std::io::Write;

use memtriage_core::usecase::doctor;

use super::Context;
use crate::cli::DoctorArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(ctx: &Context, args: &DoctorArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let report = doctor::doctor(&ctx.root, args.profile);
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::doctor::write(
            &mut p.out,
            &style,
            &report.system,
            report.profile,
            &report.findings,
        )?;
    }
    Ok(if report.has_errors() {
        ExitStatus::ErrorFinding
    } else {
        ExitStatus::Success
    })
}
