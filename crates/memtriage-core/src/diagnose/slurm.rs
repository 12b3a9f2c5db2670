//! A Slurm job's death judged on its node after the job ended, from what is left: the
//! kernel's reports of the kills in the job's cgroups (victim, usage and limit, every
//! process the job held), slurmstepd's line in the job's output, Slurm's own state and
//! exit codes, and the faults the kernel logged while it ran. The fix is in Slurm's
//! terms (`#SBATCH --mem=…`, fewer DataLoader workers). Pure: the probes read.

use crate::diagnose::signal::{self, CrashSite, PythonFrames, SignalEnd};
use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::slurm::{SlurmJob, SlurmVerdict};
use crate::model::system::OomConstraint;
use crate::model::units::iec;
use crate::parse::fatal_signal::FatalSignal;
use crate::parse::oom_report::OomReport;
use crate::parse::slurm::{job_of_cgroup, StepdOom};

/// Processes of the job's task table named in the evidence.
const TASKS_NAMED: usize = 4;

/// What was found of the job's end.
pub struct JobEnd<'a> {
    pub job: &'a SlurmJob,
    /// The kernel's reports of kills in the job's cgroups, oldest first.
    pub kills: &'a [OomReport],
    /// slurmstepd's OOM line in the job's output, where it was read, and what it says.
    pub stepd_line: Option<&'a str>,
    pub stepd: Option<&'a StepdOom>,
    /// Faults the kernel logged while the job ran.
    pub faults: &'a [FatalSignal],
    /// Where the kernel log could not be read, why.
    pub kernel_log_error: Option<&'a str>,
}

/// The verdict, where the job died of memory or a fault; `None` for a job that ended
/// in any other way (it succeeded, it failed on its own).
pub fn verdict(end: &JobEnd) -> Option<SlurmVerdict> {
    let finding = if !end.kills.is_empty() || end.job.slurm_says_oom() || end.stepd_line.is_some() {
        oom_killed(end)
    } else {
        fault(end)?
    };
    let short = format!("job {}: {}", end.job.id, finding.title);
    Some(SlurmVerdict {
        job_id: end.job.id,
        short,
        findings: vec![finding],
    })
}

