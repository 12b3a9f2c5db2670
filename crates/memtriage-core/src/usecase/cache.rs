//! `cache`: how much of each file is in the page cache, along the file and per tensor.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::Result;
use crate::pagecache::files;
use crate::pagecache::report;
use crate::probe::root::Root;

pub use crate::pagecache::files::Skipped;
pub use crate::pagecache::report::{FileReport, TensorResidency, CACHE_SCHEMA};

/// Parts of each file whose residency is reported (the bar the CLI draws).
pub const SEGMENTS: usize = 24;

/// Residency of files (`memtriage.cache/v1`).
#[derive(Debug, Serialize)]
pub struct CacheReport {
    pub schema: &'static str,
    pub files: Vec<FileReport>,
    /// Files and directories a walk found but could not measure (deleted meanwhile,
    /// or refused), with the reason.
    pub skipped: Vec<Skipped>,
}

impl CacheReport {
    /// Why a `.safetensors` file's tensors are missing, for each whose header is
    /// broken: bad input the caller should hear about, whatever else was measured.
    pub fn broken_headers(&self) -> impl Iterator<Item = &str> {
        self.files.iter().filter_map(|f| f.tensors_error.as_deref())
    }
}

/// Residency of the regular files under `paths` (directories are walked). With
/// `mappers`, each file lists the processes that map it (this reads every process's
/// maps).
pub fn residency(root: &Root, paths: &[PathBuf], mappers: bool) -> Result<CacheReport> {
    let (files, skipped) =
        files::walk(paths)?.each(|p| report::inspect(root, p, SEGMENTS, mappers))?;
    Ok(CacheReport {
        schema: CACHE_SCHEMA,
        files,
        skipped,
    })
}
