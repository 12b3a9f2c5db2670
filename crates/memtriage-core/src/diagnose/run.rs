//! Why a supervised job ended the way it did. Each finding is confirmed from the
//! system where it can be (the signal that ended a process, the kernel log's OOM
//! records, the cgroup's counters, /dev/shm use), and joined with what the job's
//! output said (the log scanner's findings, passed in).

use crate::diagnose::kernel_crash::{self, KernelCrash};
use crate::diagnose::logs::MAPPED_FILE_READER;
use crate::diagnose::oom::{self, Limit, OomKilled};
use crate::diagnose::pressure::{self, MajorFaults, Swapping};
use crate::diagnose::shm::{self, ShmUse};
use crate::diagnose::signal::{self, CrashSite, PythonFrames, SignalEnd};
use crate::diagnose::{cow, gpu, growth, killers, lines};
use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::killers::LoggedKill;
use crate::model::process::process_label;
use crate::model::run::{signal_name, ProcessSummary, RunReport};
use crate::model::system::OomKill;
use crate::model::units::iec;

/// Peak cgroup usage this close to its limit is worth a warning.
pub const NEAR_LIMIT_SHARE: f64 = 0.9;

/// What the diagnosis needs beyond the report.
pub struct Inputs<'a> {
    pub report: &'a RunReport,
    /// Kernel OOM kills of the job's processes, or in its cgroup, during the run.
    pub kernel_oom_kills: &'a [OomKill],
    /// Findings from the job's output (the log scanner), in its order.
    pub text_findings: Vec<Finding>,
    /// Whether the job's output had Python frames (faulthandler's) that those
    /// findings show.
    pub python_frames: bool,
    /// The innermost frame in the job's code of a crash those frames show, with its
    /// source text, where its file could be read.
    pub crash_line: Option<CrashLine>,
    /// Kills the userspace OOM killers logged during the run, where their logs were
    /// readable.
    pub logged_kills: &'a [LoggedKill],
    /// A kernel crash the kernel logged during the run ([`super::kernel_crash`]).
    pub kernel_crash: Option<KernelCrash>,
}

/// A line of the job's code where a crash happened: `job.py:2` and what it says.
pub struct CrashLine {
    pub at: String,
    pub text: String,
}

