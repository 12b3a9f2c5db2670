//! `track()`: a block of the caller's own code measured: its memory at each end, read
//! here, and its peak between, from the engine's sampler over the caller's pid.

use crate::parse::{smaps_rollup, statm, status};
use crate::probe::root::Root;

pub use crate::sampler::{PssBudget, Sample, SamplerConfig, SamplerThread, Scope};

/// The calling process's resident set now (`/proc/self/statm`); `None` where unreadable.
pub fn own_rss() -> Option<u64> {
    let bytes = Root::host().read("/proc/self/statm").ok()?;
    statm::parse(&bytes).map(|s| s.resident * rustix::param::page_size() as u64)
}

/// The calling process's PSS now (`/proc/self/smaps_rollup`, which walks every
/// mapping: slower than [`own_rss`]).
pub fn own_pss() -> Option<u64> {
    let bytes = Root::host().read("/proc/self/smaps_rollup").ok()?;
    smaps_rollup::parse(&bytes).map(|r| r.pss)
}

/// The calling process's peak resident set so far (`VmHWM` of `/proc/self/status`).
pub fn own_peak_rss() -> Option<u64> {
    let bytes = Root::host().read("/proc/self/status").ok()?;
    status::parse(&bytes).memory?.vm_hwm
}
