//! Errors a caller can act on. Each names the thing, the cause, and what to do.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("pid {pid}: no such process (it may have exited)")]
    NoSuchProcess { pid: i32 },

    #[error(
        "pid {pid}: permission denied reading {what} (run as root, or as the process's owner)"
    )]
    PermissionDenied { pid: i32, what: String },

    /// The cause is in the message, not chained as a source, so a renderer that
    /// prints causes does not repeat it.
    #[error("{}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },

    #[error("{}: malformed: {detail}", path.display())]
    Malformed { path: PathBuf, detail: String },

    #[error("{0}")]
    Invalid(String),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            cause,
        }
    }

    pub fn malformed(path: impl Into<PathBuf>, detail: impl Into<String>) -> Self {
        Error::Malformed {
            path: path.into(),
            detail: detail.into(),
        }
    }
}
