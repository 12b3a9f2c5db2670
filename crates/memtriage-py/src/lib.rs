//! `memtriage._native`: the memtriage engine for Python. Each function reads through
//! the engine with the GIL released, converts the engine's serde data to plain Python
//! objects (the shape of the CLI's `--json`), and maps engine errors to Python
//! exceptions. The `memtriage` Python package wraps these in classes with attribute
//! access; see `python/memtriage/__init__.py`.

mod cache;
mod convert;
mod errors;
mod track;

use std::ffi::OsString;
use std::sync::Mutex;

use memtriage_core::diagnose::doctor::{audit, Profile};
use memtriage_core::diagnose::logs::LogScanner;
use memtriage_core::model::process::ProcessSnapshot;
use memtriage_core::probe::process::{default_threads, read_many, Detail, ProcessReader};
use memtriage_core::probe::{system as system_probe, tree as tree_probe};
use memtriage_core::{Error, Root};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use convert::to_py;
use errors::{engine, guard};

/// Names accepted by `fields=`, each one file the engine reads per process.
const FIELDS: [&str; 4] = ["status", "rollup", "oom", "cgroup"];

/// `None` is everything (`Detail::full()`); otherwise only the files named.
fn detail(fields: Option<Vec<String>>) -> PyResult<Detail> {
    let Some(fields) = fields else {
        return Ok(Detail::full());
    };
    let mut d = Detail {
        status: false,
        rollup: false,
        oom: false,
        cgroup: false,
    };
    for f in &fields {
        match f.as_str() {
            "status" => d.status = true,
            "rollup" => d.rollup = true,
            "oom" => d.oom = true,
            "cgroup" => d.cgroup = true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown field {other:?}: fields are any of {}",
                    FIELDS.join(", ")
                )))
            }
        }
    }
    Ok(d)
}

/// Readers kept between calls, one per `Detail`: a new one would read
/// `/proc/self/mountinfo` (to find the cgroup hierarchies) and `/etc/passwd` again,
/// which costs more than reading a small process. Mounts and user names are taken as
/// fixed for the life of the Python process.
static READERS: Mutex<Vec<(Detail, ProcessReader)>> = Mutex::new(Vec::new());

fn read_one(detail: Detail, pid: i32) -> memtriage_core::Result<ProcessSnapshot> {
    // Another Python thread reading at the same time gets a reader of its own
    // rather than waiting (the GIL is released here).
    let Ok(mut readers) = READERS.try_lock() else {
        return ProcessReader::new(&Root::host(), detail).read(pid);
    };
    let i = match readers.iter().position(|(d, _)| *d == detail) {
        Some(i) => i,
        None => {
            readers.push((detail, ProcessReader::new(&Root::host(), detail)));
            readers.len() - 1
        }
    };
    readers[i].1.read(pid)
}

fn pid_or_self(pid: Option<i64>) -> PyResult<i32> {
    match pid {
        None => Ok(std::process::id() as i32),
        Some(p) if p > 0 && p <= i64::from(i32::MAX) => Ok(p as i32),
        Some(p) => Err(PyValueError::new_err(format!(
            "pid must be a positive process id, got {p}"
        ))),
    }
}

/// One process, as `inspect --json` shows it (`memtriage.process/v1`).
#[pyfunction]
#[pyo3(signature = (pid=None, fields=None))]
fn snapshot(
    py: Python<'_>,
    pid: Option<i64>,
    fields: Option<Vec<String>>,
) -> PyResult<Bound<'_, PyAny>> {
    let pid = pid_or_self(pid)?;
    let detail = detail(fields)?;
    let snap = py.detach(|| engine(|| read_one(detail, pid)))?;
    to_py(py, &snap)
}

/// Many processes at once, read on all cores; `None` for each that exited.
#[pyfunction]
#[pyo3(signature = (pids, fields=None))]
fn snapshot_many(
    py: Python<'_>,
    pids: Vec<i64>,
    fields: Option<Vec<String>>,
) -> PyResult<Bound<'_, PyList>> {
    let pids = pids
        .into_iter()
        .map(|p| pid_or_self(Some(p)))
        .collect::<PyResult<Vec<i32>>>()?;
    let detail = detail(fields)?;
    let results =
        py.detach(|| guard(|| Ok(read_many(&Root::host(), detail, &pids, default_threads()))))?;
    let list = PyList::empty(py);
    for r in results {
        match r {
            Ok(snap) => list.append(to_py(py, &snap)?)?,
            Err(Error::NoSuchProcess { .. }) => list.append(py.None())?,
            Err(e) => return Err(errors::to_py_err(e)),
        }
    }
    Ok(list)
}

