//! `track()`: a block of the caller's own code measured: its memory at each end, read
//! here, and its peak between, from the engine's sampler over the caller's pid.

use crate::probe::procdir;
use crate::probe::root::Root;

pub use crate::sampler::{PssBudget, Sample, SamplerConfig, SamplerThread, Scope};

/// The calling process's resident set now (`/proc/self/statm`); `None` where unreadable.
pub fn own_rss() -> Option<u64> {
    procdir::own_rss(&Root::host())
}

/// The calling process's PSS now (`/proc/self/smaps_rollup`, which walks every
/// mapping: slower than [`own_rss`]).
pub fn own_pss() -> Option<u64> {
    procdir::own_pss(&Root::host())
}

/// The calling process's peak resident set so far (`VmHWM` of `/proc/self/status`).
pub fn own_peak_rss() -> Option<u64> {
    procdir::own_status(&Root::host())?.memory?.vm_hwm
}
