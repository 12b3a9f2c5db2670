//! `memtriage report FILE [--html OUT | --json]`.

use std::io::Write;

use anyhow::Context as _;
use memtriage_core::parse::record;

use super::Context;
use crate::cli::ReportArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(_ctx: &Context, args: &ReportArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let path = &args.file;
    let kind = std::fs::metadata(path)
        .with_context(|| format!("{}: cannot read", path.display()))?
        .file_type();
    {
        use std::os::unix::fs::FileTypeExt;
        // /dev/zero or /dev/full would be read forever.
        if kind.is_char_device() || kind.is_block_device() || kind.is_dir() {
            anyhow::bail!(
                "{}: not a recording (a device or a directory): give the file `memtriage run --record FILE` wrote",
                path.display()
            );
        }
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let rec = record::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if let Some(html) = &args.html {
        std::fs::write(html, render::html::page(&rec))
            .with_context(|| format!("{}: cannot write", html.display()))?;
        render::run::write_html_written(&mut p.out, html, rec.samples.len())?;
        return Ok(ExitStatus::Success);
    }
    match (&rec.summary, args.json) {
        (Some(summary), true) => {
            serde_json::to_writer_pretty(&mut p.out, summary)?;
            writeln!(p.out)?;
        }
        (Some(summary), false) => {
            let style = p.out.style();
            render::run::write(&mut p.out, &style, summary, &[])?;
        }
        // JSON promises a whole report; a recording cut short has none to give.
        (None, true) => anyhow::bail!(
            "{shown}: no final report: {why}; `memtriage report {shown} --html OUT` draws its {} samples",
            rec.samples.len(),
            shown = path.display(),
            why = rec.cut_short_reason().unwrap_or_default(),
        ),
        (None, false) => render::run::write_cut_short(
            &mut p.out,
            path,
            rec.samples.len(),
            rec.cut_short_reason().unwrap_or_default(),
        )?,
    }
    Ok(ExitStatus::Success)
}
