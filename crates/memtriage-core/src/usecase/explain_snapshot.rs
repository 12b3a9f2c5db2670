//! `explain-snapshot`: a pickled CUDA memory snapshot (`torch.cuda.memory._dump_snapshot`)
//! read and explained; the same for a snapshot handed over in memory (Python's
//! `memtriage.torch.explain_oom()`).

use std::path::Path;

use crate::diagnose::cuda_snapshot;
use crate::error::{Error, Result};
pub use crate::model::cuda_snapshot::KnownOom;
use crate::model::cuda_snapshot::SnapshotReport;
use crate::parse::cuda_snapshot as parse;

/// A pickled CUDA memory snapshot (`torch.cuda.memory._snapshot()`) read from
/// `path` and explained: fragmentation, a memory cap, or real demand. `oom` says what
/// failed where the snapshot's own history does not.
pub fn file(path: &Path, oom: Option<KnownOom>) -> Result<SnapshotReport> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let name = path.display().to_string();
    bytes_of(&bytes, &name, oom)
}

/// `source` names the snapshot in the report and in errors.
pub fn bytes_of(bytes: &[u8], source: &str, oom: Option<KnownOom>) -> Result<SnapshotReport> {
    let snap = parse::parse(bytes).map_err(|why| {
        Error::bad_input(
            source,
            format!("{why}; save one with torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")"),
        )
    })?;
    Ok(cuda_snapshot::analyse(
        &snap,
        oom.map(KnownOom::event),
        source,
    ))
}
