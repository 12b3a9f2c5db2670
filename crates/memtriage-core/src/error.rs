//! Errors a caller can act on. Each names the thing, the cause, and what to do; none
//! names a command-line flag, because the same message reaches Python users. The
//! variants are split by what the caller must do about them, which [`Error::kind`]
//! tells the front ends (the CLI's exit status, Python's exception class).

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("pid {pid}: no such process (it may have exited)")]
    NoSuchProcess { pid: i32 },

    #[error("no process matches {pattern:?} (by name or command line)")]
    NoMatchingProcess { pattern: String },

    /// Something other than a file or a process that does not exist (a command).
    #[error("{what}: {detail}")]
    NotFound { what: String, detail: String },

    /// What refused it depends on who asked: as root, the kernel's ptrace check.
    #[error("pid {pid}: reading {what}: {}", denied_reason())]
    PermissionDenied { pid: i32, what: String },

    /// The cause is in the message, not chained as a source, so a renderer that
    /// prints causes does not repeat it. Its kind follows the cause: a missing file
    /// is [`ErrorKind::NotFound`], a denied one [`ErrorKind::Refused`].
    #[error("{}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },

    /// A file of the system's (a /proc or /sys file) that does not read as its format
    /// says; a file the user gave that is malformed is [`Error::BadInput`].
    #[error("{}: malformed: {detail}", path.display())]
    Malformed { path: PathBuf, detail: String },

    /// The caller asked for something that cannot be done as asked: a bad value, a
    /// special file, a broken model file.
    #[error("{what}: {detail}")]
    BadInput { what: String, detail: String },

    /// Could be done, but the machine or its policy does not allow it now: a
    /// permission, a resource limit, a safety margin. `fix` says what would allow it.
    #[error("{what}: {cause} ({fix})")]
    Refused {
        what: String,
        cause: String,
        fix: String,
    },

    /// A job could not be started: its program is missing (`not_found`, a shell's
    /// 127) or cannot be executed (a shell's 126).
    #[error("{program}: {detail}")]
    CannotStart {
        program: String,
        detail: String,
        not_found: bool,
    },

    /// A bug in memtriage: nothing the caller did or can change.
    #[error("internal error: {0} (a bug in memtriage: please report it with what you ran)")]
    Internal(String),
}

/// What to suggest depends on who we are: as root, the refusal comes from the
/// kernel's ptrace access check, which more privilege of the same kind won't pass.
pub fn denied_reason() -> &'static str {
    if rustix::process::geteuid().is_root() {
        "permission denied even as root: the kernel's ptrace access check refused \
         (the process is in another user namespace, or CAP_SYS_PTRACE is missing)"
    } else {
        "permission denied: run as root, or as the process's owner"
    }
}

/// What the caller must do about an [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Change the request (CLI exit 2; Python `ValueError`).
    BadInput,
    /// Get the permission or raise the limit the message names (CLI exit 2 with the
    /// fix; Python `PermissionError`).
    Refused,
    /// The process or file is not there (Python `ProcessLookupError` or
    /// `FileNotFoundError`).
    NotFound,
    /// Reading failed or read nonsense (Python `OSError`).
    Io,
    /// A bug (the CLI says so; Python `RuntimeError`).
    Internal,
}

impl Error {
    /// The message a panic carried (`panic!("…")` gives a `&str` or a `String`), for
    /// the front ends and threads that turn a caught panic into an internal error.
    pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into())
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NoSuchProcess { .. } | Error::NoMatchingProcess { .. } => ErrorKind::NotFound,
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::CannotStart { not_found, .. } => match not_found {
                true => ErrorKind::NotFound,
                false => ErrorKind::Refused,
            },
            Error::PermissionDenied { .. } | Error::Refused { .. } => ErrorKind::Refused,
            Error::Io { cause, .. } => match cause.kind() {
                std::io::ErrorKind::NotFound => ErrorKind::NotFound,
                std::io::ErrorKind::PermissionDenied => ErrorKind::Refused,
                _ => ErrorKind::Io,
            },
            Error::Malformed { .. } => ErrorKind::Io,
            Error::BadInput { .. } => ErrorKind::BadInput,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The exit code a shell gives for a command it could not start (127 missing,
    /// 126 not executable), so `run` in a script fails the way the bare command would.
    pub fn shell_code(&self) -> Option<u8> {
        match self {
            Error::CannotStart { not_found, .. } => Some(if *not_found { 127 } else { 126 }),
            _ => None,
        }
    }

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

    pub fn bad_input(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Error::BadInput {
            what: what.into(),
            detail: detail.into(),
        }
    }

    pub fn not_found(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Error::NotFound {
            what: what.into(),
            detail: detail.into(),
        }
    }

    pub fn refused(
        what: impl Into<String>,
        cause: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Error::Refused {
            what: what.into(),
            cause: cause.into(),
            fix: fix.into(),
        }
    }

    pub fn internal(what: impl Into<String>) -> Self {
        Error::Internal(what.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_take_their_kind_from_the_cause() {
        let missing = Error::io("/x", std::io::Error::from_raw_os_error(libc::ENOENT));
        let denied = Error::io("/x", std::io::Error::from_raw_os_error(libc::EACCES));
        let broken = Error::io("/x", std::io::Error::from_raw_os_error(libc::EIO));
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert_eq!(denied.kind(), ErrorKind::Refused);
        assert_eq!(broken.kind(), ErrorKind::Io);
    }

    #[test]
    fn messages_name_the_thing_the_cause_and_the_fix() {
        let e = Error::refused("locking 2 GiB", "RLIMIT_MEMLOCK is 8 MiB", "raise it");
        assert_eq!(
            e.to_string(),
            "locking 2 GiB: RLIMIT_MEMLOCK is 8 MiB (raise it)"
        );
        assert_eq!(e.kind(), ErrorKind::Refused);
        let e = Error::internal("a reader thread failed");
        assert!(e.to_string().contains("a bug in memtriage"), "{e}");
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert_eq!(
            Error::bad_input("threads", "choose between 1 and 64").kind(),
            ErrorKind::BadInput
        );
    }
}
