//! `--record FILE`: the timeline as JSON lines: a header, one line per sample,
//! events as they happen, and the final report.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::run::{Outcome, RecordedSample, RunReport, RECORD_SCHEMA};

pub struct Recorder {
    out: BufWriter<File>,
    failed: bool,
}

#[derive(Serialize)]
struct Header<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    schema: &'static str,
    command: Vec<String>,
    interval_ms: u64,
    limit: Option<u64>,
    started_unix_ms: u128,
    #[serde(skip)]
    _p: std::marker::PhantomData<&'a ()>,
}

#[derive(Serialize)]
struct Event {
    #[serde(rename = "type")]
    kind: &'static str,
    t: f64,
    event: &'static str,
    pid: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    report: &'a RunReport,
}

impl Recorder {
    pub fn create(
        path: &Path,
        command: &[OsString],
        interval: Duration,
        limit: Option<u64>,
    ) -> Result<Self> {
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let mut r = Recorder {
            out: BufWriter::new(file),
            failed: false,
        };
        let started_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        r.line(&Header {
            kind: "header",
            schema: RECORD_SCHEMA,
            command: command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            interval_ms: interval.as_millis() as u64,
            limit,
            started_unix_ms,
            _p: std::marker::PhantomData,
        });
        Ok(r)
    }

    /// A failed write (disk full) stops recording, never the job.
    fn line<T: Serialize>(&mut self, value: &T) {
        if self.failed {
            return;
        }
        let ok = serde_json::to_writer(&mut self.out, value).is_ok()
            && self.out.write_all(b"\n").is_ok();
        self.failed = !ok;
    }

    pub fn sample(&mut self, sample: &RecordedSample) {
        #[derive(Serialize)]
        struct Tagged<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            sample: &'a RecordedSample,
        }
        self.line(&Tagged {
            kind: "sample",
            sample,
        });
    }

    pub fn event(&mut self, t: f64, event: &'static str, pid: i32, outcome: Option<Outcome>) {
        self.line(&Event {
            kind: "event",
            t,
            event,
            pid,
            outcome,
            label: None,
        });
    }

    /// An event with a line saying what happened (the early warning, a snapshot).
    pub fn labelled_event(&mut self, t: f64, event: &'static str, pid: i32, label: String) {
        self.line(&Event {
            kind: "event",
            t,
            event,
            pid,
            outcome: None,
            label: Some(label),
        });
    }

    pub fn finish(&mut self, report: &RunReport) {
        self.line(&Summary {
            kind: "summary",
            report,
        });
        let _ = self.out.flush();
    }
}
