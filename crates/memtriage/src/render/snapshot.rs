//! `explain-snapshot` for people: each GPU's allocator in one table, then the verdict.

use std::io::{self, Write};

use memtriage_core::model::cuda_snapshot::SnapshotReport;
use memtriage_core::model::units::iec;

use super::style::Style;
use super::{findings, table};

pub fn write(out: &mut dyn Write, style: &Style, r: &SnapshotReport) -> io::Result<()> {
    for d in &r.devices {
        writeln!(
            out,
            "{} {} segments, {} reserved: {} allocated, {} free{}{}",
            style.bold(&format!("CUDA device {}", d.device)),
            d.segments,
            iec(d.reserved),
            iec(d.allocated),
            iec(d.reserved_free),
            if d.pending_free > 0 {
                format!(", {} waiting for another stream", iec(d.pending_free))
            } else {
                String::new()
            },
            if d.expandable_segments {
                " (expandable segments)"
            } else {
                ""
            }
        )?;
        let mut t = table::new(&["POOL", "SEGMENTS", "RESERVED", "FREE", "LARGEST FREE"], 2);
        for p in &d.pools {
            t.add_row(vec![
                p.name.clone(),
                p.segments.to_string(),
                iec(p.reserved),
                iec(p.free),
                iec(p.largest_free_block),
            ]);
        }
        writeln!(out, "{}", table::to_string(&t))?;
        if let Some(oom) = d.oom {
            writeln!(
                out,
                "  out of memory: asked for {}, {} free on the device beyond the allocator",
                iec(oom.requested),
                oom.device_free.map_or("unknown".to_string(), iec)
            )?;
        }
        writeln!(out)?;
    }
    findings::write(out, style, &r.findings)?;
    if !r.history_recorded {
        writeln!(
            out,
            "{}",
            style.dim(
                "no allocation history in this snapshot: the lines that allocated are unknown"
            )
        )?;
    }
    Ok(())
}
