//! One process's `/proc/PID` directory, opened once; files are read relative to it.
//! Once the directory is open, a pid reused by a new process cannot slip a different
//! process's files into the same snapshot: reads fail with ESRCH instead.

use std::io::ErrorKind;
use std::os::fd::OwnedFd;

use rustix::fs::{openat, Mode, OFlags};

use crate::error::Error;
use crate::parse::stat::{self, Stat};
use crate::parse::status::{self, StatusFields};
use crate::parse::text::{escape_bytes, split_cmdline};
use crate::parse::{smaps_rollup, statm};
use crate::probe::root::Root;

pub struct ProcDir {
    dir: OwnedFd,
}

/// Why a file of a live process could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The process exited (ENOENT/ESRCH).
    Gone,
    /// Not ours to read (EACCES/EPERM).
    Denied,
    Other(std::io::Error),
}

impl ReadError {
    fn from_io(e: std::io::Error) -> Self {
        match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ESRCH) => ReadError::Gone,
            Some(libc::EACCES) | Some(libc::EPERM) => ReadError::Denied,
            _ if e.kind() == ErrorKind::NotFound => ReadError::Gone,
            _ => ReadError::Other(e),
        }
    }

    /// Text for a snapshot's `unreadable` list.
    pub fn reason(&self) -> String {
        match self {
            ReadError::Gone => "not provided by this kernel (file missing)".into(),
            ReadError::Denied => crate::error::denied_reason().into(),
            ReadError::Other(e) => e.to_string(),
        }
    }
}

impl ProcDir {
    pub fn open(root: &Root, pid: i32) -> Result<Self, Error> {
        let path = root.path(&format!("/proc/{pid}"));
        match openat(
            rustix::fs::CWD,
            &path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(dir) => Ok(ProcDir { dir }),
            Err(rustix::io::Errno::NOENT) | Err(rustix::io::Errno::NOTDIR) => {
                Err(Error::NoSuchProcess { pid })
            }
            Err(e) => Err(Error::io(path, e.into())),
        }
    }

    /// A file the kernel generates in one piece (`single_open`: stat, status,
    /// smaps_rollup, cgroup, oom_score, cmdline): the first read returns all of it
    /// that fits, so a short read is the end. One `read` where std's `read_to_end`
    /// would add a `statx`, an `lseek` and a final empty read, which over a few hundred
    /// processes costs more than the data.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, ReadError> {
        self.read_with(name, true)
    }

    /// A file of many records (smaps, maps): a short read is only the end of a batch
    /// of records, so read until the kernel returns nothing.
    pub fn read_to_end(&self, name: &str) -> Result<Vec<u8>, ReadError> {
        self.read_with(name, false)
    }

    fn read_with(&self, name: &str, short_read_is_end: bool) -> Result<Vec<u8>, ReadError> {
        let mut buf = vec![0u8; 4096];
        let len = self.read_into(name, &mut buf, short_read_is_end)?;
        buf.truncate(len);
        Ok(buf)
    }

    /// Reads a file into `buf` (grown as needed, never shrunk) and returns its length:
    /// a reader of many processes reuses one buffer instead of allocating per file.
    pub fn read_into(
        &self,
        name: &str,
        buf: &mut Vec<u8>,
        short_read_is_end: bool,
    ) -> Result<usize, ReadError> {
        let fd = self.open_file(name)?;
        if buf.is_empty() {
            buf.resize(4096, 0);
        }
        let mut len = 0;
        loop {
            if len == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            let n =
                rustix::io::read(&fd, &mut buf[len..]).map_err(|e| ReadError::from_io(e.into()))?;
            len += n;
            if n == 0 || (short_read_is_end && len < buf.len()) {
                return Ok(len);
            }
        }
    }

    /// A file of the process opened for reading, to be re-read with `pread` from
    /// offset 0 (the kernel regenerates it) by a sampler that reads it every tick.
    pub fn open_file(&self, name: &str) -> Result<OwnedFd, ReadError> {
        openat(
            &self.dir,
            name,
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| ReadError::from_io(e.into()))
    }

    /// Owner of `/proc/PID`: the process's effective uid (as smem and ps report it),
    /// from the already open directory, without reading `status`.
    pub fn owner_uid(&self) -> Option<u32> {
        rustix::fs::fstat(&self.dir).ok().map(|st| st.st_uid)
    }

    /// The name the kernel keeps for the process (`comm`, at most 15 bytes), bytes
    /// that are not UTF-8 escaped (`\xNN`); `None` when it cannot be read.
    pub fn comm(&self) -> Option<String> {
        let bytes = self.read("comm").ok()?;
        Some(escape_bytes(bytes.strip_suffix(b"\n").unwrap_or(&bytes)))
    }

    /// The arguments (`cmdline`, NUL-separated), each escaped as [`Self::comm`];
    /// empty for a kernel thread or a zombie. Shown to people, they are quoted the
    /// shell's way (`model::shell::join`).
    pub fn args(&self) -> Result<Vec<String>, ReadError> {
        self.read("cmdline").map(|bytes| split_cmdline(&bytes))
    }

    pub fn read_link(&self, name: &str) -> Result<Vec<u8>, ReadError> {
        rustix::fs::readlinkat(&self.dir, name, Vec::new())
            .map(|s| s.into_bytes())
            .map_err(|e| ReadError::from_io(e.into()))
    }
}