fn oom_killed(end: &JobEnd) -> Finding {
    let job = end.job;
    let request = job.mem_request.as_ref();
    let first = end.kills.first();
    let limit = first
        .and_then(|k| k.limit)
        .or_else(|| end.stepd.and_then(|s| s.polled).map(|(_, limit)| limit))
        .or_else(|| request.and_then(|r| r.node_bytes));
    let at = match (limit, request) {
        (Some(l), Some(r)) => format!(" ({}, {})", iec(l), r.as_option()),
        (Some(l), None) => format!(" ({})", iec(l)),
        (None, Some(r)) => format!(" ({})", r.as_option()),
        (None, None) => String::new(),
    };
    let polled = end.stepd.and_then(|s| Some((s.step.clone(), s.polled?)));
    // The node's memory ran out, not the job's: more `--mem` would not help.
    let node_wide = first.is_some_and(|k| k.kill.constraint != OomConstraint::Cgroup);
    let title = match (first, &polled) {
        (Some(k), _) if node_wide => format!(
            "out of memory on the node: the kernel killed {} of job {}, the node's memory ran out (not the job's limit{at})",
            victim(k),
            job.id
        ),
        (None, Some((step, (usage, limit)))) => format!(
            "out of memory: Slurm killed {} of job {} at its memory limit{at}: it polled {} over {}",
            step.as_deref().map_or("a step".into(), |s| format!("step {s}")),
            job.id,
            iec(*usage),
            iec(*limit)
        ),
        (Some(k), _) => format!(
            "out of memory: the kernel killed {} at job {}'s memory limit{at}{}",
            victim(k),
            job.id,
            match end.kills.len() {
                1 => String::new(),
                n => format!(" ({n} kills in the job)"),
            }
        ),
        (None, None) => format!(
            "out of memory: Slurm counted an OOM kill in job {} at its memory limit{at}",
            job.id
        ),
    };
    let mut evidence = Vec::new();
    for k in end.kills.iter().take(3) {
        evidence.extend(kill_evidence(k));
    }
    if let Some(k) = first {
        evidence.extend(tasks_evidence(k));
    }
    if let Some(line) = end.stepd_line {
        evidence.push(Evidence::text(
            "slurmstepd in the job's output",
            line.trim(),
            job.output
                .as_ref()
                .map_or("the job's output".into(), |p| p.display().to_string()),
        ));
    }
    evidence.push(Evidence::text(
        "Slurm's record",
        slurm_record(job),
        "scontrol show job",
    ));
    let mut confirm = String::new();
    if first.is_none() && polled.is_none() {
        confirm = match end.kernel_log_error {
            Some(why) => {
                format!("the kernel log names the victim; it could not be read here: {why}")
            }
            None => "the kernel log no longer holds the report (rotated, or cleared): \
                     `journalctl -k` on the node at the job's end time names the victim"
                .into(),
        };
    }
    Finding {
        id: ids::SLURM_OOM_KILLED.into(),
        severity: Severity::Error,
        title,
        evidence,
        why: match polled {
            Some(_) => "Slurm polls each step's memory (JobAcctGatherParams=OverMemoryKill, \
                        every JobAcctGatherFrequency) and kills the whole step once it is past \
                        the memory it gave the job; the kernel logs nothing. A burst between \
                        two polls goes unseen, or the step dies at the next one."
                .into(),
            None => "The job's memory cgroup reached the memory Slurm gave it, and the kernel \
                     killed one process of it, the one with the highest oom_score: usually the \
                     largest, which is not always the one that grew. Slurm's own line says \
                     only that some process was killed."
                .into(),
        },
        fix: match node_wide {
            true => "The node ran out, not the job's --mem: what else ran there held the rest \
                     (the kernel's task table lists it). Ask for the node's memory to yourself \
                     (`#SBATCH --exclusive --mem=0`), or tell the administrators: the node's \
                     RealMemory (or MemSpecLimit) in slurm.conf leaves too little for the system."
                .into(),
            false => fix(limit, request.map(|r| r.as_option()), first),
        },
        assessment: Some(Assessment {
            certainty: match (first, &polled) {
                (None, None) => Certainty::Likely,
                _ => Certainty::Confirmed,
            },
            cause: CauseKind::Capacity,
            confirm,
        }),
    }
}

/// `pt_data_worker (pid 4242), a DataLoader worker, in step batch`.
fn victim(k: &OomReport) -> String {
    let (comm, pid) = (&k.kill.comm, k.kill.pid);
    let role = if comm == "pt_data_worker" {
        ", a DataLoader worker,".to_string()
    } else {
        let same: Vec<i32> = k
            .tasks
            .iter()
            .filter(|t| t.name == *comm)
            .map(|t| t.pid)
            .collect();
        match same.iter().min() {
            Some(first) if same.len() > 1 && *first != pid => format!(
                ", one of {} {comm} processes of the job (not the first, pid {first}: a worker or a rank),",
                same.len()
            ),
            _ => String::new(),
        }
    };
    let step = k
        .kill
        .memcg
        .as_deref()
        .or(k.kill.oom_memcg.as_deref())
        .and_then(job_of_cgroup)
        .and_then(|(_, step)| step)
        .map(|s| format!(" in step {s}"))
        .unwrap_or_default();
    format!("{comm} (pid {pid}){role}{step}")
}

fn kill_evidence(k: &OomReport) -> Vec<Evidence> {
    let mut out = vec![Evidence::text(
        format!("the kernel killed {} (pid {})", k.kill.comm, k.kill.pid),
        match k.kill.anon_rss {
            Some(a) => format!(
                "anon-rss {} in {}",
                iec(a),
                k.kill.memcg.as_deref().unwrap_or("its cgroup")
            ),
            None => format!("in {}", k.kill.memcg.as_deref().unwrap_or("its cgroup")),
        },
        "the kernel log (/dev/kmsg)",
    )];
    if let (Some(usage), Some(limit)) = (k.usage, k.limit) {
        out.push(
            Evidence::text(
                "the job's memory at the kill",
                format!(
                    "{} of a {} limit ({}){}",
                    iec(usage),
                    iec(limit),
                    k.kill.oom_memcg.as_deref().unwrap_or("its cgroup"),
                    k.failcnt
                        .map(|n| format!("; the limit was hit {n} times"))
                        .unwrap_or_default()
                ),
                "the kernel's report: memory: usage … limit …",
            )
            .with_quantity(Quantity::Bytes(limit)),
        );
    }
    out
}

