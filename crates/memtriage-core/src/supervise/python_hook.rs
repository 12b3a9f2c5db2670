//! `run`'s startup hook for Python jobs: a `sitecustomize` put first on the job's
//! PYTHONPATH (the user's code and files are never touched), in a private directory
//! made for the run, with two parts, each on unless asked off:
//! - the line measurement (`python_hook/memtriage_lines.py`): in every Python
//!   process of the job, where its memory grew, line by line, written to a file per
//!   process that survives the process's SIGKILL; read here while the job runs and
//!   once more at its end;
//! - the zero-code CUDA out-of-memory snapshot (`python_hook/sitecustomize.py`): in
//!   any process that imports torch, the caching allocator's history from CUDA's first
//!   use, saved on an out-of-memory; the snapshots are listed after the job.
//!
//! The hook's directory is removed after the job, and the snapshots' directory too
//! when memtriage made it and nothing was saved.

mod lines_files;

use std::ffi::OsString;
use std::path::PathBuf;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::cuda_snapshot::KnownOom;
use crate::model::lines::ProcessLines;

pub use lines_files::LinesRead;

const SITECUSTOMIZE: &str = include_str!("python_hook/sitecustomize.py");
const LINES_MODULE: &str = include_str!("python_hook/memtriage_lines.py");

/// What the hook does in the job's Python processes.
#[derive(Debug, Clone, Default)]
pub struct HookParts {
    /// Where CUDA out-of-memory snapshots go; `None`: no snapshot.
    pub cuda_snapshots: Option<PathBuf>,
    /// Measure where each process's memory grew, line by line.
    pub lines: bool,
}

/// The hook, installed for one run.
#[derive(Debug)]
pub struct PythonHook {
    /// The hook's own directory: the two modules, and `lines/`.
    dir: PathBuf,
    snapshots: Option<SnapshotDir>,
    lines: bool,
    /// CLOCK_MONOTONIC seconds at install, just before the job starts: the time 0
    /// the processes' figures are given against.
    epoch: f64,
}

#[derive(Debug)]
struct SnapshotDir {
    dir: PathBuf,
    created: bool,
}

/// A snapshot the job left: the pickle, and what the observer knew of the failure.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedSnapshot {
    pub path: PathBuf,
    pub pid: Option<i32>,
    pub oom: Option<KnownOom>,
}

/// Reads the lines the job's Python processes have written so far.
#[derive(Debug, Clone)]
pub struct LinesReader {
    dir: PathBuf,
}

impl LinesReader {
    /// Every process's lines, their kinds told.
    pub fn read(&self) -> LinesRead {
        let mut read = lines_files::read(&self.dir);
        crate::diagnose::lines::classify(&mut read.processes);
        read
    }
}

/// What the hook left once the job ended.
#[derive(Debug, Default)]
pub struct HookResults {
    pub cuda_snapshots: Vec<SavedSnapshot>,
    /// Every Python process that loaded the line measurement.
    pub lines: Vec<ProcessLines>,
    /// Files of it that could not be read, and why.
    pub unreadable: Vec<String>,
}

#[derive(Deserialize)]
struct Sidecar {
    pid: Option<i32>,
    device: u32,
    requested: u64,
    device_free: Option<u64>,
}

fn private_dir() -> std::fs::DirBuilder {
    use std::os::unix::fs::DirBuilderExt;
    let mut b = std::fs::DirBuilder::new();
    b.mode(0o700);
    b
}

