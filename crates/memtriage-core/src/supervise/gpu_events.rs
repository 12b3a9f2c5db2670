//! The NVIDIA driver's events while a job runs (critical Xids, ECC errors), on a
//! thread of their own that waits on NVML; where the driver cannot deliver them the
//! run says why instead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::NvmlError;

use crate::model::run::GpuEvent;
use crate::probe::gpu;

/// How long one wait blocks: the most the run's end waits for the thread.
const WAIT_MS: u32 = 100;

type Outcome = (Vec<GpuEvent>, Option<String>);

pub struct GpuEventWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Outcome>>,
}

impl GpuEventWatch {
    /// `None` where there is no NVML to ask (the run's GPU report says why).
    pub fn start(epoch: Instant) -> Option<Self> {
        gpu::gpus().ok()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("memtriage-gpu-events".into())
            .spawn(move || watch(epoch, &stopped))
            .ok()?;
        Some(GpuEventWatch {
            stop,
            thread: Some(thread),
        })
    }

    /// The events seen, and why none could be followed when that was the case.
    pub fn finish(mut self) -> Outcome {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => (Vec::new(), Some("the GPU event thread failed".into())),
            None => (Vec::new(), None),
        }
    }
}

impl Drop for GpuEventWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn watch(epoch: Instant, stop: &AtomicBool) -> Outcome {
    let gpus = match gpu::gpus() {
        Ok(g) => g,
        Err(reason) => return (Vec::new(), Some(reason.to_string())),
    };
    let set = match gpus.events() {
        Ok(s) => s,
        Err(reason) => return (Vec::new(), Some(reason)),
    };
    let mut events = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match set.wait(WAIT_MS) {
            Ok(data) => {
                let kind = if data.event_type.contains(EventTypes::CRITICAL_XID_ERROR) {
                    "xid"
                } else if data.event_type.contains(EventTypes::DOUBLE_BIT_ECC_ERROR) {
                    "ecc-double-bit"
                } else {
                    "ecc-single-bit"
                };
                events.push(GpuEvent {
                    at_seconds: epoch.elapsed().as_secs_f64(),
                    index: data.device.index().ok(),
                    kind: kind.into(),
                    xid: match data.event_data {
                        Some(XidError::Value(v)) if kind == "xid" => Some(v),
                        _ => None,
                    },
                });
            }
            Err(NvmlError::Timeout) => {}
            Err(e) => return (events, Some(format!("NVML stopped delivering events: {e}"))),
        }
    }
    (events, None)
}