pub fn diagnose(inputs: Inputs<'_>) -> Vec<Finding> {
    let r = inputs.report;
    // The kernel's own crash comes first: what the job saw (a signal, a hung CUDA
    // call) follows from it.
    let crash = inputs.kernel_crash.as_ref();
    let mut findings: Vec<Finding> = crash.map(|c| c.finding.clone()).into_iter().collect();
    let mut oom = oom_kill(&inputs);
    let oom_seen = oom.is_some();
    if let Some(f) = oom.as_mut() {
        lines::sharpen(f, r, &killed_with_lines(&inputs));
    }
    findings.extend(oom);
    let frames = if inputs.python_frames {
        PythonFrames::Shown
    } else {
        PythonFrames::NotShown
    };
    findings.extend(signal_ends(
        r,
        oom_seen,
        frames,
        &crash_site(&inputs),
        inputs.logged_kills,
        crash,
    ));
    findings.extend(shm_full(r));
    let mut near = near_limit(r, oom_seen);
    if let Some(f) = near.as_mut() {
        lines::sharpen(f, r, &[]);
    }
    let warned = near.is_some();
    findings.extend(near);
    findings.extend(copy_on_write(r));
    findings.extend(major_fault_storm(r));
    findings.extend(thrashing(r));
    findings.extend(r.gpu.as_ref().map(gpu::run_events).unwrap_or_default());
    let mut leak_like = r
        .growth
        .as_ref()
        .and_then(|g| growth::leak_like_growth(g, &r.outcome, r.wall_seconds));
    if let Some(f) = leak_like.as_mut() {
        lines::sharpen(f, r, &[]);
    }
    let warned = warned || leak_like.is_some();
    findings.extend(leak_like);
    if !oom_seen && !warned {
        findings.extend(lines::leak_without_kill(r));
    }
    // Text findings add what only the output says (CUDA, NCCL, Python frames); where
    // the system already confirmed the same failure, its finding comes first and the
    // text's evidence joins it.
    for mut t in inputs.text_findings {
        add_system_evidence(&mut t, r);
        match findings.iter_mut().find(|f| same_failure(&f.id, &t.id)) {
            // The Python frames of a native crash come first: they say where it happened.
            Some(f) if t.id == ids::LOG_NATIVE_CRASH => {
                let system = std::mem::take(&mut f.evidence);
                f.evidence = t.evidence;
                f.evidence.extend(system);
            }
            Some(f) => f.evidence.extend(t.evidence),
            None => findings.push(t),
        }
    }
    for f in &mut findings {
        if f.assessment.is_none() {
            f.assessment = system_assessment(&f.id);
        }
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// What the run itself measured is confirmed: the cgroup's figures, the copies its
/// workers made. A growth that has not yet failed stays open. (The findings shared
/// with `why` say how sure they are themselves.)
fn system_assessment(id: &str) -> Option<Assessment> {
    let (certainty, cause, confirm) = match id {
        ids::RUN_NEAR_LIMIT => (Certainty::Confirmed, CauseKind::Capacity, ""),
        ids::FORK_COPY_ON_WRITE => (Certainty::Confirmed, CauseKind::UserCode, ""),
        ids::RUN_LEAK_LIKE_GROWTH => (
            Certainty::Likely,
            CauseKind::UserCode,
            "A longer run: memtriage run --limit SIZE -- … shows whether it stops growing before the limit.",
        ),
        _ => return None,
    };
    Some(Assessment {
        certainty,
        cause,
        confirm: confirm.to_string(),
    })
}

/// What the system measured that bears on a failure only the output reported: a
/// shared-memory error gets /dev/shm's size and its peak use during the run.
fn add_system_evidence(f: &mut Finding, r: &RunReport) {
    if f.id == ids::LOG_CUDA_OOM {
        if let Some(g) = &r.gpu {
            let job: std::collections::HashSet<i32> = r.processes.iter().map(|p| p.pid).collect();
            f.evidence
                .extend(gpu::oom_evidence(g, |pid| job.contains(&pid)));
            if let Some((index, others, total)) = gpu::crowded_device(g, |pid| job.contains(&pid)) {
                f.fix = format!(
                    "Other processes held {} of GPU {index}'s {} when the job ran out: run it on a \
                     free GPU (nvidia-smi --query-compute-apps=pid,used_memory --format=csv shows \
                     who holds what; CUDA_VISIBLE_DEVICES=N picks one), or end them.\n{}",
                    iec(others),
                    iec(total),
                    f.fix
                );
            }
        }
    }
    if f.id == ids::LOG_DATALOADER_SHM {
        if let Some(size) = r.shm_size {
            f.evidence.push(
                Evidence::text(
                    "/dev/shm size",
                    format!(
                        "{}, peak use during the run {}",
                        iec(size),
                        r.peak_shm_used
                            .map(|p| iec(p.bytes))
                            .unwrap_or_else(|| "unreadable".into())
                    ),
                    "statvfs(/dev/shm)",
                )
                .with_quantity(Quantity::Bytes(size)),
            );
        }
    }
}

/// A system-confirmed finding and a text finding about the same failure.
fn same_failure(system_id: &str, text_id: &str) -> bool {
    // A SIGKILL the job's output shows without its sender (`Killed`, exit code 137) is
    // the kill `run` saw, whoever it shows sent it.
    let families: [(&str, &[&str]); 9] = [
        (ids::RUN_KERNEL_CRASH, &[ids::LOG_KERNEL_OOPS]),
        (
            ids::RUN_OOM_KILLED,
            &[
                ids::LOG_OOM_KILL,
                ids::LOG_SIGKILL,
                ids::LOG_DATALOADER_WORKER_KILLED,
            ],
        ),
        (
            ids::RUN_USERSPACE_OOM_KILL,
            &[ids::LOG_USERSPACE_OOM_KILL, ids::LOG_SIGKILL],
        ),
        (ids::RUN_KILLED, &[ids::LOG_SIGKILL, ids::LOG_OOM_KILL]),
        (ids::RUN_SEGFAULT, &[ids::LOG_NATIVE_CRASH]),
        (ids::RUN_ABORT, &[ids::LOG_NATIVE_CRASH]),
        (ids::RUN_SHM_FULL, &[ids::LOG_DATALOADER_SHM]),
        (ids::RUN_BUS_ERROR_SHM, &[ids::LOG_DATALOADER_SHM]),
        (
            ids::RUN_BUS_ERROR_MMAP,
            &[ids::LOG_MMAP_BUS_ERROR, ids::LOG_NATIVE_CRASH],
        ),
    ];
    families
        .iter()
        .any(|(id, texts)| system_id == *id && texts.contains(&text_id))
}

fn oom_kill(inputs: &Inputs<'_>) -> Option<Finding> {
    let r = inputs.report;
    let killed: Vec<&ProcessSummary> = r
        .processes
        .iter()
        .filter(|p| p.outcome.and_then(|o| o.signal) == Some(libc::SIGKILL))
        .collect();
    let main_killed = r.outcome.signal == Some(libc::SIGKILL);
    let cgroup_kills = r.cgroup_oom_kills.unwrap_or(0);
    if inputs.kernel_oom_kills.is_empty() && cgroup_kills == 0 {
        return None;
    }
    let mut evidence = Vec::new();
    for k in inputs.kernel_oom_kills {
        evidence.push(Evidence::text(
            format!("kernel killed {}", r.label_of(k.pid, &k.comm)),
            oom::summary(k, None),
            "/dev/kmsg",
        ));
    }
    if cgroup_kills > 0 {
        evidence.push(Evidence::count(
            "OOM kills in the job's cgroup during the run",
            cgroup_kills,
            "memory.events / memory.oom_control",
        ));
    }
    if main_killed {
        evidence.push(Evidence::text(
            "the job",
            "killed by SIGKILL (exit 137)",
            "wait4",
        ));
    }
    for p in killed.iter().filter(|p| p.pid != r.pid) {
        evidence.push(Evidence::text(p.label(), "killed by SIGKILL", "wait4"));
    }
    if let Some(l) = &r.limit {
        evidence.push(
            Evidence::text(
                "memory limit set for the job",
                format!(
                    "{}, peak usage {}",
                    iec(l.limit),
                    l.peak.map(iec).unwrap_or_else(|| "unreadable".into())
                ),
                l.dir.clone(),
            )
            .with_quantity(Quantity::Bytes(l.limit)),
        );
    }
    if let Some(peak) = r.peak_tree_rss {
        evidence.push(
            Evidence::text(
                "peak RSS of the job's processes together",
                format!("{} at {:.1} s", iec(peak.bytes), peak.at_seconds),
                "/proc/PID/stat",
            )
            .with_quantity(Quantity::Bytes(peak.bytes)),
        );
    }
    if let Some(max) = r.kernel_max_rss {
        evidence.push(
            Evidence::text(
                "kernel high-water mark of the job's main process",
                format!(
                    "{} (ru_maxrss: its own peak or that of a child it waited for, whichever was larger)",
                    iec(max)
                ),
                "wait4",
            )
            .with_quantity(Quantity::Bytes(max)),
        );
    }
    if let Some(largest) = largest_process(r, inputs.kernel_oom_kills) {
        evidence.push(largest);
    }
    evidence.extend(growth::before_the_kill(
        r.growth.as_ref(),
        r.near_ceiling.as_ref(),
        |pid, comm| r.label_of(pid, comm),
    ));
    let by_cgroup = r.limit.is_some()
        || cgroup_kills > 0
        || inputs
            .kernel_oom_kills
            .iter()
            .any(|k| k.oom_memcg.as_deref().is_some_and(|m| m != "/"));
    let victim = inputs
        .kernel_oom_kills
        .first()
        .map(|k| r.label_of(k.pid, &k.comm))
        .or_else(|| killed.first().map(|p| p.label()))
        .unwrap_or_else(|| "a process of the job".into());
    Some(oom::killed(OomKilled {
        victim,
        userspace_killer: None,
        limit: if by_cgroup {
            Limit::Cgroup
        } else {
            Limit::Machine
        },
        limit_hit: None,
        grew_until_killed: None,
        supervised: true,
        evidence,
    }))
}

/// The processes an OOM kill ended whose lines were measured; none (every process's
/// lines then) where the victim was not Python or had none.
fn killed_with_lines(inputs: &Inputs<'_>) -> Vec<i32> {
    let r = inputs.report;
    let killed = inputs.kernel_oom_kills.iter().map(|k| k.pid).chain(
        r.processes
            .iter()
            .filter(|p| p.outcome.and_then(|o| o.signal) == Some(libc::SIGKILL))
            .map(|p| p.pid),
    );
    let mut pids: Vec<i32> = killed
        .filter(|pid| r.memory_by_line.iter().any(|l| l.pid == *pid))
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Where the job's output (faulthandler's frames, and the source line of the innermost
/// one in the job's code) places its crash.
fn crash_site(inputs: &Inputs<'_>) -> CrashSite {
    let evidence = |label: &str| {
        inputs
            .text_findings
            .iter()
            .flat_map(|f| &f.evidence)
            .find(|e| e.label == label)
            .map(|e| e.value.to_string())
    };
    CrashSite {
        raised_at: inputs
            .crash_line
            .as_ref()
            .and_then(|l| CrashSite::raised(&l.at, &l.text)),
        mapped_file_reader: evidence(MAPPED_FILE_READER),
    }
}

/// Each signal that ended a process of the job, once per kind of finding.
fn signal_ends(
    r: &RunReport,
    oom_seen: bool,
    frames: PythonFrames,
    site: &CrashSite,
    logged_kills: &[LoggedKill],
    crash: Option<&KernelCrash>,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let ended = std::iter::once((
        "the job",
        r.pid,
        r.outcome.signal,
        r.outcome.core_dumped,
        format!("pid {}", r.pid),
    ))
    .chain(
        r.processes
            .iter()
            .filter(|p| p.pid != r.pid)
            .filter_map(|p| {
                p.outcome.map(|o| {
                    (
                        "a process of the job",
                        p.pid,
                        o.signal,
                        o.core_dumped,
                        named_by_killer(p, logged_kills),
                    )
                })
            }),
    )
    .filter_map(|(who, pid, sig, core, label)| sig.map(|s| (who, pid, s, core, label)));
    // A process a killer named in its own log first: a finding is given once per
    // kind, and Ray's shutdown SIGKILLs its helpers beside the worker it chose.
    let mut ended: Vec<_> = ended.collect();
    ended.sort_by_key(|(_, pid, ..)| !logged_kills.iter().any(|l| l.pid == Some(*pid)));
    for (who, pid, sig, core, label) in ended {
        let mut evidence = vec![Evidence::text(
            label.clone(),
            format!(
                "killed by {} ({sig}){}",
                signal_name(sig),
                if core { ", core dumped" } else { "" }
            ),
            "wait4",
        )];
        let sent_by = killers::sender(r, pid, sig);
        evidence.extend(sent_by.map(killers::sender_evidence));
        let subject = format!("{who}, {label}");
        let finding = match oom_seen {
            true => None,
            false => killers::userspace_kill(
                r,
                logged_kills,
                pid,
                sig,
                sent_by,
                &subject,
                evidence.clone(),
            ),
        };
        let finding = finding.or_else(|| {
            signal::ended_by(SignalEnd {
                signal: sig,
                subject,
                shm: peak_shm(r),
                frames,
                oom_kill_seen: oom_seen,
                site: site.clone(),
                evidence,
            })
        });
        if let Some(mut f) = finding {
            if let Some(c) = crash.filter(|c| c.crashed() && c.job_pid == Some(pid)) {
                kernel_crash::defer_to_crash(&mut f, c);
            }
            if !out.iter().any(|o| o.id == f.id) {
                out.push(f);
            }
        }
    }
    out
}

/// A process as its killer's own log names it, where it does (a Ray worker the sampler
/// last saw idle, before the task that grew reached it), else as sampled.
fn named_by_killer(p: &ProcessSummary, logged_kills: &[LoggedKill]) -> String {
    logged_kills
        .iter()
        .filter(|l| l.pid == Some(p.pid))
        .find_map(LoggedKill::process_name)
        .map_or_else(
            || p.label(),
            |name| process_label(p.pid, &name, p.rank.as_ref()),
        )
}

/// /dev/shm at its fullest during the run.
fn peak_shm(r: &RunReport) -> Option<ShmUse> {
    ShmUse::new(r.peak_shm_used.map(|p| p.bytes), r.shm_size)
}

fn shm_full(r: &RunReport) -> Option<Finding> {
    let peak = peak_shm(r)?;
    let at = r.peak_shm_used?.at_seconds;
    shm::filled_up(
        peak,
        vec![Evidence::text(
            "peak /dev/shm use",
            format!("{} of {} at {at:.1} s", iec(peak.used), iec(peak.size)),
            "statvfs(/dev/shm)",
        )
        .with_quantity(Quantity::Bytes(peak.used))],
    )
}

fn near_limit(r: &RunReport, oom_seen: bool) -> Option<Finding> {
    if oom_seen {
        return None;
    }
    let l = r.limit.as_ref()?;
    let peak = l.peak?;
    let share = peak as f64 / l.limit as f64;
    (share >= NEAR_LIMIT_SHARE).then(|| Finding {
        assessment: None,
        id: ids::RUN_NEAR_LIMIT.into(),
        severity: Severity::Warn,
        title: format!("peak memory reached {:.0}% of the limit", share * 100.0),
        evidence: vec![Evidence::text("cgroup peak / limit", format!("{} / {}", iec(peak), iec(l.limit)), l.dir.clone()).with_quantity(Quantity::Ratio(share))],
        why: "Page cache is counted too and is reclaimed first; close to the limit the kernel reclaims hard and then OOM-kills.".into(),
        fix: "Keep headroom: raise the limit by 20% or lower the peak.".into(),
    })
}

fn copy_on_write(r: &RunReport) -> Vec<Finding> {
    // The workers are gone by now: judge them at the most they had copied among the
    // readings taken. Estimates from faults are left out: a fault is as likely a page
    // the worker allocated as one it copied.
    let processes: Vec<cow::Process> = r
        .processes
        .iter()
        .map(|p| cow::Process {
            pid: p.pid,
            ppid: p.ppid,
            comm: p.comm.clone(),
            rank: p.rank,
            kernel_thread: false,
            forked_without_exec: p.forked_without_exec,
            rss: p.peak_rss.map(|peak| peak.bytes),
            private: p.peak_uss.map(|u| u.bytes),
            copied: p.peak_copied_after_fork.and_then(|c| {
                Some(cow::Copied {
                    bytes: c.bytes,
                    rss: p.rss_at_peak_copied_after_fork?,
                })
            }),
        })
        .collect();
    cow::findings(&processes)
}

fn major_fault_storm(r: &RunReport) -> Option<Finding> {
    let f = &r.faults;
    pressure::major_fault_storm(MajorFaults {
        peak_per_second: f.peak_major_per_second,
        total: f.major,
        evidence: vec![
            Evidence::text(
                "peak major faults",
                format!(
                    "{:.0}/s at {:.1} s",
                    f.peak_major_per_second, f.peak_major_at_seconds
                ),
                "/proc/PID/stat",
            ),
            Evidence::text(
                "major faults in total",
                format!(
                    "{} (about {} read 4 KiB at a time)",
                    f.major,
                    iec(f.major * 4096)
                ),
                "wait4",
            )
            .with_quantity(Quantity::Count(f.major)),
        ],
    })
}

fn thrashing(r: &RunReport) -> Option<Finding> {
    let pages = r.swapped_pages?;
    let rate = pages as f64 / r.wall_seconds.max(1e-3);
    let mut evidence = vec![Evidence::text(
        "pages swapped in and out",
        format!("{pages} ({rate:.0}/s over the run)"),
        "/proc/vmstat pswpin, pswpout",
    )
    .with_quantity(Quantity::Count(pages))];
    if let Some(s) = r.peak_memory_stall_percent {
        evidence.push(
            Evidence::text(
                "peak time all tasks stalled on memory",
                format!("{s:.1}% (PSI full avg10)"),
                "/proc/pressure/memory",
            )
            .with_quantity(Quantity::Ratio(s / 100.0)),
        );
    }
    pressure::thrashing(Swapping {
        pages_per_second: Some(rate),
        peak_stall_percent: r.peak_memory_stall_percent,
        evidence,
    })
}

/// The process that held the most: the samples' largest, unless the kernel's own
/// figures at a kill (RSS of the victim as it died) say more, which a sample taken too
/// late (the victim already gone, its shell left) cannot contradict.
fn largest_process(r: &RunReport, kills: &[OomKill]) -> Option<Evidence> {
    let sampled = r
        .processes
        .iter()
        .filter_map(|p| Some((p, p.peak_rss?.bytes)))
        .max_by_key(|(_, bytes)| *bytes);
    let at_a_kill = kills
        .iter()
        .filter_map(|k| {
            let rss = k.anon_rss? + k.file_rss.unwrap_or(0) + k.shmem_rss.unwrap_or(0);
            Some((k, rss))
        })
        .max_by_key(|(_, rss)| *rss);
    match (sampled, at_a_kill) {
        (sampled, Some((k, rss))) if sampled.is_none_or(|(_, bytes)| rss > bytes) => Some(
            Evidence::text(
                format!("largest process: {}", r.label_of(k.pid, &k.comm)),
                format!("RSS {} when the kernel killed it", iec(rss)),
                "kernel log",
            )
            .with_quantity(Quantity::Bytes(rss)),
        ),
        (Some((p, bytes)), _) => Some(
            Evidence::text(
                format!("largest process: {}", p.label()),
                format!("peak RSS {}", iec(bytes)),
                "/proc/PID/stat",
            )
            .with_quantity(Quantity::Bytes(bytes)),
        ),
        (None, _) => None,
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
