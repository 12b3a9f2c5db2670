//! Why a supervised job ended the way it did. Each finding is confirmed from the
//! system where it can be (the signal that ended a process, the kernel log's OOM
//! records, the cgroup's counters, /dev/shm use), and joined with what the job's
//! output said (the log scanner's findings, passed in).

use crate::diagnose::{cow, gpu, growth, ids, logs, oom};
use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::run::{signal_name, ProcessSummary, RunReport};
use crate::model::system::OomKill;
use crate::model::units::iec;

/// Major faults per second that count as a storm: each is a 4 KiB read from disk
/// taken synchronously by a stalled thread.
pub const MAJOR_FAULT_STORM_PER_SECOND: f64 = 500.0;
pub const MAJOR_FAULT_STORM_TOTAL: u64 = 10_000;
/// /dev/shm this full at its peak explains a DataLoader bus error.
pub const SHM_FULL_SHARE: f64 = 0.9;
/// Peak cgroup usage this close to its limit is worth a warning.
pub const NEAR_LIMIT_SHARE: f64 = 0.9;
/// Pages swapped per second of the job's wall time that count as thrashing.
pub const THRASHING_PAGES_PER_SECOND: f64 = 1000.0;
/// ... or all tasks stalled on memory this share of the time (PSI full avg10, %).
pub const THRASHING_STALL_PERCENT: f64 = 10.0;

/// What the diagnosis needs beyond the report.
pub struct Inputs<'a> {
    pub report: &'a RunReport,
    /// Kernel OOM kills of the job's processes, or in its cgroup, during the run.
    pub kernel_oom_kills: &'a [OomKill],
    /// Findings from the job's output (the log scanner), in its order.
    pub text_findings: Vec<Finding>,
}

