//! What the minutes before a kill show beside the kill itself: forked workers of the
//! victim's job holding copies of their parent's memory (`fork.copy-on-write`), a
//! storm of the job's major faults (`run.major-fault-storm`), and the machine's tasks
//! all stalled on memory (`run.swap-thrashing`); each built by `run`'s builder, with
//! `run`'s thresholds.

use std::collections::BTreeMap;

use crate::diagnose::cow::{self, CopyOnWrite, Measured};
use crate::diagnose::pressure::{self, MajorFaults, Swapping};
use crate::error::Result;
use crate::model::finding::{Evidence, Finding, Quantity};
use crate::model::history::{JobPoint, ProcessBrief};
use crate::model::units::iec;

use crate::history::store::Store;

/// How far before a death a fault storm, the machine's stalls, or copying workers are
/// looked for.
const LOOK_BACK_MS: i64 = 10 * 60 * 1000;

/// `run.major-fault-storm` from the job's series (its major faults between its
/// intervals) in the minutes before the death.
pub(super) fn fault_storm(series: &[JobPoint], at_ms: i64) -> Option<Finding> {
    let points: Vec<(i64, u64)> = series
        .iter()
        .filter(|p| p.t_ms >= at_ms - LOOK_BACK_MS)
        .filter_map(|p| Some((p.t_ms, p.major_faults?)))
        .collect();
    let mut peak: Option<(f64, i64)> = None;
    let mut total = 0u64;
    for w in points.windows(2) {
        // Counters of workers that ended can step down: a rise is never negative.
        let rise = w[1].1.saturating_sub(w[0].1);
        total += rise;
        let seconds = (w[1].0 - w[0].0) as f64 / 1000.0;
        let rate = rise as f64 / seconds;
        if seconds > 0.0 && peak.is_none_or(|(p, _)| rate > p) {
            peak = Some((rate, w[1].0));
        }
    }
    let (rate, t) = peak?;
    pressure::major_fault_storm(MajorFaults {
        peak_per_second: rate,
        total,
        evidence: vec![
            Evidence::text(
                "peak major faults",
                format!(
                    "{rate:.0}/s, {:.0} s before the death",
                    (at_ms - t) as f64 / 1000.0
                ),
                "the record's job fault counters, between intervals",
            ),
            Evidence::text(
                "major faults in the 10 minutes before",
                format!("{total} (about {} read 4 KiB at a time)", iec(total * 4096)),
                "the record's job fault counters",
            )
            .with_quantity(Quantity::Count(total)),
        ],
    })
}

/// `run.swap-thrashing` from the record: the machine's tasks all stalled on memory
/// (PSI full) in the minutes before the death.
pub(super) fn stall(store: &Store, at_ms: i64) -> Result<Option<Finding>> {
    let rows = store.machine_between(at_ms - LOOK_BACK_MS, at_ms)?;
    let peak = rows
        .iter()
        .filter_map(|m| Some((m.psi_full?, m)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let Some((stall, m)) = peak else {
        return Ok(None);
    };
    let mut evidence = vec![Evidence::text(
        "peak time all tasks stalled on memory",
        format!(
            "{stall:.1}% (PSI full avg10), {:.0} s before the death",
            (at_ms - m.t_ms) as f64 / 1000.0
        ),
        "the record's /proc/pressure/memory",
    )
    .with_quantity(Quantity::Ratio(stall / 100.0))];
    if let Some(swap) = m.swap_used {
        evidence.push(
            Evidence::text("swap in use then", iec(swap), "the record's /proc/meminfo")
                .with_quantity(Quantity::Bytes(swap)),
        );
    }
    Ok(pressure::thrashing(Swapping {
        pages_per_second: None,
        peak_stall_percent: Some(stall),
        evidence,
    }))
}

/// The latest interval before `at_ms` that shows the job's workers holding copies:
/// a PSS reading lags a growing RSS, so the last interval alone can hide it.
pub(super) fn copying(
    store: &Store,
    job: &str,
    victim: Option<i32>,
    at_ms: i64,
) -> Result<Option<Finding>> {
    let rows = store.processes_between(at_ms - LOOK_BACK_MS, at_ms)?;
    let mut by_t: BTreeMap<i64, Vec<ProcessBrief>> = BTreeMap::new();
    for (t, p) in rows {
        by_t.entry(t).or_default().push(p);
    }
    Ok(by_t.iter().rev().find_map(|(&t, largest)| {
        let mut f = copying_workers(largest, job, victim)?;
        let before = (at_ms - t) as f64 / 1000.0;
        for e in &mut f.evidence {
            e.value = format!("{} ({before:.0} s before the kill)", e.value);
        }
        Some(f)
    }))
}

/// Forked workers of one parent worth naming: this big each, on average.
const COPYING_WORKER_MIN_RSS: u64 = 64 << 20;
/// PSS this close to RSS: a worker's pages are its own, not its parent's shared.
const COPYING_PSS_SHARE: f64 = 0.7;

/// `fork.copy-on-write` from the record: workers of the victim's job forked
/// without exec whose PSS is near their RSS at one interval, so they held copies of
/// their parent's memory rather than sharing it.
pub(super) fn copying_workers(
    largest: &[ProcessBrief],
    job: &str,
    victim: Option<i32>,
) -> Option<Finding> {
    let in_job: Vec<&ProcessBrief> = largest.iter().filter(|p| p.job == job).collect();
    let workers: Vec<&ProcessBrief> = in_job
        .iter()
        .copied()
        .filter(|w| w.forked_without_exec == Some(true))
        .filter(|w| in_job.iter().any(|p| p.pid == w.ppid))
        .collect();
    let parent = in_job
        .iter()
        .find(|p| workers.first().is_some_and(|w| w.ppid == p.pid))?;
    let rss: u64 = workers.iter().map(|w| w.rss).sum();
    let pss: u64 = workers.iter().map(|w| w.pss).sum::<Option<u64>>()?;
    let n = workers.len() as u64;
    if rss / n < COPYING_WORKER_MIN_RSS || (pss as f64) < COPYING_PSS_SHARE * rss as f64 {
        return None;
    }
    let evidence = workers
        .iter()
        .map(|w| {
            Evidence::text(
                format!(
                    "worker {}[{}]{}",
                    w.comm,
                    w.pid,
                    if Some(w.pid) == victim {
                        ", the victim"
                    } else {
                        ""
                    }
                ),
                format!(
                    "RSS {}, PSS {}: forked without exec, its pages mostly its own",
                    iec(w.rss),
                    w.pss.map(iec).unwrap_or_default()
                ),
                "the record's largest processes",
            )
            .with_quantity(Quantity::Bytes(w.pss.unwrap_or(0)))
        })
        .collect();
    Some(cow::copy_on_write(CopyOnWrite {
        parent: format!("{}[{}]", parent.comm, parent.pid),
        workers: workers.len(),
        bytes: pss,
        measured: Measured::OwnPss,
        evidence,
    }))
}
