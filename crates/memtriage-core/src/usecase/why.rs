//! `why`: the verdict on a death nobody supervised, from the machine's history (what
//! [`super::record`] kept): the latest OOM kill, fatal fault or kernel crash (of one
//! pid, or since a time), with the growth before it, what else held memory, and the
//! fix.

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::history::store::Store;
use crate::history::why::record_notes;

pub use crate::history::why::WhyRequest;
pub use crate::model::why::{Death, Growth, WhyReport, WHY_SCHEMA};
pub use crate::watch::intervals::now_ms;

/// What the history holds about the death asked for.
#[derive(Debug)]
pub struct WhyAnswer {
    /// The death and its explanation; `None` where none was recorded.
    pub report: Option<WhyReport>,
    /// The first and last interval recorded (ms since the epoch); `None`: empty.
    pub span: Option<(i64, i64)>,
    /// What the history could not see (another user's processes, a paused recorder).
    pub notes: Vec<String>,
    /// Deaths the record holds that the request left out (another pid, before
    /// `--since`), counted only when the request matched none.
    pub left_out: Option<LeftOut>,
}

/// Deaths outside the request, and the latest of them, so it can be asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOut {
    pub deaths: usize,
    pub latest_pid: Option<i32>,
    /// `python3 (pid 4242)`.
    pub latest: String,
    pub latest_ms: i64,
}

/// Reads the history at `db` (never writes it) for the death `request` names.
pub fn why(db: &Path, request: &WhyRequest) -> Result<WhyAnswer> {
    if let Some(bad) = request.pid.filter(|p| *p <= 0) {
        return Err(Error::bad_input(
            format!("pid {bad}"),
            "not a valid process id (ids are positive)",
        ));
    }
    let store = Store::open_read(db)?;
    let report = crate::history::why::why(&store, request)?;
    let narrowed = request.pid.is_some() || request.since_ms.is_some();
    let left_out = match report {
        None if narrowed => left_out(&store)?,
        _ => None,
    };
    Ok(WhyAnswer {
        report,
        span: store.span()?,
        notes: record_notes(&store)?,
        left_out,
    })
}

/// Every death the record holds, whatever was asked.
fn left_out(store: &Store) -> Result<Option<LeftOut>> {
    let kills = store.kills(i64::MIN, None)?;
    let faults = store.faults(i64::MIN, None)?;
    let crashes = store.crashes(i64::MIN, None)?;
    let latest = [
        kills.first().map(|k| (k.t_ms, k.pid, k.victim.clone())),
        faults
            .first()
            .map(|f| (f.t_ms, Some(f.pid), Some(f.comm.clone()))),
        crashes.first().map(|c| (c.t_ms, c.pid, c.comm.clone())),
    ]
    .into_iter()
    .flatten()
    .max_by_key(|(at, _, _)| *at);
    Ok(latest.map(|(at, pid, victim)| LeftOut {
        deaths: kills.len() + faults.len() + crashes.len(),
        latest_pid: pid,
        latest: crate::model::why::victim_label(victim.as_deref(), pid),
        latest_ms: at,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::history::{Interval, KillRow, MachineRow};

    /// Issue 28, defect 8: `why` that matched nothing said "no death recorded" though
    /// the record held one the question left out; it names it now, and how to ask.
    #[test]
    fn regression_a_question_that_matches_nothing_names_the_deaths_it_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let mut store = Store::open(&db).unwrap();
        let mut interval = Interval {
            machine: MachineRow {
                t_ms: 1_000,
                ..MachineRow::default()
            },
            ..Interval::default()
        };
        interval.kills.push(KillRow {
            t_ms: 1_500,
            pid: Some(42),
            victim: Some("python3".into()),
            cgroup: Some("/memtriage-run-40".into()),
            limit_cgroup: Some("/memtriage-run-40".into()),
            killer: "kernel".into(),
            ..KillRow::default()
        });
        store.write(&interval).unwrap();
        drop(store);
        let other_pid = WhyRequest {
            pid: Some(7),
            ..WhyRequest::default()
        };
        let answer = why(&db, &other_pid).unwrap();
        assert!(answer.report.is_none());
        let left = answer.left_out.expect("the kill of pid 42 is left out");
        assert_eq!((left.deaths, left.latest_pid), (1, Some(42)));
        assert_eq!(left.latest, "python3 (pid 42)");
        let everything = why(&db, &WhyRequest::default()).unwrap();
        assert!(everything.report.is_some() && everything.left_out.is_none());
    }
}
