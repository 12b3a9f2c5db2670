//! Bringing files into the page cache as fast as the disk allows, and dropping them.
//!
//! Measured on this kind of machine (2 vCPU VM, ext4, kernel 6.18): one WILLNEED
//! hint or readahead(2) over a whole file caches a single readahead window (8 MiB of
//! 4 GiB); hints and random-order reads leave 4 KiB folios, so every later mmap of the
//! file takes ~65,000 faults per 4 GiB instead of ~2,600; two streams read a cold file
//! faster than one (2.0 vs 1.1 GB/s with dd).
//!
//! So each thread takes one contiguous segment and, window by window, maps it with
//! MADV_HUGEPAGE and asks MADV_POPULATE_READ to read it in: the kernel then reads the
//! file in 2 MiB folios, which a later mapping takes one fault each for (2,048 per
//! 4 GiB, the least possible; `cat` leaves 2,200-2,500), at 2.2-2.4 GB/s with almost
//! no CPU (the pages are never copied). A file that shrinks meanwhile makes
//! POPULATE_READ fail with EFAULT where touching the mapping would raise SIGBUS.
//!
//! Where that is not available (kernels before 5.14, transparent huge pages set to
//! `never`) the threads pread 128 KiB at a time into a reused buffer instead. Not
//! larger: the kernel grows its folios as its asynchronous readahead ramps up, and
//! reads larger than the readahead window skip the ramp. Measured on a cold 1 GiB
//! file, faults a later lazy mapping takes: 128 KiB x 2 threads 660; 1 MiB x 2 1090;
//! 8 MiB x 1 1320; `cat` 649. POSIX_FADV_SEQUENTIAL made it worse (788).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::mapping::Mapping;
use crate::error::{Error, Result};
use crate::probe::root::Root;
use crate::probe::system::{read_thp_setting, THP_ENABLED};

/// Bytes per read where pread is the method (see the module's notes).
pub const CHUNK: usize = 128 << 10;
/// The unit of work: one mapping populated, or one run of reads. Windows whose
/// residency is checked before reading: a cached window is skipped, so warming a file
/// that is already in the page cache costs a few syscalls, not a copy.
const WINDOW: u64 = 32 << 20;
/// The least each thread reads: with pread every segment starts the kernel's folio
/// ramp from small folios again (measured: a 256 MiB file in four 64 MiB segments left
/// 1.6x the faults of one sequential reader; 1 GiB segments 1.07x).
const SEGMENT_MIN: u64 = 512 << 20;

#[derive(Debug, Clone, Copy)]
pub struct WarmOptions {
    pub threads: usize,
    /// Byte range to warm; `length` None means to the end.
    pub offset: u64,
    pub length: Option<u64>,
}

