//! A kernel crash in the real kernel log while `run` supervises a job and while
//! `record` records. The kernel cannot be made to oops on purpose without taking the
//! machine down, but its log can be written (`/dev/kmsg`, as root): memtriage reads
//! the same records from the same device as it would the kernel's own. A binary of its
//! own: cargo runs test binaries one after another, so the oops written here falls in
//! no other test's window of the kernel log.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared with `cli`, of which this binary uses a part.
#[allow(dead_code)]
#[path = "../cli/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use support::{finding, finding_ids, memtriage, root_or_skip, run_report, wait_until};

/// The tests write into one kernel log: one at a time.
static KERNEL_LOG: Mutex<()> = Mutex::new(());

/// An NVIDIA driver's page fault as 6.x kernels print it, in the process `$PID`
/// (named `$COMM`; `$$` is the shell itself), written to the kernel log by a shell,
/// one record per line.
fn oops_writer(pid: &str, comm: &str) -> String {
    let lines = [
        "BUG: unable to handle page fault for address: ffffb8a1c0e3f000",
        "#PF: supervisor read access in kernel mode",
        "#PF: error_code(0x0000) - not-present page",
        "Oops: 0000 [#1] PREEMPT SMP NOPTI",
        &format!("CPU: 1 PID: {pid} Comm: {comm} Tainted: P           OE     6.5.0-14-generic"),
        "RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]",
        "Call Trace:",
        " <TASK>",
        " ? _nv012345rm+0x1c/0x30 [nvidia]",
        " </TASK>",
        "---[ end trace 0000000000000000 ]---",
    ];
    lines
        .iter()
        .map(|l| format!("printf '<1>%s\\n' \"{l}\" > /dev/kmsg\n"))
        .collect()
}

/// A job whose node oopses under it: the oops names the job's own process, which then
/// dies of SIGSEGV (as a process the kernel faulted in does). `run` passes the status
/// through and says the kernel crashed in the job's process, naming the driver; the
/// segfault's fix defers to the crash.
#[test]
fn run_names_the_driver_when_the_kernel_oopses_in_the_jobs_process() {
    if !root_or_skip("writing to the kernel log (/dev/kmsg) needs root") {
        return;
    }
    let _one = KERNEL_LOG.lock().unwrap_or_else(|e| e.into_inner());
    let script = format!("{}kill -SEGV $$\n", oops_writer("$$", "sh"));
    let out = memtriage()
        .args(["run", "--json", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(128 + libc::SIGSEGV), "{out:?}");
    let report = run_report(&out.stderr);
    let ids = finding_ids(&report);
    assert_eq!(ids[0], "run.kernel-crash", "{ids:?}");
    let crash = finding(&report, "run.kernel-crash");
    let title = crash["title"].as_str().unwrap();
    assert!(
        title.starts_with("Kernel oops in the nvidia module, a GPU driver, while sh (pid "),
        "{title}"
    );
    assert_eq!(crash["certainty"], "confirmed");
    let relation = crash["evidence"][0]["value"].as_str().unwrap();
    assert!(relation.contains("was the job's"), "{relation}");
    let segfault = finding(&report, "run.segfault");
    assert!(
        segfault["fix"]
            .as_str()
            .unwrap()
            .starts_with("The kernel crashed in this process first"),
        "{segfault:#}"
    );
}

/// A job that ends normally while the kernel oopsed in a process not its own: the
/// crash is still said (the driver it broke may be the job's), as beside the job.
#[test]
fn run_says_an_oops_beside_the_job_without_blaming_its_process() {
    if !root_or_skip("writing to the kernel log (/dev/kmsg) needs root") {
        return;
    }
    let _one = KERNEL_LOG.lock().unwrap_or_else(|e| e.into_inner());
    // pid 1 is never the job's.
    let script = oops_writer("1", "kworker/1:2");
    let out = memtriage()
        .args(["run", "--json", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = run_report(&out.stderr);
    let crash = finding(&report, "run.kernel-crash");
    let relation = crash["evidence"][0]["value"].as_str().unwrap();
    assert!(
        relation.starts_with("kworker/1:2 (pid 1) was not one of the job's"),
        "{relation}"
    );
}

/// Nobody supervised the process the kernel oopsed in: `record` keeps the report's
/// lines, and `why PID` reads them as `run` would, with the process's command line
/// and the job the record counted it in.
#[test]
fn why_explains_a_kernel_crash_the_recorder_kept() {
    if !root_or_skip("writing to the kernel log (/dev/kmsg) needs root") {
        return;
    }
    let _one = KERNEL_LOG.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let recorder = support::Recorder::start(&db);
    // Alive for a few intervals first, so the recorder has read its command line.
    let mut victim = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = victim.id().to_string();
    std::thread::sleep(Duration::from_millis(2500));
    let wrote = Command::new("sh")
        .args(["-c", &oops_writer(&pid, "sleep")])
        .status()
        .unwrap();
    assert!(wrote.success());
    let query = format!("SELECT count(*) FROM kernel_crashes WHERE pid = {pid}");
    let recorded = wait_until(Duration::from_secs(30), Duration::from_millis(300), || {
        sqlite_count(&db, &query) > 0
    });
    drop(recorder);
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(recorded, "the recorder kept no crash of pid {pid}");
    let out = memtriage()
        .args(["why", &pid, "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["death"]["kind"], "kernel_crash", "{report:#}");
    assert_eq!(report["death"]["victim"], "sleep", "{report:#}");
    let f = &report["findings"][0];
    assert_eq!(f["id"], "run.kernel-crash", "{report:#}");
    assert!(
        f["title"].as_str().unwrap().contains("nvidia module"),
        "{report:#}"
    );
    let text = memtriage()
        .args(["why", &pid, "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(
        shown.starts_with(&format!(
            "the kernel crashed while sleep (pid {pid}) ran at "
        )),
        "{shown}"
    );
}

/// A count from the history (Python's sqlite3: the CLI is not on every machine), 0
/// where it cannot answer yet.
fn sqlite_count(db: &std::path::Path, query: &str) -> u64 {
    Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\nprint(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])",
        ])
        .arg(db)
        .arg(query)
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(0)
}
