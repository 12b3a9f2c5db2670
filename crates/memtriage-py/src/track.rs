//! `memtriage.track()`: what a block of Python code cost in memory, measured by the
//! engine (`memtriage_core::usecase::track`): the sampler follows this process on its
//! own thread, with no GIL, so it neither slows the tracked code nor waits for it.

use std::time::Duration;

use memtriage_core::usecase::track::Tracking;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::guard;

/// One measurement of one block: `start()`, then `stop()` returns the figures.
/// The Python class `memtriage.track` wraps it (context manager and decorator).
#[pyclass(module = "memtriage._native")]
pub struct Tracker {
    interval: Duration,
    pss: bool,
    running: Option<Tracking>,
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
                Tracking::start(interval, pss).map_err(|e| {
                    PyRuntimeError::new_err(format!(
                        "memtriage.track: could not start its sampling thread: {e}"
                    ))
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
        let r = py.detach(move || guard(|| run.stop().map_err(crate::errors::to_py_err)))?;
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

/// The line sampler's Python source (`memtriage_core::usecase::track`), which the
/// Python package loads as a module for `track(lines=True)`.
#[pyfunction]
pub fn line_sampler_source() -> &'static str {
    memtriage_core::usecase::track::PYTHON_LINE_SAMPLER
}

/// A block's line table (JSON) with each line's kind told, as `run` tells them.
#[pyfunction]
pub fn tell_lines(table: &str) -> PyResult<String> {
    guard(|| memtriage_core::usecase::track::tell_lines(table).map_err(crate::errors::to_py_err))
}
