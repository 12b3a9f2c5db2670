//! `why`: a death nobody supervised, explained from the record. The same finding
//! `run` gives for an OOM kill (`run.oom-killed`), with the evidence the record
//! holds: who died and when, the limit that was hit, how the victim's job grew and
//! since when (a least-squares slope from the start of the growth), and what else
//! held memory at the last interval before.

use crate::diagnose::cow::{self, CopyOnWrite, Measured};
use crate::diagnose::growth;
use crate::diagnose::oom::{self, Limit, LimitHit, OomKilled};
use crate::diagnose::pressure::{self, MajorFaults, Swapping};
use crate::diagnose::shm::ShmUse;
use crate::diagnose::signal::{self, PythonFrames, SignalEnd};
use crate::diagnose::trend::{self, Point};
use crate::error::Result;
use crate::model::finding::{Evidence, Finding, Quantity};
use crate::model::units::iec;

use super::store::Store;
use crate::model::history::{
    FaultRow, JobPoint, KillRow, KillSnapshot, KillSource, ProcessBrief, KERNEL_KILLER,
};
use crate::model::run::signal_name;
use crate::model::why::{Death, DeathKind, Growth, WhyReport, WHY_SCHEMA};

/// How far before a death the growth is looked for.
const LOOK_BACK_MS: i64 = 6 * 3600 * 1000;
/// Processes named as what else held memory.
const OTHERS_NAMED: usize = 3;

#[derive(Debug, Clone, Default)]
pub struct WhyRequest {
    pub pid: Option<i32>,
    /// Only deaths at or after this (Unix ms).
    pub since_ms: Option<i64>,
}

/// The most recent death matching `request`, explained; `None` where the record has
/// none.
pub fn why(store: &Store, request: &WhyRequest) -> Result<Option<WhyReport>> {
    let since = request.since_ms.unwrap_or(i64::MIN);
    let kill = store.kills(since, request.pid)?.into_iter().next();
    let fault = store.faults(since, request.pid)?.into_iter().next();
    match (kill, fault) {
        (Some(k), Some(f)) if f.t_ms > k.t_ms => explain_fault(store, f).map(Some),
        (Some(k), _) => explain_kill(store, k).map(Some),
        (None, Some(f)) => explain_fault(store, f).map(Some),
        (None, None) => Ok(None),
    }
}