/// The job's processes at the kill, largest first, from the kernel's task table.
fn tasks_evidence(k: &OomReport) -> Option<Evidence> {
    if k.tasks.is_empty() {
        return None;
    }
    let named: Vec<String> = k
        .tasks
        .iter()
        .take(TASKS_NAMED)
        .map(|t| format!("{} (pid {}) {}", t.name, t.pid, iec(t.rss)))
        .collect();
    let more = k.tasks.len().saturating_sub(TASKS_NAMED);
    Some(Evidence::text(
        "the job's processes at the kill, largest first",
        format!(
            "{}{}",
            named.join(", "),
            match more {
                0 => String::new(),
                n => format!(" and {n} more"),
            }
        ),
        "the kernel's task table",
    ))
}

fn slurm_record(job: &SlurmJob) -> String {
    let mut parts = Vec::new();
    if let Some(s) = &job.state {
        parts.push(format!("JobState={s}"));
    }
    if let Some(r) = &job.reason {
        parts.push(format!("Reason={r}"));
    }
    if let Some(e) = &job.exit_code {
        parts.push(format!("ExitCode={e}"));
    }
    if let Some(d) = job.derived_exit_code.as_deref().filter(|d| *d != "0:0") {
        parts.push(format!("DerivedExitCode={d}"));
    }
    if parts.is_empty() {
        "not readable".into()
    } else {
        parts.join(" ")
    }
}

/// More memory from Slurm, or a job that needs less.
fn fix(limit: Option<u64>, asked: Option<String>, kill: Option<&OomReport>) -> String {
    let more = match limit {
        Some(l) => format!(
            "Ask Slurm for more: `#SBATCH --mem={}` ({}); with --mem-per-cpu or \
             --mem-per-gpu the limit grows with the CPUs or GPUs asked for.",
            suggested(l),
            match &asked {
                Some(a) => format!("this job had {a}"),
                None => format!("this job had {}", iec(l)),
            }
        ),
        None => "Ask Slurm for more memory: `#SBATCH --mem=…` (per node) or \
                 `--mem-per-cpu`/`--mem-per-gpu`."
            .into(),
    };
    let workers = kill.is_some_and(|k| {
        k.kill.comm == "pt_data_worker"
            || k.tasks.iter().filter(|t| t.name == k.kill.comm).count() > 1
    });
    let less = match workers {
        true => {
            "Or make it need less: fewer DataLoader workers (num_workers; each forked \
                 worker that touches the dataset copies what it touches), a smaller batch, \
                 a memory-mapped dataset."
        }
        false => {
            "Or make it need less: a smaller batch, a memory-mapped dataset, fewer \
                  processes per node."
        }
    };
    format!(
        "{more} {less} To see what grew next time, run it under `memtriage run -- python \
         train.py` inside the batch script."
    )
}

/// 1.5 times the limit, rounded up to what people write: 100M steps under 1G, whole
/// G above.
fn suggested(limit: u64) -> String {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    let want = limit.saturating_add(limit / 2);
    if want < GIB {
        format!("{}M", want.div_ceil(100 * MIB) * 100)
    } else {
        format!("{}G", want.div_ceil(GIB))
    }
}

