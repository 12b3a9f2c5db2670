//! Reading the record back: the kills, a job's figures over time, the cgroups and
//! the largest processes around a moment. What `why` and `report --db` ask of it.

use rusqlite::{params, OptionalExtension, Row};

use crate::error::Result;

use super::store::Store;
use crate::model::history::{
    CgroupRow, CrashRow, FaultRow, JobPoint, JobRow, KillRow, KillSource, MachineRow, ProcessBrief,
    KERNEL_KILLER,
};
use crate::model::system::OomConstraint;

fn uint(v: Option<i64>) -> Option<u64> {
    v.map(|v| v.max(0) as u64)
}

fn kill_row(r: &Row<'_>) -> rusqlite::Result<KillRow> {
    Ok(KillRow {
        t_ms: r.get(0)?,
        pid: r.get(1)?,
        victim: r.get(2)?,
        cmdline: r.get(3)?,
        cgroup: r.get(4)?,
        limit_cgroup: r.get(5)?,
        constraint: constraint(r, 6)?,
        anon_rss: uint(r.get(7)?),
        total_vm: uint(r.get(8)?),
        // v1 records had no killer column: theirs were the kernel's.
        killer: r
            .get::<_, Option<String>>(9)?
            .unwrap_or_else(|| KERNEL_KILLER.into()),
        source: kill_source(r, 10)?,
        snapshot_json: r.get(11)?,
    })
}

/// A name this build does not know, in `column`: a damaged record.
fn unknown_name(column: usize, what: &str, name: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Text,
        format!("unknown {what}: {name:?}").into(),
    )
}

/// A kill's sources, stored as their name.
fn kill_source(r: &Row<'_>, column: usize) -> rusqlite::Result<KillSource> {
    let name: String = r.get(column)?;
    KillSource::from_name(&name).ok_or_else(|| unknown_name(column, "source of a kill", &name))
}

/// What ran short at a kill, stored as its name; NULL without a kernel report.
fn constraint(r: &Row<'_>, column: usize) -> rusqlite::Result<Option<OomConstraint>> {
    let Some(name) = r.get::<_, Option<String>>(column)? else {
        return Ok(None);
    };
    OomConstraint::from_name(&name)
        .map(Some)
        .ok_or_else(|| unknown_name(column, "constraint of a kill", &name))
}

/// The largest processes with their names as first recorded (the latest name a pid
/// had by then: a reused pid is another process).
const PROCESSES_WITH_NAMES: &str = "SELECT p.pid, coalesce(n.comm, ''), coalesce(n.cmdline, ''), \
     n.cgroup, p.job, p.rss, p.pss, p.swap, p.ppid, p.t, p.forked_without_exec FROM processes p \
     LEFT JOIN process_names n ON n.pid = p.pid AND n.first_t = \
       (SELECT max(first_t) FROM process_names m WHERE m.pid = p.pid AND m.first_t <= p.t)";

fn process_brief(r: &Row<'_>) -> rusqlite::Result<ProcessBrief> {
    Ok(ProcessBrief {
        pid: r.get(0)?,
        ppid: r.get(8)?,
        comm: r.get(1)?,
        cmdline: r.get(2)?,
        cgroup: r.get(3)?,
        job: r.get(4)?,
        rss: uint(r.get(5)?).unwrap_or(0),
        pss: uint(r.get(6)?),
        swap: uint(r.get(7)?),
        forked_without_exec: r.get(10)?,
    })
}

