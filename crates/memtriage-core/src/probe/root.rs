//! Where /proc, /sys and /dev live: `/` on a live machine, a captured tree in tests.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    base: PathBuf,
}

impl Default for Root {
    fn default() -> Self {
        Self::host()
    }
}

impl Root {
    /// The running machine.
    pub fn host() -> Self {
        Root {
            base: PathBuf::from("/"),
        }
    }

    /// A directory laid out like `/` (with `proc/`, `sys/`, `dev/`, `etc/` below it).
    pub fn at(base: impl Into<PathBuf>) -> Self {
        Root { base: base.into() }
    }

    pub fn is_host(&self) -> bool {
        self.base == Path::new("/")
    }

    /// `rel` is an absolute system path such as `/proc/meminfo`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel.trim_start_matches('/'))
    }

    pub fn read(&self, rel: &str) -> Result<Vec<u8>> {
        let path = self.path(rel);
        std::fs::read(&path).map_err(|e| Error::io(path, e))
    }

    pub fn read_string(&self, rel: &str) -> Result<String> {
        let bytes = self.read(rel)?;
        String::from_utf8(bytes).map_err(|_| Error::malformed(self.path(rel), "not UTF-8 text"))
    }

    /// `Ok(None)` when the file does not exist: many kernel files are optional.
    pub fn read_optional(&self, rel: &str) -> Result<Option<String>> {
        match self.read_string(rel) {
            Ok(s) => Ok(Some(s)),
            Err(Error::Io { cause, .. }) if cause.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn read_trimmed(&self, rel: &str) -> Result<String> {
        Ok(self.read_string(rel)?.trim().to_string())
    }
}
