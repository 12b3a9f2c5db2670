//! Reads the header of a `.safetensors` file, and only the header, never the
//! weights; [`crate::parse::safetensors`] validates it.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::parse::safetensors::{parse, Header, MAX_HEADER};

/// Reads and validates the header of `path`; errors name the file and the problem.
pub fn read_header(path: &Path) -> Result<Header> {
    let bad = |msg: String| {
        Error::bad_input(
            path.display().to_string(),
            format!("not a valid safetensors file: {msg}"),
        )
    };
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if size < 8 {
        return Err(bad(format!(
            "{size} bytes, too short for the 8-byte header length"
        )));
    }
    let mut len = [0u8; 8];
    file.read_exact(&mut len).map_err(|e| Error::io(path, e))?;
    let declared = u64::from_le_bytes(len);
    if declared > MAX_HEADER {
        return Err(bad(format!(
            "header length {declared} is implausible (over {MAX_HEADER} bytes)"
        )));
    }
    if declared > size - 8 {
        return Err(bad(format!(
            "header length {declared} is more than the {} bytes after it",
            size - 8
        )));
    }
    let mut json = vec![0u8; declared as usize];
    file.read_exact(&mut json).map_err(|e| Error::io(path, e))?;
    parse(size, declared, &json).map_err(|e| bad(e.detail))
}

pub fn is_safetensors(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "safetensors")
}
