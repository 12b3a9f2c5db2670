//! A kill a userspace OOM killer made, explained from the record as `run` explains
//! one (`run.userspace-oom-kill`): the killer's own line, its settings when it acted
//! (the recorder found it running), how the machine stood against its threshold at
//! the last moment recorded before, and the fix in that killer's terms.

use crate::diagnose::killers::{killed_by, standing_when, LowPoint};
use crate::error::Result;
use crate::model::finding::{Evidence, Finding};
use crate::model::history::{KillRow, KillSnapshot};

use crate::history::store::Store;

/// How far before the kill the machine's figures are looked for: the recorder writes
/// them each second under pressure, each interval otherwise.
const STANDING_LOOK_BACK_MS: i64 = 120_000;

/// The signal the killer said it sent; earlyoom's first is SIGTERM.
pub(super) fn signal(snapshot: &KillSnapshot) -> i32 {
    match snapshot.signal.as_deref() {
        Some("SIGTERM") => libc::SIGTERM,
        _ => libc::SIGKILL,
    }
}

/// The finding for `kill`, where the record holds the killer's settings; `None`
/// (the kernel's finding, naming the killer) where it does not.
pub(super) fn finding(
    store: &Store,
    kill: &KillRow,
    snapshot: &KillSnapshot,
    subject: &str,
    evidence: Vec<Evidence>,
) -> Result<Option<Finding>> {
    let Some(killer) = snapshot.killer_settings.as_ref() else {
        return Ok(None);
    };
    let machine = store.machine_between(kill.t_ms - STANDING_LOOK_BACK_MS, kill.t_ms)?;
    let at = machine
        .iter()
        .rev()
        .find_map(|m| Some((m.t_ms, m.mem_available?)))
        .and_then(|(t_ms, available)| {
            let low = LowPoint {
                available,
                at_seconds: 0.0,
                node_available: None,
                bytes_per_second: 0.0,
                interval: 1.0,
            };
            let before = (kill.t_ms - t_ms) as f64 / 1000.0;
            standing_when(killer, &low, &format!("{before:.0} s before the kill"))
        })
        .map(|at| {
            Evidence::text(
                "the machine just before the kill",
                at,
                "the record's MemAvailable",
            )
        });
    // The killer's own line is in the record: it is confirmed.
    Ok(Some(killed_by(
        killer,
        at,
        signal(snapshot),
        subject,
        true,
        evidence,
    )))
}
