//! Turning the paths a user gives into the regular files to work on.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};
use crate::probe::files::refuse_special;

/// A regular file to work on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub path: PathBuf,
    /// Its size when the walk found it.
    pub size: u64,
    /// Found by walking a directory rather than named by the caller: gone or refused
    /// when it is reached, it is skipped, not an error that loses every other file.
    pub walked: bool,
}

/// A file or directory a walk found but could not work on, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// The files under the caller's paths, and what the walk itself had to skip.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    pub targets: Vec<Target>,
    pub skipped: Vec<Skipped>,
}

impl Walk {
    pub fn paths(&self) -> Vec<PathBuf> {
        self.targets.iter().map(|t| t.path.clone()).collect()
    }

    /// Bytes of all the files, as the walk found them.
    pub fn size(&self) -> u64 {
        self.targets.iter().map(|t| t.size).sum()
    }

    /// `op` on each file, in order. A walked file that `op` finds vanished or refused
    /// is skipped with the reason (another process may delete files while a
    /// directory is walked); any error on a file the caller named fails the call.
    pub fn each<T>(
        &self,
        mut op: impl FnMut(&Path) -> Result<T>,
    ) -> Result<(Vec<T>, Vec<Skipped>)> {
        let mut done = Vec::with_capacity(self.targets.len());
        let mut skipped = self.skipped.clone();
        for t in &self.targets {
            match op(&t.path) {
                Ok(v) => done.push(v),
                Err(e) if t.walked && skippable(&e) => skipped.push(Skipped {
                    path: t.path.display().to_string(),
                    reason: reason(&e),
                }),
                Err(e) => return Err(e),
            }
        }
        Ok((done, skipped))
    }
}

fn skippable(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Refused)
}

fn reason(e: &Error) -> String {
    match e.kind() {
        ErrorKind::NotFound => "vanished during the walk".to_string(),
        _ => e.to_string(),
    }
}

fn skip_io(path: &Path, e: std::io::Error) -> Skipped {
    Skipped {
        path: path.display().to_string(),
        reason: reason(&Error::io(path, e)),
    }
}

/// Regular files under `paths`: files as given, directories walked recursively in
/// name order. Symlinks to files are followed; symlinked directories are visited once
/// (a loop ends where it starts again). Special files (devices, FIFOs, sockets) are
/// refused: reading /dev/zero never ends and a FIFO would consume someone's data.
/// Inside a walk, a directory that vanished or refused is skipped, not an error.
pub fn walk(paths: &[PathBuf]) -> Result<Walk> {
    let mut out = Walk::default();
    let mut seen_dirs = HashSet::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        if meta.is_dir() {
            let entries = std::fs::read_dir(p).map_err(|e| Error::io(p, e))?;
            seen_dirs.insert((meta.dev(), meta.ino()));
            walk_entries(entries, &mut seen_dirs, &mut out);
        } else {
            check_regular(p, &meta)?;
            out.targets.push(Target {
                path: p.clone(),
                size: meta.len(),
                walked: false,
            });
        }
    }
    Ok(out)
}

fn check_regular(p: &Path, meta: &std::fs::Metadata) -> Result<()> {
    refuse_special(
        p,
        meta,
        "only files have pages in the page cache to measure",
    )
}

fn walk_entries(entries: std::fs::ReadDir, seen: &mut HashSet<(u64, u64)>, out: &mut Walk) {
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        // A dangling symlink or a file that vanished mid-walk is not a file to work on.
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if !seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            match std::fs::read_dir(&p) {
                Ok(inner) => walk_entries(inner, seen, out),
                Err(e) => out.skipped.push(skip_io(&p, e)),
            }
        } else if meta.is_file() {
            out.targets.push(Target {
                path: p,
                size: meta.len(),
                walked: true,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walked_file_that_vanishes_is_skipped_and_a_named_one_fails() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b", "c"] {
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        let walk = walk(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(walk.targets.len(), 3);
        std::fs::remove_file(dir.path().join("b")).unwrap();
        let (sizes, skipped) = walk
            .each(|p| {
                std::fs::metadata(p)
                    .map(|m| m.len())
                    .map_err(|e| Error::io(p, e))
            })
            .unwrap();
        assert_eq!(sizes, vec![1, 1]);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].path.ends_with("/b"), "{skipped:?}");
        assert_eq!(skipped[0].reason, "vanished during the walk");

        let named = walk_named(&dir.path().join("a"));
        std::fs::remove_file(dir.path().join("a")).unwrap();
        let e = named
            .each(|p| std::fs::metadata(p).map_err(|e| Error::io(p, e)))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }

    fn walk_named(p: &Path) -> Walk {
        walk(&[p.to_path_buf()]).unwrap()
    }
}
