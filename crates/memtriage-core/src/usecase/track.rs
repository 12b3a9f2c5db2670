//! `track()`: what a block of the caller's own code cost in memory.
//!
//! The engine's sampler follows the calling process on its own thread (so it neither
//! slows the tracked code nor waits for it): its RSS every `interval`, and PSS on the
//! budget for a process measuring itself (`PssBudget::SELF`: at most every 200 ms and
//! within 1% of the wall time, since a `smaps_rollup` read walks the page tables
//! under the mmap lock). Faults come from `getrusage` deltas, exact and for all
//! threads. The peak RSS also uses the kernel's own high-water mark (`VmHWM`): if it
//! rose during the block, the block set it, and it is exact even between samples.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::Result;
use crate::probe::procdir;
use crate::probe::root::Root;
use crate::sampler::{PssBudget, Sample, SamplerConfig, SamplerThread, Scope};

/// Marks "no PSS reading yet" (0 would be a reading of 0 bytes).
const NONE: u64 = u64::MAX;

/// What one block cost. Bytes, counts and seconds; `None` where unreadable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockFigures {
    pub wall_seconds: f64,
    /// Page faults of the whole process during the block, all threads.
    pub minor_faults: u64,
    pub major_faults: u64,
    pub start_rss: Option<u64>,
    pub end_rss: Option<u64>,
    /// The highest RSS seen: sampled, or the kernel's high-water mark when the block
    /// raised it (then `peak_rss_exact`).
    pub peak_rss: Option<u64>,
    pub peak_rss_exact: bool,
    /// The highest PSS read; `None` when PSS was not asked for or never read.
    pub peak_pss: Option<u64>,
    pub rss_samples: u64,
    pub pss_samples: u64,
}

/// What the samples showed; read after the sampler is joined.
#[derive(Default)]
struct Peaks {
    rss: AtomicU64,
    pss: AtomicU64,
    rss_samples: AtomicU64,
    pss_samples: AtomicU64,
}

impl Peaks {
    fn new() -> Self {
        let p = Peaks::default();
        p.pss.store(NONE, Ordering::Relaxed);
        p
    }

    fn rss(&self, bytes: u64) {
        self.rss.fetch_max(bytes, Ordering::Relaxed);
        self.rss_samples.fetch_add(1, Ordering::Relaxed);
    }

    fn pss(&self, bytes: u64) {
        let _ = self
            .pss
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some(if old == NONE { bytes } else { old.max(bytes) })
            });
        self.pss_samples.fetch_add(1, Ordering::Relaxed);
    }

    fn feed(&self, sample: &Sample) {
        // The scope is this process alone.
        let Some(me) = sample.processes.first() else {
            return;
        };
        self.rss(me.rss);
        if let Some(rollup) = &me.rollup {
            self.pss(rollup.pss);
        }
    }
}

/// A block being measured: [`Tracking::start`] at its start, [`Tracking::stop`] at
/// its end.
pub struct Tracking {
    started: Instant,
    faults: (u64, u64),
    hwm: Option<u64>,
    rss: Option<u64>,
    pss: bool,
    peaks: Arc<Peaks>,
    sampler: SamplerThread,
}

impl Tracking {
    /// Starts sampling the calling process every `interval` (and its PSS too, with
    /// `pss`). Fails only where the sampler's thread cannot be started.
    pub fn start(interval: Duration, pss: bool) -> std::io::Result<Tracking> {
        let root = Root::host();
        let rss = procdir::own_rss(&root);
        let hwm = own_peak_rss(&root);
        let peaks = Arc::new(Peaks::new());
        if let Some(rss) = rss {
            peaks.rss(rss);
        }
        let config = SamplerConfig {
            pss: pss.then_some(PssBudget::SELF),
            system: false,
            exe: false,
            gpu: false,
            ..SamplerConfig::new(Scope::Pids(vec![std::process::id() as i32]), interval)
        };
        let sink_peaks = Arc::clone(&peaks);
        let sampler = SamplerThread::spawn(config, move |sample| {
            sink_peaks.feed(&sample);
            true
        })?;
        // Taken last, so the thread's start is not counted in the block.
        let faults = faults();
        Ok(Tracking {
            started: Instant::now(),
            faults,
            hwm,
            rss,
            pss,
            peaks,
            sampler,
        })
    }

    /// Stops sampling and returns what the block cost; an error only where the
    /// sampler died of a bug.
    pub fn stop(self) -> Result<BlockFigures> {
        let root = Root::host();
        let wall = self.started.elapsed();
        let (minor, major) = faults();
        self.sampler.stop()?;
        let end_rss = procdir::own_rss(&root);
        if let Some(rss) = end_rss {
            self.peaks.rss(rss);
        }
        // The end is often the peak (a block that loads something keeps it), and a
        // short block has no other PSS reading.
        if self.pss {
            if let Some(pss) = procdir::own_pss(&root) {
                self.peaks.pss(pss);
            }
        }
        let hwm_end = own_peak_rss(&root);
        let mut peak_rss = self.peaks.rss.load(Ordering::Relaxed);
        let hwm_rose = matches!((self.hwm, hwm_end), (Some(a), Some(b)) if b > a);
        if let (true, Some(hwm)) = (hwm_rose, hwm_end) {
            peak_rss = peak_rss.max(hwm);
        }
        let peak_pss = self.peaks.pss.load(Ordering::Relaxed);
        Ok(BlockFigures {
            wall_seconds: wall.as_secs_f64(),
            minor_faults: minor.saturating_sub(self.faults.0),
            major_faults: major.saturating_sub(self.faults.1),
            start_rss: self.rss,
            end_rss,
            peak_rss: (peak_rss > 0).then_some(peak_rss),
            peak_rss_exact: hwm_rose,
            peak_pss: (peak_pss != NONE).then_some(peak_pss),
            rss_samples: self.peaks.rss_samples.load(Ordering::Relaxed),
            pss_samples: self.peaks.pss_samples.load(Ordering::Relaxed),
        })
    }
}

/// The calling process's peak resident set so far (`VmHWM`).
fn own_peak_rss(root: &Root) -> Option<u64> {
    procdir::own_status(root)?.memory?.vm_hwm
}

/// (minor, major) faults of the whole process, all threads.
fn faults() -> (u64, u64) {
    // SAFETY: getrusage fills the zeroed struct we own; RUSAGE_SELF cannot fail.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    (usage.ru_minflt as u64, usage.ru_majflt as u64)
}

/// The line measurement `memtriage run` puts in a job's Python processes, as Python
/// source, for a process to measure its own blocks line by line (`measure_block()`
/// in it starts one; the returned sampler's `stop()` gives the block's table).
pub const PYTHON_LINE_SAMPLER: &str = include_str!("../supervise/python_hook/memtriage_lines.py");

/// Tells the kinds of a block's lines (the table `stop()` gave, as JSON) and orders
/// them as `run`'s report does; the same table back, as JSON.
pub fn tell_lines(table: &str) -> Result<String> {
    let mut process: crate::model::lines::ProcessLines = serde_json::from_str(table)
        .map_err(|e| crate::error::Error::bad_input("the line table", e.to_string()))?;
    crate::diagnose::lines::classify(std::slice::from_mut(&mut process));
    serde_json::to_string(&process).map_err(|e| crate::error::Error::internal(e.to_string()))
}
