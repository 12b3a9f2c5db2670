//! Where the memory went, line by line: real Python jobs under `memtriage run`, each
//! with a planted line (marked in its script), and the line the report names. The
//! torch ones are skipped, saying so, where torch is not installed (a failure under
//! CI, which installs it).

use std::process::Stdio;

use serde_json::Value;

use crate::support::{
    disk_scratch, finding, finding_ids, memtriage, python_can_import, root_or_skip, run_report,
    skip,
};

fn script(name: &str) -> String {
    format!("{}/tests/lines/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The number of the line of `name` that carries `marker`.
fn marked_line(name: &str, marker: &str) -> u64 {
    let text = std::fs::read_to_string(script(name)).unwrap();
    let at = text
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{name} has no {marker}"));
    at as u64 + 1
}

fn torch_available() -> bool {
    let ok = python_can_import("torch");
    if !ok {
        skip("PyTorch is not installed for python3 (pip install torch)");
    }
    ok
}

/// `memtriage run --json --limit LIMIT -- python3 SCRIPT ARGS…`.
fn run_limited(limit: &str, args: &[&str]) -> (std::process::Output, Value) {
    let mut cmd = memtriage();
    cmd.args(["run", "--json", "--interval", "200ms"]);
    if !limit.is_empty() {
        cmd.args(["--limit", limit]);
    }
    let out = cmd
        .arg("--")
        .arg("python3")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = run_report(&out.stderr);
    (out, report)
}

/// The lines of the process `pid`, as the report has them.
fn lines_of(report: &Value, pid: i64) -> &Vec<Value> {
    report["memory_by_line"]
        .as_array()
        .unwrap_or_else(|| panic!("no memory_by_line: {}", report["notes"]))
        .iter()
        .find(|p| p["pid"].as_i64() == Some(pid))
        .unwrap_or_else(|| panic!("no lines for pid {pid}: {}", report["memory_by_line"]))["lines"]
        .as_array()
        .unwrap()
}

/// The OOM finding's first line from the hook: `(label, value)`.
fn first_named_line(report: &Value) -> (String, String) {
    let oom = finding(report, "run.oom-killed");
    let e = oom["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["source"] == "memtriage's Python hook")
        .unwrap_or_else(|| panic!("no line in the OOM finding: {oom}"));
    (
        e["label"].as_str().unwrap().to_string(),
        e["value"].as_str().unwrap().to_string(),
    )
}

/// The OOM-killed process's pid, from the kernel's record in the finding.
fn killed_pids(report: &Value) -> Vec<i64> {
    report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["outcome"]["signal"] == 9)
        .filter_map(|p| p["pid"].as_i64())
        .collect()
}

/// Forked workers that keep a copy of each sample. The sample itself (the line above
/// the planted one) is freed once the batch is collated; where glibc gives its heap
/// memory to the next copies, both lines take the same amount at the same moments and
/// the measurement may share what is kept between them (see the README; the bench
/// `lines_planted.py` counts how often the planted line comes first). The job puts
/// each array in a mapping of its own, so what is measured here is the mechanism: the
/// kept memory is named in `__getitem__`, and the planted line among the killed
/// worker's lines as memory it kept, figures that survived the SIGKILL.
#[test]
fn a_forked_workers_kept_samples_are_named_after_the_oom_kill() {
    if !torch_available() || !root_or_skip("--limit needs root to make a cgroup") {
        return;
    }
    let line = marked_line("worker_leak.py", "# LEAK");
    let (out, report) = run_limited("1500M", &[&script("worker_leak.py")]);
    assert_ne!(out.status.code(), Some(0));
    let (label, value) = first_named_line(&report);
    assert!(
        label.contains("DataLoader worker")
            && label.contains("worker_leak.py:")
            && label.ends_with(" in __getitem__"),
        "{label}: {value}"
    );
    assert!(value.starts_with("a leak"), "{label}: {value}");
    let oom = finding(&report, "run.oom-killed");
    assert_eq!(oom["cause"], "user_code", "{oom}");
    let fix = oom["fix"].as_str().unwrap();
    assert!(
        fix.starts_with("worker_leak.py:") && fix.contains(" in __getitem__ keeps"),
        "{fix}"
    );
    // The killed worker's own figures survived its SIGKILL.
    let killed = killed_pids(&report);
    let worker = report["memory_by_line"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| killed.contains(&p["pid"].as_i64().unwrap()) && p["started"] == "fork")
        .unwrap_or_else(|| panic!("no lines of a killed worker ({killed:?})"));
    assert_eq!(
        worker["complete"], false,
        "it was killed: {}",
        worker["pid"]
    );
    // The planted line kept memory to the end (the job keeps each sample in its own
    // mapping, so no kept copy reuses a freed sample's heap): a leak, or memory held
    // where the last growth was elsewhere, never nothing.
    let lines = worker["lines"].as_array().unwrap();
    assert!(
        lines.iter().any(|l| l["at"]["line"].as_u64() == Some(line)
            && (l["kind"] == "leak" || l["kind"] == "held")
            && l["anon"]["kept"].as_u64().unwrap_or(0) > 64 << 20),
        "the planted line keeps memory in the killed worker: {lines:?}"
    );
}

/// Spawned workers whose collate_fn keeps a copy of each batch. The batch itself is
/// freed as it is sent, and its memory reused for the next batch at the same
/// addresses; both lines take the same amount at the same moments, so the measurement
/// may share what is kept between them (see the README): the kept memory is named
/// in keep_collate, and the planted line among the worker's lines, as a leak.
#[test]
fn spawned_workers_keeping_batches_in_collate_fn_are_named() {
    if !torch_available() || !root_or_skip("--limit needs root to make a cgroup") {
        return;
    }
    let line = marked_line("spawn_collate_leak.py", "# LEAK");
    let (out, report) = run_limited("2500M", &[&script("spawn_collate_leak.py")]);
    assert_ne!(out.status.code(), Some(0));
    let (label, value) = first_named_line(&report);
    assert!(
        label.contains("DataLoader worker")
            && label.contains("spawn_collate_leak.py:")
            && label.ends_with(" in keep_collate"),
        "{label}: {value}"
    );
    let spawned: Vec<&Value> = report["memory_by_line"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["started"] == "exec" && p["pid"] != report["pid"])
        .filter(|p| {
            p["role"]
                .as_str()
                .is_some_and(|r| r.starts_with("DataLoader worker"))
        })
        .collect();
    assert_eq!(
        spawned.len(),
        2,
        "the spawned workers ran the hook: {}",
        report["memory_by_line"]
    );
    // The two lines of keep_collate allocate the same amount at the same moments: on a
    // busy machine the samples name the one before the planted line as often (CI with
    // a build beside it drew `batch = torch.stack(samples)` in both workers).
    assert!(
        spawned
            .iter()
            .any(|w| w["lines"].as_array().unwrap().iter().any(|l| {
                let at = l["at"]["line"].as_u64();
                (at == Some(line) || at == Some(line - 1)) && l["kind"] == "leak"
            })),
        "the planted line (or its twin above) is a leak in a worker: {spawned:?}"
    );
}

#[test]
fn a_main_loop_keeping_each_steps_output_is_named() {
    if !torch_available() || !root_or_skip("--limit needs root to make a cgroup") {
        return;
    }
    let line = marked_line("main_activations.py", "# LEAK");
    let (out, report) = run_limited("1000M", &[&script("main_activations.py")]);
    assert_eq!(out.status.code(), Some(137), "the kernel killed it");
    let (label, value) = first_named_line(&report);
    assert!(
        label.ends_with(&format!("main_activations.py:{line} in <module>")),
        "{label}: {value}"
    );
    assert!(value.starts_with("a leak"), "{label}: {value}");
    let main = lines_of(&report, report["pid"].as_i64().unwrap());
    assert_eq!(main[0]["at"]["line"].as_u64(), Some(line), "{:?}", main[0]);
}

#[test]
fn a_steady_working_set_is_held_not_blamed() {
    if !python_can_import("numpy") {
        skip("numpy is not installed for python3");
        return;
    }
    let line = marked_line("steady.py", "# WORKING SET");
    let (out, report) = run_limited("", &[&script("steady.py")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !finding_ids(&report)
            .iter()
            .any(|id| id == "run.python-leak"),
        "{:?}",
        finding_ids(&report)
    );
    let main = lines_of(&report, report["pid"].as_i64().unwrap());
    let set = main
        .iter()
        .find(|l| l["at"]["line"].as_u64() == Some(line))
        .unwrap_or_else(|| panic!("the working set's line: {main:?}"));
    assert_eq!(set["kind"], "held", "{set}");
    assert!(main.iter().all(|l| l["kind"] != "leak"), "{main:?}");
}

#[test]
fn a_leak_in_a_job_that_ends_well_is_a_warning_with_its_line() {
    let code = "import time\nkept = []\nfor i in range(60):\n    kept.append(bytearray(2 << 20))\n    time.sleep(0.03)\n";
    let (out, report) = run_limited("", &["-c", code]);
    assert_eq!(out.status.code(), Some(0));
    let f = finding(&report, "run.python-leak");
    assert_eq!(f["severity"], "warn");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("<string>:4 in <module>"),
        "{}",
        f["title"]
    );
}

#[test]
fn a_forked_worker_touching_its_parents_objects_copies_them_on_write() {
    if !torch_available() {
        return;
    }
    let script = format!("{}/tests/torch/cow_objects.py", env!("CARGO_MANIFEST_DIR"));
    let (out, report) = run_limited("", &[&script]);
    assert_eq!(out.status.code(), Some(0));
    let workers: Vec<&Value> = report["memory_by_line"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["started"] == "fork")
        .collect();
    assert_eq!(workers.len(), 2, "{}", report["memory_by_line"]);
    for w in workers {
        let top = &w["lines"][0];
        assert_eq!(top["kind"], "copy_on_write", "{w}");
        assert_eq!(top["at"]["function"], "__getitem__", "{top}");
        assert!(
            top["copied_after_fork"].as_u64().unwrap() >= 32 << 20,
            "{top}"
        );
        assert!(
            w["role"]
                .as_str()
                .unwrap_or("")
                .starts_with("DataLoader worker"),
            "{}",
            w["role"]
        );
    }
}

#[test]
fn a_mapped_checkpoints_major_faults_are_charged_to_the_line_that_read_it() {
    let dir = disk_scratch();
    let line = marked_line("mapped_checkpoint.py", "# FIRST USE");
    let (out, report) = run_limited(
        "",
        &[
            &script("mapped_checkpoint.py"),
            dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let main = lines_of(&report, report["pid"].as_i64().unwrap());
    let most = main
        .iter()
        .max_by_key(|l| l["major_faults"].as_u64().unwrap())
        .unwrap();
    assert_eq!(most["at"]["line"].as_u64(), Some(line), "{main:?}");
    assert!(most["major_faults"].as_u64().unwrap() >= 1000, "{most}");
    assert!(
        most["file"]["grown"].as_u64().unwrap() >= 64 << 20,
        "{most}"
    );
}

#[test]
fn a_python_that_cannot_load_the_hook_is_said_to_have_no_lines() {
    let (out, report) = run_limited("", &["-I", "-c", "import time; time.sleep(0.6)"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(report.get("memory_by_line").is_none(), "{report}");
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("no lines: its Python did not load memtriage's hook"),
        "{notes}"
    );
}

#[test]
fn three_hundred_short_forks_with_closed_stdio_each_leave_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let hook_file = dir.path().join("hook");
    let (out, report) = run_limited("", &[&script("many_forks.py"), hook_file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let forked = report["memory_by_line"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["started"] == "fork")
        .count();
    assert_eq!(
        forked,
        300,
        "every child wrote its lines; notes: {}; failed: {:?}",
        report["notes"],
        report["memory_by_line"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| !p["failed"].is_null())
            .map(|p| p["failed"].to_string())
            .collect::<Vec<_>>()
    );
    let hook = std::fs::read_to_string(&hook_file).unwrap();
    assert!(hook.contains("memtriage-hook-"), "{hook}");
    assert!(
        !std::path::Path::new(&hook).exists(),
        "the hook is removed: {hook}"
    );
}

#[test]
fn no_python_lines_turns_the_measurement_off() {
    let out = memtriage()
        .args(["run", "--json", "--no-python-lines", "--", "python3", "-c"])
        .arg("import os; print(os.environ.get('MEMTRIAGE_LINES_DIR'))")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "None");
    let report = run_report(&out.stderr);
    assert!(report.get("memory_by_line").is_none(), "{report}");
}

#[test]
fn a_hook_directory_a_killed_run_left_is_removed_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    // A pid that no longer exists: a child already reaped.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let left = tmp
        .path()
        .join(format!("memtriage-hook-{dead}-0123456789abcdef"));
    std::fs::create_dir_all(left.join("lines")).unwrap();
    let mine = tmp
        .path()
        .join(format!("memtriage-hook-{}-x", std::process::id()));
    std::fs::create_dir_all(&mine).unwrap();
    let out = memtriage()
        .env("TMPDIR", tmp.path())
        .args(["run", "--", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!left.exists(), "a dead run's hook is removed");
    assert!(mine.exists(), "a live process's is not");
}