/// `comm` of `pid` (see [`ProcDir::comm`]); `None` when it is gone or unreadable.
pub fn comm(root: &Root, pid: i32) -> Option<String> {
    ProcDir::open(root, pid).ok()?.comm()
}

/// The arguments of `pid` (see [`ProcDir::args`]); `None` when it is gone or
/// unreadable.
pub fn args(root: &Root, pid: i32) -> Option<Vec<String>> {
    ProcDir::open(root, pid).ok()?.args().ok()
}

/// The lines of `/proc/PID/status` memtriage reads ([`StatusFields`]); `None` when
/// the process is gone or unreadable. A reader of many processes reuses a buffer
/// with [`ProcDir::read_into`] instead.
pub fn status(root: &Root, pid: i32) -> Option<StatusFields> {
    ProcDir::open(root, pid)
        .ok()?
        .read("status")
        .ok()
        .map(|b| status::parse(&b))
}

/// `/proc/PID/stat` of `pid`; `None` when it is gone, unreadable or malformed.
pub fn stat(root: &Root, pid: i32) -> Option<Stat> {
    let bytes = ProcDir::open(root, pid).ok()?.read("stat").ok()?;
    stat::parse(&bytes).ok()
}

/// This process's resident set now (`/proc/self/statm`).
pub fn own_rss(root: &Root) -> Option<u64> {
    let bytes = root.read("/proc/self/statm").ok()?;
    statm::parse(&bytes).map(|s| s.resident * rustix::param::page_size() as u64)
}

/// This process's PSS now (`/proc/self/smaps_rollup`, which walks every mapping).
pub fn own_pss(root: &Root) -> Option<u64> {
    let bytes = root.read("/proc/self/smaps_rollup").ok()?;
    smaps_rollup::parse(&bytes).map(|r| r.pss)
}

/// The OOM killer's adjustment of `pid` (`oom_score_adj`, -1000..1000); `None` when
/// it is gone or unreadable.
pub fn oom_score_adj(root: &Root, pid: i32) -> Option<i32> {
    let bytes = ProcDir::open(root, pid).ok()?.read("oom_score_adj").ok()?;
    std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
}

/// This process's own `oom_score_adj`.
pub fn own_oom_score_adj(root: &Root) -> Option<i32> {
    root.read_string("/proc/self/oom_score_adj")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Sets this process's own `oom_score_adj` (lowering it needs CAP_SYS_RESOURCE).
pub fn set_own_oom_score_adj(root: &Root, value: i32) -> std::io::Result<()> {
    std::fs::write(root.path("/proc/self/oom_score_adj"), value.to_string())
}

/// This process's own status (`/proc/self/status`).
pub fn own_status(root: &Root) -> Option<StatusFields> {
    root.read("/proc/self/status")
        .ok()
        .map(|b| status::parse(&b))
}
