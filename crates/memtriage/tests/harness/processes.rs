//! Fault harness for the commands that read processes: processes forking and exiting
//! at a high rate while `inspect --all`, `inspect --tree` and `run` read them. Each run
//! must succeed, and every figure it prints must be measured or marked unreadable with
//! a reason: a process that vanished mid-read is left out, never shown as zero.

use std::process::{Child, Command, Stdio};

use crate::support::{memtriage, succeeded_json};

/// Runs of each command while the churn goes on: enough to meet a 1-in-20 race.
const ITERATIONS: usize = 20;

/// A shell that forks short-lived children (some of which exec, some of which stay
/// zombies for a moment) as fast as it can, until killed.
fn churner() -> Child {
    Command::new("sh")
        .args([
            "-c",
            "while :; do (exit 0) & sleep 0.001 & true & wait; done",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every process in a report has a figure for RSS or says why it has none.
fn no_invented_zero(v: &serde_json::Value, processes: &[serde_json::Value]) {
    for p in processes {
        let kernel = p["kernel_thread"] == true;
        let rss = p["memory"]["rss"]
            .as_u64()
            .or_else(|| p["rollup"]["rss"].as_u64());
        match rss {
            Some(0) if !kernel => {
                // Zero only where the process really has no pages: an exiting one.
                assert!(
                    !p["unreadable"].as_array().unwrap().is_empty() || p["state"] == "Z",
                    "a zero RSS with nothing said: {p}\n{v}"
                );
            }
            None if !kernel => {
                let reasons = p["unreadable"].as_array().unwrap();
                assert!(
                    !reasons.is_empty() || p["state"] == "Z",
                    "no RSS and no reason: {p}"
                );
            }
            _ => {}
        }
    }
}

#[test]
fn processes_that_fork_and_exit_while_read_lose_nothing_else() {
    let mut churn = churner();
    let pid = churn.id().to_string();
    for _ in 0..ITERATIONS {
        let args = ["inspect", "--all", "--json"];
        let v = succeeded_json(memtriage().args(args).output().unwrap(), &args);
        let processes = v["processes"].as_array().unwrap();
        assert!(
            processes.iter().any(|p| p["pid"] == churn.id()),
            "the churner itself is there"
        );
        no_invented_zero(&v, processes);

        let args = ["inspect", "--tree", &pid, "--json"];
        let v = succeeded_json(memtriage().args(args).output().unwrap(), &args);
        let nodes: Vec<serde_json::Value> = v["trees"][0]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["process"].clone())
            .collect();
        assert_eq!(nodes[0]["pid"], churn.id(), "{v}");
        no_invented_zero(&v, &nodes);
    }
    churn.kill().unwrap();
    churn.wait().unwrap();
}

#[test]
fn run_keeps_the_status_of_a_job_that_churns_processes() {
    for _ in 0..5 {
        let out = memtriage()
            .args([
                "run",
                "--json",
                "--interval",
                "10ms",
                "--",
                "sh",
                "-c",
                "i=0; while [ $i -lt 300 ]; do (exit 0) & i=$((i+1)); done; wait; exit 7",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(7), "the job's own status");
        let err = String::from_utf8_lossy(&out.stderr);
        let report: serde_json::Value =
            serde_json::from_str(&err[err.find('{').expect("a JSON report")..]).unwrap();
        assert_eq!(report["outcome"]["exit_code"], 7, "{report}");
        // Unknown (null) where no sample read the job's memory, never 0 B.
        let tree = &report["peak_tree_rss"];
        assert!(tree.is_null() || tree["bytes"].as_u64() > Some(0), "{tree}");
        let processes = report["processes"].as_array().unwrap();
        assert!(!processes.is_empty());
        for p in processes {
            if let Some(b) = p["peak_rss"]["bytes"].as_u64() {
                assert!(b > 0, "a peak RSS of zero was invented: {p}");
            }
            // Each peak is dated by a reading of the process, not the run's start.
            for figure in ["peak_rss", "peak_uss_estimate"] {
                if let Some(at) = p[figure]["at_seconds"].as_f64() {
                    let first = p["first_seen_seconds"].as_f64().unwrap();
                    assert!(
                        at >= first,
                        "{figure} dated before the process was seen: {p}"
                    );
                }
            }
        }
    }
}

/// A process that renames itself and execs itself again and again under one pid,
/// read while it does: every read succeeds and names it by one of its names.
#[test]
fn a_process_that_renames_and_execs_itself_while_read_is_read_whole() {
    let code = r#"
import ctypes, os, sys, time
n = int(sys.argv[1])
libc = ctypes.CDLL(None)
for i in range(20):
    libc.prctl(15, ("mt-%d-%d" % (n, i)).encode(), 0, 0, 0)
    time.sleep(0.002)
os.execv(sys.executable, [sys.executable, "-c", sys.argv[2], str(n + 1), sys.argv[2]])
"#;
    // The interpreter itself, not a launcher (pyenv's shim runs python as its child).
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let mut child = Command::new(&python)
        .args(["-c", code, "0", code])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let named = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with("mt-"))
    });
    assert!(named, "the process renamed itself");
    for _ in 0..ITERATIONS {
        for args in [
            vec!["inspect", pid.as_str(), "--json"],
            vec!["inspect", "--maps", pid.as_str(), "--json"],
        ] {
            let v = succeeded_json(memtriage().args(&args).output().unwrap(), &args);
            let p = &v["processes"][0];
            assert_eq!(p["pid"], child.id(), "{args:?}: {v}");
            let comm = p["comm"].as_str().unwrap();
            assert!(
                comm.starts_with("mt-") || comm.starts_with("python"),
                "{args:?}: named by one of its names: {comm}"
            );
            no_invented_zero(&v, std::slice::from_ref(p));
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
}
