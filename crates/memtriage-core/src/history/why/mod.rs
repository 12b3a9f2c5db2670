//! `why`: a death nobody supervised, explained from the record. The findings `run`
//! gives, built by the same builders: for an OOM kill (`run.oom-killed`), who died and
//! when, the limit that was hit, how the victim's job grew and since when (a
//! least-squares slope from the start of the growth), and what else held memory at
//! the last interval before; for a fault the kernel logged, `run`'s finding for that
//! signal; for a kernel crash, `run`'s reading of its report.
//!
//! - `kill`: an OOM kill, step by step
//! - `fault`: a segfault, a bus error, an illegal instruction
//! - `crash`: a kernel oops, BUG, GPF or panic, its lines recorded
//! - `userspace`: a kill by a userspace killer, against the threshold it acts at
//! - `before`: what the minutes before a kill show: workers that copied their
//!   parent's memory, a storm of major faults, the machine stalled on memory

mod before;
mod crash;
mod fault;
mod kill;
#[cfg(test)]
mod tests;
mod userspace;

use crate::error::Result;
use crate::model::why::WhyReport;
use crate::parse::slurm::job_of_cgroup;

use super::store::Store;

/// How far before a death the growth is looked for.
const LOOK_BACK_MS: i64 = 6 * 3600 * 1000;

#[derive(Debug, Clone, Default)]
pub struct WhyRequest {
    pub pid: Option<i32>,
    /// Only deaths at or after this (Unix ms).
    pub since_ms: Option<i64>,
    /// Only deaths in this Slurm job's cgroups.
    pub slurm_job: Option<u64>,
}

/// The most recent death matching `request`, explained; `None` where the record has
/// none.
pub fn why(store: &Store, request: &WhyRequest) -> Result<Option<WhyReport>> {
    let since = request.since_ms.unwrap_or(i64::MIN);
    let of_job = |cgroups: [Option<&str>; 2]| match request.slurm_job {
        None => true,
        Some(id) => cgroups
            .into_iter()
            .flatten()
            .any(|c| job_of_cgroup(c).is_some_and(|(job, _)| job == id)),
    };
    let kill = store
        .kills(since, request.pid)?
        .into_iter()
        .find(|k| of_job([k.cgroup.as_deref(), k.limit_cgroup.as_deref()]));
    let fault = store
        .faults(since, request.pid)?
        .into_iter()
        .find(|f| of_job([f.cgroup.as_deref(), None]));
    let crash = store
        .crashes(since, request.pid)?
        .into_iter()
        .find(|c| of_job([c.cgroup.as_deref(), None]));
    let latest = [
        kill.as_ref().map(|k| k.t_ms),
        fault.as_ref().map(|f| f.t_ms),
        crash.as_ref().map(|c| c.t_ms),
    ];
    // The latest death. At the same moment (max_by_key keeps the last of equals) a
    // kill is said before a fault, and a crash, which explains the rest, before both.
    let order = [1, 0, 2];
    let Some(pick) = order
        .into_iter()
        .filter(|&i| latest[i].is_some())
        .max_by_key(|&i| latest[i])
    else {
        return Ok(None);
    };
    match pick {
        0 => kill.map(|k| kill::explain(store, k)).transpose(),
        1 => fault.map(|f| fault::explain(store, f)).transpose(),
        _ => crash.map(|c| crash::explain(store, c)).transpose(),
    }
}

/// What the record itself could not hold, whatever is asked of it: a recorder
/// without the right to read other users' PSS.
pub fn record_notes(store: &Store) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    if store.meta("reads_all_pss")?.as_deref() == Some("false") {
        let uid = store.meta("recorder_uid")?.unwrap_or_else(|| "?".into());
        notes.push(format!(
            "the recorder ran as uid {uid} without CAP_SYS_PTRACE: other users' processes have \
             no PSS or swap in this record (RSS only); run it as root or with that capability \
             (the systemd unit in deploy/ does)"
        ));
    }
    Ok(notes)
}
