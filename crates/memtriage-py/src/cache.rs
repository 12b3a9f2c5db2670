//! `memtriage.cache`: page-cache residency, warm, evict and lock, through the same
//! engine use cases as `memtriage cache/warm/evict`, returned as their `--json` shows
//! them (with `schema`). Every call releases the GIL: reading gigabytes takes seconds.

use std::path::PathBuf;
use std::sync::Mutex;

use memtriage_core::usecase::lock::LockOptions;
use memtriage_core::usecase::lock::Locked;
use memtriage_core::usecase::warm::WarmOptions;
use memtriage_core::usecase::{cache, evict, warm};
use memtriage_core::Root;
use pyo3::prelude::*;

use crate::convert::to_py;
use crate::errors::engine;

/// `memtriage.cache/v1`: `{"schema", "files", "skipped"}`. A `.safetensors` file
/// whose header is broken has its residency and `tensors_error` (the call does not
/// raise for one file: the others were measured).
#[pyfunction]
#[pyo3(signature = (paths, mappers=true))]
pub fn cache_residency(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    mappers: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let report = py.detach(|| engine(|| cache::residency(&Root::host(), &paths, mappers)))?;
    to_py(py, &report)
}

/// `memtriage.warm/v1` and, with `lock`, the lock that holds the files: checked
/// before anything is read, taken once they are warm.
#[pyfunction]
#[pyo3(signature = (paths, threads=4, offset=0, length=None, lock=false, max=None, hugepages=false))]
#[allow(clippy::too_many_arguments)]
pub fn cache_warm(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: usize,
    offset: u64,
    length: Option<u64>,
    lock: bool,
    max: Option<u64>,
    hugepages: bool,
) -> PyResult<(Bound<'_, PyAny>, Option<CacheLock>)> {
    let request = warm::WarmRequest {
        paths,
        options: WarmOptions {
            threads,
            offset,
            length,
        },
        lock: lock.then_some(LockOptions { max, hugepages }),
    };
    let (report, held) = py.detach(|| {
        engine(|| {
            let root = Root::host();
            let plan = warm::plan(&root, &request)?;
            let mut report = plan.warm(&root, &|_| {})?;
            let held = plan.lock(&mut report)?;
            Ok((report, held))
        })
    })?;
    Ok((to_py(py, &report)?, held.map(CacheLock::new)))
}

/// `memtriage.evict/v1`: what stayed cached, and which processes map it.
#[pyfunction]
#[pyo3(signature = (paths, sync = false))]
pub fn cache_evict(py: Python<'_>, paths: Vec<PathBuf>, sync: bool) -> PyResult<Bound<'_, PyAny>> {
    let unwritten = if sync {
        evict::Unwritten::WriteBackFirst
    } else {
        evict::Unwritten::Keep
    };
    let report = py.detach(|| engine(|| evict::evict(&Root::host(), &paths, unwritten)))?;
    to_py(py, &report)
}

/// Files mapped and mlocked until `release()` (or until this object is collected).
#[pyclass(module = "memtriage._native")]
pub struct CacheLock {
    held: Mutex<Option<Locked>>,
    bytes: u64,
}

impl CacheLock {
    fn new(locked: Locked) -> Self {
        CacheLock {
            bytes: locked.bytes,
            held: Mutex::new(Some(locked)),
        }
    }
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

/// The proactive reclaim agents that reach the page cache (DAMON pageout over physical
/// memory): warmed files do not stay once idle. `None` where DAMON's files cannot be
/// read (they are root's).
#[pyfunction]
pub fn cache_proactive_reclaim(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    match warm::proactive_reclaim(&Root::host()) {
        Ok(all) => to_py(py, &warm::reaching_page_cache(&all)),
        Err(_) => Ok(py.None().into_bound(py)),
    }
}
