//! Reads the header of a `.safetensors` file, and only the header, never the
//! weights; [`crate::parse::safetensors`] validates it.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;

use super::residency::Meter;
use crate::error::{Error, Result};
use crate::parse::safetensors::{parse, Header, MAX_HEADER};

/// Header pages looked at one by one; past this many, the rest as one range.
const PAGES_ONE_BY_ONE: u64 = 4096;

/// Reads and validates the header of `path` (errors name the file and the problem),
/// and leaves the page cache as it was: the
/// header's pages that `meter` saw uncached are dropped again after the read, and
/// readahead is off, so a file's residency and its tensors' agree (a cold file read
/// 0 B cached while its first tensor showed the header's pages).
pub fn read_header_untouched(path: &Path, meter: &Meter) -> Result<Header> {
    read(path, Some(meter))
}

/// Page ranges to drop from the page cache when reading is done, however it ends.
struct Restore<'a> {
    file: &'a File,
    ranges: Vec<(u64, u64)>,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        for &(off, len) in &self.ranges {
            // SAFETY: advice on a descriptor this function holds open.
            unsafe {
                libc::posix_fadvise(
                    self.file.as_raw_fd(),
                    off as libc::off_t,
                    len as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                );
            }
        }
    }
}

/// The ranges of `[from, to)` whose pages `meter` saw uncached, runs merged.
fn uncached(meter: &Meter, from: u64, to: u64, page: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let pages = to.saturating_sub(from).div_ceil(page);
    let one_by_one = pages.min(PAGES_ONE_BY_ONE);
    let mut push = |off: u64, len: u64| match out.last_mut() {
        Some((o, l)) if *o + *l == off => *l += len,
        _ => out.push((off, len)),
    };
    for i in 0..one_by_one {
        let off = from + i * page;
        if meter.range(off, page).cached == 0 {
            push(off, page);
        }
    }
    let rest = from + one_by_one * page;
    if rest < to && meter.range(rest, to - rest).cached == 0 {
        push(rest, to - rest);
    }
    out
}

fn read(path: &Path, meter: Option<&Meter>) -> Result<Header> {
    let bad = |msg: String| {
        Error::bad_input(
            path.display().to_string(),
            format!("not a valid safetensors file: {msg}"),
        )
    };
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let page = rustix::param::page_size() as u64;
    let mut restore = Restore {
        file: &file,
        ranges: Vec::new(),
    };
    if let Some(m) = meter {
        // SAFETY: advice on our own descriptor; readahead would pull in weights.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        restore.ranges = uncached(m, 0, page.min(size), page);
    }
    let mut file = &file;
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
    if let Some(m) = meter {
        restore
            .ranges
            .extend(uncached(m, page, (8 + declared).min(size), page));
    }
    let mut json = vec![0u8; declared as usize];
    file.read_exact(&mut json).map_err(|e| Error::io(path, e))?;
    parse(size, declared, &json).map_err(|e| bad(e.detail))
}

pub fn is_safetensors(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "safetensors")
}
