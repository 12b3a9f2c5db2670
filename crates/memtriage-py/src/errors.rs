//! Engine errors as the Python exceptions a caller expects, and panics caught at the
//! boundary: a bug in the engine must surface as a Python exception with a message,
//! never abort the interpreter or raise pyo3's `PanicException` (a BaseException that
//! `except Exception` does not catch).

use std::panic::{catch_unwind, AssertUnwindSafe};

use memtriage_core::Error;
use pyo3::exceptions::{
    PyOSError, PyPermissionError, PyProcessLookupError, PyRuntimeError, PyValueError,
};
use pyo3::PyErr;

/// The exception for each engine error, with the engine's message (it names the
/// thing, the cause and what to do).
pub fn to_py_err(e: Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::NoSuchProcess { .. } => PyProcessLookupError::new_err(message),
        Error::PermissionDenied { .. } => PyPermissionError::new_err(message),
        // OSError(errno, strerror) so `e.errno` works and Python picks the subclass
        // (FileNotFoundError for ENOENT, and so on).
        Error::Io { cause, .. } => match cause.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, message)),
            None => PyOSError::new_err(message),
        },
        // A kernel file we could not make sense of: an I/O-level problem for the
        // caller, not bad input of theirs.
        Error::Malformed { .. } => PyOSError::new_err(message),
        Error::Invalid(_) => PyValueError::new_err(message),
    }
}

pub fn internal(message: String) -> PyErr {
    PyRuntimeError::new_err(format!(
        "memtriage internal error: {message} (please report it)"
    ))
}

/// Runs `f`, turning a panic into a RuntimeError that says what happened.
pub fn guard<T>(f: impl FnOnce() -> Result<T, PyErr>) -> Result<T, PyErr> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(internal(what))
        }
    }
}

/// Runs an engine call, mapping its error and catching its panics.
pub fn engine<T>(f: impl FnOnce() -> memtriage_core::Result<T>) -> Result<T, PyErr> {
    guard(|| f().map_err(to_py_err))
}
