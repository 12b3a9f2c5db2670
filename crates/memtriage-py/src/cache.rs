//! `memtriage.cache`: page-cache residency, warm, evict and lock, with the CLI's
//! semantics. Every call releases the GIL: reading gigabytes takes seconds.

use std::path::PathBuf;
use std::sync::Mutex;

use memtriage_core::pagecache::residency::Meter;
use memtriage_core::pagecache::warm::{evict_file, warm_file, WarmOptions, WarmStats};
use memtriage_core::pagecache::{files, lock, report};
use memtriage_core::probe::damon;
use memtriage_core::Root;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::Serialize;

use crate::convert::to_py;
use crate::errors::engine;

/// Segments of the residency bar, as in `memtriage cache`.
const SEGMENTS: usize = 24;

#[pyfunction]
#[pyo3(signature = (paths, mappers=true))]
pub fn cache_residency(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    mappers: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let reports = py.detach(|| {
        engine(|| {
            files::expand(&paths)?
                .iter()
                .map(|p| report::inspect(&Root::host(), p, SEGMENTS, mappers))
                .collect::<Result<Vec<_>, _>>()
        })
    })?;
    // A broken safetensors header is bad input, as `memtriage cache` exits 2 on it.
    if let Some(e) = reports.iter().find_map(|r| r.tensors_error.as_ref()) {
        return Err(PyValueError::new_err(e.clone()));
    }
    to_py(py, &reports)
}

#[derive(Serialize)]
struct Warmed {
    path: String,
    #[serde(flatten)]
    stats: WarmStats,
    cached_after: u64,
    size: u64,
}

#[pyfunction]
#[pyo3(signature = (paths, threads=4, offset=0, length=None))]
pub fn cache_warm(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: usize,
    offset: u64,
    length: Option<u64>,
) -> PyResult<Bound<'_, PyAny>> {
    if threads == 0 || threads > 64 {
        return Err(PyValueError::new_err("threads: choose between 1 and 64"));
    }
    let opts = WarmOptions {
        threads,
        offset,
        length,
    };
    let warmed = py.detach(|| {
        engine(|| {
            files::expand(&paths)?
                .iter()
                .map(|p| {
                    let s = warm_file(p, opts, &|_| {})?;
                    let m = Meter::open(p)?;
                    Ok(Warmed {
                        path: p.display().to_string(),
                        stats: s,
                        cached_after: m.whole().cached,
                        size: m.size(),
                    })
                })
                .collect::<memtriage_core::Result<Vec<_>>>()
        })
    })?;
    to_py(py, &warmed)
}

#[derive(Serialize)]
struct Evicted {
    path: String,
    size: u64,
    cached_before: u64,
    cached_after: u64,
    dirty_after: Option<u64>,
}

#[pyfunction]
pub fn cache_evict(py: Python<'_>, paths: Vec<PathBuf>) -> PyResult<Bound<'_, PyAny>> {
    let evicted = py.detach(|| {
        engine(|| {
            files::expand(&paths)?
                .iter()
                .map(|p| {
                    let before = Meter::open(p)?.whole();
                    evict_file(p)?;
                    let after = Meter::open(p)?.whole();
                    Ok(Evicted {
                        path: p.display().to_string(),
                        size: before.bytes,
                        cached_before: before.cached,
                        cached_after: after.cached,
                        dirty_after: after.dirty,
                    })
                })
                .collect::<memtriage_core::Result<Vec<_>>>()
        })
    })?;
    to_py(py, &evicted)
}

/// Files mapped and mlocked until `release()` (or until this object is collected).
#[pyclass(module = "memtriage._native")]
pub struct CacheLock {
    held: Mutex<Option<lock::Locked>>,
    bytes: u64,
}

#[pymethods]
impl CacheLock {
    /// Bytes locked.
    #[getter]
    fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the files are still locked.
    #[getter]
    fn held(&self) -> bool {
        self.held.lock().map(|h| h.is_some()).unwrap_or(false)
    }

    /// Unlocks and unmaps the files; later calls do nothing.
    fn release(&self) {
        if let Ok(mut h) = self.held.lock() {
            h.take();
        }
    }
}

/// The files `paths` name, if locking them all is allowed (the CLI's checks).
fn files_to_lock(paths: &[PathBuf], max: Option<u64>) -> memtriage_core::Result<Vec<PathBuf>> {
    let files = files::expand(paths)?;
    let total: u64 = files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    lock::check(&Root::host(), total, max)
        .map_err(|e| memtriage_core::Error::Invalid(format!("lock refused: {e}")))?;
    Ok(files)
}

/// Raises ValueError when locking `paths` would be refused (the CLI checks before
/// reading anything, so a refused lock does not first churn the page cache).
#[pyfunction]
#[pyo3(signature = (paths, max=None))]
pub fn cache_lock_check(py: Python<'_>, paths: Vec<PathBuf>, max: Option<u64>) -> PyResult<()> {
    py.detach(|| engine(|| files_to_lock(&paths, max).map(|_| ())))
}

/// Checks like `memtriage warm --lock` (MemAvailable, RLIMIT_MEMLOCK unless
/// CAP_IPC_LOCK, `max`), then locks; refuses with ValueError rather than risk the OOM killer.
#[pyfunction]
#[pyo3(signature = (paths, max=None, hugepages=false))]
pub fn cache_lock(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    max: Option<u64>,
    hugepages: bool,
) -> PyResult<CacheLock> {
    let locked = py.detach(|| engine(|| lock::lock(&files_to_lock(&paths, max)?, hugepages)))?;
    Ok(CacheLock {
        bytes: locked.bytes,
        held: Mutex::new(Some(locked)),
    })
}

/// The proactive reclaim agents that reach the page cache (DAMON pageout over physical
/// memory): warmed files do not stay once idle. `None` where DAMON's files cannot be
/// read (they are root's).
#[pyfunction]
pub fn cache_proactive_reclaim(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    match damon::read(&Root::host()) {
        Ok(found) => {
            let reaching: Vec<_> = found
                .into_iter()
                .filter(|r| r.reaches_page_cache())
                .collect();
            to_py(py, &reaching)
        }
        Err(_) => Ok(py.None().into_bound(py)),
    }
}
