//! `memtriage run`'s zero-code CUDA snapshot: the startup hook on the job's
//! PYTHONPATH. Without a GPU, CUDA's first use is played by running the calls torch
//! queued for it (`torch.cuda._queued_calls`), and the allocator by torch's own
//! functions replaced with a recorded snapshot; everything of memtriage's (the hook,
//! its chaining, the saved files, their explanation in the summary) is the real one.

use std::process::Stdio;

use serde_json::Value;

use crate::support::{finding, memtriage, python_can_import, run_report, skip};

fn run(args: &[&str], env: &[(&str, &str)]) -> (std::process::Output, Value) {
    let mut c = memtriage();
    c.args(["run", "--json", "--interval", "100ms"])
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let report = run_report(&out.stderr);
    (out, report)
}

#[test]
fn the_hook_runs_first_and_the_jobs_own_sitecustomize_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    std::fs::create_dir(&user).unwrap();
    std::fs::write(
        user.join("sitecustomize.py"),
        "import os, sys\nos.environ['USER_SITECUSTOMIZE_RAN'] = '1'\nsys.path.append('/user-site-dir')\n",
    )
    .unwrap();
    let script = "import os, sys\n\
        hook = sys.modules.get('sitecustomize')\n\
        print('hook', 'MEMTRIAGE_CUDA_SNAPSHOT_DIR' in os.environ)\n\
        print('user', os.environ.get('USER_SITECUSTOMIZE_RAN'))\n\
        print('torch', 'torch' in sys.modules)\n\
        print('path', '/user-site-dir' in sys.path)\n";
    let (out, report) = run(
        &["--", "python3", "-c", script],
        &[("PYTHONPATH", user.to_str().unwrap())],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("hook True"), "{stdout}");
    assert!(
        stdout.contains("user 1"),
        "the user's sitecustomize ran: {stdout}"
    );
    assert!(
        stdout.contains("torch False"),
        "the hook imports nothing: {stdout}"
    );
    assert!(report.get("cuda_snapshots").is_none());

    // Opted out: no hook on the path.
    let (out, _) = run(
        &["--no-cuda-snapshot", "--", "python3", "-c", script],
        &[("PYTHONPATH", user.to_str().unwrap())],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("hook False") && stdout.contains("user 1"),
        "{stdout}"
    );
}

#[test]
fn importing_torch_queues_the_hook_without_initialising_cuda() {
    if !python_can_import("torch") {
        skip("torch is not importable");
        return;
    }
    let script = "import torch\n\
        names = [getattr(c, '__name__', '') for c, _ in torch.cuda._queued_calls]\n\
        print('queued', 'on_cuda_init' in names)\n\
        print('initialized', torch.cuda.is_initialized())\n";
    let (out, _) = run(&["--", "python3", "-c", script], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("queued True"), "{stdout}");
    assert!(stdout.contains("initialized False"), "{stdout}");
}

#[test]
fn a_cuda_oom_leaves_a_snapshot_beside_the_record_and_the_summary_explains_it() {
    if !python_can_import("torch") {
        skip("torch is not importable");
        return;
    }
    let fixture = crate::support::core_fixtures().join("cuda-snapshots/fragmented.pickle");
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("job.jsonl");
    // CUDA's first use: torch runs the queued calls; then the allocator fails a 4 GiB
    // request and calls its out-of-memory observers.
    let script = format!(
        "import pickle, torch\n\
         snap = pickle.load(open({fixture:?}, 'rb'))\n\
         observers = []\n\
         torch.cuda.memory._snapshot = lambda *a, **k: snap\n\
         torch.cuda.memory._record_memory_history = lambda *a, **k: None\n\
         torch._C._cuda_attach_out_of_memory_observer = observers.append\n\
         for call, _ in torch.cuda._queued_calls:\n\
         \x20   if getattr(call, '__name__', '') == 'on_cuda_init':\n\
         \x20       call()\n\
         for o in observers:\n\
         \x20   o(0, 4 << 30, 38 << 30, 2355 << 20)\n\
         raise SystemExit('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB.')\n",
        fixture = fixture.to_str().unwrap()
    );
    let (out, report) = run(
        &[
            "--record",
            record.to_str().unwrap(),
            "--",
            "python3",
            "-c",
            &script,
        ],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "the job's status passes through"
    );
    let saved = dir.path().join("job.jsonl.cuda-oom");
    let listed = report["cuda_snapshots"]
        .as_array()
        .expect("snapshots listed");
    assert_eq!(listed.len(), 1, "{report}");
    let path = listed[0].as_str().unwrap();
    assert!(path.starts_with(saved.to_str().unwrap()), "{path}");
    assert!(std::path::Path::new(path).is_file());
    assert!(
        !saved.join("sitecustomize.py").exists(),
        "the hook is never among the snapshots"
    );
    let f = finding(&report, "cuda-snapshot.fragmentation");
    let evidence = f["evidence"].as_array().unwrap();
    assert!(evidence
        .iter()
        .any(|e| e["label"] == "allocator snapshot"
            && e["value"].as_str().unwrap().starts_with(path)));
    assert!(evidence
        .iter()
        .any(|e| e["label"] == "asked for" && e["quantity"] == 4u64 << 30 && e["unit"] == "bytes"));

    // The file explains the same way on its own.
    let out = memtriage()
        .args(["explain-snapshot", "--json", path])
        .output()
        .unwrap();
    assert!(out.status.success());
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(again["findings"][0]["id"], "cuda-snapshot.fragmentation");
}

#[test]
fn without_a_snapshot_nothing_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("job.jsonl");
    let (out, report) = run(
        &[
            "--record",
            record.to_str().unwrap(),
            "--",
            "python3",
            "-c",
            "pass",
        ],
        &[],
    );
    assert!(out.status.success());
    assert!(report.get("cuda_snapshots").is_none());
    assert!(!dir.path().join("job.jsonl.cuda-oom").exists());
}
