//! Memory pressure a job ran under: a storm of major faults (its memory read back
//! from disk 4 KiB at a time), and swap thrashing (the machine's tasks waiting on
//! swap instead of computing). One threshold and one text each, for `run` (over the
//! run) and `why` (in the minutes before a death).

use crate::model::finding::{Assessment, CauseKind, Certainty, Evidence, Finding, Severity};
use crate::model::ids;

/// Major faults per second that count as a storm: each is a 4 KiB read from disk
/// taken synchronously by a stalled thread.
pub const MAJOR_FAULT_STORM_PER_SECOND: f64 = 500.0;
pub const MAJOR_FAULT_STORM_TOTAL: u64 = 10_000;
/// Pages swapped per second of the job's wall time that count as thrashing.
pub const THRASHING_PAGES_PER_SECOND: f64 = 1000.0;
/// ... or all tasks stalled on memory this share of the time (PSI full avg10, %).
pub const THRASHING_STALL_PERCENT: f64 = 10.0;

fn capacity() -> Option<Assessment> {
    Some(Assessment {
        certainty: Certainty::Confirmed,
        cause: CauseKind::Capacity,
        confirm: String::new(),
    })
}

/// The major faults measured, with the evidence of them.
#[derive(Debug, Clone)]
pub struct MajorFaults {
    /// The highest rate between two readings.
    pub peak_per_second: f64,
    /// All of them over what was looked at.
    pub total: u64,
    pub evidence: Vec<Evidence>,
}

/// `run.major-fault-storm` where the faults reach a storm's rate and count.
pub fn major_fault_storm(faults: MajorFaults) -> Option<Finding> {
    if faults.peak_per_second < MAJOR_FAULT_STORM_PER_SECOND
        || faults.total < MAJOR_FAULT_STORM_TOTAL
    {
        return None;
    }
    Some(Finding {
        assessment: capacity(),
        id: ids::RUN_MAJOR_FAULT_STORM.into(),
        severity: Severity::Warn,
        title: format!(
            "major-fault storm: up to {:.0} page reads from disk per second",
            faults.peak_per_second
        ),
        evidence: faults.evidence,
        why: "Each major fault stalls a thread on a small synchronous disk read: a model or dataset paged in through mmap 4 KiB at a time loads far below the disk's speed.".into(),
        fix: "Read the file into the page cache first with large sequential reads (`cat FILE > /dev/null`, `vmtouch -t FILE`), populate the mapping (MADV_POPULATE_READ / MAP_POPULATE), or load with large reads instead of touching a mapping lazily.".into(),
    })
}

/// Swapping measured, with the evidence of it; each `None` where not measured.
#[derive(Debug, Clone)]
pub struct Swapping {
    /// Pages swapped in and out per second.
    pub pages_per_second: Option<f64>,
    /// The highest share of time all tasks stalled on memory (PSI full avg10, %).
    pub peak_stall_percent: Option<f64>,
    pub evidence: Vec<Evidence>,
}

/// `run.swap-thrashing` where swapping or stalls reach thrashing.
pub fn thrashing(swapping: Swapping) -> Option<Finding> {
    let pages = swapping.pages_per_second.unwrap_or(0.0);
    let stall = swapping.peak_stall_percent.unwrap_or(0.0);
    if pages < THRASHING_PAGES_PER_SECOND && stall < THRASHING_STALL_PERCENT {
        return None;
    }
    Some(Finding {
        assessment: capacity(),
        id: ids::RUN_SWAP_THRASHING.into(),
        severity: Severity::Warn,
        title: "swap thrashing: memory was paged to and from disk while the job ran".into(),
        evidence: swapping.evidence,
        why: "A job whose working set does not fit spends its time waiting on swap instead of computing.".into(),
        fix: "Lower the job's memory (batch size, workers) or give it more; on a dedicated training box turn swap off so it fails fast (swapoff -a) — see `memtriage doctor`.".into(),
    })
}
