//! A kernel crash the recorder kept (an oops, BUG, GPF, panic): its lines read again
//! by `run`'s reader of a crash ([`crate::diagnose::kernel_crash`]), with the job of
//! the process it names, where the record has that process.

use crate::diagnose::kernel_crash;
use crate::error::Result;
use crate::model::finding::Evidence;
use crate::model::history::CrashRow;
use crate::model::why::{Death, DeathKind, WhyReport, WHY_SCHEMA};

use super::{record_notes, LOOK_BACK_MS};
use crate::history::store::Store;

/// The source its lines are quoted from.
const RECORDED: &str = "kernel log, recorded";

pub(super) fn explain(store: &Store, c: CrashRow) -> Result<WhyReport> {
    let mut notes = record_notes(store)?;
    let job = match c.pid {
        Some(pid) => store.job_of(pid, c.t_ms - LOOK_BACK_MS, c.t_ms)?,
        None => None,
    };
    let mut findings = Vec::new();
    // The process the report names was the job's when the record counted it in one.
    match kernel_crash::explain(&c.text, RECORDED, |pid| job.is_some() && c.pid == Some(pid)) {
        Some(crash) => {
            let mut f = crash.finding;
            if let Some(cmd) = &c.cmdline {
                f.evidence.push(Evidence::text(
                    "the named process's command line",
                    cmd.clone(),
                    "/proc/PID/cmdline, recorded",
                ));
            }
            findings.push(f);
        }
        // Only a report the rules read is recorded; rules changed since may not.
        None => notes.push(
            "the recorded crash's lines are no longer read as a crash by this memtriage: \
             sqlite3 the database, SELECT text FROM kernel_crashes, to see them"
                .into(),
        ),
    }
    if c.pid.is_some() && job.is_none() {
        notes.push(
            "the process the kernel named was never among the largest recorded: its job is \
             unknown"
                .into(),
        );
    }
    Ok(WhyReport {
        schema: WHY_SCHEMA,
        death: Death {
            cmdline: c.cmdline.clone(),
            cgroup: c.cgroup.clone(),
            ..Death::logged(DeathKind::KernelCrash, c.t_ms, c.pid, c.comm.clone())
        },
        job,
        growth: None,
        findings,
        notes,
    })
}
