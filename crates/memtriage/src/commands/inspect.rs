//! `memtriage inspect`.

use std::io::Write;
use std::process::ExitCode;

use super::Context;
use crate::cli::InspectArgs;

pub fn run(_ctx: &Context, _args: &InspectArgs, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    anyhow::bail!("inspect: not built yet")
}
