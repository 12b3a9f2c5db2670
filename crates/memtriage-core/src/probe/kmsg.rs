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
    let path = root.path("/dev/kmsg");
    let mut file = OpenOptions::new()
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
    if !is_device {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| Error::io(&path, e))?;
        let text = String::from_utf8_lossy(&bytes);
        return Ok(text
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.trim().is_empty())
            .map(str::to_string)
            .collect());
    }
    // Each read(2) returns exactly one record; a record is at most 8 KiB
    // (CONSOLE_EXT_LOG_MAX), a smaller buffer gets EINVAL.
    let mut buf = vec![0u8; 16 * 1024];
    let mut records = Vec::new();
    while records.len() < MAX_RECORDS {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let record = &buf[..n];
                let first = record.split(|b| *b == b'\n').next().unwrap_or(record);
                records.push(String::from_utf8_lossy(first).into_owned());
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            // The record we were at was overwritten; the next read goes on from the oldest.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                return Err(refused(&path));
            }
            Err(e) => {
                if records.is_empty() {
                    return Err(Error::io(&path, e));
                }
                break;
            }
        }
    }
    Ok(records)
}
