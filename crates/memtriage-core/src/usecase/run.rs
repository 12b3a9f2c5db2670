//! `run`: supervise a job to its end and diagnose what happened to it: the run's
//! report with its findings, from the samples, the exits, the kernel log and what the
//! job printed. The recording, when one was asked for, ends with this same report.

use crate::diagnose::kernel_crash;
use crate::diagnose::logs::{FailureClass, LogScanner};
use crate::diagnose::run::{diagnose, CrashLine, Inputs};
use crate::error::{Error, Result};
use crate::model::finding::{Evidence, Finding};
use crate::model::killers::LoggedKill;
use crate::model::run::RunReport;
use crate::parse::kmsg::parse_line;
use crate::probe::root::Root;
use crate::supervise::passthrough::OutputObserver;
use crate::supervise::python_hook::SavedSnapshot;
use crate::supervise::{self, Tail};
use crate::usecase::explain_snapshot;

pub use crate::sampler::DEFAULT_INTERVAL;
pub use crate::supervise::python_hook::HookParts;
pub use crate::supervise::Config;

/// Why a memory limit is too small to run a job under (the cgroup would kill it
/// before it starts), or `None` where it will do.
pub fn limit_too_small(limit: u64) -> Option<String> {
    crate::supervise::limit::too_small(limit)
}

/// Lines of the job's stderr kept for a summary to quote when nothing else explains
/// how it ended.
const STDERR_LINES_KEPT: usize = 5;

/// A finished run (`memtriage.run/v1` in `report`).
#[derive(Debug)]
pub struct RunOutcome {
    pub report: RunReport,
    /// The last lines the job wrote on stderr.
    pub stderr_tail: Vec<String>,
    /// Why the `--record` file is cut short, when it is (also among the notes).
    pub recording_failed: Option<String>,
}

/// What is kept of each output stream while it passes through: its last bytes, and
/// what the log scanner recognised in it (one scanner per stream, so the two
/// streams' chunks never split each other's lines).
struct JobOutput {
    tail: Tail,
    scanner: LogScanner,
}

impl JobOutput {
    fn new(stream: &str) -> Self {
        JobOutput {
            tail: Tail::default(),
            scanner: LogScanner::live(stream),
        }
    }

    /// Whether the stream had Python frames (faulthandler's): its findings show them.
    fn python_frames(&self) -> bool {
        self.scanner
            .matches()
            .iter()
            .any(|m| m.captures_named("frame").next().is_some())
    }

    /// The workers Ray's memory monitor told the job it killed: the driver prints the
    /// monitor's message, which names the worker's pid.
    fn ray_kills(&self, source: &str) -> Vec<LoggedKill> {
        let reports = self
            .scanner
            .matches()
            .iter()
            .filter(|m| m.class == FailureClass::UserspaceOomKill)
            .map(|m| m.line.as_str());
        crate::probe::killers::ray_kills(reports, source)
    }
}

impl OutputObserver for JobOutput {
    fn output(&mut self, chunk: &[u8]) -> Vec<String> {
        self.tail.push(chunk);
        let kinds_before = self.scanner.rule_counts().len();
        self.scanner.feed(chunk);
        // A rule matching for the first time is a new kind of failure; its line is
        // the one kept last among the matches.
        let new = &self.scanner.rule_counts()[kinds_before..];
        new.iter()
            .filter_map(|kind| {
                let m = self
                    .scanner
                    .matches()
                    .iter()
                    .rev()
                    .find(|m| m.rule == kind.rule)?;
                Some(m.line.clone())
            })
            .collect()
    }

    fn end(&mut self) {
        self.scanner.finish();
    }
}

/// Findings from both streams; one per failure, evidence joined.
fn text_findings(stdout: &JobOutput, stderr: &JobOutput) -> Vec<Finding> {
    let mut all: Vec<Finding> = stderr.scanner.findings();
    for f in stdout.scanner.findings() {
        match all.iter_mut().find(|a| a.id == f.id) {
            Some(a) => a.evidence.extend(f.evidence),
            None => all.push(f),
        }
    }
    all
}

/// A crash's innermost frame in the job's code, with its source line read from its
/// file (the job's output names the frame, not what the line did).
fn crash_line(text_findings: &[Finding]) -> Option<CrashLine> {
    let frame = text_findings
        .iter()
        .flat_map(|f| &f.evidence)
        .find(|e| e.label == crate::diagnose::logs::INNERMOST_USER_FRAME)?;
    let (file, n) = crate::diagnose::logs::frame_location(&frame.value)?;
    let text = crate::probe::source::line(std::path::Path::new(file), n)?;
    let name = file.rsplit('/').next().unwrap_or(file);
    Some(CrashLine {
        at: format!("{name}:{n}"),
        text,
    })
}