impl Store {
    /// Kills at or after `since_ms`, of `pid` where given, the latest first.
    pub fn kills(&self, since_ms: i64, pid: Option<i32>) -> Result<Vec<KillRow>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT t, pid, victim, cmdline, cgroup, limit_cgroup, constraint_kind, anon_rss, \
                 total_vm, killer, source, snapshot_json FROM oom_kills \
                 WHERE t >= ?1 AND (?2 IS NULL OR pid = ?2) ORDER BY t DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![since_ms, pid], kill_row)
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// Faults at or after `since_ms`, of `pid` where given, the latest first.
    pub fn faults(&self, since_ms: i64, pid: Option<i32>) -> Result<Vec<FaultRow>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT t, pid, comm, signal, object, cmdline, cgroup FROM faults \
                 WHERE t >= ?1 AND (?2 IS NULL OR pid = ?2) ORDER BY t DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![since_ms, pid], |r| {
                Ok(FaultRow {
                    t_ms: r.get(0)?,
                    pid: r.get(1)?,
                    comm: r.get(2)?,
                    signal: r.get(3)?,
                    object: r.get(4)?,
                    cmdline: r.get(5)?,
                    cgroup: r.get(6)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// Kernel crashes at or after `since_ms`, naming `pid` where given, the latest
    /// first.
    pub fn crashes(&self, since_ms: i64, pid: Option<i32>) -> Result<Vec<CrashRow>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT t, pid, comm, text, cmdline, cgroup FROM kernel_crashes \
                 WHERE t >= ?1 AND (?2 IS NULL OR pid = ?2) ORDER BY t DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![since_ms, pid], |r| {
                Ok(CrashRow {
                    t_ms: r.get(0)?,
                    pid: r.get(1)?,
                    comm: r.get(2)?,
                    text: r.get(3)?,
                    cmdline: r.get(4)?,
                    cgroup: r.get(5)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// The machine at the last interval at or before `at_ms`.
    pub fn machine_at(&self, at_ms: i64) -> Result<Option<MachineRow>> {
        let t: Option<i64> = self
            .conn
            .query_row(
                "SELECT max(t) FROM machine WHERE t <= ?1",
                params![at_ms],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        match t {
            Some(t) => Ok(self.machine_between(t, t)?.into_iter().next()),
            None => Ok(None),
        }
    }

    /// Every job's row between two times, oldest first.
    pub fn jobs_between(&self, from_ms: i64, to_ms: i64) -> Result<Vec<(i64, JobRow)>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT t, job, processes, rss, pss, swap, minor_faults, major_faults FROM jobs \
                 WHERE t BETWEEN ?1 AND ?2 ORDER BY t",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![from_ms, to_ms], |r| {
                Ok((
                    r.get(0)?,
                    JobRow {
                        job: r.get(1)?,
                        processes: uint(r.get(2)?).unwrap_or(0),
                        rss: uint(r.get(3)?).unwrap_or(0),
                        pss: uint(r.get(4)?),
                        swap: uint(r.get(5)?),
                        minor_faults: uint(r.get(6)?).unwrap_or(0),
                        major_faults: uint(r.get(7)?).unwrap_or(0),
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// The largest processes of every interval between two times, oldest first, with
    /// their names as first recorded.
    pub fn processes_between(&self, from_ms: i64, to_ms: i64) -> Result<Vec<(i64, ProcessBrief)>> {
        let mut q = self
            .conn
            .prepare(&format!(
                "{PROCESSES_WITH_NAMES} WHERE p.t BETWEEN ?1 AND ?2 ORDER BY p.t, p.rss DESC"
            ))
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![from_ms, to_ms], |r| {
                Ok((r.get(9)?, process_brief(r)?))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// The job `pid` was counted under at its last recorded interval between two
    /// times (bounded: a pid is reused), where it was among the largest processes.
    pub fn job_of(&self, pid: i32, from_ms: i64, to_ms: i64) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT job FROM processes WHERE pid = ?1 AND t BETWEEN ?2 AND ?3 \
                 ORDER BY t DESC LIMIT 1",
                params![pid, from_ms, to_ms],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Whether a job of that name was recorded between two times: a victim that was
    /// never among the largest processes is found by name where it led its own job.
    pub fn job_recorded(&self, job: &str, from_ms: i64, to_ms: i64) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT count(*) FROM jobs WHERE job = ?1 AND t BETWEEN ?2 AND ?3",
                params![job, from_ms, to_ms],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.err(e))
    }

    /// A cgroup's usage between two times, oldest first, as points of a series (its
    /// process count unknown: 0).
    pub fn cgroup_between(&self, cgroup: &str, from_ms: i64, to_ms: i64) -> Result<Vec<JobPoint>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT t, usage FROM cgroups WHERE cgroup = ?1 AND usage IS NOT NULL \
                 AND t BETWEEN ?2 AND ?3 ORDER BY t",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![cgroup, from_ms, to_ms], |r| {
                Ok(JobPoint {
                    t_ms: r.get(0)?,
                    processes: 0,
                    rss: uint(r.get(1)?).unwrap_or(0),
                    pss: None,
                    major_faults: None,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// A job's figures between two times, oldest first.
    pub fn job_between(&self, job: &str, from_ms: i64, to_ms: i64) -> Result<Vec<JobPoint>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT t, processes, rss, pss, major_faults FROM jobs \
                 WHERE job = ?1 AND t BETWEEN ?2 AND ?3 ORDER BY t",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![job, from_ms, to_ms], |r| {
                Ok(JobPoint {
                    t_ms: r.get(0)?,
                    processes: uint(r.get(1)?).unwrap_or(0),
                    rss: uint(r.get(2)?).unwrap_or(0),
                    pss: uint(r.get(3)?),
                    major_faults: uint(r.get(4)?),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// A cgroup's last recorded figures at or before `at_ms`.
    pub fn cgroup_at(&self, cgroup: &str, at_ms: i64) -> Result<Option<CgroupRow>> {
        self.conn
            .query_row(
                "SELECT cgroup, usage, limit_bytes, oom_kill, peak, oom, oom_group_kill, \
                 max_events, high_events FROM cgroups \
                 WHERE cgroup = ?1 AND t <= ?2 ORDER BY t DESC LIMIT 1",
                params![cgroup, at_ms],
                |r| {
                    Ok(CgroupRow {
                        cgroup: r.get(0)?,
                        usage: uint(r.get(1)?),
                        limit: uint(r.get(2)?),
                        oom_kill: uint(r.get(3)?),
                        peak: uint(r.get(4)?),
                        oom: uint(r.get(5)?),
                        oom_group_kill: uint(r.get(6)?),
                        max_events: uint(r.get(7)?),
                        high_events: uint(r.get(8)?),
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The largest processes at the last interval at or before `at_ms`, with their
    /// names as first recorded.
    pub fn largest_at(&self, at_ms: i64) -> Result<(Option<i64>, Vec<ProcessBrief>)> {
        let t: Option<i64> = self
            .conn
            .query_row(
                "SELECT max(t) FROM processes WHERE t <= ?1",
                params![at_ms],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        let Some(t) = t else {
            return Ok((None, Vec::new()));
        };
        let mut q = self
            .conn
            .prepare(&format!(
                "{PROCESSES_WITH_NAMES} WHERE p.t = ?1 ORDER BY p.rss DESC"
            ))
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![t], process_brief)
            .map_err(|e| self.err(e))?;
        let rows = rows
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok((Some(t), rows))
    }

    /// The first and last interval recorded.
    pub fn span(&self) -> Result<Option<(i64, i64)>> {
        let (first, last): (Option<i64>, Option<i64>) = self
            .conn
            .query_row("SELECT min(t), max(t) FROM machine", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(|e| self.err(e))?;
        Ok(first.zip(last))
    }

    /// A value the recorder noted in `meta` (who it ran as, what it could read).
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
    }
}
