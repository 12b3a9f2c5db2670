//! How much of a file is in the page cache: cachestat(2) (Linux 6.5+: a count from
//! the page cache's own tree, ~0.3 ms for 4 GiB here, and it takes byte ranges), else
//! mincore(2) over a mapping of the file (44-72 ms for 4 GiB here).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::mapping::Mapping;
use crate::error::{Error, Result};

/// `__NR_cachestat`, the same number on every architecture (added in 6.5).
const SYS_CACHESTAT: libc::c_long = 451;

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Cachestat,
    Mincore,
}

/// Cached pages of a byte range of a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Residency {
    /// Bytes in the range (the file's size for a whole file).
    pub bytes: u64,
    /// Bytes of those in the page cache.
    pub cached: u64,
    /// Cached bytes not yet written back (cachestat only).
    pub dirty: Option<u64>,
    /// Cached bytes being written back now (cachestat only): like dirty pages, they
    /// cannot be dropped until the write ends.
    pub writeback: Option<u64>,
}

impl Residency {
    pub fn fraction(&self) -> f64 {
        if self.bytes == 0 {
            0.0
        } else {
            (self.cached as f64 / self.bytes as f64).min(1.0)
        }
    }
}

/// Measures residency of one open file, by whichever method this kernel offers.
pub struct Meter {
    file: File,
    size: u64,
    page: u64,
    method: Method,
    /// mincore's view: one byte per page, bit 0 = resident (kept for range queries).
    mincore: Option<Vec<u8>>,
    /// False where mincore answers "resident" for every page whatever the truth: the
    /// kernel hides page-cache state of files the caller neither owns nor may write.
    trustworthy: bool,
    /// Why cachestat did not answer (a kernel without it, or one that refuses this
    /// caller this file).
    cachestat_refused: Option<&'static str>,
}

impl Meter {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        if !meta.is_file() {
            return Err(Error::bad_input(
                path.display().to_string(),
                "not a regular file",
            ));
        }
        let page = rustix::param::page_size() as u64;
        let mut meter = Meter {
            file,
            size: meta.len(),
            page,
            method: Method::Cachestat,
            mincore: None,
            trustworthy: true,
            cachestat_refused: None,
        };
        // Asked of one page: a question about the whole file would walk all of it.
        if let Err(errno) = meter.try_cachestat(0, page) {
            meter.cachestat_refused = Some(if errno == libc::EPERM {
                "cachestat refuses files you neither own nor may write"
            } else {
                "this kernel has no cachestat (Linux 6.5+)"
            });
            meter.method = Method::Mincore;
            meter.mincore =
                Some(mincore_map(&meter.file, meter.size, page).map_err(|e| Error::io(path, e))?);
            meter.trustworthy = mincore_sees(path, &meta);
        }
        Ok(meter)
    }

    /// Whether the counts are real (always with cachestat; with mincore only for a
    /// file the caller owns or may write, or as root).
    pub fn trustworthy(&self) -> bool {
        self.trustworthy
    }

    /// Why the counts are not real, and what would make them so; `None` where they are.
    pub fn unknown_reason(&self) -> Option<(String, &'static str)> {
        if self.trustworthy {
            return None;
        }
        Some((
            format!(
                "{}, and mincore hides the page cache of files you neither own nor may write",
                self.cachestat_refused.unwrap_or("cachestat did not answer")
            ),
            "run as the file's owner or as root",
        ))
    }

    /// Every page overlapping the range is cached (the range widened to whole pages:
    /// the byte counts of [`Meter::range`] are capped at its length and would let one
    /// missing page of an unaligned range pass).
    pub fn fully_cached(&self, off: u64, len: u64) -> bool {
        let start = off.min(self.size) / self.page * self.page;
        let end = off
            .saturating_add(len)
            .min(self.size)
            .next_multiple_of(self.page)
            .min(self.size);
        let r = self.range(start, end - start);
        r.cached >= r.bytes
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn method(&self) -> Method {
        self.method
    }

    /// `len` 0 means to the end of the file.
    fn cachestat(&self, off: u64, len: u64) -> Option<Cachestat> {
        self.try_cachestat(off, len).ok()
    }

    /// cachestat(2), or the errno it failed with.
    fn try_cachestat(&self, off: u64, len: u64) -> std::result::Result<Cachestat, i32> {
        let range = CachestatRange { off, len };
        let mut out = Cachestat::default();
        // SAFETY: cachestat reads `range` and writes `out`, both live locals.
        let rc = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                self.file.as_raw_fd(),
                &range as *const CachestatRange,
                &mut out as *mut Cachestat,
                0u32,
            )
        };
        if rc == 0 {
            Ok(out)
        } else {
            Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
        }
    }

    /// Residency of `len` bytes from `off` (clamped to the file).
    pub fn range(&self, off: u64, len: u64) -> Residency {
        let off = off.min(self.size);
        let len = len.min(self.size - off);
        if len == 0 {
            return Residency::default();
        }
        match self.method {
            Method::Cachestat => {
                // cachestat counts whole pages overlapping the range.
                let first = off / self.page;
                let last = (off + len).div_ceil(self.page);
                let pages = last - first;
                match self.cachestat(first * self.page, pages * self.page) {
                    Some(c) => Residency {
                        bytes: len,
                        cached: (c.nr_cache * self.page).min(len),
                        dirty: Some((c.nr_dirty * self.page).min(len)),
                        writeback: Some((c.nr_writeback * self.page).min(len)),
                    },
                    None => Residency {
                        bytes: len,
                        cached: 0,
                        dirty: None,
                        writeback: None,
                    },
                }
            }
            Method::Mincore => {
                let vec = self.mincore.as_deref().unwrap_or(&[]);
                let first = (off / self.page) as usize;
                let last = ((off + len).div_ceil(self.page) as usize).min(vec.len());
                let resident = vec
                    .get(first..last)
                    .map_or(0, |s| s.iter().filter(|b| **b & 1 != 0).count());
                Residency {
                    bytes: len,
                    cached: (resident as u64 * self.page).min(len),
                    dirty: None,
                    writeback: None,
                }
            }
        }
    }

    pub fn whole(&self) -> Residency {
        self.range(0, self.size)
    }

    /// The file in `n` consecutive parts (fewer for a file of fewer pages), split on
    /// page boundaries so that the parts add up to the whole file exactly: one walk
    /// of the page cache gives both the residency bar and the total.
    pub fn parts(&self, n: usize) -> Vec<Residency> {
        let pages = self.size.div_ceil(self.page);
        let n = (n.max(1) as u64).min(pages);
        let bound = |i: u64| (pages * i / n * self.page).min(self.size);
        (0..n)
            .map(|i| self.range(bound(i), bound(i + 1) - bound(i)))
            .collect()
    }
}