/// A job whose batch script ended by a fault signal (or 128 plus one), with the
/// kernel's line of that fault while it ran.
fn fault(end: &JobEnd) -> Option<Finding> {
    let signal = ended_by_signal(end.job.exit_code.as_deref()?)?;
    // The kernel's line names no cgroup: tied to the job by time alone, and only
    // where it is the one such fault while the job ran.
    let mut same = end.faults.iter().filter(|f| f.signal == signal);
    let f = same.next()?;
    if same.next().is_some() {
        return None;
    }
    let who = format!("{} (pid {})", f.comm, f.pid);
    let evidence = vec![
        Evidence::text(
            format!(
                "the kernel logged {who} dying of {}",
                crate::model::run::signal_name(signal)
            ),
            f.object
                .as_ref()
                .map(|o| format!("in {o}"))
                .unwrap_or_else(|| "where, the line did not say".into()),
            "the kernel log (/dev/kmsg), while the job ran",
        ),
        Evidence::text("Slurm's record", slurm_record(end.job), "scontrol show job"),
    ];
    let mut finding = signal::ended_by(SignalEnd {
        signal,
        subject: format!("{who}, in job {}", end.job.id),
        shm: None,
        frames: PythonFrames::NotSupervised,
        oom_kill_seen: false,
        site: CrashSite::default(),
        evidence,
    })?;
    if let Some(a) = finding.assessment.as_mut() {
        a.certainty = Certainty::Likely;
        a.confirm = "the kernel's fault line names no cgroup: it is the job's by time alone; \
                     with `memtriage record` on the node, `memtriage why PID` ties it to the \
                     job's cgroup"
            .into();
    }
    Some(finding)
}

