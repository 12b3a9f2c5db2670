//! The tree read in full once, near its ceiling: the regions of its largest
//! processes, grouped by kind and by file, so a post-mortem says what grew. Reading
//! `smaps` walks each process's page tables, so it is done for a few processes, once.

use crate::model::growth::{CeilingSnapshot, SnapshotProcess};
use crate::model::lines::ProcessLines;
use crate::probe::maps;
use crate::probe::root::Root;
use crate::sampler::Sample;

use super::watch::NearCeiling;

/// Processes read, largest RSS first.
pub const PROCESSES: usize = 3;
/// Files kept per process.
pub const FILES: usize = 8;

pub fn take(
    root: &Root,
    sample: &Sample,
    near: NearCeiling,
    lines: &[ProcessLines],
) -> CeilingSnapshot {
    let mut largest: Vec<_> = sample.processes.iter().collect();
    largest.sort_by(|a, b| b.rss.cmp(&a.rss).then(a.pid.cmp(&b.pid)));
    let mut processes = Vec::new();
    let mut unreadable = Vec::new();
    for p in largest.into_iter().take(PROCESSES) {
        match maps::read(root, p.pid) {
            Ok(report) => processes.push(SnapshotProcess {
                pid: p.pid,
                comm: p.comm.clone(),
                rss: p.rss,
                by_kind: report.by_kind,
                by_file: report.by_file.into_iter().take(FILES).collect(),
                lines: lines
                    .iter()
                    .find(|l| l.pid == p.pid)
                    .map(|l| {
                        crate::diagnose::lines::shown(l)
                            .into_iter()
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            Err(e) => unreadable.push(format!("pid {}: {e}", p.pid)),
        }
    }
    CeilingSnapshot {
        at_seconds: sample.t,
        tree_bytes: near.tree_bytes,
        ceiling_bytes: near.ceiling_bytes,
        processes,
        unreadable,
    }
}
