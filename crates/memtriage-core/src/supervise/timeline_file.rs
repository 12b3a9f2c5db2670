//! `--record FILE`: the timeline as JSON lines: a header, one line per sample,
//! events as they happen, and the final report. Each line reaches the file in one
//! write as it happens, so a recording whose writer was killed ends on a whole
//! line, and one that ends mid-line was cut short by a failed write (a full disk).

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::run::{Outcome, RunReport, TimelineSample, TIMELINE_SCHEMA};

pub struct TimelineWriter {
    out: File,
    path: PathBuf,
    /// Lines written whole.
    lines: u64,
    /// The first write that failed: recording stopped there.
    failure: Option<std::io::Error>,
    line: Vec<u8>,
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
struct Event<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    t: f64,
    event: &'a str,
    pid: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    report: &'a RunReport,
}

impl TimelineWriter {
    pub fn create(
        path: &Path,
        command: &[OsString],
        interval: Duration,
        limit: Option<u64>,
    ) -> Result<Self> {
        // 0644 whatever the umask (a umask of 000 made it writable by every user), as
        // the history database is.
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o644)
                .open(path)
                .map_err(|e| Error::io(path, e))?
        };
        let mut r = TimelineWriter {
            out: file,
            path: path.to_path_buf(),
            lines: 0,
            failure: None,
            line: Vec::with_capacity(4096),
        };
        let started_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        r.line(&Header {
            kind: "header",
            schema: TIMELINE_SCHEMA,
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

    /// A failed write (disk full) stops recording, never the job; it is kept for
    /// [`TimelineWriter::failure`].
    fn line<T: Serialize>(&mut self, value: &T) {
        if self.failure.is_some() {
            return;
        }
        self.line.clear();
        if let Err(e) = serde_json::to_writer(&mut self.line, value) {
            self.failure = Some(std::io::Error::other(e));
            return;
        }
        self.line.push(b'\n');
        match self.out.write_all(&self.line) {
            Ok(()) => self.lines += 1,
            Err(e) => self.failure = Some(e),
        }
    }

    /// Why the recording stopped before its end, if it did: the file is cut short
    /// after the lines written whole.
    pub fn failure(&self) -> Option<String> {
        self.failure.as_ref().map(|e| {
            format!(
                "recording to {} failed after {} lines: {e}; the file is cut short",
                self.path.display(),
                self.lines
            )
        })
    }

    pub fn sample(&mut self, sample: &TimelineSample) {
        #[derive(Serialize)]
        struct Tagged<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            sample: &'a TimelineSample,
        }
        self.line(&Tagged {
            kind: "sample",
            sample,
        });
    }

    /// Something that happened at `t`: a process's exit (with its outcome), a
    /// warning, a failure line seen in the output; `label` says it for people.
    pub fn event(
        &mut self,
        t: f64,
        event: &str,
        pid: i32,
        outcome: Option<Outcome>,
        label: Option<&str>,
    ) {
        self.line(&Event {
            kind: "event",
            t,
            event,
            pid,
            outcome,
            label,
        });
    }

    /// Writes the final report and makes the file durable: a full disk that the
    /// writes did not report (delayed allocation) shows here.
    pub fn finish(&mut self, report: &RunReport) {
        self.line(&Summary {
            kind: "summary",
            report,
        });
        if self.failure.is_none() {
            if let Err(e) = self.out.sync_data() {
                // /dev/null and pipes cannot be synced; that loses nothing.
                if e.raw_os_error() != Some(libc::EINVAL) {
                    self.failure = Some(e);
                }
            }
        }
    }
}
