//! `why --slurm-job ID` on a node: a Slurm job's death explained after it ended, from
//! what the node still has (the kernel's reports of the kills in the job's cgroups,
//! the faults it logged while the job ran, slurmstepd's line in the job's output,
//! Slurm's state and exit codes) and, where `memtriage record` runs on the node, the
//! history's verdict on that job (growth, what else held memory). What the Slurm
//! epilog in `deploy/slurm/` appends to the job's output.

use std::path::Path;

use crate::diagnose::growth::until_death;
use crate::diagnose::slurm::{verdict, JobEnd};
use crate::error::Result;
use crate::model::slurm::{SlurmJob, SlurmVerdict};
use crate::model::why::WhyReport;
use crate::parse::fatal_signal::{self, FatalSignal};
use crate::parse::kmsg::parse_line;
use crate::parse::oom_report::{reports, OomReport};
use crate::parse::slurm::{job_of_cgroup, stepd_oom};
use crate::probe::kmsg::read_kmsg;
use crate::probe::root::Root;
use crate::probe::slurm::{being_written, boot_unix, output_tail};
use crate::usecase::why::WhyRequest;

pub use crate::model::slurm::MemRequest;

/// The end of the job's output read for slurmstepd's line and a verdict already there.
const OUTPUT_TAIL: u64 = 256 << 10;
/// What `memtriage run` and this epilog write first: a job's output that holds one
/// has its verdict.
const RUN_VERDICT: &str = "memtriage: ";
pub const EPILOG_VERDICT: &str = "memtriage (Slurm epilog):";

/// What the node knows of the job's end.
#[derive(Debug)]
pub struct SlurmAnswer {
    pub job: SlurmJob,
    pub verdict: Option<SlurmVerdict>,
    /// The job's output already holds a verdict: a `memtriage run` inside the job, or
    /// this epilog before. Nothing is to be added.
    pub explained_in_output: bool,
    /// The history's verdict on the job, where `memtriage record` kept one (its
    /// growth and what else held memory are in `verdict` too).
    pub record: Option<WhyReport>,
    /// What could not be read (the kernel log, the job's output, the history).
    pub notes: Vec<String>,
}

