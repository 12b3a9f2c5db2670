//! An OOM kill explained from the record, step by step: the limit it hit, the job
//! the victim was counted under, how that job (or the limited cgroup) grew until the
//! kill, what else held memory at the last interval before; then `run`'s
//! `run.oom-killed` finding built from them, and what the minutes before show.

use crate::diagnose::growth;
use crate::diagnose::oom::{self, Limit, LimitHit, OomKilled};
use crate::diagnose::trend::{self, Point};
use crate::error::Result;
use crate::model::finding::{Evidence, Quantity};
use crate::model::history::{CgroupRow, JobPoint, KillRow, KillSnapshot, ProcessBrief};
use crate::model::system::cgroup_is_within;
use crate::model::units::iec;
use crate::model::why::{Death, DeathKind, Growth, WhyReport, WHY_SCHEMA};

use super::{before, record_notes, userspace, LOOK_BACK_MS};
use crate::history::store::Store;

/// Processes named as what else held memory.
const OTHERS_NAMED: usize = 3;

/// The limit a kill hit, as recorded.
struct LimitRecorded {
    /// The cgroup whose limit it was.
    cgroup: Option<String>,
    /// Its figures at the last interval at or before the kill.
    row: Option<CgroupRow>,
}

impl LimitRecorded {
    fn bytes(&self) -> Option<u64> {
        self.row.as_ref().and_then(|l| l.limit)
    }
}

/// What grew until the kill, and from which series of the record.
struct Grew {
    /// `python3[7]`, `cgroup /pod/train`.
    what: String,
    source: &'static str,
    growth: Growth,
}

/// A recorded kill with what the record holds around it.
struct KillContext {
    limit: LimitRecorded,
    /// The job the victim was counted under.
    job: Option<String>,
    /// That job's figures over the look-back (empty without a job).
    job_series: Vec<JobPoint>,
    grew: Option<Grew>,
    /// Other processes among the largest at the last interval before, and whether
    /// any interval before had the largest recorded at all.
    others: Vec<ProcessBrief>,
    largest_recorded: bool,
    notes: Vec<String>,
}

pub(super) fn explain(store: &Store, kill: KillRow) -> Result<WhyReport> {
    let snapshot: KillSnapshot = kill
        .snapshot_json
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let mut notes = record_notes(store)?;
    let limit = limit_hit(store, &kill)?;
    let from_ms = kill.t_ms - LOOK_BACK_MS;
    let job = victim_job(store, &kill, from_ms)?;
    let job_series = match &job {
        Some(job) => store.job_between(job, from_ms, kill.t_ms)?,
        None => Vec::new(),
    };
    let grew = what_grew(store, &kill, &job, &job_series, &limit, &mut notes)?;
    let (others_at, largest) = store.largest_at(kill.t_ms)?;
    let others: Vec<ProcessBrief> = largest
        .into_iter()
        .filter(|p| Some(p.pid) != kill.pid && job.as_deref() != Some(p.job.as_str()))
        .filter(|p| counted_against(&limit, p))
        .take(OTHERS_NAMED)
        .collect();
    let context = KillContext {
        limit,
        job,
        job_series,
        grew,
        others,
        largest_recorded: others_at.is_some(),
        notes,
    };
    report(store, kill, &snapshot, context)
}

/// Whether `p`'s memory counted against the limit that was hit: any process for the
/// machine's own, only those in the cgroup (or below) for a cgroup's.
fn counted_against(limit: &LimitRecorded, p: &ProcessBrief) -> bool {
    match &limit.cgroup {
        None => true,
        Some(hit) => p
            .cgroup
            .as_deref()
            .is_some_and(|c| cgroup_is_within(c, hit)),
    }
}

/// The cgroup whose limit the kill hit, and its figures then.
fn limit_hit(store: &Store, kill: &KillRow) -> Result<LimitRecorded> {
    let cgroup = kill.limit_cgroup.clone().or_else(|| {
        // A cgroup's own kill without a kernel report: the victim's cgroup had the
        // limit. (A userspace killer's kill has no report either, and is no limit's.)
        kill.source
            .counted_by_cgroup_alone()
            .then(|| kill.cgroup.clone())
            .flatten()
    });
    let row = match &cgroup {
        Some(c) => store.cgroup_at(c, kill.t_ms)?,
        None => None,
    };
    Ok(LimitRecorded { cgroup, row })
}

/// The job the victim was counted under: where it was among the largest processes,
/// or else the job it led itself, by name.
fn victim_job(store: &Store, kill: &KillRow, from_ms: i64) -> Result<Option<String>> {
    let Some(pid) = kill.pid else {
        return Ok(None);
    };
    if let Some(job) = store.job_of(pid, from_ms, kill.t_ms)? {
        return Ok(Some(job));
    }
    // Not among the largest, but the root of a job of its own.
    match kill.victim.as_ref().map(|v| format!("{v}[{pid}]")) {
        Some(own) if store.job_recorded(&own, from_ms, kill.t_ms)? => Ok(Some(own)),
        _ => Ok(None),
    }
}

