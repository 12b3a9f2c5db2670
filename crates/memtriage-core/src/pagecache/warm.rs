//! Bringing files into the page cache as fast as the disk allows, and dropping them.
//!
//! Measured on this kind of machine (2 vCPU VM, ext4, kernel 6.18): one WILLNEED
//! hint or readahead(2) over a whole file caches a single readahead window (8 MiB of
//! 4 GiB); hints and random-order reads leave 4 KiB folios, so every later mmap of the
//! file takes ~65,000 faults per 4 GiB instead of ~2,600; two threads read a cold file
//! faster than one (2.4 vs 1.6 GB/s). So: sequential reads, one contiguous segment per
//! thread, each thread with its own descriptor (its own readahead state), into a
//! reused buffer; pread, never a mapping, so a file that shrinks meanwhile is a short
//! read rather than SIGBUS.
//!
//! The read size is 128 KiB, not "as large as possible": the kernel grows its folios
//! as its asynchronous readahead ramps up, and reads larger than the readahead window
//! skip the ramp. Measured on a cold 1 GiB file, faults a later lazy mapping takes
//! (fewer = larger folios) and speed: 128 KiB x 2 threads 660 faults, 1.9 GiB/s;
//! 1 MiB x 2 1090; 8 MiB x 1 1320; `cat` 649 faults, 0.9 GiB/s. POSIX_FADV_SEQUENTIAL
//! made it worse (788) and is not used.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Bytes per read (see the module's notes: the size that leaves the largest folios).
pub const CHUNK: usize = 128 << 10;
/// Windows whose residency is checked before reading: a cached window is skipped, so
/// warming a file that is already in the page cache costs a few syscalls, not a copy.
const SKIP_WINDOW: u64 = 8 << 20;
/// The least each thread reads: every segment starts the kernel's folio ramp from small
/// folios again (measured: a 256 MiB file in four 64 MiB segments left 1.6x the faults
/// of one sequential reader; 1 GiB segments 1.07x).
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
    let segment = bytes.div_ceil(threads).next_multiple_of(CHUNK as u64);
    let read_total = AtomicU64::new(0);
    let skipped_total = AtomicU64::new(0);
    let began = Instant::now();
    let result: Result<()> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let seg_start = start + i * segment;
                let seg_end = (seg_start + segment).min(end);
                let read_total = &read_total;
                let skipped_total = &skipped_total;
                scope.spawn(move || -> Result<()> {
                    if seg_start >= seg_end {
                        return Ok(());
                    }
                    let f = File::open(path).map_err(|e| Error::io(path, e))?;
                    // SAFETY: advice on our own descriptor; failure only loses a hint.
                    // Decided before reading: a window cached only because our own
                    // readahead ran ahead must still be read, or the reader would jump
                    // and the kernel restart its folio ramp from small folios.
                    let cached_before: Vec<bool> = match super::residency::Meter::open(path) {
                        Ok(m) => (seg_start..seg_end)
                            .step_by(SKIP_WINDOW as usize)
                            .map(|w| {
                                let r = m.range(w, (seg_end - w).min(SKIP_WINDOW));
                                r.cached >= r.bytes
                            })
                            .collect(),
                        Err(_) => Vec::new(),
                    };
                    let mut buf = vec![0u8; CHUNK];
                    let mut at = seg_start;
                    while at < seg_end {
                        let window = ((at - seg_start) / SKIP_WINDOW) as usize;
                        if (at - seg_start) % SKIP_WINDOW == 0
                            && cached_before.get(window) == Some(&true)
                        {
                            let len = (seg_end - at).min(SKIP_WINDOW);
                            at += len;
                            skipped_total.fetch_add(len, Ordering::Relaxed);
                            progress(len);
                            continue;
                        }
                        let want = ((seg_end - at) as usize).min(CHUNK);
                        let n = match f.read_at(&mut buf[..want], at) {
                            Ok(0) => break, // the file shrank
                            Ok(n) => n,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(e) => return Err(Error::io(path, e)),
                        };
                        at += n as u64;
                        read_total.fetch_add(n as u64, Ordering::Relaxed);
                        progress(n as u64);
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Error::Invalid("a reader thread failed".into())))
        })
    });
    result?;
    Ok(WarmStats {
        bytes,
        read: read_total.load(Ordering::Relaxed),
        already_cached: skipped_total.load(Ordering::Relaxed),
        seconds: began.elapsed().as_secs_f64(),
    })
}

/// Drops a file's clean, unmapped pages from the page cache (POSIX_FADV_DONTNEED).
/// Dirty pages are written back first by the kernel only later, and mapped pages stay:
/// the caller measures what remained.
pub fn evict_file(path: &Path) -> Result<()> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    // SAFETY: advice on our own descriptor.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(Error::io(path, std::io::Error::from_raw_os_error(rc)));
    }
    Ok(())
}