fn explain_kill(store: &Store, kill: KillRow) -> Result<WhyReport> {
    let snapshot: KillSnapshot = kill
        .snapshot_json
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let mut notes = record_notes(store)?;

    let limit_cgroup = kill.limit_cgroup.clone().or_else(|| {
        // A cgroup's own kill without a kernel report: the victim's cgroup had the
        // limit. (A userspace killer's kill has no report either, and is no limit's.)
        kill.source
            .counted_by_cgroup_alone()
            .then(|| kill.cgroup.clone())
            .flatten()
    });
    let limit = match &limit_cgroup {
        Some(c) => store.cgroup_at(c, kill.t_ms)?,
        None => None,
    };
    let death = Death {
        kind: DeathKind::OomKill,
        signal: "SIGKILL",
        object: None,
        at_ms: kill.t_ms,
        pid: kill.pid,
        victim: kill.victim.clone(),
        cmdline: kill.cmdline.clone(),
        cgroup: kill.cgroup.clone(),
        limit_cgroup: limit_cgroup.clone(),
        limit_bytes: limit.as_ref().and_then(|l| l.limit),
        constraint: kill.constraint,
        anon_rss: kill.anon_rss,
        killer: kill.killer.clone(),
        source: kill.source,
    };

    let from_ms = kill.t_ms - LOOK_BACK_MS;
    let job = match (kill.pid, &kill.victim) {
        (Some(pid), victim) => match store.job_of(pid, from_ms, kill.t_ms)? {
            Some(job) => Some(job),
            // Not among the largest, but the root of a job of its own.
            None => match victim.as_ref().map(|v| format!("{v}[{pid}]")) {
                Some(own) if store.job_recorded(&own, from_ms, kill.t_ms)? => Some(own),
                _ => None,
            },
        },
        (None, _) => None,
    };
    // What grew: the victim's job, or else the cgroup whose limit was hit (a small
    // worker never among the largest processes still grew inside it).
    let job_series = match &job {
        Some(job) => store.job_between(job, from_ms, kill.t_ms)?,
        None => Vec::new(),
    };
    let (growth, grew) = match (&job, &limit_cgroup) {
        (Some(job), _) => (
            growth_before_death(&job_series),
            Some((job.clone(), "the record's job RSS, one point per interval")),
        ),
        (None, Some(cgroup)) => {
            notes.push(
                "the victim was never among the largest processes recorded: the growth shown is its cgroup's"
                    .into(),
            );
            let series = store.cgroup_between(cgroup, from_ms, kill.t_ms)?;
            (
                growth_before_death(&series),
                Some((
                    format!("cgroup {cgroup}"),
                    "the record's cgroup usage, one point per interval",
                )),
            )
        }
        (None, None) => {
            notes.push(
                "the victim was never among the largest processes recorded: its job's growth is unknown"
                    .into(),
            );
            (None, None)
        }
    };
    let (others_at, largest) = store.largest_at(kill.t_ms)?;
    let others: Vec<_> = largest
        .iter()
        .filter(|p| Some(p.pid) != kill.pid && job.as_deref() != Some(p.job.as_str()))
        .take(OTHERS_NAMED)
        .collect();

    let mut evidence = vec![Evidence::text(
        format!(
            "{} killed {}",
            kill.userspace_killer().unwrap_or("the kernel"),
            death.label()
        ),
        kill_summary(&kill),
        format!("the record ({})", kill.source.as_str()),
    )];
    if let Some(cmd) = &kill.cmdline {
        evidence.push(Evidence::text(
            "its command line",
            cmd.clone(),
            "/proc/PID/cmdline, recorded",
        ));
    }
    match (&limit_cgroup, death.limit_bytes) {
        (Some(c), Some(bytes)) => evidence.push(
            Evidence::text(
                "the limit that was hit",
                format!(
                    "{c}: {} (usage {} at the last interval before)",
                    iec(bytes),
                    limit
                        .as_ref()
                        .and_then(|l| l.usage)
                        .map(iec)
                        .unwrap_or_else(|| "unknown".into())
                ),
                "memory.max / memory.limit_in_bytes, recorded",
            )
            .with_quantity(Quantity::Bytes(bytes)),
        ),
        (Some(c), None) => evidence.push(Evidence::text(
            "the limit that was hit",
            format!("{c} (its limit was not recorded)"),
            "the kernel's report",
        )),
        (None, _) => {}
    }
    if let (Some(g), Some((what, source))) = (&growth, &grew) {
        evidence.push(growth::until_death(what, g, kill.t_ms, source));
    }
    for p in &others {
        evidence.push(
            Evidence::text(
                format!("also holding memory: {}[{}]", p.comm, p.pid),
                format!(
                    "RSS {}{} in {}",
                    iec(p.rss),
                    p.pss
                        .map(|s| format!(", PSS {}", iec(s)))
                        .unwrap_or_default(),
                    p.job
                ),
                "the record's largest processes, last interval before the kill",
            )
            .with_quantity(Quantity::Bytes(p.rss)),
        );
    }
    let copying = match job.as_deref() {
        Some(j) => copying_before(store, j, kill.pid, kill.t_ms)?,
        None => None,
    };
    if others.is_empty() && others_at.is_some() {
        notes.push("no other process was among the largest recorded".into());
    }
    if let Some(table) = snapshot.task_table.get(1..).filter(|t| !t.is_empty()) {
        evidence.push(Evidence::text(
            "the kernel's task table, largest first",
            table
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(" | "),
            "/dev/kmsg",
        ));
    }

    let limit = match limit_cgroup {
        Some(_) => Limit::Cgroup,
        None => Limit::of_constraint(kill.constraint),
    };
    let finding = oom::killed(OomKilled {
        victim: death.label(),
        userspace_killer: kill.userspace_killer().map(str::to_string),
        limit,
        limit_hit: limit_cgroup.map(|cgroup| LimitHit {
            cgroup,
            bytes: death.limit_bytes,
        }),
        grew_until_killed: growth.map(|g| g.bytes_per_second),
        evidence,
    });
    let mut findings = vec![finding];
    findings.extend(copying);
    findings.extend(fault_storm_before(&job_series, kill.t_ms));
    findings.extend(stall_before(store, kill.t_ms)?);
    Ok(WhyReport {
        schema: WHY_SCHEMA,
        death,
        job,
        growth,
        findings,
        notes,
    })
}

