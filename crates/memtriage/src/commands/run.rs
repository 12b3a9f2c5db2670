//! `memtriage run -- CMD…`: the engine supervises; this parses, wires the output
//! observers, and renders the summary on stderr (stdout belongs to the job).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use memtriage_core::diagnose::logs::LogScanner;
use memtriage_core::diagnose::run::{diagnose, Inputs};
use memtriage_core::model::finding::Finding;
use memtriage_core::parse::size::parse_size;
use memtriage_core::supervise::{self, Config, OutputObserver, Tail};

use super::Context;
use crate::cli::RunArgs;
use crate::render;

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

pub fn run(ctx: &Context, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let limit = args
        .limit
        .as_deref()
        .map(|l| parse_size(l).map_err(|e| anyhow::anyhow!("--limit: {e}")))
        .transpose()?;
    let interval =
        parse_duration(&args.interval).map_err(|e| anyhow::anyhow!("--interval: {e}"))?;
    let config = Config {
        command: args.command.clone(),
        interval,
        limit,
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
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    if args.json {
        serde_json::to_writer_pretty(&mut err, &report)?;
        writeln!(err)?;
    } else {
        render::run::write(
            &mut err,
            &ctx.style,
            &report,
            &result.stderr.tail.last_lines(5),
        )?;
    }
    Ok(ExitCode::from((report.outcome.shell_code() & 0xff) as u8))
}

/// `500ms`, `2s`, `1.5s`, `1m`, or a number of seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (try 500ms, 2s)"))?;
    let seconds = value * scale;
    if !(0.01..=3600.0).contains(&seconds) {
        return Err(format!("{text:?}: choose between 10ms and 1h"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1"), Ok(Duration::from_secs(1)));
        assert!(parse_duration("1ms").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
