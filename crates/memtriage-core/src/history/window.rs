//! A time window of the history as a run's timeline ([`Timeline`]), so `report --db`
//! draws it with the page `run --record` gets: memory of the largest processes (of
//! one job, or all), the machine's swap and /dev/shm, fault rates, and the window's
//! OOM kills and fatal faults as events.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::model::run::{Outcome, Timeline, TimelineEvent, TimelineProcess, TimelineSample};
use crate::model::units::iec;

use super::store::Store;

/// The record between `from_ms` and `to_ms`, of `job` alone where given; times in
/// the result are seconds since `from_ms`.
pub fn timeline_between(
    store: &Store,
    from_ms: i64,
    to_ms: i64,
    job: Option<&str>,
) -> Result<Timeline> {
    if to_ms < from_ms {
        return Err(Error::bad_input(
            "the window",
            "it ends before it starts: its start must be earlier than its end",
        ));
    }
    let seconds = |t: i64| (t - from_ms) as f64 / 1000.0;
    let machine = store.machine_between(from_ms, to_ms)?;
    let mut jobs = store.jobs_between(from_ms, to_ms)?;
    if let Some(j) = job {
        jobs.retain(|(_, row)| row.job == j);
    }
    // RSS, PSS (unknown if any job's is), minor and major faults: the jobs' sums.
    let mut by_t: HashMap<i64, (u64, Option<u64>, u64, u64)> = HashMap::new();
    for (t, row) in &jobs {
        let e = by_t.entry(*t).or_insert((0, Some(0), 0, 0));
        e.0 += row.rss;
        e.1 = match (e.1, row.pss) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        e.2 += row.minor_faults;
        e.3 += row.major_faults;
    }
    let mut processes: HashMap<i64, Vec<TimelineProcess>> = HashMap::new();
    for (t, p) in store.processes_between(from_ms, to_ms)? {
        if job.is_some_and(|j| p.job != j) {
            continue;
        }
        processes.entry(t).or_default().push(TimelineProcess {
            pid: p.pid,
            ppid: p.ppid,
            comm: p.comm,
            rank: None,
            rss: p.rss,
            minflt: None,
            majflt: None,
            pss: p.pss,
            uss: None,
        });
    }
    let mut samples = Vec::with_capacity(machine.len());
    let mut last: Option<(i64, u64, u64)> = None;
    for m in &machine {
        // The rows recorded each second under pressure hold the machine alone: a job's
        // memory there is unknown, not 0, so they are not drawn as samples.
        let Some(&(rss, pss, minor, major)) = by_t.get(&m.t_ms) else {
            continue;
        };
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
        samples.push(TimelineSample {
            t: seconds(m.t_ms),
            processes: processes.remove(&m.t_ms).unwrap_or_default(),
            tree_rss: rss,
            tree_pss: pss,
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
        events.push(TimelineEvent {
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
        events.push(TimelineEvent {
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
    let interval_ms = samples
        .windows(2)
        .map(|w| ((w[1].t - w[0].t) * 1000.0).round().max(0.0) as u64)
        .min()
        .unwrap_or(0);
    Ok(Timeline {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::history::{Interval, JobRow, KillRow, KillSource, MachineRow};

    fn interval(t_ms: i64, job_rss: Option<u64>) -> Interval {
        Interval {
            machine: MachineRow {
                t_ms,
                swap_used: Some(0),
                ..MachineRow::default()
            },
            jobs: job_rss
                .map(|rss| JobRow {
                    job: "python3[7]".into(),
                    processes: 1,
                    rss,
                    pss: None,
                    swap: None,
                    minor_faults: t_ms as u64,
                    major_faults: 0,
                })
                .into_iter()
                .collect(),
            ..Interval::default()
        }
    }

    #[test]
    fn rows_recorded_under_pressure_hold_no_job_and_draw_no_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut store = Store::open(&path).unwrap();
        store.write(&interval(0, Some(100 << 20))).unwrap();
        // The machine alone, each second while pressure rises.
        for t in 1..10 {
            store.write(&interval(t * 1000, None)).unwrap();
        }
        let mut last = interval(10_000, Some(200 << 20));
        last.kills.push(KillRow {
            t_ms: 9_500,
            killer: crate::model::history::KERNEL_KILLER.into(),
            source: KillSource::MemoryEvents,
            ..KillRow::default()
        });
        store.write(&last).unwrap();
        let reader = Store::open_read(&path).unwrap();
        for job in [None, Some("python3[7]")] {
            let record = timeline_between(&reader, 0, 10_000, job).unwrap();
            let rss: Vec<u64> = record.samples.iter().map(|s| s.tree_rss).collect();
            assert_eq!(rss, vec![100 << 20, 200 << 20], "{job:?}");
            assert_eq!(record.interval_ms, 10_000);
            // 10,000 minor faults over 10 s, not a step from a zero in between.
            assert_eq!(record.samples[1].minor_faults_per_second, 1000.0);
            let kill = &record.events[0];
            assert_eq!(kill.label.as_deref(), Some("OOM kill: a process"));
        }
    }
}
