//! `explain-snapshot`: a pickled CUDA memory snapshot (`torch.cuda.memory._dump_snapshot`)
//! read and explained; the same for a snapshot handed over in memory (Python's
//! `memtriage.torch.explain_oom()`).

use std::io::Read;
use std::path::Path;

use crate::diagnose::cuda_snapshot;
use crate::error::{Error, Result};
pub use crate::model::cuda_snapshot::KnownOom;
use crate::model::cuda_snapshot::{CudaSnapshot, SnapshotReport};
use crate::parse::cuda_snapshot as parse;
use crate::probe::files;

/// A pickled CUDA memory snapshot (`torch.cuda.memory._snapshot()`) read from
/// `path` and explained: fragmentation, a memory cap, or real demand. `oom` says what
/// failed where the snapshot's own history does not; its device must be one the file
/// holds (a user's `--device` may be a slip; a live OOM's device, in [`bytes_of`], is
/// the device that failed, even before it held a segment).
pub fn file(path: &Path, oom: Option<KnownOom>) -> Result<SnapshotReport> {
    let name = path.display().to_string();
    let bytes = read_pickle(path, &name)?;
    let snap = parse::parse(&bytes).map_err(|why| not_a_snapshot(&name, &why))?;
    if let Some(oom) = &oom {
        refuse_an_absent_device(&snap, oom.device, &name)?;
    }
    Ok(explained(&snap, oom, &name))
}

/// The file's bytes, refused at its first byte when that starts no pickle.
fn read_pickle(path: &Path, name: &str) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    files::refuse_special(
        path,
        &meta,
        "a snapshot is the file torch.cuda.memory._dump_snapshot wrote",
    )?;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if let Some(why) = parse::refuse_start(&bytes) {
        return Err(not_a_snapshot(name, &why));
    }
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

/// The failed allocation's device must be one the snapshot holds (segments or
/// history): a verdict on a device it knows nothing of would be invented.
fn refuse_an_absent_device(snap: &CudaSnapshot, device: u32, source: &str) -> Result<()> {
    let mut held: Vec<u32> = snap.segments.iter().map(|s| s.device).collect();
    held.extend((0..snap.traces.len() as u32).filter(|d| !snap.traces[*d as usize].is_empty()));
    held.sort_unstable();
    held.dedup();
    if held.contains(&device) {
        return Ok(());
    }
    let devices = held
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    Err(Error::bad_input(
        format!("device {device}"),
        format!(
            "{source} holds nothing of CUDA device {device} (its devices: {}): name the \
             device the allocation failed on",
            if devices.is_empty() { "none" } else { &devices }
        ),
    ))
}

fn not_a_snapshot(source: &str, why: &str) -> Error {
    Error::bad_input(
        source,
        format!("{why}; save one with torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")"),
    )
}

/// `source` names the snapshot in the report and in errors.
pub fn bytes_of(bytes: &[u8], source: &str, oom: Option<KnownOom>) -> Result<SnapshotReport> {
    let snap = parse::parse(bytes).map_err(|why| not_a_snapshot(source, &why))?;
    Ok(explained(&snap, oom, source))
}

fn explained(snap: &CudaSnapshot, oom: Option<KnownOom>, source: &str) -> SnapshotReport {
    cuda_snapshot::analyse(snap, oom.map(KnownOom::event), source)
}
