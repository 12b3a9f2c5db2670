//! `memtriage.track()`: what a block of Python code cost in memory.
//!
//! The engine's sampler follows this process on its own thread (no GIL, so it
//! neither slows the tracked code nor waits for it): its RSS every `interval`, and
//! PSS on the budget for a process measuring itself ([`PssBudget::SELF`]: at most
//! every 200 ms and within 1% of the wall time, since a `smaps_rollup` read walks
//! the page tables under the mmap lock). Faults come from `getrusage` deltas, exact
//! and for all threads. The peak RSS also uses the kernel's own high-water mark
//! (`VmHWM`): if it rose during the block, the block set it, and it is exact even
//! between samples.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memtriage_core::usecase::track::{
    own_peak_rss, own_pss, own_rss, PssBudget, Sample, SamplerConfig, SamplerThread, Scope,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::guard;

/// Marks "no PSS reading yet" (0 would be a reading of 0 bytes).
const NONE: u64 = u64::MAX;

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

struct Running {
    started: Instant,
    faults: (u64, u64),
    hwm: Option<u64>,
    rss: Option<u64>,
    peaks: Arc<Peaks>,
    sampler: SamplerThread,
}

/// One measurement of one block: `start()`, then `stop()` returns the figures.
/// The Python class `memtriage.track` wraps it (context manager and decorator).
#[pyclass(module = "memtriage._native")]
pub struct Tracker {
    interval: Duration,
    pss: bool,
    running: Option<Running>,
}

#[pymethods]
impl Tracker {
    #[new]
    #[pyo3(signature = (interval=0.001, pss=true))]
    fn new(interval: f64, pss: bool) -> PyResult<Self> {
        if !(interval.is_finite() && (0.0001..=10.0).contains(&interval)) {
            return Err(PyValueError::new_err(format!(
                "interval must be between 0.0001 and 10 seconds, got {interval}"
            )));
        }
        Ok(Tracker {
            interval: Duration::from_secs_f64(interval),
            pss,
            running: None,
        })
    }

    /// Starts the sampling thread. The GIL is held only for a few microseconds.
    fn start(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.running.is_some() {
            return Err(PyRuntimeError::new_err(
                "this tracker is already running; use a new one for a nested block",
            ));
        }
        let (interval, pss) = (self.interval, self.pss);
        let running = py.detach(|| {
            guard(|| {
                let rss = own_rss();
                let hwm = own_peak_rss();
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
                })
                .map_err(|e| {
                    PyRuntimeError::new_err(format!(
                        "memtriage.track: could not start its sampling thread: {e}"
                    ))
                })?;
                // Taken last, so the thread's start is not counted in the block.
                let faults = faults();
                Ok(Running {
                    started: Instant::now(),
                    faults,
                    hwm,
                    rss,
                    peaks,
                    sampler,
                })
            })
        })?;
        self.running = Some(running);
        Ok(())
    }

    /// Stops sampling and returns the block's figures as a dict (bytes, counts,
    /// seconds). The GIL is released while the thread finishes a read in progress.
    fn stop<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Some(run) = self.running.take() else {
            return Err(PyRuntimeError::new_err("this tracker was not started"));
        };
        let pss = self.pss;
        let r = py.detach(move || {
            guard(|| {
                let wall = run.started.elapsed();
                let (minor, major) = faults();
                run.sampler.stop().map_err(crate::errors::to_py_err)?;
                let end_rss = own_rss();
                if let Some(rss) = end_rss {
                    run.peaks.rss(rss);
                }
                // The end is often the peak (a block that loads something keeps it),
                // and a short block has no other PSS reading.
                if pss {
                    if let Some(pss) = own_pss() {
                        run.peaks.pss(pss);
                    }
                }
                let hwm_end = own_peak_rss();
                let mut peak_rss = run.peaks.rss.load(Ordering::Relaxed);
                let hwm_rose = matches!((run.hwm, hwm_end), (Some(a), Some(b)) if b > a);
                if let (true, Some(hwm)) = (hwm_rose, hwm_end) {
                    peak_rss = peak_rss.max(hwm);
                }
                let peak_pss = run.peaks.pss.load(Ordering::Relaxed);
                Ok(Figures {
                    wall_seconds: wall.as_secs_f64(),
                    minor_faults: minor.saturating_sub(run.faults.0),
                    major_faults: major.saturating_sub(run.faults.1),
                    start_rss: run.rss,
                    end_rss,
                    peak_rss: (peak_rss > 0).then_some(peak_rss),
                    peak_rss_exact: hwm_rose,
                    peak_pss: (peak_pss != NONE).then_some(peak_pss),
                    rss_samples: run.peaks.rss_samples.load(Ordering::Relaxed),
                    pss_samples: run.peaks.pss_samples.load(Ordering::Relaxed),
                })
            })
        })?;
        let d = PyDict::new(py);
        d.set_item("wall_seconds", r.wall_seconds)?;
        d.set_item("minor_faults", r.minor_faults)?;
        d.set_item("major_faults", r.major_faults)?;
        d.set_item("start_rss", r.start_rss)?;
        d.set_item("end_rss", r.end_rss)?;
        d.set_item("peak_rss", r.peak_rss)?;
        d.set_item("peak_rss_exact", r.peak_rss_exact)?;
        d.set_item("peak_pss", r.peak_pss)?;
        d.set_item("rss_samples", r.rss_samples)?;
        d.set_item("pss_samples", r.pss_samples)?;
        Ok(d)
    }

    #[getter]
    fn running(&self) -> bool {
        self.running.is_some()
    }
}

struct Figures {
    wall_seconds: f64,
    minor_faults: u64,
    major_faults: u64,
    start_rss: Option<u64>,
    end_rss: Option<u64>,
    peak_rss: Option<u64>,
    peak_rss_exact: bool,
    peak_pss: Option<u64>,
    rss_samples: u64,
    pss_samples: u64,
}
