//! `warm --lock`: map files and mlock them, the way inference servers pin weights,
//! after checking that it is safe: locked memory cannot be reclaimed, so locking more
//! than the machine can spare pushes it into the OOM killer.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::mapping::Mapping;
use crate::error::{Error, Result};
use crate::probe::root::Root;
use crate::probe::system::read_meminfo;

/// Memory left unlocked for everything else.
pub const RESERVE_FRACTION: f64 = 0.10;

/// CAP_IPC_LOCK: with it, RLIMIT_MEMLOCK does not apply.
const CAP_IPC_LOCK: u32 = 14;

pub struct Locked {
    /// Locked while held; dropping a mapping unlocks and unmaps it.
    maps: Vec<Mapping>,
    pub bytes: u64,
}

/// Refuses locking `total` bytes where it would pass `max` (the caller's own ceiling),
/// leave the machine under [`RESERVE_FRACTION`] of its memory free, or pass
/// RLIMIT_MEMLOCK (unless this process has CAP_IPC_LOCK).
pub fn check(root: &Root, total: u64, max: Option<u64>) -> Result<()> {
    let what = || format!("locking {}", iec(total));
    if let Some(max) = max {
        if total > max {
            return Err(Error::refused(
                what(),
                format!("it would exceed the maximum of {} asked for", iec(max)),
                "lock fewer files, or allow a larger maximum",
            ));
        }
    }
    let m = read_meminfo(root)?;
    if let (Some(avail), Some(mem_total)) = (m.available, m.total) {
        let spare = avail.saturating_sub((mem_total as f64 * RESERVE_FRACTION) as u64);
        if total > spare {
            return Err(Error::refused(
                what(),
                format!(
                    "it would leave the machine under {:.0}% of its memory free (MemAvailable {}, MemTotal {}): locked pages cannot be reclaimed, so the OOM killer would step in",
                    RESERVE_FRACTION * 100.0,
                    iec(avail),
                    iec(mem_total)
                ),
                "lock fewer files, or free memory first",
            ));
        }
    }
    if !has_ipc_lock(root) {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Memlock);
        if let Some(soft) = limit.current {
            if total > soft {
                return Err(Error::refused(
                    what(),
                    format!("RLIMIT_MEMLOCK is {}", iec(soft)),
                    "raise it (ulimit -l unlimited, LimitMEMLOCK=infinity for a systemd service, docker run --ulimit memlock=-1:-1) or run with CAP_IPC_LOCK",
                ));
            }
        }
    }
    Ok(())
}

fn has_ipc_lock(root: &Root) -> bool {
    crate::probe::system::has_capability(root, CAP_IPC_LOCK)
}

fn iec(b: u64) -> String {
    crate::model::units::iec(b)
}

/// Maps and locks every file; on any failure, what was locked is released.
pub fn lock(paths: &[PathBuf], hugepages: bool) -> Result<Locked> {
    let mut locked = Locked {
        maps: Vec::new(),
        bytes: 0,
    };
    for p in paths {
        match lock_one(p, hugepages) {
            Ok(Some(m)) => {
                locked.bytes += m.len() as u64;
                locked.maps.push(m);
            }
            Ok(None) => {}
            Err(e) => {
                drop(locked);
                return Err(e);
            }
        }
    }
    Ok(locked)
}

fn lock_one(path: &Path, hugepages: bool) -> Result<Option<Mapping>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len() as usize;
    if len == 0 {
        return Ok(None);
    }
    let map = Mapping::new(&file, len, 0).map_err(|e| Error::io(path, e))?;
    if hugepages {
        // Ignored where file-backed transparent huge pages are unsupported.
        let _ = map.advise(libc::MADV_HUGEPAGE);
    }
    map.lock().map_err(|err| {
        Error::refused(
            path.display().to_string(),
            format!("mlock failed: {err}"),
            "raise RLIMIT_MEMLOCK or run with CAP_IPC_LOCK; if the file shrank while it was mapped, lock it again",
        )
    })?;
    Ok(Some(map))
}

impl Locked {
    pub fn files(&self) -> usize {
        self.maps.len()
    }
}

impl std::fmt::Debug for Locked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locked")
            .field("files", &self.maps.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}
