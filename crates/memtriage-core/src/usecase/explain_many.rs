//! `explain` of many logs at once: files and directories (their files, depth first,
//! in name order), each read as [`super::explain::file`] reads one (compressed or
//! not), on as many threads as there are cores, in one process: the rule table is
//! built once for all of them. Each log gets its report or the error that kept it
//! unread; the summary says which logs show which failure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use super::explain::{self, ExplainReport};
use crate::error::{Error, Result};
use crate::model::finding::Severity;

pub const SUMMARY_SCHEMA: &str = "memtriage.explain-summary/v1";

/// Directories are walked this deep at most: a log tree, not a whole disk.
const MAX_DEPTH: usize = 16;

/// One log's outcome, in the order the logs were named.
#[derive(Debug)]
pub struct Explained {
    /// The log as named (or found in a directory named).
    pub source: String,
    pub report: Result<ExplainReport>,
}

/// What each log showed, for a reader of many (`memtriage.explain-summary/v1`).
#[derive(Debug, Serialize)]
pub struct Summary {
    pub schema: &'static str,
    pub logs: usize,
    /// Logs with a warning or an error finding.
    pub with_failure: usize,
    pub healthy: usize,
    pub unreadable: usize,
    pub files: Vec<SummaryRow>,
}

#[derive(Debug, Serialize)]
pub struct SummaryRow {
    pub source: String,
    /// The first warning or error finding's id; `None` for a healthy or unread log.
    pub finding: Option<String>,
    pub severity: Option<Severity>,
    pub title: Option<String>,
    /// Why the log could not be read.
    pub error: Option<String>,
}

/// The logs `inputs` name: each file as named, each directory's files (hidden ones
/// left out), depth first in name order. A directory that cannot be listed is an
/// entry of its own, with its error.
pub fn logs_named(inputs: &[PathBuf]) -> Vec<(PathBuf, Option<Error>)> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            walk(input, 0, &mut out);
        } else {
            out.push((input.clone(), None));
        }
    }
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<(PathBuf, Option<Error>)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return out.push((dir.to_path_buf(), Some(Error::io(dir, e)))),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    for p in paths {
        match p.is_dir() {
            true if depth + 1 < MAX_DEPTH => walk(&p, depth + 1, out),
            true => {}
            false => out.push((p, None)),
        }
    }
}

/// Reads every log named, on `threads` threads (at least one), each to its report or
/// its error; in the order named.
pub fn explain_all(logs: Vec<(PathBuf, Option<Error>)>, threads: usize) -> Vec<Explained> {
    let next = AtomicUsize::new(0);
    // Each thread takes the next log not yet read; a directory that could not be
    // listed has its answer already.
    let mut read: HashMap<usize, Result<ExplainReport>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((path, listed)) = logs.get(i) else {
                            break done;
                        };
                        if listed.is_none() {
                            done.push((i, explain::file(path)));
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    logs.into_iter()
        .enumerate()
        .map(|(i, (path, listed))| Explained {
            source: path.display().to_string(),
            report: match listed {
                Some(e) => Err(e),
                None => read.remove(&i).unwrap_or_else(|| {
                    Err(Error::internal(format!(
                        "{}: its reader failed",
                        path.display()
                    )))
                }),
            },
        })
        .collect()
}

/// Which logs show which failure.
pub fn summary(explained: &[Explained]) -> Summary {
    let files: Vec<SummaryRow> = explained
        .iter()
        .map(|e| match &e.report {
            Ok(r) => {
                let failure = r.findings.iter().find(|f| f.severity >= Severity::Warn);
                SummaryRow {
                    source: e.source.clone(),
                    finding: failure.map(|f| f.id.clone()),
                    severity: failure.map(|f| f.severity),
                    title: failure.map(|f| f.title.clone()),
                    error: None,
                }
            }
            Err(err) => SummaryRow {
                source: e.source.clone(),
                finding: None,
                severity: None,
                title: None,
                error: Some(err.to_string()),
            },
        })
        .collect();
    let unreadable = files.iter().filter(|f| f.error.is_some()).count();
    let with_failure = files.iter().filter(|f| f.finding.is_some()).count();
    Summary {
        schema: SUMMARY_SCHEMA,
        logs: files.len(),
        with_failure,
        healthy: files.len() - unreadable - with_failure,
        unreadable,
        files,
    }
}

pub use crate::probe::process::default_threads;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A directory of logs, one gzip-compressed, one zstd-compressed, one healthy and
    /// one unreadable name: every log gets its answer, in name order, and the summary
    /// counts them.
    #[test]
    fn a_directory_of_plain_and_compressed_logs_is_read_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let write =
            |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
        write("a-train.log", b"epoch 1 loss 0.5\n");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"step 3\nKilled\n").unwrap();
        write("b-pod.log.gz", &gz.finish().unwrap());
        let zst = ruzstd::encoding::compress_to_vec(
            &b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        write("c-rank0.log.zst", &zst);
        write(".hidden", b"Killed\n");
        let missing = dir.path().join("z-gone.log");
        let logs = logs_named(&[dir.path().to_path_buf(), missing]);
        assert_eq!(logs.len(), 4, "{logs:?}");
        let explained = explain_all(logs, 2);
        let names: Vec<&str> = explained
            .iter()
            .map(|e| e.source.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "a-train.log",
                "b-pod.log.gz",
                "c-rank0.log.zst",
                "z-gone.log"
            ]
        );
        let s = summary(&explained);
        assert_eq!(
            (s.logs, s.with_failure, s.healthy, s.unreadable),
            (4, 2, 1, 1)
        );
        assert_eq!(s.files[1].finding.as_deref(), Some("log.sigkill"));
        assert_eq!(s.files[2].finding.as_deref(), Some("log.cuda-oom"));
        assert!(s.files[3]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("no such file")));
    }

    #[test]
    fn a_truncated_gzip_log_is_an_error_not_a_healthy_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&b"Killed\n".repeat(10_000)).unwrap();
        let bytes = gz.finish().unwrap();
        let path = dir.path().join("cut.log.gz");
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let e = explain::file(&path).expect_err("a cut stream is an error");
        assert!(e.to_string().contains("read failed"), "{e}");
    }
}
