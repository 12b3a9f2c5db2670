//! `memtriage doctor`: filled in by the doctor work.

use std::io::Write;
use std::process::ExitCode;

use super::Context;
use crate::cli::DoctorArgs;

pub fn run(_ctx: &Context, _args: &DoctorArgs, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    anyhow::bail!("doctor: not built yet")
}