/// What grew: the victim's job, or else the cgroup whose limit was hit (a small
/// worker never among the largest processes still grew inside it).
fn what_grew(
    store: &Store,
    kill: &KillRow,
    job: &Option<String>,
    job_series: &[JobPoint],
    limit: &LimitRecorded,
    notes: &mut Vec<String>,
) -> Result<Option<Grew>> {
    if let Some(job) = job {
        return Ok(growth_before_death(job_series).map(|growth| Grew {
            what: job.clone(),
            source: "the record's job RSS, one point per interval",
            growth,
        }));
    }
    let Some(cgroup) = &limit.cgroup else {
        notes.push(
            "the victim was never among the largest processes recorded: its job's growth is unknown"
                .into(),
        );
        return Ok(None);
    };
    notes.push(
        "the victim was never among the largest processes recorded: the growth shown is its cgroup's"
            .into(),
    );
    let series = store.cgroup_between(cgroup, kill.t_ms - LOOK_BACK_MS, kill.t_ms)?;
    Ok(growth_before_death(&series).map(|growth| Grew {
        what: format!("cgroup {cgroup}"),
        source: "the record's cgroup usage, one point per interval",
        growth,
    }))
}

/// The growth that ended in the death: `diagnose::trend`'s growth to the end of the
/// series, on the record's times.
pub(super) fn growth_before_death(series: &[JobPoint]) -> Option<Growth> {
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

/// The report: the death, `run.oom-killed` with the evidence, and what the minutes
/// before show.
fn report(
    store: &Store,
    kill: KillRow,
    snapshot: &KillSnapshot,
    mut context: KillContext,
) -> Result<WhyReport> {
    let death = Death {
        kind: DeathKind::OomKill,
        signal: crate::model::run::signal_name(userspace::signal(snapshot)),
        object: None,
        at_ms: kill.t_ms,
        pid: kill.pid,
        victim: kill.victim.clone(),
        cmdline: kill.cmdline.clone(),
        cgroup: kill.cgroup.clone(),
        limit_cgroup: context.limit.cgroup.clone(),
        limit_bytes: context.limit.bytes(),
        constraint: kill.constraint,
        anon_rss: kill.anon_rss,
        killer: kill.killer.clone(),
        source: kill.source,
    };
    let copying = match context.job.as_deref() {
        Some(j) => before::copying(store, j, kill.pid, kill.t_ms)?,
        None => None,
    };
    if context.others.is_empty() && context.largest_recorded {
        context.notes.push(match &context.limit.cgroup {
            Some(c) => format!("no other process of {c} was among the largest recorded"),
            None => "no other process was among the largest recorded".into(),
        });
    }
    let limit = match context.limit.cgroup {
        Some(_) => Limit::Cgroup,
        None => Limit::of_constraint(kill.constraint),
    };
    let evidence = evidence(&kill, &death, snapshot, &context);
    let subject = death.label();
    let by_userspace = match kill.userspace_killer() {
        Some(_) => userspace::finding(store, &kill, snapshot, &subject, evidence.clone())?,
        None => None,
    };
    let finding = by_userspace.unwrap_or_else(|| {
        oom::killed(OomKilled {
            victim: subject,
            userspace_killer: kill.userspace_killer().map(str::to_string),
            limit,
            limit_hit: context.limit.cgroup.clone().map(|cgroup| LimitHit {
                cgroup,
                bytes: context.limit.bytes(),
            }),
            grew_until_killed: context.grew.as_ref().map(|g| g.growth.bytes_per_second),
            supervised: false,
            evidence,
        })
    });
    let mut findings = vec![finding];
    findings.extend(copying);
    findings.extend(before::fault_storm(&context.job_series, kill.t_ms));
    findings.extend(before::stall(store, kill.t_ms)?);
    Ok(WhyReport {
        schema: WHY_SCHEMA,
        death,
        job: context.job,
        growth: context.grew.map(|g| g.growth),
        findings,
        notes: context.notes,
    })
}

/// The kill's evidence: who killed whom, its command line, the limit, the growth,
/// what else held memory, the kernel's task table.
fn evidence(
    kill: &KillRow,
    death: &Death,
    snapshot: &KillSnapshot,
    context: &KillContext,
) -> Vec<Evidence> {
    let mut evidence = vec![Evidence::text(
        format!(
            "{} killed {}",
            kill.userspace_killer().unwrap_or("the kernel"),
            death.label()
        ),
        kill_summary(kill),
        format!("the record ({})", kill.source.as_str()),
    )];
    if let Some(cmd) = &kill.cmdline {
        evidence.push(Evidence::text(
            "its command line",
            cmd.clone(),
            "/proc/PID/cmdline, recorded",
        ));
    }
    evidence.extend(limit_evidence(&context.limit));
    if let Some(g) = &context.grew {
        evidence.push(growth::until_death(&g.what, &g.growth, kill.t_ms, g.source));
    }
    for p in &context.others {
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
    evidence
}

fn limit_evidence(limit: &LimitRecorded) -> Option<Evidence> {
    let cgroup = limit.cgroup.as_ref()?;
    let Some(bytes) = limit.bytes() else {
        return Some(Evidence::text(
            "the limit that was hit",
            format!("{cgroup} (its limit was not recorded)"),
            "the kernel's report",
        ));
    };
    let usage = limit
        .row
        .as_ref()
        .and_then(|l| l.usage)
        .map(iec)
        .unwrap_or_else(|| "unknown".into());
    Some(
        Evidence::text(
            "the limit that was hit",
            format!(
                "{cgroup}: {} (usage {usage} at the last interval before)",
                iec(bytes)
            ),
            "memory.max / memory.limit_in_bytes, recorded",
        )
        .with_quantity(Quantity::Bytes(bytes)),
    )
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
