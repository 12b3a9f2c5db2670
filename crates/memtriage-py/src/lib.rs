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

use memtriage_core::usecase::inspect::{default_threads, Detail, ProcessReader};
use memtriage_core::usecase::{self, inspect};
use memtriage_core::{Error, Root};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use convert::to_py;
use errors::{engine, guard};

/// `None` is everything (`Detail::full()`); otherwise only the files named (the
/// engine's [`FIELDS`]).
fn detail(fields: Option<Vec<String>>) -> PyResult<Detail> {
    inspect::detail(fields.as_deref()).map_err(errors::to_py_err)
}

/// Readers kept between calls, one per `Detail`: a new one would read
/// `/proc/self/mountinfo` (to find the cgroup hierarchies) and `/etc/passwd` again,
/// which costs more than reading a small process. Mounts and user names are taken as
/// fixed for the life of the Python process.
static READERS: Mutex<Vec<(Detail, ProcessReader)>> = Mutex::new(Vec::new());

/// Runs `read` with the kept reader for `detail`, as of now.
fn with_reader<T>(detail: Detail, read: impl FnOnce(&mut ProcessReader) -> T) -> T {
    // Another Python thread reading at the same time gets a reader of its own
    // rather than waiting (the GIL is released here).
    let Ok(mut readers) = READERS.try_lock() else {
        return read(&mut ProcessReader::new(&Root::host(), detail));
    };
    let i = match readers.iter().position(|(d, _)| *d == detail) {
        Some(i) => i,
        None => {
            readers.push((detail, ProcessReader::new(&Root::host(), detail)));
            readers.len() - 1
        }
    };
    let reader = &mut readers[i].1;
    reader.forget_cgroups();
    read(reader)
}

fn pid_or_self(pid: Option<i64>) -> PyResult<i32> {
    match pid {
        None => Ok(std::process::id() as i32),
        Some(p) => inspect::pid(p).map_err(errors::to_py_err),
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
    let snap = py.detach(|| engine(|| with_reader(detail, |reader| reader.read(pid))))?;
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
    let results = py.detach(|| {
        guard(|| {
            Ok(with_reader(detail, |reader| {
                reader.read_many(&pids, default_threads())
            }))
        })
    })?;
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
    let t = py.detach(|| {
        engine(|| {
            let root = Root::host();
            let gpu = inspect::gpus(&root);
            inspect::tree(&root, detail, pid, Some(&gpu))
        })
    })?;
    to_py(py, &t)
}

/// A pickled CUDA memory snapshot explained (`memtriage.cuda-snapshot/v1`);
/// `requested` (and `device_free`) describe the failed allocation when the snapshot's
/// history does not.
#[pyfunction]
#[pyo3(signature = (data, source, requested=None, device=0, device_free=None))]
fn explain_snapshot<'py>(
    py: Python<'py>,
    data: &[u8],
    source: &str,
    requested: Option<u64>,
    device: u32,
    device_free: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let data = data.to_vec();
    let source = source.to_string();
    let oom = requested.map(|requested| usecase::explain_snapshot::KnownOom {
        device,
        requested,
        device_free,
    });
    let report = py.detach(move || {
        guard(|| {
            usecase::explain_snapshot::bytes_of(&data, &source, oom).map_err(errors::to_py_err)
        })
    })?;
    to_py(py, &report)
}

/// The machine's NVIDIA GPUs and the processes holding their memory
/// (`memtriage.gpu/v1`); `available: false` with a `reason` where there are none.
#[pyfunction]
fn gpu(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let g = py.detach(|| guard(|| Ok(inspect::gpus(&Root::host()))))?;
    to_py(py, &g)
}

/// The machine's memory settings (`memtriage.system/v1`).
#[pyfunction]
fn system(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let s = py.detach(|| guard(|| Ok(inspect::system(&Root::host()))))?;
    to_py(py, &s)
}

/// `{"schema", "profile", "system", "findings"}` as `doctor --json` prints it
/// (`memtriage.doctor/v1`).
#[pyfunction]
#[pyo3(signature = (profile="training"))]
fn doctor<'py>(py: Python<'py>, profile: &str) -> PyResult<Bound<'py, PyAny>> {
    let p = usecase::doctor::profile(profile).map_err(errors::to_py_err)?;
    let report = py.detach(|| guard(|| Ok(usecase::doctor::doctor(&Root::host(), p))))?;
    to_py(py, &report)
}

/// Scans log text (str or bytes) like `memtriage explain`, as its `--json` prints it
/// (`memtriage.explain/v1`): `{"schema", "source", "lines", "bytes", "matches",
/// "findings"}`.
#[pyfunction]
#[pyo3(signature = (text, source="log"))]
fn explain<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    source: &str,
) -> PyResult<Bound<'py, PyAny>> {
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
    let report = py.detach(move || {
        guard(|| usecase::explain::checked_text(&source, &bytes).map_err(errors::to_py_err))
    })?;
    to_py(py, &report)
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
    m.add_function(wrap_pyfunction!(gpu, m)?)?;
    m.add_function(wrap_pyfunction!(explain_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(doctor, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_residency, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_warm, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_evict, m)?)?;
    m.add_function(wrap_pyfunction!(cache::cache_proactive_reclaim, m)?)?;
    m.add_class::<cache::CacheLock>()?;
    m.add_class::<track::Tracker>()?;
    m.add_function(wrap_pyfunction!(track::line_sampler_source, m)?)?;
    m.add_function(wrap_pyfunction!(track::tell_lines, m)?)?;
    m.add(
        "PROCESS_SCHEMA",
        memtriage_core::model::process::PROCESS_SCHEMA,
    )?;
    m.add("TREE_SCHEMA", memtriage_core::model::tree::TREE_SCHEMA)?;
    m.add(
        "SYSTEM_SCHEMA",
        memtriage_core::model::system::SYSTEM_SCHEMA,
    )?;
    m.add("FIELDS", inspect::FIELDS.to_vec())?;
    m.add("INSPECT_SCHEMA", inspect::INSPECT_SCHEMA)?;
    m.add("DOCTOR_SCHEMA", usecase::doctor::DOCTOR_SCHEMA)?;
    m.add("EXPLAIN_SCHEMA", usecase::explain::EXPLAIN_SCHEMA)?;
    m.add("CACHE_SCHEMA", usecase::cache::CACHE_SCHEMA)?;
    m.add("WARM_SCHEMA", usecase::warm::WARM_SCHEMA)?;
    m.add("EVICT_SCHEMA", usecase::evict::EVICT_SCHEMA)?;
    Ok(())
}
