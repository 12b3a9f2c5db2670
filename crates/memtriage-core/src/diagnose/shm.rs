//! /dev/shm filling up: DataLoader workers hand their batches to the main process
//! through it, and die of `Bus error` when it is full. One measure of "full" and one
//! fix, for `run` (its peak during the run) and `why` (the last interval before a
//! death).

use crate::model::finding::{Assessment, CauseKind, Certainty, Evidence, Finding, Severity};
use crate::model::ids;

/// /dev/shm this full explains a bus error (and is a finding of its own).
pub const SHM_FULL_SHARE: f64 = 0.9;

/// The fix for a /dev/shm too small for the job.
pub const GIVE_SHM_ROOM: &str = "Give /dev/shm room: docker run --shm-size=16g; Kubernetes: an \
     emptyDir with medium: Memory mounted at /dev/shm; or mount -o remount,size=16G /dev/shm. \
     Or pass batches through files: torch.multiprocessing.set_sharing_strategy('file_system').";

/// /dev/shm's use against its size at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmUse {
    pub used: u64,
    /// Never 0 (see [`ShmUse::new`]).
    pub size: u64,
}

impl ShmUse {
    /// `None` where either is unknown, or the size is 0 (no /dev/shm to fill).
    pub fn new(used: Option<u64>, size: Option<u64>) -> Option<ShmUse> {
        Some(ShmUse {
            used: used?,
            size: size.filter(|&s| s > 0)?,
        })
    }

    pub fn share(self) -> f64 {
        self.used as f64 / self.size as f64
    }

    pub fn is_full(self) -> bool {
        self.share() >= SHM_FULL_SHARE
    }
}

/// `run.shm-full` where `peak` is full: /dev/shm at its fullest, with the evidence
/// of that reading.
pub fn filled_up(peak: ShmUse, evidence: Vec<Evidence>) -> Option<Finding> {
    if !peak.is_full() {
        return None;
    }
    Some(Finding {
        id: ids::RUN_SHM_FULL.into(),
        severity: Severity::Error,
        title: format!(
            "/dev/shm filled up ({:.0}% at its peak)",
            peak.share() * 100.0
        ),
        evidence,
        why: "DataLoader workers hand batches to the main process through /dev/shm; when it \
              is full they die with `Bus error`."
            .into(),
        fix: GIVE_SHM_ROOM.into(),
        assessment: Some(Assessment {
            certainty: Certainty::Confirmed,
            cause: CauseKind::Configuration,
            confirm: String::new(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_is_nine_tenths_of_a_known_size() {
        assert_eq!(ShmUse::new(Some(1), Some(0)), None);
        assert_eq!(ShmUse::new(None, Some(10)), None);
        let full = ShmUse::new(Some(90), Some(100)).unwrap();
        assert!(full.is_full());
        assert!(!ShmUse::new(Some(89), Some(100)).unwrap().is_full());
        let f = filled_up(full, Vec::new()).unwrap();
        assert_eq!(f.title, "/dev/shm filled up (90% at its peak)");
        assert!(filled_up(ShmUse { used: 1, size: 100 }, Vec::new()).is_none());
    }
}