/// A process and its descendants with totals and findings (`memtriage.tree/v1`).
#[pyfunction]
#[pyo3(signature = (pid=None, fields=None))]
fn tree(
    py: Python<'_>,
    pid: Option<i64>,
    fields: Option<Vec<String>>,
) -> PyResult<Bound<'_, PyAny>> {
    let pid = pid_or_self(pid)?;
    let detail = detail(fields)?;
    let t = py.detach(|| engine(|| tree_probe::read(&Root::host(), detail, pid)))?;
    to_py(py, &t)
}

/// The machine's memory settings (`memtriage.system/v1`).
#[pyfunction]
fn system(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let s = py.detach(|| guard(|| Ok(system_probe::read(&Root::host()))))?;
    to_py(py, &s)
}

fn profile(name: &str) -> PyResult<Profile> {
    name.parse().map_err(PyValueError::new_err)
}

/// `{"profile", "system", "findings"}` as `doctor --json` prints it.
#[pyfunction]
#[pyo3(signature = (profile="training"))]
fn doctor<'py>(py: Python<'py>, profile: &str) -> PyResult<Bound<'py, PyDict>> {
    let p = self::profile(profile)?;
    let (sys, findings) = py.detach(|| {
        guard(|| {
            let sys = system_probe::read(&Root::host());
            let findings = audit(&sys, p);
            Ok((sys, findings))
        })
    })?;
    let d = PyDict::new(py);
    d.set_item("profile", p.as_str())?;
    d.set_item("system", to_py(py, &sys)?)?;
    d.set_item("findings", to_py(py, &findings)?)?;
    Ok(d)
}

/// Scans log text (str or bytes) like `memtriage explain`:
/// `{"source", "lines", "bytes", "matches", "findings"}`.
#[pyfunction]
#[pyo3(signature = (text, source="log"))]
fn explain<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    source: &str,
) -> PyResult<Bound<'py, PyDict>> {
    // The bytes are copied out once so the scan runs without the GIL (a big log
    // takes a while) and cannot see the object change under it.
    let bytes: Vec<u8> = if let Ok(s) = text.cast::<PyString>() {
        s.to_cow()?.into_owned().into_bytes()
    } else if let Ok(b) = text.cast::<PyBytes>() {
        b.as_bytes().to_vec()
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "explain() takes the log as str or bytes, not {}",
            text.get_type().name()?
        )));
    };
    let source = source.to_string();
    let scanner = py.detach(move || {
        guard(|| {
            let mut scanner = LogScanner::with_source(source);
            // Chunks as the CLI feeds them; the scanner is chunking-independent.
            for chunk in bytes.chunks(64 << 10) {
                scanner.feed(chunk);
            }
            scanner.finish();
            Ok(scanner)
        })
    })?;
    let d = PyDict::new(py);
    d.set_item("source", scanner.source())?;
    d.set_item("lines", scanner.lines())?;
    d.set_item("bytes", scanner.bytes())?;
    d.set_item("matches", to_py(py, &scanner.matches())?)?;
    d.set_item("findings", to_py(py, &scanner.findings())?)?;
    Ok(d)
}

/// Runs the `memtriage` command in this process (`argv[0]` is the program name)
/// and returns its exit code. The entry point `memtriage` installed by pip calls it,
/// so the wheel carries the whole command without a second binary.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<OsString>) -> PyResult<u8> {
    py.detach(|| guard(|| Ok(memtriage::run(argv).code())))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic becomes a RuntimeError carrying its message (errors::guard); the
    // default hook would also print it and a backtrace hint on stderr. This hook is
    // this extension's own: each cdylib links its own copy of std.
    std::panic::set_hook(Box::new(|_| {}));
    m.add_function(wrap_pyfunction!(snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_many, m)?)?;
    m.add_function(wrap_pyfunction!(tree, m)?)?;
    m.add_function(wrap_pyfunction!(system, m)?)?;
    m.add_function(wrap_pyfunction!(doctor, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_residency, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_warm, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_evict, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_lock, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_lock_check, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_proactive_reclaim, m)?)?;
    m.add_class::<cache::CacheLock>()?;
    m.add_class::<track::Tracker>()?;
    m.add(
        "PROCESS_SCHEMA",
        memtriage_core::model::process::PROCESS_SCHEMA,
    )?;
    m.add("TREE_SCHEMA", memtriage_core::model::tree::TREE_SCHEMA)?;
    m.add(
        "SYSTEM_SCHEMA",
        memtriage_core::model::system::SYSTEM_SCHEMA,
    )?;
    m.add("FIELDS", FIELDS.to_vec())?;
    Ok(())
}
