//! `memtriage explain-snapshot FILE`: a torch CUDA memory snapshot explained.
//! Exits 0 whenever it could read the snapshot, findings or not.

use std::io::Write;

use memtriage_core::usecase::explain_snapshot::{self, KnownOom};

use crate::cli::ExplainSnapshotArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn run(args: &ExplainSnapshotArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let oom = args.requested.map(|r| KnownOom {
        device: args.device,
        requested: r.0,
        device_free: None,
    });
    let report = explain_snapshot::file(&args.file, oom)?;
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::snapshot::write(&mut p.out, &style, &report)?;
    }
    Ok(ExitStatus::Success)
}
