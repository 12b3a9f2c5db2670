//! The zero-code CUDA out-of-memory snapshot: a `sitecustomize` put first on the
//! job's PYTHONPATH (the user's code and files are never touched) that, in any Python
//! process of the job that imports torch, records the caching allocator's history
//! from CUDA's first use and saves its snapshot on an out-of-memory (see
//! `cuda_hook/sitecustomize.py`). After the job, the snapshots it left are listed
//! for the diagnosis; the hook is removed, and an empty directory with it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::cuda_snapshot::KnownOom;

const SITECUSTOMIZE: &str = include_str!("cuda_hook/sitecustomize.py");
const HOOK_DIR: &str = ".memtriage-hook";

/// Where the job's snapshots go, and the hook that writes them.
#[derive(Debug)]
pub struct CudaHook {
    dir: PathBuf,
    hook: PathBuf,
    created_dir: bool,
}

/// A snapshot the job left: the pickle, and what the observer knew of the failure.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedSnapshot {
    pub path: PathBuf,
    pub pid: Option<i32>,
    pub oom: Option<KnownOom>,
}

#[derive(Deserialize)]
struct Sidecar {
    pid: Option<i32>,
    device: u32,
    requested: u64,
    device_free: Option<u64>,
}

impl CudaHook {
    /// Writes the hook; `dir` receives the snapshots. A missing `dir` is made (its
    /// parent must exist) private to this user; the hook's own directory is always
    /// made new, so nobody else's file can stand in for the hook.
    pub fn install(dir: &Path) -> Result<CudaHook> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let private = || {
            let mut b = std::fs::DirBuilder::new();
            b.mode(0o700);
            b
        };
        let created_dir = !dir.exists();
        if created_dir {
            private().create(dir).map_err(|e| Error::io(dir, e))?;
        }
        let hook = dir.join(HOOK_DIR);
        // Left by a run that was killed: ours to remove, anyone else's is refused.
        if let Ok(meta) = std::fs::symlink_metadata(&hook) {
            if meta.uid() != rustix::process::geteuid().as_raw() || !meta.is_dir() {
                return Err(Error::bad_input(
                    hook.display().to_string(),
                    "exists and is not this user's directory: not used for the CUDA hook",
                ));
            }
            std::fs::remove_dir_all(&hook).map_err(|e| Error::io(&hook, e))?;
        }
        private().create(&hook).map_err(|e| Error::io(&hook, e))?;
        let file = hook.join("sitecustomize.py");
        std::fs::write(&file, SITECUSTOMIZE).map_err(|e| Error::io(&file, e))?;
        Ok(CudaHook {
            dir: dir.to_path_buf(),
            hook,
            created_dir,
        })
    }

    /// The job's environment: the hook first on PYTHONPATH (the job's own entries
    /// after it), and where to save.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut path = self.hook.clone().into_os_string();
        if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
            path.push(":");
            path.push(old);
        }
        vec![
            ("PYTHONPATH".into(), path),
            (
                "MEMTRIAGE_CUDA_SNAPSHOT_DIR".into(),
                self.dir.clone().into_os_string(),
            ),
        ]
    }

    /// The snapshots saved, oldest name first; the hook removed, and the directory
    /// too when memtriage made it and nothing was saved.
    pub fn finish(self) -> Vec<SavedSnapshot> {
        let _ = std::fs::remove_dir_all(&self.hook);
        let mut saved: Vec<SavedSnapshot> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "pickle")
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("cuda-oom-"))
            })
            .map(|path| {
                let sidecar: Option<Sidecar> = std::fs::read(path.with_extension("json"))
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok());
                SavedSnapshot {
                    pid: sidecar.as_ref().and_then(|s| s.pid),
                    oom: sidecar.map(|s| KnownOom {
                        device: s.device,
                        requested: s.requested,
                        device_free: s.device_free,
                    }),
                    path,
                }
            })
            .collect();
        saved.sort_by(|a, b| a.path.cmp(&b.path));
        if saved.is_empty() && self.created_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        saved
    }
}
