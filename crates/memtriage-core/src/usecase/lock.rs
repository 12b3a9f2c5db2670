//! `lock`: pin files in memory (map and mlock them) after the checks that keep the
//! machine out of the OOM killer.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::pagecache::files;
use crate::pagecache::lock::{self, Locked};
use crate::probe::root::Root;

/// What to lock beyond the files themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockOptions {
    /// The caller's ceiling on bytes locked.
    pub max: Option<u64>,
    /// Ask for transparent huge pages where file-backed ones are supported.
    pub hugepages: bool,
}

/// The regular files under `paths`, if locking them all would be allowed; refused
/// otherwise, before anything is read.
pub fn check(root: &Root, paths: &[PathBuf], options: LockOptions) -> Result<Vec<PathBuf>> {
    let files = files::expand(paths)?;
    lock::check(root, total_size(&files), options.max)?;
    Ok(files)
}

/// Checks, then locks the files under `paths`; they stay locked until the returned
/// value is dropped.
pub fn hold(root: &Root, paths: &[PathBuf], options: LockOptions) -> Result<Locked> {
    lock::lock(&check(root, paths, options)?, options.hugepages)
}

/// Bytes of the files as they are now (a file that vanished counts nothing).
pub(super) fn total_size(files: &[impl AsRef<Path>]) -> u64 {
    files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}