/// `0:11` (killed by signal 11) or `139:0` (a shell's 128 + 11) give 11.
fn ended_by_signal(exit_code: &str) -> Option<i32> {
    const FAULTS: [i32; 3] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL];
    let (status, signal) = exit_code.split_once(':')?;
    let (status, signal): (i32, i32) = (status.parse().ok()?, signal.parse().ok()?);
    [signal, status - 128]
        .into_iter()
        .find(|s| FAULTS.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::slurm::MemRequest;
    use crate::parse::oom_report::reports;

    fn oom_job() -> SlurmJob {
        SlurmJob {
            id: 7,
            state: Some("COMPLETING".into()),
            reason: Some("OutOfMemory".into()),
            exit_code: Some("0:125".into()),
            mem_request: Some(MemRequest {
                option: "--mem",
                written: "300M".into(),
                node_bytes: Some(300 << 20),
            }),
            ..SlurmJob::default()
        }
    }

    /// The end of `job` with the kernel's `kills` in its cgroups and nothing else seen.
    fn end_with<'a>(job: &'a SlurmJob, kills: &'a [OomReport]) -> JobEnd<'a> {
        JobEnd {
            job,
            kills,
            stepd_line: None,
            stepd: None,
            faults: &[],
            kernel_log_error: None,
        }
    }

    #[test]
    fn an_oom_killed_worker_is_named_with_the_jobs_limit_and_a_slurm_fix() {
        let kills = reports(crate::parse::oom_report::SLURM_REPORT);
        let job = oom_job();
        let v = verdict(&JobEnd {
            stepd_line: Some("slurmstepd: error: Detected 1 oom_kill event in StepId=7.batch. Some of the step tasks have been OOM Killed."),
            ..end_with(&job, &kills)
        })
        .unwrap();
        let f = &v.findings[0];
        assert_eq!(f.id, ids::SLURM_OOM_KILLED);
        assert_eq!(
            f.title,
            "out of memory: the kernel killed pt_data_worker (pid 4242), a DataLoader worker, in step batch at job 7's memory limit (300 MiB, --mem=300M)"
        );
        assert!(
            f.fix
                .starts_with("Ask Slurm for more: `#SBATCH --mem=500M` (this job had --mem=300M)"),
            "{}",
            f.fix
        );
        assert!(f.fix.contains("fewer DataLoader workers"), "{}", f.fix);
        let values: Vec<&str> = f.evidence.iter().map(|e| e.value.as_str()).collect();
        assert!(values.contains(&"pt_data_worker (pid 4242) 250 MiB, python3 (pid 4200) 40.0 MiB, slurm_script (pid 4190) 1.2 MiB"), "{values:?}");
        assert!(values.iter().any(|v| v.starts_with("300 MiB of a 300 MiB limit (/slurm/uid_0/job_7/step_batch); the limit was hit 118 times")), "{values:?}");
        assert_eq!(
            f.assessment.as_ref().unwrap().certainty,
            Certainty::Confirmed
        );
        assert!(v
            .short
            .starts_with("job 7: out of memory: the kernel killed pt_data_worker"));
    }

    #[test]
    fn slurms_word_alone_is_likely_and_says_what_would_confirm_it() {
        let job = oom_job();
        let v = verdict(&JobEnd {
            kernel_log_error: Some("permission denied"),
            ..end_with(&job, &[])
        })
        .unwrap();
        let f = &v.findings[0];
        assert!(
            f.title
                .starts_with("out of memory: Slurm counted an OOM kill in job 7"),
            "{}",
            f.title
        );
        let a = f.assessment.as_ref().unwrap();
        assert_eq!(a.certainty, Certainty::Likely);
        assert!(a.confirm.contains("permission denied"));
    }

    #[test]
    fn a_job_that_ended_well_or_failed_on_its_own_gets_nothing() {
        let ok = SlurmJob {
            id: 8,
            state: Some("COMPLETED".into()),
            exit_code: Some("0:0".into()),
            ..SlurmJob::default()
        };
        let segv_elsewhere = [FatalSignal {
            pid: 9,
            comm: "other".into(),
            signal: libc::SIGSEGV,
            object: None,
        }];
        let end = |job| JobEnd {
            job,
            kills: &[],
            stepd_line: None,
            stepd: None,
            faults: &segv_elsewhere,
            kernel_log_error: None,
        };
        assert!(verdict(&end(&ok)).is_none());
        let failed = SlurmJob {
            exit_code: Some("1:0".into()),
            ..ok.clone()
        };
        assert!(verdict(&end(&failed)).is_none());
        let segfaulted = SlurmJob {
            exit_code: Some("139:0".into()),
            ..ok.clone()
        };
        let v = verdict(&end(&segfaulted)).unwrap();
        assert_eq!(
            v.findings[0].assessment.as_ref().unwrap().certainty,
            Certainty::Likely,
            "tied to the job by time alone"
        );
        assert!(
            v.findings[0].title.contains("other (pid 9), in job 8"),
            "{}",
            v.findings[0].title
        );
    }

    #[test]
    fn a_step_slurm_polled_and_killed_itself_is_confirmed_by_its_line() {
        let job = oom_job();
        let line = "slurmstepd: error: StepId=7.batch exceeded memory limit (322961408 > 314572800), being killed";
        let stepd = crate::parse::slurm::stepd_oom(line).unwrap();
        let v = verdict(&JobEnd {
            stepd_line: Some(line),
            stepd: Some(&stepd),
            ..end_with(&job, &[])
        })
        .unwrap();
        let f = &v.findings[0];
        assert_eq!(
            f.title,
            "out of memory: Slurm killed step 7.batch of job 7 at its memory limit (300 MiB, --mem=300M): it polled 308 MiB over 300 MiB"
        );
        assert_eq!(
            f.assessment.as_ref().unwrap().certainty,
            Certainty::Confirmed
        );
        assert!(f.why.contains("OverMemoryKill"));
    }

    #[test]
    fn a_kill_of_the_nodes_memory_does_not_ask_for_more_mem() {
        let mut kills = reports(crate::parse::oom_report::SLURM_REPORT);
        kills[0].kill.constraint = OomConstraint::Global;
        let job = oom_job();
        let v = verdict(&end_with(&job, &kills)).unwrap();
        let f = &v.findings[0];
        assert!(
            f.title
                .starts_with("out of memory on the node: the kernel killed pt_data_worker"),
            "{}",
            f.title
        );
        assert!(!f.fix.contains("#SBATCH --mem=5"), "{}", f.fix);
        assert!(f.fix.contains("--exclusive"), "{}", f.fix);
    }

    #[test]
    fn the_suggested_limit_is_half_again_rounded_as_people_write_it() {
        assert_eq!(suggested(300 << 20), "500M");
        assert_eq!(suggested(4 << 30), "6G");
        assert_eq!(suggested(700 << 20), "2G");
    }
}