pub fn diagnose(inputs: Inputs<'_>) -> Vec<Finding> {
    let r = inputs.report;
    let mut findings = Vec::new();
    let oom = oom_kill(&inputs);
    let oom_seen = oom.is_some();
    findings.extend(oom);
    findings.extend(signal_ends(r, oom_seen, &inputs.text_findings));
    findings.extend(shm_full(r));
    findings.extend(near_limit(r, oom_seen));
    findings.extend(copy_on_write(r));
    findings.extend(major_fault_storm(r));
    findings.extend(thrashing(r));
    findings.extend(r.gpu.as_ref().map(gpu::run_events).unwrap_or_default());
    findings.extend(
        r.growth
            .as_ref()
            .and_then(|g| growth::leak_like_growth(g, &r.outcome, r.wall_seconds)),
    );
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

/// What the run itself measured is confirmed: the kernel's report of the kill, the
/// signal the job died of, the cgroup's figures. Only the cause of a SIGKILL that was
/// not the OOM killer, and a growth that has not yet failed, stay open.
fn system_assessment(id: &str) -> Option<Assessment> {
    let (certainty, cause, confirm) = match id {
        ids::RUN_OOM_KILLED | ids::RUN_NEAR_LIMIT | ids::RUN_MAJOR_FAULT_STORM | ids::RUN_SWAP_THRASHING => {
            (Certainty::Confirmed, CauseKind::Capacity, "")
        }
        ids::RUN_SEGFAULT | ids::RUN_ABORT | ids::FORK_COPY_ON_WRITE => (Certainty::Confirmed, CauseKind::UserCode, ""),
        ids::RUN_BUS_ERROR_SHM | ids::RUN_SHM_FULL | ids::RUN_BUS_ERROR_MMAP => {
            (Certainty::Confirmed, CauseKind::Configuration, "")
        }
        ids::RUN_KILLED => (
            Certainty::Possible,
            CauseKind::Configuration,
            "Who sent it: a scheduler's or container runtime's log for the time of the kill.",
        ),
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
    let families: [(&str, &[&str]); 6] = [
        (
            ids::RUN_OOM_KILLED,
            &[ids::LOG_OOM_KILL, ids::LOG_DATALOADER_WORKER_KILLED],
        ),
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
    if let Some((biggest, peak)) = r
        .processes
        .iter()
        .filter_map(|p| Some((p, p.peak_rss?)))
        .max_by_key(|(_, peak)| peak.bytes)
    {
        evidence.push(
            Evidence::text(
                format!("largest process: {}", biggest.label()),
                format!("peak RSS {}", iec(peak.bytes)),
                "/proc/PID/stat",
            )
            .with_quantity(Quantity::Bytes(peak.bytes)),
        );
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
    Some(Finding {
        assessment: None,
        id: ids::RUN_OOM_KILLED.into(),
        severity: Severity::Error,
        title: format!(
            "out of memory: the kernel killed {victim}{}",
            if by_cgroup {
                " at its cgroup's memory limit"
            } else {
                " (the machine ran out of memory)"
            }
        ),
        evidence,
        why: "An OOM kill is SIGKILL: no Python traceback, just `Killed` and exit 137.".into(),
        fix: oom::fix(if by_cgroup {
            oom::Limit::Cgroup
        } else {
            oom::Limit::Machine
        })
        .into(),
    })
}

fn signal_ends(r: &RunReport, oom_seen: bool, text: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    let ended: Vec<(&str, i32, bool, String)> = std::iter::once((
        "the job",
        r.outcome.signal,
        r.outcome.core_dumped,
        format!("pid {}", r.pid),
    ))
    .chain(
        r.processes
            .iter()
            .filter(|p| p.pid != r.pid)
            .filter_map(|p| {
                p.outcome
                    .map(|o| ("a process of the job", o.signal, o.core_dumped, p.label()))
            }),
    )
    .filter_map(|(who, sig, core, label)| sig.map(|s| (who, s, core, label)))
    .collect();
    let frames_from_text = text
        .iter()
        .any(|f| f.evidence.iter().any(|e| e.label == logs::INNERMOST_FRAME));
    for (who, sig, core, label) in ended {
        let evidence = vec![Evidence::text(
            label.clone(),
            format!(
                "killed by {} ({sig}){}",
                signal_name(sig),
                if core { ", core dumped" } else { "" }
            ),
            "wait4",
        )];
        let finding = match sig {
            libc::SIGSEGV => Some(Finding {
                assessment: None,
                id: ids::RUN_SEGFAULT.into(),
                severity: Severity::Error,
                title: format!("segmentation fault in native code ({who}, {label})"),
                evidence,
                why: "A C/C++/CUDA extension read or wrote memory it does not own; Python cannot catch it.".into(),
                fix: format!(
                    "{}Get the native stack: `gdb -ex run -ex bt --args python …` or `catchsegv`; check the extension's version against torch/numpy (ABI mismatch), and tensors passed to it (dtype, contiguity, device).",
                    if frames_from_text { "The Python frames above show where the crash happened. " } else { "Rerun under memtriage with PYTHONFAULTHANDLER=1 (set by default) to see the Python frames. " }
                ),
            }),
            libc::SIGABRT => Some(Finding {
                assessment: None,
                id: ids::RUN_ABORT.into(),
                severity: Severity::Error,
                title: format!("aborted by native code ({who}, {label})"),
                evidence,
                why: "abort() comes from a failed C/C++ assertion, an uncaught C++ exception, or heap corruption detected by the allocator.".into(),
                fix: "Read the line printed just before the abort (terminate called after…, free(): invalid pointer, Assertion … failed); run under gdb for the native stack.".into(),
            }),
            libc::SIGBUS => {
                let shm_full = shm_share(r).is_some_and(|s| s >= SHM_FULL_SHARE);
                Some(Finding {
                    assessment: None,
                    id: if shm_full { ids::RUN_BUS_ERROR_SHM.into() } else { ids::RUN_BUS_ERROR_MMAP.into() },
                    severity: Severity::Error,
                    title: if shm_full {
                        format!("bus error: /dev/shm was full ({who}, {label})")
                    } else {
                        format!("bus error on a memory-mapped file ({who}, {label})")
                    },
                    evidence,
                    why: if shm_full {
                        "Writing to a full tmpfs mapping raises SIGBUS; DataLoader workers pass batches through /dev/shm.".into()
                    } else {
                        "SIGBUS on a mapped file means a page past the file's end (it was truncated or replaced while mapped) or a disk read error.".into()
                    },
                    fix: if shm_full {
                        "Give /dev/shm room: docker run --shm-size=16g; Kubernetes: an emptyDir with medium: Memory mounted at /dev/shm; or mount -o remount,size=16G /dev/shm.".into()
                    } else {
                        "Do not rewrite checkpoints in place while they are loaded (write a new file and rename it); check `dmesg` for I/O errors on the disk.".into()
                    },
                })
            }
            libc::SIGKILL if !oom_seen => Some(Finding {
                assessment: None,
                id: ids::RUN_KILLED.into(),
                severity: Severity::Error,
                title: format!("killed by SIGKILL, not by the OOM killer as far as the kernel log shows ({who}, {label})"),
                evidence,
                why: "SIGKILL cannot be caught. Without an OOM record it came from outside: a scheduler (Slurm time limit, Kubernetes eviction or preemption), a watchdog, or a user.".into(),
                fix: "Check the scheduler's record (sacct -j JOB, kubectl describe pod); if the kernel log was unreadable, rerun as root so memtriage can read it.".into(),
            }),
            libc::SIGKILL => None,
            libc::SIGINT | libc::SIGTERM | libc::SIGHUP | libc::SIGQUIT => Some(Finding {
                assessment: None,
                id: ids::RUN_TERMINATED.into(),
                severity: Severity::Info,
                title: format!("ended by {} ({who}, {label})", signal_name(sig)),
                evidence,
                why: "The job was asked to stop.".into(),
                fix: String::new(),
            }),
            _ => Some(Finding {
                assessment: None,
                id: ids::RUN_SIGNAL.into(),
                severity: Severity::Error,
                title: format!("ended by {} ({who}, {label})", signal_name(sig)),
                evidence,
                why: "A signal the job did not handle ended it.".into(),
                fix: String::new(),
            }),
        };
        if let Some(f) = finding {
            if !out.iter().any(|o: &Finding| o.id == f.id) {
                out.push(f);
            }
        }
    }
    out
}

fn shm_share(r: &RunReport) -> Option<f64> {
    let used = r.peak_shm_used?.bytes;
    let size = r.shm_size.filter(|s| *s > 0)?;
    Some(used as f64 / size as f64)
}

fn shm_full(r: &RunReport) -> Option<Finding> {
    let share = shm_share(r)?;
    if share < SHM_FULL_SHARE {
        return None;
    }
    let used = r.peak_shm_used?;
    Some(Finding {
        assessment: None,
        id: ids::RUN_SHM_FULL.into(),
        severity: Severity::Error,
        title: format!("/dev/shm filled up ({:.0}% at its peak)", share * 100.0),
        evidence: vec![Evidence::text(
            "peak /dev/shm use",
            format!("{} of {} at {:.1} s", iec(used.bytes), iec(r.shm_size.unwrap_or(0)), used.at_seconds),
            "statvfs(/dev/shm)",
        ).with_quantity(Quantity::Bytes(used.bytes))],
        why: "DataLoader workers hand batches to the main process through /dev/shm; when it is full they die with `Bus error`.".into(),
        fix: "Give /dev/shm room: docker run --shm-size=16g; Kubernetes: an emptyDir with medium: Memory at /dev/shm; or mount -o remount,size=16G /dev/shm. Or pass batches through files: torch.multiprocessing.set_sharing_strategy('file_system').".into(),
    })
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
    if f.peak_major_per_second < MAJOR_FAULT_STORM_PER_SECOND || f.major < MAJOR_FAULT_STORM_TOTAL {
        return None;
    }
    Some(major_fault_storm_finding(
        f.peak_major_per_second,
        vec![
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
    ))
}

/// `run.major-fault-storm` with its evidence: one text for `run` and for `why`.
pub fn major_fault_storm_finding(peak_per_second: f64, evidence: Vec<Evidence>) -> Finding {
    Finding {
        assessment: None,
        id: ids::RUN_MAJOR_FAULT_STORM.into(),
        severity: Severity::Warn,
        title: format!("major-fault storm: up to {peak_per_second:.0} page reads from disk per second"),
        evidence,
        why: "Each major fault stalls a thread on a small synchronous disk read: a model or dataset paged in through mmap 4 KiB at a time loads far below the disk's speed.".into(),
        fix: "Read the file into the page cache first with large sequential reads (`cat FILE > /dev/null`, `vmtouch -t FILE`), populate the mapping (MADV_POPULATE_READ / MAP_POPULATE), or load with large reads instead of touching a mapping lazily.".into(),
    }
}

fn thrashing(r: &RunReport) -> Option<Finding> {
    let pages = r.swapped_pages?;
    let rate = pages as f64 / r.wall_seconds.max(1e-3);
    let stall = r.peak_memory_stall_percent.unwrap_or(0.0);
    if rate < THRASHING_PAGES_PER_SECOND && stall < THRASHING_STALL_PERCENT {
        return None;
    }
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
    Some(thrashing_finding(evidence))
}

/// `run.swap-thrashing` with its evidence: one text for `run` and for `why`.
pub fn thrashing_finding(evidence: Vec<Evidence>) -> Finding {
    Finding {
        assessment: None,
        id: ids::RUN_SWAP_THRASHING.into(),
        severity: Severity::Warn,
        title: "swap thrashing: memory was paged to and from disk while the job ran".into(),
        evidence,
        why: "A job whose working set does not fit spends its time waiting on swap instead of computing.".into(),
        fix: "Lower the job's memory (batch size, workers) or give it more; on a dedicated training box turn swap off so it fails fast (swapoff -a) — see `memtriage doctor`.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// torchrun (pid 10) whose rank 1 (pid 12) the kernel killed at the job's limit;
    /// rank 0 (pid 11) was ended by SIGTERM when its peer died.
    fn torchrun_report() -> RunReport {
        let process = |pid: i32, rank: Option<u32>, rss: u64, signal: Option<i32>| {
            serde_json::json!({
                "pid": pid, "ppid": 10, "comm": "python3", "exe": null,
                "rank": rank.map(|r| serde_json::json!({"rank": r, "local_rank": r, "world_size": 2})),
                "first_seen_seconds": 0.1, "last_seen_seconds": 2.0,
                "peak_rss": {"bytes": rss, "at_seconds": 1.9},
                "peak_pss": null, "peak_uss": null, "peak_uss_estimate": null,
                "private_dirty_at_peak_uss": null, "shared_at_peak_uss": null,
                "anonymous": null, "anon_huge_pages": null,
                "minor_faults": 0, "major_faults": 0,
                "outcome": signal.map(|s| serde_json::json!({"exit_code": null, "signal": s, "core_dumped": false})),
            })
        };
        serde_json::from_value(serde_json::json!({
            "schema": "memtriage.run/v1",
            "command": ["torchrun", "train.py"],
            "pid": 10,
            "wall_seconds": 2.1,
            "outcome": {"exit_code": 1, "signal": null, "core_dumped": false},
            "peak_tree_rss": {"bytes": 600u64 << 20, "at_seconds": 1.9},
            "faults": {"minor": 0, "major": 0, "peak_minor_per_second": 0.0,
                       "peak_major_per_second": 0.0, "peak_major_at_seconds": 0.0},
            "cgroup_oom_kills": 1,
            "processes": [
                process(11, Some(0), 200 << 20, Some(libc::SIGTERM)),
                process(12, Some(1), 400 << 20, Some(libc::SIGKILL)),
            ],
            "limit": null,
            "sampling": {"interval_ms": 100, "ticks": 20, "pss_readings": 0,
                         "pss_read_seconds": 0.0, "pss_read_max_ms": 0.0,
                         "peak_pss_max_age_seconds": 0.0},
            "findings": [],
            "notes": [],
        }))
        .unwrap()
    }

    fn kill_of(pid: i32) -> OomKill {
        OomKill {
            pid,
            comm: "python3".into(),
            total_vm: None,
            anon_rss: Some(400 << 20),
            file_rss: None,
            shmem_rss: None,
            uid: None,
            oom_score_adj: None,
            constraint: crate::model::system::OomConstraint::Cgroup,
            memcg: None,
            oom_memcg: Some("/job".into()),
            timestamp: None,
            wall_time: None,
        }
    }

    #[test]
    fn findings_name_the_rank_of_the_process_they_are_about() {
        let report = torchrun_report();
        let kills = [kill_of(12)];
        let findings = diagnose(Inputs {
            report: &report,
            kernel_oom_kills: &kills,
            text_findings: Vec::new(),
        });
        let oom = findings
            .iter()
            .find(|f| f.id == ids::RUN_OOM_KILLED)
            .expect("an OOM finding");
        assert_eq!(
            oom.title,
            "out of memory: the kernel killed pid 12 (python3, rank 1) at its cgroup's memory limit"
        );
        let labels: Vec<&str> = oom.evidence.iter().map(|e| e.label.as_str()).collect();
        assert!(
            labels.contains(&"kernel killed pid 12 (python3, rank 1)"),
            "{labels:?}"
        );
        assert!(labels.contains(&"pid 12 (python3, rank 1)"), "{labels:?}");
        assert!(
            labels.contains(&"largest process: pid 12 (python3, rank 1)"),
            "{labels:?}"
        );
        let terminated = findings
            .iter()
            .find(|f| f.id == ids::RUN_TERMINATED)
            .expect("rank 0's SIGTERM");
        assert!(
            terminated
                .title
                .ends_with("(a process of the job, pid 11 (python3, rank 0))"),
            "{}",
            terminated.title
        );
    }

    #[test]
    fn a_process_without_a_rank_is_named_as_before() {
        let mut report = torchrun_report();
        for p in &mut report.processes {
            p.rank = None;
        }
        let kills = [kill_of(12)];
        let findings = diagnose(Inputs {
            report: &report,
            kernel_oom_kills: &kills,
            text_findings: Vec::new(),
        });
        assert_eq!(
            findings[0].title,
            "out of memory: the kernel killed pid 12 (python3) at its cgroup's memory limit"
        );
        // A kill of a process the run never sampled keeps the kernel's name for it.
        assert_eq!(report.label_of(99, "python3"), "pid 99 (python3)");
    }
}
