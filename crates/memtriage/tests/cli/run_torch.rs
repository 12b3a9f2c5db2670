//! Real PyTorch DataLoader failures under `memtriage run`. Skipped, saying so, where
//! torch is not installed (`pip install torch`); under CI, which installs it, that
//! fails instead.

use std::process::{Command, Stdio};

use crate::support::{
    finding, finding_ids, is_root, memtriage, python_can_import, root_or_skip, run_report, skip,
    BIN,
};

/// Whether python3 imports torch; where not, the test is skipped (a failure under CI,
/// which installs it).
fn torch_available() -> bool {
    let ok = python_can_import("torch");
    if !ok {
        skip("PyTorch is not installed for python3 (pip install torch)");
    }
    ok
}

fn script(name: &str) -> String {
    format!("{}/tests/torch/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A container's 64 MB /dev/shm, reproduced: a private mount namespace with a small
/// tmpfs on /dev/shm, and DataLoader workers whose batches do not fit.
#[test]
fn dataloader_workers_through_a_tiny_dev_shm_are_diagnosed() {
    if !torch_available() {
        return;
    }
    let unshare = Command::new("unshare").args(["--mount", "true"]).status();
    if !unshare.is_ok_and(|s| s.success()) {
        skip("needs root and unshare(1) for a private /dev/shm");
        return;
    }
    let inner = format!(
        "mount -t tmpfs -o size=16m tmpfs /dev/shm && exec {} run --json --interval 2s -- python3 {}",
        BIN,
        script("shm_bus_error.py")
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &inner])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "the loader cannot finish");
    let report = run_report(&out.stderr);
    let shm = finding(&report, "log.dataloader-shm");
    let text = shm.to_string();
    assert!(
        text.contains("--shm-size"),
        "the fix names Docker's flag: {text}"
    );
    assert!(
        text.contains("16.0 MiB"),
        "the evidence gives /dev/shm's size: {text}"
    );
    assert_eq!(report["shm_size"], 16 << 20);
    // Sampled the moment the failure line showed, not at the next tick, when the
    // dead workers' segments are gone. Newer torch reserves a segment whole before
    // writing (ENOSPC at once, nothing in /dev/shm); older torch wrote into a sparse
    // segment until SIGBUS, so /dev/shm held pages when the line came.
    let peak = report["peak_shm_used"]["bytes"].as_u64().unwrap_or(0);
    if text.contains("Bus error") || text.contains("bus error") {
        assert!(peak > 0, "/dev/shm use when it filled: {peak}");
    }
}

/// Forked workers reading a dataset of Python objects copy it page by page.
#[test]
fn forked_workers_iterating_python_objects_show_copy_on_write() {
    if !torch_available() {
        return;
    }
    let out = memtriage()
        .args(["run", "--json", "--", "python3", &script("cow_objects.py")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"finished\n");
    let report = run_report(&out.stderr);
    let f = finding(&report, "fork.copy-on-write");
    assert!(
        f["title"].as_str().unwrap().starts_with("2 forked workers"),
        "{}",
        f["title"]
    );
    let workers: Vec<_> = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["comm"] == "pt_data_worker")
        .collect();
    assert_eq!(workers.len(), 2, "{}", report["processes"]);
    for w in &workers {
        let private = w["peak_uss_estimate"]["bytes"].as_u64().unwrap();
        assert!(
            private >= 100 << 20,
            "each worker copied much of the ~400 MiB dataset: {private}"
        );
        assert_eq!(w["forked_without_exec"], true, "{w}");
        let copied = w["peak_copied_after_fork"]["bytes"].as_u64().unwrap();
        let rss_then = w["rss_at_peak_copied_after_fork"].as_u64().unwrap();
        let peak_rss = w["peak_rss"]["bytes"].as_u64().unwrap();
        assert!(copied >= 32 << 20, "the copies are counted: {copied}");
        assert!(
            copied <= rss_then && copied <= peak_rss,
            "copies are resident: copied {copied}, RSS then {rss_then}, peak RSS {peak_rss}"
        );
    }
    // Each worker's figure in the finding is its copy, never more than its RSS.
    for e in f["evidence"].as_array().unwrap() {
        let label = e["label"].as_str().unwrap();
        let Some(pid) = label.strip_prefix("worker pid ") else {
            continue;
        };
        let w = workers
            .iter()
            .find(|w| pid.parse::<i64>().ok() == w["pid"].as_i64())
            .unwrap_or_else(|| panic!("{label} is not a worker"));
        assert_eq!(e["unit"], "bytes", "{e}");
        let copied = e["quantity"].as_u64().unwrap_or_else(|| panic!("{e}"));
        assert!(
            copied <= w["peak_rss"]["bytes"].as_u64().unwrap(),
            "{e} {w}"
        );
    }
}

