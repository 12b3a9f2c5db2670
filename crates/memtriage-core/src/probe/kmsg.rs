//! The live kernel log: a non-blocking reader of `/dev/kmsg`. Its lines are parsed
//! by [`crate::parse::kmsg`].

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use crate::error::{Error, Result};
use crate::probe::root::Root;

/// Why the kernel refuses to show its log, and what would let us read it.
const KMSG_REFUSED: &str = "reading the kernel log needs root or CAP_SYSLOG; dmesg_restrict=1";
const KMSG_FIX: &str = "run as root, or grant CAP_SYSLOG";

fn refused(path: &std::path::Path) -> Error {
    Error::refused(path.display().to_string(), KMSG_REFUSED, KMSG_FIX)
}

/// A bound on records read, in case the kernel logs faster than we read.
const MAX_RECORDS: usize = 1 << 21;

/// Every record in the kernel's ring buffer, first line of each (the `KEY=value`
/// dictionary lines that follow a record are dropped). Never blocks: the device is
/// opened non-blocking and read until EAGAIN. Under a captured root `/dev/kmsg` is a
/// plain file of records or dmesg lines; its lines are returned.
pub fn read_kmsg(root: &Root) -> Result<Vec<String>> {
    let mut log = LogFollower::kmsg(root, Start::Oldest)?;
    let mut lines = log.read_new()?;
    // A captured log need not end with a newline.
    if let Some(plain) = log.plain.as_mut().filter(|p| !p.partial.is_empty()) {
        lines.push(String::from_utf8_lossy(&std::mem::take(&mut plain.partial)).into_owned());
    }
    Ok(lines)
}

/// Where a [`LogFollower`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The oldest record still in the ring buffer.
    Oldest,
    /// After the last record logged so far: only what the kernel logs from now on.
    Now,
}

/// A log followed as it grows, the kernel's (`/dev/kmsg`) or a file (syslog, where
/// userspace OOM killers write): each [`LogFollower::read_new`] returns the lines
/// logged since the last, without blocking.
pub struct LogFollower {
    file: std::fs::File,
    path: std::path::PathBuf,
    /// A captured log (a plain file) is followed by offset, as `tail -f` does.
    plain: Option<PlainFile>,
    /// A followed file's device and inode: when the path names another file
    /// (logrotate moved it away), the rest of the old one is read and the new one
    /// followed from its start, as `tail -F` does.
    identity: Option<(u64, u64)>,
    buf: Vec<u8>,
}

struct PlainFile {
    offset: u64,
    partial: Vec<u8>,
}

impl LogFollower {
    /// A plain file followed as `tail -F` does (a truncated or rotated file is read
    /// again from its start).
    pub fn file(path: &std::path::Path, start: Start) -> Result<Self> {
        use std::os::unix::fs::MetadataExt;
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        let offset = match start {
            Start::Oldest => 0,
            Start::Now => meta.len(),
        };
        Ok(LogFollower {
            file,
            path: path.to_path_buf(),
            plain: Some(PlainFile {
                offset,
                partial: Vec::new(),
            }),
            identity: Some((meta.dev(), meta.ino())),
            buf: Vec::new(),
        })
    }

    pub fn kmsg(root: &Root, start: Start) -> Result<Self> {
        let path = root.path("/dev/kmsg");
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| match e.kind() {
                ErrorKind::PermissionDenied => refused(&path),
                ErrorKind::NotFound => Error::not_found(
                    path.display().to_string(),
                    "does not exist (containers often hide the kernel log; run on the host)",
                ),
                _ => Error::io(&path, e),
            })?;
        let is_device = file
            .metadata()
            .map(|m| m.file_type().is_char_device())
            .unwrap_or(false);
        let plain = if is_device {
            if start == Start::Now {
                // SEEK_END on /dev/kmsg moves past the newest record.
                rustix::fs::seek(&file, rustix::fs::SeekFrom::End(0))
                    .map_err(|e| Error::io(&path, e.into()))?;
            }
            None
        } else {
            let offset = match start {
                Start::Oldest => 0,
                Start::Now => file.metadata().map(|m| m.len()).unwrap_or(0),
            };
            Some(PlainFile {
                offset,
                partial: Vec::new(),
            })
        };
        Ok(LogFollower {
            file,
            path,
            plain,
            identity: None,
            // Each read(2) returns exactly one record; a record is at most 8 KiB
            // (CONSOLE_EXT_LOG_MAX), a smaller buffer gets EINVAL.
            buf: vec![0u8; 16 * 1024],
        })
    }

    /// The records logged since the last call (first line of each), oldest first.
    pub fn read_new(&mut self) -> Result<Vec<String>> {
        if let Some(plain) = &mut self.plain {
            let mut lines = read_plain(&mut self.file, &self.path, plain)?;
            if let Some(identity) = self.identity {
                use std::os::unix::fs::MetadataExt;
                let now = std::fs::metadata(&self.path)
                    .ok()
                    .map(|m| (m.dev(), m.ino()));
                if now.is_some_and(|n| n != identity) {
                    if let Ok(mut fresh) = LogFollower::file(&self.path, Start::Oldest) {
                        lines.extend(fresh.read_new()?);
                        *self = fresh;
                    }
                }
            }
            return Ok(lines);
        }
        let mut records = Vec::new();
        while records.len() < MAX_RECORDS {
            match self.file.read(&mut self.buf) {
                Ok(0) => break,
                Ok(n) => {
                    let record = &self.buf[..n];
                    let first = record.split(|b| *b == b'\n').next().unwrap_or(record);
                    records.push(String::from_utf8_lossy(first).into_owned());
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // The record we were at was overwritten; the next read goes on from the oldest.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                    return Err(refused(&self.path));
                }
                Err(e) => {
                    if records.is_empty() {
                        return Err(Error::io(&self.path, e));
                    }
                    break;
                }
            }
        }
        Ok(records)
    }
}

/// New complete lines of a plain file since `plain.offset`; a file that shrank
/// (rotated, truncated) is read again from its start.
fn read_plain(
    file: &mut std::fs::File,
    path: &std::path::Path,
    plain: &mut PlainFile,
) -> Result<Vec<String>> {
    use std::io::{Seek, SeekFrom};
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len < plain.offset {
        plain.offset = 0;
        plain.partial.clear();
    }
    file.seek(SeekFrom::Start(plain.offset))
        .map_err(|e| Error::io(path, e))?;
    let mut bytes = std::mem::take(&mut plain.partial);
    let read = file
        .take(MAX_PLAIN_READ)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    plain.offset += read as u64;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    plain.partial = bytes.split_off(complete);
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

/// A followed plain file is read at most this much per call.
const MAX_PLAIN_READ: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_followed_file_is_read_on_after_logrotate_moves_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("syslog");
        std::fs::write(&log, "old line\n").unwrap();
        let mut f = LogFollower::file(&log, Start::Now).unwrap();
        assert!(f.read_new().unwrap().is_empty());
        let append = |p: &std::path::Path, l: &str| {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(p)
                .unwrap();
            writeln!(file, "{l}").unwrap();
        };
        append(&log, "one");
        assert_eq!(f.read_new().unwrap(), vec!["one"]);
        // logrotate: the file is renamed, written to a last time, and a new one made.
        std::fs::rename(&log, dir.path().join("syslog.1")).unwrap();
        append(&dir.path().join("syslog.1"), "two");
        append(&log, "three");
        assert_eq!(f.read_new().unwrap(), vec!["two", "three"]);
        append(&log, "four");
        assert_eq!(f.read_new().unwrap(), vec!["four"]);
    }
}
