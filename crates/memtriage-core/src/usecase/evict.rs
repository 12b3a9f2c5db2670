//! `evict`: drop files' pages from the page cache, and say what stayed and why.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::Result;
use crate::pagecache::files::{self, Skipped};
use crate::pagecache::mappers::{self, Mapper};
use crate::pagecache::residency::Meter;
use crate::pagecache::warm::{evict_file, write_back};
use crate::probe::root::Root;

pub const EVICT_SCHEMA: &str = "memtriage.evict/v1";

/// What eviction left (`memtriage.evict/v1`).
#[derive(Debug, Serialize)]
pub struct EvictReport {
    pub schema: &'static str,
    pub files: Vec<EvictedFile>,
    /// Files and directories a walk found but could not evict (deleted meanwhile, or
    /// refused), with the reason.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvictedFile {
    pub path: String,
    pub size: u64,
    /// `None` where the kernel would not say (see `unknown`).
    pub cached_before: Option<u64>,
    pub cached_after: Option<u64>,
    /// Why the cached figures are unknown (the pages were still dropped).
    pub unknown: Option<String>,
    /// Dirty pages stay until written back (`None` where the kernel cannot say).
    pub dirty_after: Option<u64>,
    /// Pages being written back stay until the write ends (`None` where the kernel
    /// cannot say).
    pub writeback_after: Option<u64>,
    /// Whether the file's dirty pages were written back (fdatasync) before the advice.
    pub synced: bool,
    /// Processes that map the file: their pages cannot be dropped. Looked for only
    /// where something stayed cached.
    pub mapped_by: Vec<Mapper>,
}

/// What to do with pages not yet on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unwritten {
    /// The kernel's advice drops clean pages only; dirty ones stay cached.
    #[default]
    Keep,
    /// Write each file's dirty pages back first, so that they can be dropped too.
    WriteBackFirst,
}

/// Evicts the regular files under `paths` (directories are walked).
pub fn evict(root: &Root, paths: &[PathBuf], unwritten: Unwritten) -> Result<EvictReport> {
    let (files, skipped) = files::walk(paths)?.each(|p| {
        let meter = Meter::open(p)?;
        // For a file whose residency the kernel hides from this caller, mincore
        // answers "all cached" before and after: figures that would be invented.
        let unknown = meter
            .unknown_reason()
            .map(|(why, fix)| format!("{why}: {fix}"));
        let known = |m: &Meter| unknown.is_none().then(|| m.whole());
        let before = known(&meter);
        let synced = unwritten == Unwritten::WriteBackFirst;
        if synced {
            write_back(p)?;
        }
        evict_file(p)?;
        let after = known(&Meter::open(p)?);
        let mapped_by = if after.is_none_or(|a| a.cached > 0) {
            mappers::find(root, p)
        } else {
            Vec::new()
        };
        Ok(EvictedFile {
            path: p.display().to_string(),
            size: meter.size(),
            cached_before: before.map(|b| b.cached),
            cached_after: after.map(|a| a.cached),
            dirty_after: after.and_then(|a| a.dirty),
            writeback_after: after.and_then(|a| a.writeback),
            synced,
            mapped_by,
            unknown,
        })
    })?;
    Ok(EvictReport {
        schema: EVICT_SCHEMA,
        files,
        skipped,
    })
}
