//! Engine errors as the Python exceptions a caller expects, and panics caught at the
//! boundary: a bug in the engine must surface as a Python exception with a message,
//! never abort the interpreter or raise pyo3's `PanicException` (a BaseException that
//! `except Exception` does not catch).

use std::panic::{catch_unwind, AssertUnwindSafe};

use memtriage_core::{Error, ErrorKind};
use pyo3::exceptions::{
    PyFileNotFoundError, PyOSError, PyPermissionError, PyProcessLookupError, PyRuntimeError,
    PyValueError,
};
use pyo3::PyErr;

/// The exception for each kind of engine error, with the engine's message (it names
/// the thing, the cause and what to do): bad input `ValueError`, refused
/// `PermissionError`, not found `ProcessLookupError` (a process) or
/// `FileNotFoundError`, failed I/O `OSError`, a bug `RuntimeError`.
pub fn to_py_err(e: Error) -> PyErr {
    let message = e.to_string();
    // OSError(errno, strerror) so `e.errno` works and Python picks the subclass
    // (FileNotFoundError for ENOENT, PermissionError for EACCES, and so on).
    if let Error::Io { cause, .. } = &e {
        if let Some(errno) = cause.raw_os_error() {
            return PyOSError::new_err((errno, message));
        }
    }
    match e.kind() {
        ErrorKind::BadInput => PyValueError::new_err(message),
        ErrorKind::Refused => PyPermissionError::new_err(message),
        ErrorKind::NotFound => match e {
            Error::NoSuchProcess { .. } | Error::NoMatchingProcess { .. } => {
                PyProcessLookupError::new_err(message)
            }
            _ => PyFileNotFoundError::new_err((libc::ENOENT, message)),
        },
        // The engine's message already says it is a bug and to report it.
        ErrorKind::Internal => PyRuntimeError::new_err(message),
        // Failed I/O, or a kernel file we could not make sense of: not bad input of
        // the caller's. A kind added later lands here until it is mapped.
        _ => PyOSError::new_err(message),
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
            let what = memtriage_core::Error::panic_message(&*payload);
            Err(internal(what))
        }
    }
}

/// Runs an engine call, mapping its error and catching its panics.
pub fn engine<T>(f: impl FnOnce() -> memtriage_core::Result<T>) -> Result<T, PyErr> {
    guard(|| f().map_err(to_py_err))
}