impl std::iter::Sum for Residency {
    fn sum<I: Iterator<Item = Residency>>(parts: I) -> Residency {
        parts.fold(
            Residency {
                dirty: Some(0),
                writeback: Some(0),
                ..Residency::default()
            },
            |total, r| Residency {
                bytes: total.bytes + r.bytes,
                cached: total.cached + r.cached,
                dirty: total.dirty.zip(r.dirty).map(|(a, b)| a + b),
                writeback: total.writeback.zip(r.writeback).map(|(a, b)| a + b),
            },
        )
    }
}

/// The kernel's `can_do_mincore`: page-cache state shows for files whose owner we are,
/// with CAP_FOWNER, or that we may write. Root is not enough by itself: an exporter
/// running as root with its capabilities dropped to a few (a DaemonSet's) would
/// otherwise report every page of other users' files as cached.
fn mincore_sees(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    const CAP_FOWNER: u32 = 3;
    let euid = rustix::process::geteuid();
    meta.uid() == euid.as_raw()
        || crate::probe::system::has_capability(&crate::Root::host(), CAP_FOWNER)
        || rustix::fs::accessat(
            rustix::fs::CWD,
            path,
            rustix::fs::Access::WRITE_OK,
            rustix::fs::AtFlags::EACCESS,
        )
        .is_ok()
}

/// mincore over a read-only mapping of the file.
fn mincore_map(file: &File, size: u64, page: u64) -> std::io::Result<Vec<u8>> {
    if size == 0 {
        return Ok(Vec::new());
    }
    Mapping::new(file, size as usize, 0)?.residency(page)
}

#[cfg(test)]
mod tests {
    use super::{Meter, Residency};
    use std::io::Write;

    /// The parts meet on page boundaries, so no page is counted twice: summed they are
    /// the whole file, whatever its size and the number of parts. Every other page is
    /// cached, so a part boundary inside a page would count that page in two parts.
    #[test]
    fn parts_add_up_to_the_whole_file() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        for (len, n) in [
            (1u64, 24usize),
            (4096 * 5 + 7, 24),
            (4096 * 100 + 1, 7),
            (4096 * 24, 24),
        ] {
            let path = dir.path().join(format!("f{len}"));
            let mut f = std::fs::File::create(&path).unwrap();
            f.write_all(&vec![3u8; len as usize]).unwrap();
            f.sync_all().unwrap();
            crate::pagecache::warm::evict_file(&path).unwrap();
            let f = std::fs::File::open(&path).unwrap();
            // SAFETY: advice on our own descriptor: no readahead beyond each read.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
            let mut page = [0u8; 1];
            for off in (0..len).step_by(8192) {
                f.read_at(&mut page, off).unwrap();
            }
            let meter = Meter::open(&path).unwrap();
            let parts = meter.parts(n);
            assert!(!parts.is_empty() && parts.len() <= n);
            let total: Residency = parts.into_iter().sum();
            let whole = meter.whole();
            assert_eq!(
                (total.bytes, total.cached),
                (whole.bytes, whole.cached),
                "{len} in {n}"
            );
            assert_eq!(total.bytes, len);
            if len > 8192 {
                let half = whole.fraction();
                assert!((0.4..0.6).contains(&half), "every other page: {half}");
            }
        }
    }

    /// An unaligned range over pages 0-2 with page 1 missing is not fully cached,
    /// though its byte count (two cached pages, capped at its 8 KiB) would say so.
    #[test]
    fn fully_cached_looks_at_every_page_an_unaligned_range_touches() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&[5u8; 3 * 4096]).unwrap();
        f.sync_all().unwrap();
        crate::pagecache::warm::evict_file(&path).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        // SAFETY: advice on our own descriptor: no readahead beyond each read.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        let mut byte = [0u8; 1];
        f.read_at(&mut byte, 0).unwrap();
        f.read_at(&mut byte, 2 * 4096).unwrap();
        let meter = Meter::open(&path).unwrap();
        assert!(meter.fully_cached(0, 4096));
        assert!(!meter.fully_cached(100, 8192));
        f.read_at(&mut byte, 4096).unwrap();
        assert!(meter.fully_cached(100, 8192));
    }
}
