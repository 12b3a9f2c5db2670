//! A file the user named, that must be a regular file: a device never ends when read
//! (`/dev/zero`), a FIFO or a socket blocks, a directory has no bytes. And the end of
//! a log file, read without reading all of it.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::error::{Error, Result};

/// `Ok` for a regular file; otherwise what it is, and `why` only files will do.
pub fn refuse_special(path: &Path, meta: &std::fs::Metadata, why: &str) -> Result<()> {
    let t = meta.file_type();
    let kind = if t.is_file() {
        return Ok(());
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    Err(Error::bad_input(
        path.display().to_string(),
        format!("{kind}, not a regular file: {why}"),
    ))
}

/// The last `bytes` of an open file, as text (bytes that are not UTF-8 replaced).
pub fn tail(f: &mut std::fs::File, bytes: u64) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let len = f.metadata()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(bytes)))?;
    let mut buf = Vec::new();
    f.take(bytes).read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