impl PythonHook {
    /// Writes the hook into a new private directory under the temporary directory
    /// (its name unguessable: the hook's code runs in the job). A missing snapshot
    /// directory is made (its parent must exist), private to this user. `None` when
    /// no part is asked for.
    pub fn install(parts: &HookParts) -> Result<Option<PythonHook>> {
        if parts.cuda_snapshots.is_none() && !parts.lines {
            return Ok(None);
        }
        let snapshots = match &parts.cuda_snapshots {
            Some(dir) => {
                let created = !dir.exists();
                if created {
                    private_dir().create(dir).map_err(|e| Error::io(dir, e))?;
                }
                Some(SnapshotDir {
                    dir: dir.clone(),
                    created,
                })
            }
            None => None,
        };
        let dir = new_private_dir()?;
        let write = |name: &str, text: &str| {
            let file = dir.join(name);
            std::fs::write(&file, text).map_err(|e| Error::io(&file, e))
        };
        write("sitecustomize.py", SITECUSTOMIZE)?;
        if parts.lines {
            write("memtriage_lines.py", LINES_MODULE)?;
            let lines = dir.join("lines");
            private_dir()
                .create(&lines)
                .map_err(|e| Error::io(&lines, e))?;
        }
        Ok(Some(PythonHook {
            dir,
            snapshots,
            lines: parts.lines,
            epoch: monotonic_seconds(),
        }))
    }

    /// The job's environment: the hook first on PYTHONPATH (the job's own entries
    /// after it), and where each part writes.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut path = self.dir.clone().into_os_string();
        if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
            path.push(":");
            path.push(old);
        }
        let mut env = vec![("PYTHONPATH".into(), path)];
        if let Some(s) = &self.snapshots {
            env.push((
                "MEMTRIAGE_CUDA_SNAPSHOT_DIR".into(),
                s.dir.clone().into_os_string(),
            ));
        }
        if self.lines {
            env.push((
                "MEMTRIAGE_LINES_DIR".into(),
                self.dir.join("lines").into_os_string(),
            ));
            env.push((
                "MEMTRIAGE_LINES_EPOCH".into(),
                format!("{:.6}", self.epoch).into(),
            ));
        }
        env
    }

    /// Whether the line measurement is on.
    pub fn measures_lines(&self) -> bool {
        self.lines
    }

    /// What the job's processes have written so far (while they run).
    pub fn read_lines(&self) -> LinesRead {
        match self.lines_reader() {
            Some(r) => r.read(),
            None => LinesRead::default(),
        }
    }

    /// A reader of the processes' lines for whoever watches the job while it runs.
    pub fn lines_reader(&self) -> Option<LinesReader> {
        self.lines.then(|| LinesReader {
            dir: self.dir.join("lines"),
        })
    }

    /// The snapshots saved, oldest name first, and every process's lines; the hook
    /// removed, and the snapshots' directory too when memtriage made it and nothing
    /// was saved.
    pub fn finish(self) -> HookResults {
        let read = self.read_lines();
        let _ = std::fs::remove_dir_all(&self.dir);
        let cuda_snapshots = self.snapshots.map(saved_snapshots).unwrap_or_default();
        HookResults {
            cuda_snapshots,
            lines: read.processes,
            unreadable: read.unreadable,
        }
    }
}

fn saved_snapshots(s: SnapshotDir) -> Vec<SavedSnapshot> {
    let mut saved: Vec<SavedSnapshot> = std::fs::read_dir(&s.dir)
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
    if saved.is_empty() && s.created {
        let _ = std::fs::remove_dir_all(&s.dir);
    }
    saved
}

/// `$TMPDIR/memtriage-hook-PID-RANDOM`, made new (never one that exists). Those
/// that runs killed before they could remove theirs (their pid gone) are removed
/// first, when they are this user's.
fn new_private_dir() -> Result<PathBuf> {
    let tmp = std::env::temp_dir();
    remove_left_behind(&tmp);
    let mut last = None;
    for _ in 0..8 {
        let dir = tmp.join(format!(
            "memtriage-hook-{}-{:016x}",
            std::process::id(),
            unguessable()
        ));
        match private_dir().create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some(Error::io(&dir, e)),
        }
    }
    Err(last.unwrap_or_else(|| Error::internal("no directory for the Python hook")))
}

fn remove_left_behind(tmp: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("memtriage-hook-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let ours =
            std::fs::symlink_metadata(entry.path()).is_ok_and(|m| m.is_dir() && m.uid() == me);
        let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
        if ours && !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// 64 random bits from the standard library's per-process hash keys (seeded by the OS).
fn unguessable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    h.finish()
}

/// CLOCK_MONOTONIC in seconds: Python's `time.monotonic()` reads the same clock.
fn monotonic_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}