fn no_copy_on_write_finding(report: &serde_json::Value) {
    let ids = finding_ids(report);
    assert!(
        !ids.iter().any(|id| id.starts_with("fork.copy-on-write")),
        "{ids:?}: {}",
        report["findings"]
    );
}

/// torchrun's ranks exec an interpreter of their own: the memory each allocates is
/// its own, not copied from torchrun (issue 11: every torchrun job was warned).
#[test]
fn torchrun_ranks_are_not_forked_workers() {
    if !torch_available() {
        return;
    }
    let report = torchrun_two_ranks("torchrun_rank.py", "29517", None);
    no_copy_on_write_finding(&report);
    let ranks: Vec<_> = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["ppid"] == report["pid"])
        .filter(|p| {
            p["peak_rss"]["bytes"]
                .as_u64()
                .is_some_and(|b| b >= 200 << 20)
        })
        // torchrun forks helpers too (ctypes' find_library runs ldconfig), caught in
        // the milliseconds between their fork and exec; a rank lives for seconds.
        .filter(|p| {
            let lived = p["last_seen_seconds"].as_f64().unwrap_or(0.0)
                - p["first_seen_seconds"].as_f64().unwrap_or(0.0);
            lived >= 0.5
        })
        .collect();
    assert!(
        ranks.len() >= 2,
        "both ranks were sampled: {}",
        report["processes"]
    );
    for r in ranks {
        assert_eq!(r["forked_without_exec"], false, "a rank exec'd: {r}");
    }
}

