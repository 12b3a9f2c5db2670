//! `evict`: drop files' pages from the page cache, and say what stayed and why.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::Result;
use crate::pagecache::files;
use crate::pagecache::mappers::{self, Mapper};
use crate::pagecache::residency::Meter;
use crate::pagecache::warm::evict_file;
use crate::probe::root::Root;

pub const EVICT_SCHEMA: &str = "memtriage.evict/v1";

/// What eviction left (`memtriage.evict/v1`).
#[derive(Debug, Serialize)]
pub struct EvictReport {
    pub schema: &'static str,
    pub files: Vec<EvictedFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvictedFile {
    pub path: String,
    pub size: u64,
    pub cached_before: u64,
    pub cached_after: u64,
    /// Dirty pages stay until written back (`None` where the kernel cannot say).
    pub dirty_after: Option<u64>,
    /// Processes that map the file: their pages cannot be dropped. Looked for only
    /// where something stayed cached.
    pub mapped_by: Vec<Mapper>,
}

/// Evicts the regular files under `paths` (directories are walked).
pub fn evict(root: &Root, paths: &[PathBuf]) -> Result<EvictReport> {
    let files = files::expand(paths)?
        .iter()
        .map(|p| {
            let before = Meter::open(p)?.whole();
            evict_file(p)?;
            let after = Meter::open(p)?.whole();
            let mapped_by = if after.cached > 0 {
                mappers::find(root, p)
            } else {
                Vec::new()
            };
            Ok(EvictedFile {
                path: p.display().to_string(),
                size: before.bytes,
                cached_before: before.cached,
                cached_after: after.cached,
                dirty_after: after.dirty,
                mapped_by,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(EvictReport {
        schema: EVICT_SCHEMA,
        files,
    })
}