/// Each CUDA snapshot the job saved, explained; its findings join the run's, most
/// severe first, with where the snapshot is.
fn explain_snapshots(report: &mut RunReport, saved: &[SavedSnapshot]) {
    for s in saved {
        let shown = s.path.display().to_string();
        report.cuda_snapshots.push(shown.clone());
        match explain_snapshot::file(&s.path, s.oom) {
            Ok(explained) => {
                for mut f in explained.findings {
                    let whose = s.pid.map(|p| format!("pid {p}, ")).unwrap_or_default();
                    f.evidence.push(Evidence::text(
                        "allocator snapshot",
                        format!("{shown} ({whose}memtriage explain-snapshot reads it)"),
                        "torch out-of-memory observer",
                    ));
                    report.findings.push(f);
                }
            }
            Err(e) => report
                .notes
                .push(format!("the CUDA snapshot {shown} could not be read: {e}")),
        }
    }
    report
        .findings
        .sort_by_key(|f| std::cmp::Reverse(f.severity));
}

/// Runs the job to its end (its output passes through to this process's stdout and
/// stderr) and diagnoses it. Errors only when the job cannot be started (or the
/// log rules did not compile).
pub fn run(root: &Root, config: &Config) -> Result<RunOutcome> {
    // The rule table is built while the job starts, on a thread of its own: built on
    // the job's first line instead, it kept the scanner busy while a short job ended
    // and the output drain ran out, and the lines after the first passed through
    // unread; built before the job, it was a third of a short run's start. A line
    // that comes first waits for it (milliseconds) and is read.
    crate::diagnose::logs::check_prefilter().map_err(Error::internal)?;
    let _warm = std::thread::Builder::new()
        .name("memtriage-rules".into())
        .spawn(crate::diagnose::logs::check_rules);
    let mut result = supervise::run(
        root,
        config,
        JobOutput::new("stdout"),
        JobOutput::new("stderr"),
    )?;
    let (kernel_log, kernel_log_unreadable) = match supervise::kernel_log_of_run(&mut result) {
        Ok(lines) => (lines, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let kills = supervise::kernel_oom_kills(&kernel_log, &result);
    let parsed: Vec<_> = kernel_log.iter().map(|l| parse_line(l)).collect();
    let kernel_crash = kernel_crash::explain(
        &kernel_crash::as_dmesg(&parsed),
        "kernel log since the job started",
        |pid| supervise::was_the_jobs(&result, pid),
    );
    crate::diagnose::lines::classify(&mut result.report.memory_by_line);
    let text_findings = text_findings(&result.stdout, &result.stderr);
    let crash_line = crash_line(&text_findings);
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .saturating_sub(result.report.wall_seconds.ceil() as u64 + 1);
    let stopped =
        |signal: Option<i32>| signal.is_some_and(|s| s == libc::SIGTERM || s == libc::SIGKILL);
    let signalled = stopped(result.report.outcome.signal)
        || result
            .report
            .processes
            .iter()
            .any(|p| stopped(p.outcome.and_then(|o| o.signal)));
    // Only a job a killer may have stopped is worth a look at the killers' logs.
    let logged_kills = match signalled {
        true => {
            let mut kills =
                crate::probe::killers::logged_kills(root, &result.report.killers, since);
            kills.extend(result.stderr.ray_kills("the job's stderr"));
            kills.extend(result.stdout.ray_kills("the job's stdout"));
            kills
        }
        false => Vec::new(),
    };
    let findings = diagnose(Inputs {
        logged_kills: &logged_kills,
        report: &result.report,
        kernel_oom_kills: &kills,
        text_findings,
        python_frames: result.stdout.python_frames() || result.stderr.python_frames(),
        crash_line,
        kernel_crash,
    });
    let mut report = result.report;
    report.findings = findings;
    explain_snapshots(&mut report, &result.cuda_snapshots);
    if let Some(reason) = &kernel_log_unreadable {
        report.notes.push(format!("kernel log not read: {reason}"));
    }
    let mut recording_failed = None;
    if let Some(writer) = result.timeline_writer.as_mut() {
        // The kernel's kills on the run's time axis, for the page's timeline.
        for k in &kills {
            let t = match (k.timestamp, result.started_boot_seconds) {
                (Some(at), Some(started)) => (at - started).max(0.0),
                _ => report.wall_seconds,
            };
            let label = format!(
                "the kernel OOM-killed {}",
                crate::diagnose::oom::pid_label(k)
            );
            writer.event(t, "oom-kill", k.pid, None, Some(&label));
        }
        let failed_during_run = writer.failure().is_some();
        writer.finish(&report);
        recording_failed = writer.failure();
        // Failing at the end, the failure cannot be in the file's own report.
        if let (false, Some(failure)) = (failed_during_run, &recording_failed) {
            report.notes.push(failure.clone());
        }
    }
    Ok(RunOutcome {
        stderr_tail: result.stderr.tail.last_lines(STDERR_LINES_KEPT),
        report,
        recording_failed,
    })
}
