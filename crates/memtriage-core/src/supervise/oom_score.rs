//! `--oom-score-adj`: protect a job from the OOM killer, or offer it first. The value
//! is written between fork and exec (`child::spawn`), where a refusal could only
//! surface as a bare errno; so the kernel's rule is checked here first and a refusal
//! says why.

use crate::error::{Error, Result};
use crate::probe::procdir;
use crate::probe::root::Root;

/// The kernel's range for `oom_score_adj`.
pub const RANGE: std::ops::RangeInclusive<i32> = -1000..=1000;

const CAP_SYS_RESOURCE: u32 = 24;

/// Whether this process may give its children `value`: raising is always allowed;
/// lowering below the current value needs CAP_SYS_RESOURCE.
pub fn check(root: &Root, value: i32) -> Result<()> {
    if !RANGE.contains(&value) {
        return Err(Error::bad_input(
            "oom_score_adj",
            format!("{value} is outside the kernel's range -1000..1000"),
        ));
    }
    let Some(current) = procdir::own_oom_score_adj(root) else {
        // Unknown: the write before exec is the judge, and its errno is reported.
        return Ok(());
    };
    let can_lower = crate::probe::system::has_capability(root, CAP_SYS_RESOURCE);
    if value < current && !can_lower {
        return Err(Error::refused(
            "oom_score_adj",
            format!(
                "lowering it below the current {current} to {value} needs CAP_SYS_RESOURCE, which this process lacks"
            ),
            "run as root, give the job a higher value, or ask for protection where the job is started (systemd OOMScoreAdjust=, a Kubernetes Guaranteed QoS class)",
        ));
    }
    Ok(())
}
