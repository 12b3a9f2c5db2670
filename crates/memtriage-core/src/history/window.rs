//! A time window of the record as a run's recording ([`Record`]), so `report --db`
//! draws it with the page `run --record` gets: memory of the largest processes (of
//! one job, or all), the machine's swap and /dev/shm, fault rates, and the window's
//! OOM kills and fatal faults as events.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::model::run::{Outcome, Record, RecordedEvent, RecordedProcess, RecordedSample};
use crate::model::units::iec;

use super::store::Store;

/// The record between `from_ms` and `to_ms`, of `job` alone where given; times in
/// the result are seconds since `from_ms`.
pub fn record_between(
    store: &Store,
    from_ms: i64,
    to_ms: i64,
    job: Option<&str>,
) -> Result<Record> {
    if to_ms < from_ms {
        return Err(Error::bad_input(
            "the window",
            "it ends before it starts: --from must be earlier than --to",
        ));
    }
    let seconds = |t: i64| (t - from_ms) as f64 / 1000.0;
    let machine = store.machine_between(from_ms, to_ms)?;
    let mut jobs = store.jobs_between(from_ms, to_ms)?;
    if let Some(j) = job {
        jobs.retain(|(_, row)| row.job == j);
    }
    let mut by_t: HashMap<i64, (u64, Option<u64>, bool, u64, u64)> = HashMap::new();
    for (t, row) in &jobs {
        let e = by_t.entry(*t).or_insert((0, Some(0), false, 0, 0));
        e.0 += row.rss;
        e.1 = match (e.1, row.pss) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        e.2 = true;
        e.3 += row.minor_faults;
        e.4 += row.major_faults;
    }
    let mut processes: HashMap<i64, Vec<RecordedProcess>> = HashMap::new();
    for (t, p) in store.processes_between(from_ms, to_ms)? {
        if job.is_some_and(|j| p.job != j) {
            continue;
        }
        processes.entry(t).or_default().push(RecordedProcess {
            pid: p.pid,
            ppid: p.ppid,
            comm: p.comm,
            rank: None,
            rss: p.rss,
            minflt: 0,
            majflt: 0,
            pss: p.pss,
            uss: None,
        });
    }
    let mut samples = Vec::with_capacity(machine.len());
    let mut last: Option<(i64, u64, u64)> = None;
    for m in &machine {
        let (rss, pss, any, minor, major) = by_t.get(&m.t_ms).copied().unwrap_or_default();
        if job.is_some() && !any {
            continue;
        }
        // Counters of jobs that came and went can step down: a rate is never negative.
        let (minor_rate, major_rate) = match last {
            Some((t0, mi0, ma0)) if m.t_ms > t0 => {
                let dt = (m.t_ms - t0) as f64 / 1000.0;
                (
                    minor.saturating_sub(mi0) as f64 / dt,
                    major.saturating_sub(ma0) as f64 / dt,
                )
            }
            _ => (0.0, 0.0),
        };
        last = Some((m.t_ms, minor, major));
        samples.push(RecordedSample {
            t: seconds(m.t_ms),
            processes: processes.remove(&m.t_ms).unwrap_or_default(),
            tree_rss: rss,
            tree_pss: pss.filter(|_| any),
            shm_used: m.shm_used,
            swap_used: m.swap_used,
            cgroup_usage: None,
            psi_some_avg10: m.psi_some,
            minor_faults_per_second: minor_rate,
            major_faults_per_second: major_rate,
            gpu_used: None,
        });
    }
    let mut events = Vec::new();
    for k in store.kills(from_ms, None)? {
        if k.t_ms > to_ms {
            continue;
        }
        events.push(RecordedEvent {
            t: seconds(k.t_ms),
            event: "oom-kill".into(),
            pid: k.pid.unwrap_or(0),
            outcome: Some(Outcome {
                exit_code: None,
                signal: Some(libc::SIGKILL),
                core_dumped: false,
            }),
            label: Some(format!(
                "OOM kill: {}{}{}",
                k.victim.as_deref().unwrap_or("a process"),
                k.pid.map(|p| format!(" (pid {p})")).unwrap_or_default(),
                match (&k.cgroup, k.anon_rss) {
                    (Some(c), Some(a)) => format!(" in {c}, anon-rss {}", iec(a)),
                    (Some(c), None) => format!(" in {c}"),
                    (None, _) => String::new(),
                }
            )),
        });
    }
    for f in store.faults(from_ms, None)? {
        if f.t_ms > to_ms {
            continue;
        }
        events.push(RecordedEvent {
            t: seconds(f.t_ms),
            event: "exit".into(),
            pid: f.pid,
            outcome: Some(Outcome {
                exit_code: None,
                signal: Some(f.signal),
                core_dumped: false,
            }),
            label: Some(format!(
                "{} (pid {}) died of {}{}",
                f.comm,
                f.pid,
                crate::model::run::signal_name(f.signal),
                f.object
                    .as_ref()
                    .map(|o| format!(" in {o}"))
                    .unwrap_or_default()
            )),
        });
    }
    events.sort_by(|a, b| a.t.total_cmp(&b.t));
    let interval_ms = machine
        .windows(2)
        .map(|w| (w[1].t_ms - w[0].t_ms).max(0) as u64)
        .min()
        .unwrap_or(0);
    Ok(Record {
        command: match job {
            Some(j) => vec!["history of".into(), j.to_string()],
            None => vec!["history of the machine".into()],
        },
        interval_ms,
        samples,
        events,
        summary: None,
        truncated: false,
    })
}
