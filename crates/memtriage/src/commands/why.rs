//! `memtriage why [PID]`: the most recent death in the record (or PID's), explained
//! with the findings `run` gives, from what `memtriage record` kept.

use std::io::Write;

use memtriage_core::usecase::record::default_db;
use memtriage_core::usecase::why::{now_ms, why, WhyAnswer, WhyRequest, WHY_SCHEMA};

use crate::cli::WhyArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(args: &WhyArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let db = args.db.clone().unwrap_or_else(default_db);
    let since_ms = args
        .since
        .map(|s| now_ms() - s.0.as_millis().min(i64::MAX as u128) as i64);
    let request = WhyRequest {
        pid: args.pid,
        since_ms,
        slurm_job: None,
    };
    let WhyAnswer {
        report,
        span,
        notes,
        left_out,
    } = why(&db, &request).map_err(|e| super::history_error(e, "--db", &db))?;
    if args.json {
        match &report {
            Some(r) => serde_json::to_writer_pretty(&mut p.out, r)?,
            None => serde_json::to_writer_pretty(
                &mut p.out,
                &serde_json::json!({
                    "schema": WHY_SCHEMA,
                    "death": null,
                    "record": span.map(|(first, last)| serde_json::json!({"first_ms": first, "last_ms": last})),
                    "notes": notes,
                    "left_out": left_out,
                }),
            )?,
        }
        writeln!(p.out)?;
        return Ok(ExitStatus::Success);
    }
    let Some(report) = report else {
        let what = match args.pid {
            Some(pid) => format!("no death of pid {pid}"),
            None => "no death (an OOM kill, a segfault, a bus error, a kernel crash)".to_string(),
        };
        let window = match span {
            Some((first, last)) => format!(
                "the record covers {} to {}",
                render::units::utc_ms(first),
                render::units::utc_ms(last)
            ),
            None => "the record is empty: is `memtriage record` running?".into(),
        };
        writeln!(
            p.out,
            "memtriage why: {what} recorded{} in {} ({window})",
            args.since
                .map(|s| format!(" in the last {}", crate::values::Interval(s.0)))
                .unwrap_or_default(),
            db.display()
        )?;
        if let Some(l) = &left_out {
            writeln!(
                p.out,
                "the record holds {} outside this question; the latest: {} at {}{}",
                memtriage_core::model::units::counted(l.deaths as u64, "death", "deaths"),
                l.latest,
                render::units::utc_ms(l.latest_ms),
                l.latest_pid
                    .map(|pid| format!(" (memtriage why {pid})"))
                    .unwrap_or_default()
            )?;
        }
        for n in &notes {
            writeln!(p.out, "note: {n}")?;
        }
        return Ok(ExitStatus::Success);
    };
    let style = p.out.style();
    let ago = (now_ms() - report.death.at_ms).max(0) as f64 / 1000.0;
    writeln!(
        p.out,
        "{} at {} ({} ago){}",
        style.bold(&report.death.headline()),
        render::units::utc_ms(report.death.at_ms),
        render::units::ago(ago),
        report
            .job
            .as_ref()
            .map(|j| format!(", job {j}"))
            .unwrap_or_default()
    )?;
    writeln!(p.out)?;
    render::findings::write(&mut p.out, &style, &report.findings)?;
    for n in &report.notes {
        writeln!(p.out, "note: {n}")?;
    }
    Ok(ExitStatus::Success)
}