fn loader_without_fork(context: &str) {
    let out = memtriage()
        .args([
            "run",
            "--json",
            "--interval",
            "100ms",
            "--",
            "python3",
            &script("loader_context.py"),
            context,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = run_report(&out.stderr);
    no_copy_on_write_finding(&report);
    let workers = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["comm"] == "pt_data_worker")
        .count();
    assert!(
        workers >= 2,
        "the workers were sampled: {}",
        report["processes"]
    );
}

/// `spawn` workers are fresh interpreters: what they allocate is not a copy.
#[test]
fn spawn_dataloader_workers_are_not_flagged() {
    if torch_available() {
        loader_without_fork("spawn");
    }
}

/// `forkserver` workers are forks of the small forkserver, not of the job: the job's
/// objects are not theirs to copy, and what they allocate is their own.
#[test]
fn forkserver_dataloader_workers_are_not_flagged() {
    if torch_available() {
        loader_without_fork("forkserver");
    }
}

/// Each torchrun rank is named by its `RANK` in the report, the summary and the
/// recording; a process a rank forked is that rank's worker, not another rank.
#[test]
fn torchrun_ranks_are_named_by_their_rank() {
    if !torch_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.jsonl");
    let report = torchrun_two_ranks("torchrun_rank_with_worker.py", "29518", Some(&rec));
    let processes = report["processes"].as_array().unwrap();
    let job = processes
        .iter()
        .find(|p| p["pid"] == report["pid"])
        .expect("the job's main process");
    assert!(job.get("rank").is_none(), "torchrun has no rank: {job}");
    let ranks: Vec<&serde_json::Value> = processes
        .iter()
        .filter(|p| p["ppid"] == report["pid"] && p["rank"].is_object())
        .collect();
    let mut numbers: Vec<u64> = ranks
        .iter()
        .map(|p| {
            assert_eq!(p["rank"]["world_size"], 2, "{p}");
            assert_eq!(p["rank"]["local_rank"], p["rank"]["rank"], "{p}");
            assert!(
                p["rank"].get("worker").is_none(),
                "a rank, not a worker: {p}"
            );
            p["rank"]["rank"].as_u64().unwrap()
        })
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, [0, 1], "{}", report["processes"]);
    for r in &ranks {
        // The fork keeps the interpreter's name; torch's own short-lived helpers
        // (ldconfig through sh) are exec'd programs of other names.
        // A fork that lived too briefly to be read has no rank (unknown, not another):
        // the worker is the fork that was read.
        let worker = processes
            .iter()
            .filter(|p| p["ppid"] == r["pid"] && p["comm"] == "python3")
            .find(|p| p["rank"].is_object())
            .unwrap_or_else(|| panic!("the fork of {r} was sampled: {processes:?}"));
        assert_eq!(worker["rank"]["rank"], r["rank"]["rank"], "{worker}");
        assert_eq!(worker["rank"]["worker"], true, "{worker}");
    }

    // The recording names them too, in its samples and its final report.
    let text = std::fs::read_to_string(&rec).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let recorded_ranks: std::collections::BTreeSet<u64> = lines
        .iter()
        .filter(|l| l["type"] == "sample")
        .flat_map(|l| l["processes"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["rank"]["worker"] != true)
        .filter_map(|p| p["rank"]["rank"].as_u64())
        .collect();
    assert_eq!(
        recorded_ranks.into_iter().collect::<Vec<_>>(),
        [0, 1],
        "{text}"
    );

    let out = memtriage().arg("report").arg(&rec).output().unwrap();
    let summary = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for r in &ranks {
        let label = format!("pid {} (python3, rank {})", r["pid"], r["rank"]["rank"]);
        assert!(summary.contains(&label), "{label} in:\n{summary}");
    }
    assert!(
        summary.contains("rank 0") && summary.contains("rank 1"),
        "{summary}"
    );
}

/// `memtriage run --json` of torchrun with two ranks of `script` on `port`
/// (recorded to `record` if given); the job must succeed. Its report.
fn torchrun_two_ranks(
    script_name: &str,
    port: &str,
    record: Option<&std::path::Path>,
) -> serde_json::Value {
    let mut cmd = memtriage();
    cmd.args(["run", "--json", "--interval", "100ms"]);
    if let Some(rec) = record {
        cmd.arg("--record").arg(rec);
    }
    let out = cmd
        .args(["--", "python3", "-m", "torch.distributed.run"])
        .args(["--nproc_per_node", "2", "--master_port", port])
        .arg(script(script_name))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    run_report(&out.stderr)
}

/// A torchrun rank OOM-killed under `--limit`: the run confirms what torchrun's own
/// report (exitcode -9, SIGKILL) only suggests, and says so.
#[test]
fn torchrun_rank_oom_killed_under_a_limit_is_confirmed() {
    if !torch_available() {
        return;
    }
    if !root_or_skip("--limit needs root to make a cgroup") {
        return;
    }
    let out = memtriage()
        .args([
            "run",
            "--json",
            "--interval",
            "200ms",
            "--limit",
            "1500M",
            "--",
        ])
        .args(["python3", "-m", "torch.distributed.run"])
        .args(["--nproc_per_node", "2", "--master_port", "29519"])
        .arg(script("torchrun_rank_oom.py"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("rank 1 survived"),
        "rank 1 was to be killed"
    );
    let report = run_report(&out.stderr);
    let oom = finding(&report, "run.oom-killed");
    assert_eq!(oom["certainty"], "confirmed", "{oom}");
    // Rank 1 kept every tensor it made: the line that did is named, and the cause is
    // the code, not the machine's size.
    assert_eq!(oom["cause"], "user_code", "{oom}");
    let first_line = oom["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["source"] == "memtriage's Python hook")
        .unwrap_or_else(|| panic!("the rank's lines are evidence: {oom}"));
    assert!(
        first_line["label"]
            .as_str()
            .unwrap()
            .ends_with("torchrun_rank_oom.py:12 in <module>")
            && first_line["label"].as_str().unwrap().contains("rank 1"),
        "{first_line}"
    );
    assert!(
        first_line["value"].as_str().unwrap().starts_with("a leak"),
        "{first_line}"
    );
    // torchrun's own words are evidence of the same failure, not a second one.
    let text = oom.to_string();
    assert!(
        text.contains("exitcode") || text.contains("SIGKILL") || text.contains("Signal 9"),
        "torchrun's report joins the finding: {text}"
    );
    assert!(
        !finding_ids(&report).contains(&"log.oom-kill".to_string()),
        "{:?}",
        finding_ids(&report)
    );
}

/// numpy's `Unable to allocate` under `run`: the allocation raised instead of the
/// process being killed, and the finding says so with the size asked for.
#[test]
fn a_numpy_allocation_that_fails_is_a_host_allocation_failure() {
    if !python_can_import("numpy") {
        skip("numpy is not installed for python3");
        return;
    }
    let mut cmd = memtriage();
    cmd.args(["run", "--json"]);
    if is_root() {
        cmd.args(["--limit", "256M"]);
    }
    // 1 PiB: more than any machine's RAM and swap, so the kernel refuses it at once.
    let out = cmd
        .args([
            "--",
            "python3",
            "-c",
            "import numpy; numpy.ones((1 << 22, 1 << 22, 8))",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the job's own exit status");
    let report = run_report(&out.stderr);
    let f = finding(&report, "log.host-alloc-failure");
    assert_eq!(f["certainty"], "confirmed", "{f}");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("1.00 PiB for an array of shape (4194304, 4194304, 8)"),
        "{}",
        f["title"]
    );
}