impl Default for WarmOptions {
    fn default() -> Self {
        WarmOptions {
            threads: 4,
            offset: 0,
            length: None,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmStats {
    /// Bytes asked for (the range, clamped to the file).
    pub bytes: u64,
    /// Bytes actually read: less when the file shrank while it was read.
    pub read: u64,
    /// Bytes not read because they were already in the page cache.
    pub already_cached: u64,
    pub seconds: f64,
    /// How the file was read (pread where the kernel refused to populate).
    #[serde(default)]
    pub method: WarmMethod,
}

/// How a thread brings a window in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WarmMethod {
    /// MADV_HUGEPAGE + MADV_POPULATE_READ on a mapping of the window.
    Populate,
    /// pread into a reused buffer.
    #[default]
    Pread,
}

/// What reading one window came to.
enum Window {
    Read(u64),
    /// The file ended inside the window (it shrank): this many bytes were there.
    Shrank(u64),
}

/// Populating with huge-page advice is the method where transparent huge pages are
/// not switched off: with them off it would leave the 4 KiB folios pread avoids.
fn preferred_method() -> WarmMethod {
    match read_thp_setting(&Root::host(), THP_ENABLED) {
        Ok(Some(mode)) if mode != "never" => WarmMethod::Populate,
        _ => WarmMethod::Pread,
    }
}

/// None where the window cannot be populated and pread should read it instead: a
/// kernel before 5.14 (EINVAL), a file that cannot be mapped (ENODEV on some FUSE
/// mounts, ENOMEM at vm.max_map_count), or a read error that populate reports as
/// EFAULT while the file is still long enough (pread then reports the real error).
fn populate_window(file: &File, at: u64, end: u64) -> std::io::Result<Option<Window>> {
    let page = rustix::param::page_size() as u64;
    let map_start = at - at % page;
    let Ok(len) = usize::try_from(end - map_start) else {
        return Ok(None);
    };
    let Ok(map) = Mapping::window(file, map_start, len, 0) else {
        return Ok(None);
    };
    // Only a hint: without it the window is still read, in smaller folios.
    let _ = map.advise(libc::MADV_HUGEPAGE);
    match map.populate() {
        Ok(()) => Ok(Some(Window::Read(end - at))),
        Err(e) if e.raw_os_error() == Some(libc::EFAULT) => {
            let size = file.metadata()?.len();
            if size >= end {
                return Ok(None);
            }
            Ok(Some(Window::Shrank(size.clamp(at, end) - at)))
        }
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(None),
        Err(e) => Err(e),
    }
}

fn pread_window(file: &File, buf: &mut [u8], at: u64, end: u64) -> std::io::Result<Window> {
    let mut pos = at;
    while pos < end {
        let want = ((end - pos) as usize).min(buf.len());
        match file.read_at(&mut buf[..want], pos) {
            Ok(0) => return Ok(Window::Shrank(pos - at)),
            Ok(n) => pos += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Window::Read(end - at))
}

/// Reads `path`'s range into the page cache. `progress` gets byte counts as they are
/// read, from whichever thread read them. A range that ends before the file does
/// caches a little past its end: the kernel's readahead runs a window or two ahead
/// (8-24 MiB here), and turning it off would leave 4 KiB folios behind.
pub fn warm_file(
    path: &Path,
    opts: WarmOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<WarmStats> {
    warm_with(path, opts, preferred_method(), progress)
}

fn warm_with(
    path: &Path,
    opts: WarmOptions,
    method: WarmMethod,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<WarmStats> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let start = opts.offset.min(size);
    let end = opts
        .length
        .map_or(size, |l| start.saturating_add(l).min(size));
    let bytes = end - start;
    let threads = (opts.threads.max(1) as u64)
        .min(bytes.div_ceil(SEGMENT_MIN))
        .max(1);
    let segment = bytes.div_ceil(threads).next_multiple_of(WINDOW);
    let tally = Tally::default();
    let began = Instant::now();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let seg_start = start + i * segment;
                let seg_end = (seg_start + segment).min(end);
                let tally = &tally;
                scope.spawn(move || read_segment(path, seg_start..seg_end, method, tally, progress))
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Error::internal("a reader thread failed")))
        })
    })?;
    Ok(WarmStats {
        bytes,
        read: tally.read.load(Ordering::Relaxed),
        already_cached: tally.skipped.load(Ordering::Relaxed),
        seconds: began.elapsed().as_secs_f64(),
        method: if tally.fell_back.load(Ordering::Relaxed) {
            WarmMethod::Pread
        } else {
            method
        },
    })
}

/// What the reader threads did, added up.
#[derive(Default)]
struct Tally {
    read: AtomicU64,
    skipped: AtomicU64,
    fell_back: AtomicBool,
}

