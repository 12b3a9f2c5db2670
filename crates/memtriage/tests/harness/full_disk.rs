//! Output, reports and recordings onto a full device (`/dev/full`, ENOSPC on every
//! write): the job's status passes through, the failure is said, nothing panics.

use std::fs::OpenOptions;
use std::process::Stdio;

use crate::support::{memtriage, root_or_skip};

fn full() -> std::fs::File {
    OpenOptions::new().write(true).open("/dev/full").unwrap()
}

#[test]
fn the_jobs_status_survives_a_full_disk_for_the_record_and_the_report() {
    for flag in ["--record", "--report"] {
        let out = memtriage()
            .args(["run", flag, "/dev/full", "--", "sh", "-c", "exit 3"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{flag}: the job's own status\n{err}"
        );
        assert!(err.contains("No space left on device"), "{flag}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_full_stdout_is_an_error_that_says_so() {
    for args in [
        &["inspect", "--all"][..],
        &["doctor", "--json"][..],
        &["explain", "--rules"][..],
    ] {
        let out = memtriage()
            .args(args)
            .stdout(full())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("No space left on device") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
    }
    // The job's own output onto a full disk is the job's business: its status passes.
    let out = memtriage()
        .args(["run", "--", "sh", "-c", "echo hello; exit 5"])
        .stdout(full())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A recording that fills its tmpfs partway through: the job's status passes, the
/// failure is a note, and what was written reads back as a record cut short.
#[test]
fn a_recording_that_fills_its_disk_midway_is_kept_as_far_as_it_got() {
    if !root_or_skip("needs root to mount a small tmpfs") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().to_str().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8k", "tmpfs", mnt])
        .status()
        .unwrap();
    assert!(mounted.success());
    let record = dir.path().join("run.jsonl");
    let out = memtriage()
        .args(["run", "--interval", "10ms", "--record"])
        .arg(&record)
        .args(["--", "sh", "-c", "sleep 1; exit 4"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let read_back = memtriage().arg("report").arg(&record).output().unwrap();
    let _ = std::process::Command::new("umount").arg(mnt).status();
    assert_eq!(out.status.code(), Some(4), "the job's own status\n{err}");
    assert!(
        err.contains("No space left on device") && err.contains("cut short"),
        "{err}"
    );
    let back = String::from_utf8_lossy(&read_back.stdout);
    assert_eq!(read_back.status.code(), Some(0), "{back}");
    assert!(
        back.contains("samples; no final report: the file is truncated"),
        "the record reads back as far as it got, and says it was cut short:\n{back}"
    );
}
