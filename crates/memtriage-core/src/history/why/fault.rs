//! A process the kernel logged dying of a fault (a segfault, a bus error, an illegal
//! instruction): `run`'s finding for that signal, with what the record held then.

use crate::diagnose::shm::ShmUse;
use crate::diagnose::signal::{self, CrashSite, PythonFrames, SignalEnd};
use crate::error::Result;
use crate::model::finding::{Evidence, Quantity};
use crate::model::history::FaultRow;
use crate::model::run::signal_name;
use crate::model::units::iec;
use crate::model::why::{Death, DeathKind, WhyReport, WHY_SCHEMA};

use super::{record_notes, LOOK_BACK_MS};
use crate::history::store::Store;

pub(super) fn explain(store: &Store, f: FaultRow) -> Result<WhyReport> {
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
        site: CrashSite::default(),
        evidence,
    });
    Ok(WhyReport {
        schema: WHY_SCHEMA,
        death: Death {
            signal,
            object: f.object.clone(),
            cmdline: f.cmdline.clone(),
            cgroup: f.cgroup.clone(),
            ..Death::logged(DeathKind::Fault, f.t_ms, Some(f.pid), Some(f.comm.clone()))
        },
        job,
        growth: None,
        findings: finding.into_iter().collect(),
        notes,
    })
}
