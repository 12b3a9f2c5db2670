//! `lock`: pin files in memory (map and mlock them) after the checks that keep the
//! machine out of the OOM killer.

use std::path::PathBuf;

use crate::error::Result;
use crate::pagecache::files;
use crate::pagecache::lock;
use crate::probe::root::Root;

pub use crate::pagecache::lock::Locked;

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
    let walk = files::walk(paths)?;
    lock::check(root, walk.size(), options.max)?;
    Ok(walk.paths())
}

/// Checks, then locks the files under `paths`; they stay locked until the returned
/// value is dropped.
pub fn hold(root: &Root, paths: &[PathBuf], options: LockOptions) -> Result<Locked> {
    lock::lock(&check(root, paths, options)?, options.hugepages)
}
