//! `memtriage report FILE [--html OUT | --json]`.

use std::io::Write;

use anyhow::Context as _;
use memtriage_core::usecase::report::{history_span, history_window, now_ms, parse_timeline};

use super::Context;
use crate::cli::ReportArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(_ctx: &Context, args: &ReportArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    if let (Some(db), Some(html)) = (&args.db, &args.html) {
        return history(args, db, html, p);
    }
    let Some(path) = &args.file else {
        anyhow::bail!("report: give a recording (FILE) or a history (--db PATH --html OUT)");
    };
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
    let rec = parse_timeline(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
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

/// `report --db PATH --html OUT`: a window of the machine's history on the run page.
fn history(
    args: &ReportArgs,
    db: &std::path::Path,
    html: &std::path::Path,
    p: &mut Printer,
) -> anyhow::Result<ExitStatus> {
    let Some((first, last)) = history_span(db).map_err(|e| super::history_error(e, "--db", db))?
    else {
        anyhow::bail!(
            "{}: the record is empty: is `memtriage record` running?",
            db.display()
        );
    };
    let ago =
        |age: crate::values::Retention| now_ms() - age.0.as_millis().min(i64::MAX as u128) as i64;
    // A kill is stamped when it happened, which may be after the last interval.
    if let (Some(from), Some(to)) = (args.from, args.to) {
        if to.0 > from.0 {
            anyhow::bail!("the window ends before it starts: --from must be earlier than --to");
        }
    }
    let from = args.from.map(ago).unwrap_or(first).max(first);
    let to = args.to.map(ago).unwrap_or_else(now_ms);
    let rec = history_window(db, from, to, args.job.as_deref())?;
    if rec.samples.is_empty() {
        anyhow::bail!(
            "{}: nothing recorded{} between {} and {} (the record covers {} to {})",
            db.display(),
            args.job
                .as_ref()
                .map(|j| format!(" of job {j}"))
                .unwrap_or_default(),
            render::units::utc_ms(from),
            render::units::utc_ms(to),
            render::units::utc_ms(first),
            render::units::utc_ms(last)
        );
    }
    let heading = format!(
        "{} to {} · {} intervals · {} OOM kills and faults",
        render::units::utc_ms(from),
        render::units::utc_ms(to),
        rec.samples.len(),
        rec.events.len()
    );
    std::fs::write(html, render::html::history_page(&rec, &heading))
        .with_context(|| format!("{}: cannot write", html.display()))?;
    render::run::write_html_written(&mut p.out, html, rec.samples.len())?;
    Ok(ExitStatus::Success)
}