/// One thread's contiguous part of the file, window by window.
fn read_segment(
    path: &Path,
    segment: std::ops::Range<u64>,
    mut method: WarmMethod,
    tally: &Tally,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    if segment.is_empty() {
        return Ok(());
    }
    // Each thread its own descriptor: its own readahead state.
    let f = File::open(path).map_err(|e| Error::io(path, e))?;
    // Decided before reading: a window cached only because our own readahead ran
    // ahead must still be read, or a pread reader would jump and the kernel restart
    // its folio ramp from small folios.
    let cached_before: Vec<bool> = match super::residency::Meter::open(path) {
        Ok(m) if m.trustworthy() => segment
            .clone()
            .step_by(WINDOW as usize)
            .map(|w| m.fully_cached(w, (segment.end - w).min(WINDOW)))
            .collect(),
        _ => Vec::new(),
    };
    let mut buf = Vec::new();
    for (n, at) in segment.clone().step_by(WINDOW as usize).enumerate() {
        let w_end = (at + WINDOW).min(segment.end);
        if cached_before.get(n) == Some(&true) {
            tally.skipped.fetch_add(w_end - at, Ordering::Relaxed);
            progress(w_end - at);
            continue;
        }
        let populated = match method {
            WarmMethod::Populate => populate_window(&f, at, w_end),
            WarmMethod::Pread => Ok(None),
        };
        let outcome = match populated.map_err(|e| Error::io(path, e))? {
            Some(outcome) => outcome,
            None => {
                method = WarmMethod::Pread;
                tally.fell_back.store(true, Ordering::Relaxed);
                buf.resize(CHUNK, 0);
                pread_window(&f, &mut buf, at, w_end).map_err(|e| Error::io(path, e))?
            }
        };
        let (Window::Read(n) | Window::Shrank(n)) = outcome;
        tally.read.fetch_add(n, Ordering::Relaxed);
        progress(n);
        if let Window::Shrank(_) = outcome {
            break;
        }
    }
    Ok(())
}

/// Drops a file's clean, unmapped pages from the page cache (POSIX_FADV_DONTNEED).
/// Dirty pages are written back first by the kernel only later, and mapped pages stay:
/// the caller measures what remained.
/// Waits until the file's dirty pages are on disk (fdatasync works on a read-only
/// descriptor), so that the advice that follows can drop them.
pub fn write_back(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_data())
        .map_err(|e| Error::io(path, e))
}

pub fn evict_file(path: &Path) -> Result<()> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    // SAFETY: advice on our own descriptor.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(Error::io(path, std::io::Error::from_raw_os_error(rc)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{warm_with, WarmMethod, WarmOptions};
    use crate::pagecache::residency::Meter;
    use std::io::Write;

    const MIB: u64 = 1 << 20;

    fn cold_file(dir: &std::path::Path, mib: u64) -> std::path::PathBuf {
        let path = dir.join("f.bin");
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![7u8; MIB as usize];
        for _ in 0..mib {
            f.write_all(&block).unwrap();
        }
        f.sync_all().unwrap();
        super::evict_file(&path).unwrap();
        path
    }

    #[test]
    fn both_methods_bring_a_cold_file_whole_into_the_page_cache() {
        for method in [WarmMethod::Populate, WarmMethod::Pread] {
            let dir = tempfile::tempdir_in("/var/tmp").unwrap();
            let path = cold_file(dir.path(), 80);
            assert!(Meter::open(&path).unwrap().whole().fraction() < 0.5);
            let stats = warm_with(&path, WarmOptions::default(), method, &|_| {}).unwrap();
            assert_eq!(
                (stats.bytes, stats.read),
                (80 * MIB, 80 * MIB),
                "{method:?}"
            );
            let cached = Meter::open(&path).unwrap().whole().fraction();
            assert!(cached > 0.99, "{method:?}: {cached}");
        }
    }

    /// Truncated after the first window: the next read meets the new end of the file
    /// (EFAULT from populate, a short read from pread) and ends there, without SIGBUS.
    #[test]
    fn a_file_truncated_while_warmed_ends_the_read_where_the_file_now_ends() {
        for method in [WarmMethod::Populate, WarmMethod::Pread] {
            let dir = tempfile::tempdir_in("/var/tmp").unwrap();
            let path = cold_file(dir.path(), 96);
            let truncate = std::sync::Once::new();
            let opts = WarmOptions {
                threads: 1,
                ..WarmOptions::default()
            };
            let stats = warm_with(&path, opts, method, &|_| {
                truncate.call_once(|| {
                    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                    f.set_len(40 * MIB).unwrap();
                });
            })
            .unwrap();
            assert_eq!(
                (stats.bytes, stats.read),
                (96 * MIB, 40 * MIB),
                "{method:?}"
            );
        }
    }
}
