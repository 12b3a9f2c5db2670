//! Turning the paths a user gives into the regular files to work on.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Regular files under `paths`: files as given, directories walked recursively in
/// name order. Symlinks to files are followed; symlinked directories are visited once
/// (a loop ends where it starts again). Special files (devices, FIFOs, sockets) are
/// refused: reading /dev/zero never ends and a FIFO would consume someone's data.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut seen_dirs = HashSet::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        if meta.is_dir() {
            walk(p, &mut seen_dirs, &mut out)?;
        } else {
            check_regular(p, &meta)?;
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn check_regular(p: &Path, meta: &std::fs::Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            "a FIFO"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        }
    };
    Err(Error::bad_input(
        p.display().to_string(),
        format!("{kind}, not a regular file: only files have pages in the page cache to measure"),
    ))
}

fn walk(dir: &Path, seen: &mut HashSet<(u64, u64)>, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
    if !seen.insert((meta.dev(), meta.ino())) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        // A dangling symlink or a file that vanished mid-walk is skipped.
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, seen, out)?;
        } else if meta.is_file() {
            out.push(p);
        }
    }
    Ok(())
}