/// How far before a death a fault storm or the machine's stalls are looked for.
const PRESSURE_LOOK_BACK_MS: i64 = 10 * 60 * 1000;

/// `run.major-fault-storm` from the job's series (its major faults between its
/// intervals) in the minutes before the death.
fn fault_storm_before(series: &[JobPoint], at_ms: i64) -> Option<Finding> {
    let points: Vec<(i64, u64)> = series
        .iter()
        .filter(|p| p.t_ms >= at_ms - PRESSURE_LOOK_BACK_MS)
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
fn stall_before(store: &Store, at_ms: i64) -> Result<Option<Finding>> {
    let rows = store.machine_between(at_ms - PRESSURE_LOOK_BACK_MS, at_ms)?;
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

/// How far before a death copying workers are looked for.
const COPYING_LOOK_BACK_MS: i64 = 10 * 60 * 1000;

/// The latest interval before `at_ms` that shows the job's workers holding copies:
/// a PSS reading lags a growing RSS, so the last interval alone can hide it.
fn copying_before(
    store: &Store,
    job: &str,
    victim: Option<i32>,
    at_ms: i64,
) -> Result<Option<Finding>> {
    let rows = store.processes_between(at_ms - COPYING_LOOK_BACK_MS, at_ms)?;
    let mut by_t: std::collections::BTreeMap<i64, Vec<ProcessBrief>> = Default::default();
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
/// without exec whose PSS is near their RSS at the last interval before the death,
/// so they held copies of their parent's memory rather than sharing it.
fn copying_workers(largest: &[ProcessBrief], job: &str, victim: Option<i32>) -> Option<Finding> {
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

fn explain_fault(store: &Store, f: FaultRow) -> Result<WhyReport> {
    let mut notes = record_notes(store)?;
    let signal = signal_name(f.signal);
    let who = format!("{} (pid {})", f.comm, f.pid);
    let mut evidence = vec![Evidence::text(
        format!("the kernel logged {who} dying of {signal}"),
        f.object
            .as_ref()
            .map(|o| format!("in {o}"))
            .unwrap_or_else(|| "where, the line did not say".into()),
        "/dev/kmsg, recorded",
    )];
    if let Some(cmd) = &f.cmdline {
        evidence.push(Evidence::text(
            "its command line",
            cmd.clone(),
            "/proc/PID/cmdline, recorded",
        ));
    }
    let shm = store
        .machine_at(f.t_ms)?
        .and_then(|m| ShmUse::new(m.shm_used, m.shm_size));
    if let Some(shm) = shm.filter(|_| f.signal == libc::SIGBUS) {
        evidence.push(
            Evidence::text(
                "/dev/shm at the last interval before",
                format!("{} used of {}", iec(shm.used), iec(shm.size)),
                "statvfs(/dev/shm), recorded",
            )
            .with_quantity(Quantity::Bytes(shm.used)),
        );
    }
    let job = store.job_of(f.pid, f.t_ms - LOOK_BACK_MS, f.t_ms)?;
    if job.is_none() {
        notes.push(
            "the process was never among the largest recorded: its job's memory is unknown".into(),
        );
    }
    // A fault is never a SIGKILL: there is always its finding.
    let finding = signal::ended_by(SignalEnd {
        signal: f.signal,
        subject: who,
        shm,
        frames: PythonFrames::NotSupervised,
        oom_kill_seen: false,
        evidence,
    });
    Ok(WhyReport {
        schema: WHY_SCHEMA,
        death: Death {
            kind: DeathKind::Fault,
            signal,
            object: f.object.clone(),
            at_ms: f.t_ms,
            pid: Some(f.pid),
            victim: Some(f.comm.clone()),
            cmdline: f.cmdline.clone(),
            cgroup: f.cgroup.clone(),
            limit_cgroup: None,
            limit_bytes: None,
            constraint: None,
            anon_rss: None,
            killer: KERNEL_KILLER.into(),
            source: KillSource::KernelLog,
        },
        job,
        growth: None,
        findings: finding.into_iter().collect(),
        notes,
    })
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

fn kill_summary(k: &KillRow) -> String {
    let mut parts = Vec::new();
    if let Some(c) = &k.cgroup {
        parts.push(format!("in {c}"));
    }
    if let Some(a) = k.anon_rss {
        parts.push(format!("anon-rss {}", iec(a)));
    }
    if let Some(c) = k.constraint {
        parts.push(format!("constraint {}", c.as_str()));
    }
    if parts.is_empty() {
        "a kill counted by the cgroup's memory.events".into()
    } else {
        parts.join(", ")
    }
}

/// The growth that ended in the death: `diagnose::trend`'s growth to the end of the
/// series, on the record's times.
pub fn growth_before_death(series: &[JobPoint]) -> Option<Growth> {
    let (first, last) = (series.first()?, series.last()?);
    let points: Vec<Point> = series
        .iter()
        .map(|p| Point {
            t: (p.t_ms - first.t_ms) as f64 / 1000.0,
            bytes: p.rss as f64,
        })
        .collect();
    let g = trend::growth_to_end(&points)?;
    let start = &series[g.start];
    Some(Growth {
        started_ms: start.t_ms,
        last_ms: last.t_ms,
        start_bytes: start.rss,
        end_bytes: last.rss,
        bytes_per_second: g.line.slope,
        r_squared: g.line.r_squared,
        points: series.len() - g.start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::history::{CgroupRow, Interval, JobRow, MachineRow};
    use crate::model::ids;
    use crate::model::system::OomConstraint;

    fn series(values: &[u64]) -> Vec<JobPoint> {
        values
            .iter()
            .enumerate()
            .map(|(i, &mib)| JobPoint {
                t_ms: 1_000_000 + i as i64 * 10_000,
                processes: 1,
                rss: mib << 20,
                pss: None,
                major_faults: None,
            })
            .collect()
    }

    #[test]
    fn the_growth_starts_at_the_last_point_of_its_base_and_its_slope_is_the_line() {
        // Flat at 100 MiB (with noise), then 50 MiB per 10 s interval.
        let s = series(&[100, 101, 100, 100, 150, 200, 250, 300, 350]);
        let g = growth_before_death(&s).unwrap();
        assert_eq!(g.started_ms, s[3].t_ms, "{g:?}");
        assert_eq!(g.points, 6);
        let per_second = (50u64 << 20) as f64 / 10.0;
        assert!(
            (g.bytes_per_second - per_second).abs() < per_second * 0.05,
            "{g:?}"
        );
        assert!(g.r_squared > 0.98);
    }

    /// A kill the kernel logged, as the recorder keeps it.
    fn logged_kill(t_ms: i64, pid: i32, victim: &str) -> KillRow {
        KillRow {
            t_ms,
            pid: Some(pid),
            victim: Some(victim.into()),
            killer: "kernel".into(),
            source: KillSource::KernelLog,
            ..KillRow::default()
        }
    }

    /// `why` of the latest death in the record at `path`.
    fn latest_death(path: &std::path::Path) -> WhyReport {
        let reader = Store::open_read(path).unwrap();
        why(&reader, &WhyRequest::default()).unwrap().unwrap()
    }

    #[test]
    fn stalls_and_a_fault_storm_before_a_kill_give_runs_findings_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut store = Store::open(&path).unwrap();
        // 20,000 major faults in 10 s (2,000/s), and all tasks stalled 30% of the time.
        for (i, (major, stall)) in [(0u64, 0.0), (1_000, 2.0), (21_000, 30.0)]
            .into_iter()
            .enumerate()
        {
            let t_ms = 600_000 + i as i64 * 10_000;
            let mut interval = Interval {
                machine: MachineRow {
                    t_ms,
                    psi_full: Some(stall),
                    swap_used: Some(3 << 30),
                    ..MachineRow::default()
                },
                jobs: vec![JobRow {
                    job: "python3[7]".into(),
                    processes: 1,
                    rss: 100 << 20,
                    pss: None,
                    swap: None,
                    minor_faults: 0,
                    major_faults: major,
                }],
                processes: vec![ProcessBrief {
                    forked_without_exec: None,
                    pid: 7,
                    ppid: 1,
                    comm: "python3".into(),
                    cmdline: "python3 serve.py".into(),
                    cgroup: None,
                    job: "python3[7]".into(),
                    rss: 100 << 20,
                    pss: None,
                    swap: None,
                }],
                ..Interval::default()
            };
            if i == 2 {
                interval.kills.push(KillRow {
                    constraint: Some(OomConstraint::Global),
                    ..logged_kill(t_ms + 1_000, 7, "python3")
                });
            }
            store.write(&interval).unwrap();
        }
        let report = latest_death(&path);
        let ids: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                ids::RUN_OOM_KILLED,
                ids::RUN_MAJOR_FAULT_STORM,
                ids::RUN_SWAP_THRASHING
            ]
        );
        let storm = &report.findings[1];
        assert!(storm.title.contains("2000 page reads"), "{}", storm.title);
        let stall = &report.findings[2];
        assert!(
            stall.evidence[0].value.starts_with("30.0%"),
            "{:?}",
            stall.evidence
        );
    }

    #[test]
    fn a_small_worker_never_among_the_largest_gets_its_cgroups_growth() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut store = Store::open(&path).unwrap();
        // The cgroup flat at 200 MiB for 4 intervals, then 50 MiB per 10 s interval.
        for i in 0..10i64 {
            let usage = if i < 4 {
                200
            } else {
                200 + (i as u64 - 3) * 50
            } << 20;
            let mut interval = Interval {
                machine: MachineRow {
                    t_ms: i * 10_000,
                    ..MachineRow::default()
                },
                cgroups: vec![CgroupRow {
                    cgroup: "/pod/train".into(),
                    usage: Some(usage),
                    limit: Some(512 << 20),
                    ..CgroupRow::default()
                }],
                ..Interval::default()
            };
            if i == 9 {
                interval.kills.push(KillRow {
                    cgroup: Some("/pod/train".into()),
                    limit_cgroup: Some("/pod/train".into()),
                    ..logged_kill(95_000, 11, "pt_data_worker")
                });
            }
            store.write(&interval).unwrap();
        }
        let report = latest_death(&path);
        assert_eq!(report.job, None);
        let g = report.growth.expect("the cgroup's growth");
        assert_eq!(g.started_ms, 30_000);
        let per_second = (5u64 << 20) as f64;
        assert!(
            (g.bytes_per_second - per_second).abs() < per_second * 0.05,
            "{g:?}"
        );
        let f = &report.findings[0];
        assert!(
            f.evidence
                .iter()
                .any(|e| e.label == "growth of cgroup /pod/train before it died"
                    && e.source == "the record's cgroup usage, one point per interval"),
            "{:?}",
            f.evidence
        );
        assert!(report
            .notes
            .iter()
            .any(|n| n.contains("the growth shown is its cgroup's")));
    }

    #[test]
    fn a_recorded_kill_is_explained_with_its_limit_growth_and_what_else_held_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut store = Store::open(&path).unwrap();
        let process = |pid: i32, comm: &str, job: &str, rss: u64| ProcessBrief {
            forked_without_exec: None,
            pid,
            ppid: 1,
            comm: comm.into(),
            cmdline: format!("{comm} --flag"),
            cgroup: Some("/train".into()),
            job: job.into(),
            rss,
            pss: None,
            swap: None,
        };
        // 5 flat intervals at 50 MiB, then 10 MiB/s (100 MiB per 10 s interval).
        for i in 0..12i64 {
            let rss = if i < 5 { 50 } else { 50 + (i as u64 - 4) * 100 } << 20;
            let mut interval = Interval {
                machine: MachineRow {
                    t_ms: i * 10_000,
                    ..MachineRow::default()
                },
                jobs: vec![JobRow {
                    job: "python3[7]".into(),
                    processes: 1,
                    rss,
                    pss: None,
                    swap: None,
                    minor_faults: 0,
                    major_faults: 0,
                }],
                cgroups: vec![CgroupRow {
                    cgroup: "/train".into(),
                    usage: Some(rss),
                    limit: Some(800 << 20),
                    oom_kill: Some(0),
                    ..CgroupRow::default()
                }],
                processes: vec![
                    process(7, "python3", "python3[7]", rss),
                    process(9, "redis", "redis[9]", 30 << 20),
                ],
                kills: Vec::new(),
                faults: Vec::new(),
            };
            if i == 11 {
                interval.kills.push(KillRow {
                    t_ms: 115_000,
                    pid: Some(7),
                    victim: Some("python3".into()),
                    cmdline: Some("python3 train.py".into()),
                    cgroup: Some("/train".into()),
                    limit_cgroup: Some("/train".into()),
                    constraint: Some(OomConstraint::Cgroup),
                    anon_rss: Some(790 << 20),
                    killer: "kernel".into(),
                    source: KillSource::Both,
                    ..KillRow::default()
                });
            }
            store.write(&interval).unwrap();
        }
        let reader = Store::open_read(&path).unwrap();
        let report = why(&reader, &WhyRequest::default()).unwrap().unwrap();
        assert_eq!(report.death.pid, Some(7));
        assert_eq!(report.death.limit_bytes, Some(800 << 20));
        assert_eq!(report.job.as_deref(), Some("python3[7]"));
        let g = report.growth.unwrap();
        assert_eq!(g.started_ms, 40_000);
        let per_second = (10u64 << 20) as f64;
        assert!(
            (g.bytes_per_second - per_second).abs() < per_second * 0.05,
            "{g:?}"
        );
        let f = &report.findings[0];
        assert_eq!(f.id, ids::RUN_OOM_KILLED);
        assert_eq!(
            f.title,
            "out of memory: the kernel killed python3 (pid 7) at its cgroup's memory limit \
             (/train, 800 MiB)"
        );
        assert!(
            f.evidence.iter().any(|e| e.label.contains("redis[9]")),
            "{:?}",
            f.evidence
        );
        assert!(why(
            &reader,
            &WhyRequest {
                pid: Some(8),
                since_ms: None
            }
        )
        .unwrap()
        .is_none());
        assert!(why(
            &reader,
            &WhyRequest {
                pid: None,
                since_ms: Some(200_000)
            }
        )
        .unwrap()
        .is_none());
    }

    #[test]
    fn workers_whose_pss_nears_their_rss_copied_their_parent_and_shared_ones_did_not() {
        let p =
            |pid: i32, ppid: i32, rss_mib: u64, pss_mib: u64, forked: Option<bool>| ProcessBrief {
                pid,
                ppid,
                comm: if pid == 10 {
                    "python3"
                } else {
                    "pt_data_worker"
                }
                .into(),
                cmdline: String::new(),
                cgroup: None,
                job: "python3[10]".into(),
                rss: rss_mib << 20,
                pss: Some(pss_mib << 20),
                swap: None,
                forked_without_exec: forked,
            };
        let copying = vec![
            p(10, 1, 2048, 1200, None),
            p(11, 10, 1500, 1300, Some(true)),
            p(12, 10, 1500, 1250, Some(true)),
        ];
        let f = copying_workers(&copying, "python3[10]", Some(11)).unwrap();
        assert_eq!(f.id, ids::FORK_COPY_ON_WRITE);
        assert!(
            f.title.starts_with("2 forked workers of python3[10]"),
            "{}",
            f.title
        );
        assert!(f.evidence[0].label.ends_with(", the victim"));
        let sharing = vec![
            p(10, 1, 2048, 700, None),
            p(11, 10, 1500, 300, Some(true)),
            p(12, 10, 1500, 300, Some(true)),
        ];
        assert!(copying_workers(&sharing, "python3[10]", None).is_none());
        let execed = vec![
            p(10, 1, 2048, 1200, None),
            p(11, 10, 1500, 1400, Some(false)),
        ];
        assert!(copying_workers(&execed, "python3[10]", None).is_none());
        assert!(copying_workers(&copying, "other[1]", None).is_none());
    }
}
