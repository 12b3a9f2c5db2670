//! `memtriage report FILE [--html OUT]`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use memtriage_core::parse::record;

use super::Context;
use crate::cli::ReportArgs;
use crate::render;

pub fn run(ctx: &Context, args: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let path = &args.file;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let rec = record::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if let Some(html) = &args.html {
        std::fs::write(html, render::html::page(&rec))
            .with_context(|| format!("{}: cannot write", html.display()))?;
        writeln!(
            out,
            "wrote {} ({} samples)",
            html.display(),
            rec.samples.len()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    match &rec.summary {
        Some(summary) => render::run::write(out, &ctx.style, summary, &[])?,
        None => writeln!(
            out,
            "{}: {} samples; the recording ends before the job did (memtriage was stopped)",
            path.display(),
            rec.samples.len()
        )?,
    }
    Ok(ExitCode::SUCCESS)
}
