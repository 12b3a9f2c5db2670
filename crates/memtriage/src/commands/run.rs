//! `memtriage run -- CMD…`: the engine supervises; this parses, wires the output
//! observers, and renders the summary on stderr (stdout belongs to the job).

use std::io::Write;

use memtriage_core::diagnose::logs::LogScanner;
use memtriage_core::diagnose::run::{diagnose, Inputs};
use memtriage_core::model::finding::Finding;
use memtriage_core::supervise::passthrough::OutputObserver;
use memtriage_core::supervise::{self, Config, Tail};

use super::Context;
use crate::cli::RunArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

/// What memtriage keeps of each output stream while passing it through: its last
/// bytes, and what the log scanner recognised in it (one scanner per stream, so the
/// two streams' chunks never split each other's lines).
struct JobOutput {
    tail: Tail,
    scanner: LogScanner,
}

impl JobOutput {
    fn new(stream: &str) -> Self {
        JobOutput {
            tail: Tail::default(),
            scanner: LogScanner::with_source(stream),
        }
    }
}

impl OutputObserver for JobOutput {
    fn output(&mut self, chunk: &[u8]) {
        self.tail.push(chunk);
        self.scanner.feed(chunk);
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

pub fn run(ctx: &Context, args: &RunArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let config = Config {
        command: args.command.clone(),
        interval: args.interval.0,
        limit: args.limit.map(|l| l.0),
        record: args.record.clone(),
        perf: args.perf,
    };
    let result = supervise::run(
        &ctx.root,
        &config,
        JobOutput::new("stdout"),
        JobOutput::new("stderr"),
    )?;
    let (kills, kernel_log_unreadable) = match supervise::kernel_oom_kills(&ctx.root, &result) {
        Ok(k) => (k, None),
        Err(reason) => (Vec::new(), Some(reason)),
    };
    let mut report = result.report.clone();
    report.findings = diagnose(Inputs {
        report: &result.report,
        kernel_oom_kills: &kills,
        kernel_log_unreadable: kernel_log_unreadable.as_deref(),
        text_findings: text_findings(&result.stdout, &result.stderr),
    });
    if let Some(reason) = &kernel_log_unreadable {
        report.notes.push(format!("kernel log not read: {reason}"));
    }
    // Stdout belongs to the job: the summary goes to stderr, styled for stderr.
    if args.json {
        serde_json::to_writer_pretty(&mut p.err, &report)?;
        writeln!(p.err)?;
    } else {
        let style = p.err.style();
        render::run::write(
            &mut p.err,
            &style,
            &report,
            &result.stderr.tail.last_lines(5),
        )?;
    }
    Ok(ExitStatus::job(report.outcome.shell_code()))
}