/// Explains job `id` from this node, with the history at `db` where it exists.
pub fn explain_job(root: &Root, id: u64, db: &Path) -> Result<SlurmAnswer> {
    let job = crate::probe::slurm::job(id);
    let mut notes = Vec::new();
    let (lines, kernel_log_error) = match read_kmsg(root) {
        Ok(lines) => (lines, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    if let Some(e) = &kernel_log_error {
        notes.push(format!("the kernel log could not be read: {e}"));
    }
    let window = RunWindow::of(root, &job);
    let kills: Vec<OomReport> = reports(&lines)
        .into_iter()
        .filter(|r| in_job(r, id) && window.holds(r.kill.timestamp))
        .collect();
    let faults = faults_while_it_ran(&lines, &window);
    let tail = job
        .output
        .as_deref()
        .and_then(|p| match output_tail(p, job.uid, OUTPUT_TAIL) {
            Ok(t) => Some(t),
            Err(e) => {
                notes.push(format!("{}: {e}", p.display()));
                None
            }
        });
    let stepd_line = tail.as_deref().and_then(|t| {
        t.lines()
            .find(|l| stepd_oom(l).is_some())
            .map(str::to_string)
    });
    let stepd = stepd_line.as_deref().and_then(stepd_oom);
    let explained_in_output = tail.as_deref().is_some_and(holds_a_verdict);
    let mut verdict = verdict(&JobEnd {
        job: &job,
        kills: &kills,
        stepd_line: stepd_line.as_deref(),
        stepd: stepd.as_ref(),
        faults: &faults,
        kernel_log_error: kernel_log_error.as_deref(),
    });
    let record = recorded(db, &job, !kills.is_empty(), &mut notes);
    if let (Some(v), Some(r)) = (verdict.as_mut(), record.as_ref()) {
        add_record(v, r);
    }
    Ok(SlurmAnswer {
        job,
        verdict,
        explained_in_output,
        record,
        notes,
    })
}

/// The history's verdict on the job's death, where a recorder kept the node's. A
/// recorder writes a kill some seconds after it (it waits for the kill's two sources
/// to agree, then for its interval): where the kernel logged one and the recorder is
/// writing, the history is asked again for up to [`RECORD_WAIT`].
fn recorded(
    db: &Path,
    job: &SlurmJob,
    kernel_logged_a_kill: bool,
    notes: &mut Vec<String>,
) -> Option<WhyReport> {
    if !db.exists() {
        return None;
    }
    let request = WhyRequest {
        slurm_job: Some(job.id),
        // A job id names another job after slurmctld's state is cleared.
        since_ms: job.started_unix.map(|s| (s - 60) * 1000),
        ..WhyRequest::default()
    };
    let began = std::time::Instant::now();
    loop {
        match crate::usecase::why::why(db, &request) {
            Ok(answer) if answer.report.is_some() => return answer.report,
            Ok(_) => {}
            Err(e) => {
                notes.push(format!("the history could not be read: {e}"));
                return None;
            }
        }
        let wait = kernel_logged_a_kill && being_written(db) && began.elapsed() < RECORD_WAIT;
        if !wait {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// How long the history is waited for to hold a kill the kernel logged.
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_secs(12);

/// What the history adds to the node's verdict: how the job grew before it died, and
/// its other findings (workers that copied their parent, a storm of page faults).
fn add_record(v: &mut SlurmVerdict, r: &WhyReport) {
    if let (Some(g), Some(job), Some(first)) = (&r.growth, &r.job, v.findings.first_mut()) {
        first.evidence.push(until_death(
            job,
            g,
            r.death.at_ms,
            "the history memtriage record kept on the node",
        ));
    }
    v.findings.extend(r.findings.iter().skip(1).cloned());
}

fn in_job(r: &OomReport, id: u64) -> bool {
    [r.kill.oom_memcg.as_deref(), r.kill.memcg.as_deref()]
        .into_iter()
        .flatten()
        .any(|c| job_of_cgroup(c).is_some_and(|(job, _)| job == id))
}

/// When the job ran, on the kernel log's clock (seconds since boot), a few seconds
/// either side: a job id names another job after slurmctld's state is cleared, and
/// the kernel's line of a fault names no cgroup.
struct RunWindow {
    since_boot: Option<(f64, f64)>,
}

impl RunWindow {
    /// Seconds either side, plus a second per thousand since boot: the kernel log's
    /// clock drifts from the wall clock on a node up for months.
    const SLACK: f64 = 5.0;
    const DRIFT: f64 = 1e-3;

    fn of(root: &Root, job: &SlurmJob) -> RunWindow {
        let since_boot = match (job.started_unix, job.ended_unix, boot_unix(root)) {
            (Some(start), Some(end), Some((boot, uptime))) => {
                let slack = Self::SLACK + uptime * Self::DRIFT;
                Some((start as f64 - boot - slack, end as f64 - boot + slack))
            }
            _ => None,
        };
        RunWindow { since_boot }
    }

    /// Whether a line at `timestamp` falls in the window; any does where the window
    /// is unknown, none without a time where it is known.
    fn holds(&self, timestamp: Option<f64>) -> bool {
        match (self.since_boot, timestamp) {
            (None, _) => true,
            (Some((from, to)), Some(t)) => t >= from && t <= to,
            (Some(_), None) => false,
        }
    }
}

/// Faults the kernel logged while the job ran: the window is all that ties one to
/// the job, so none is taken where the window is unknown.
fn faults_while_it_ran(lines: &[String], window: &RunWindow) -> Vec<FatalSignal> {
    if window.since_boot.is_none() {
        return Vec::new();
    }
    lines
        .iter()
        .filter_map(|l| {
            let line = parse_line(l);
            window
                .holds(line.timestamp)
                .then(|| fatal_signal::parse(&line.message))
                .flatten()
        })
        .collect()
}

/// `memtriage run`'s verdict (`memtriage: CMD … after 3.2 s`, or its JSON report), or
/// this epilog's.
fn holds_a_verdict(output: &str) -> bool {
    output.lines().any(|l| {
        let l = strip_ansi(l);
        l.starts_with(EPILOG_VERDICT)
            || (l.starts_with(RUN_VERDICT) && l.trim_end().ends_with(" s") && l.contains(" after "))
            || l.contains("\"schema\":\"memtriage.run/")
            || l.contains("\"schema\": \"memtriage.run/")
    })
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_verdict_or_this_epilogs_is_found_in_the_output() {
        assert!(holds_a_verdict(
            "epoch 1\n\u{1b}[1mmemtriage:\u{1b}[0m python train.py was OOM-killed after 12.5 s\n"
        ));
        assert!(holds_a_verdict("memtriage (Slurm epilog): job 7 …\n"));
        assert!(holds_a_verdict(
            "{\"schema\":\"memtriage.run/v3\",\"pid\":4}"
        ));
        assert!(!holds_a_verdict(
            "memtriage: warning: sampling slowed\nepoch 2\n"
        ));
        assert!(!holds_a_verdict(
            "slurmstepd: error: Detected 1 oom_kill event in StepId=7.batch."
        ));
    }
}
