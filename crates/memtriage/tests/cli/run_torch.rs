//! Real PyTorch DataLoader failures under `memtriage run`. Skipped, saying so, where
//! torch is not installed (`pip install torch`; CI installs it).

use std::process::{Command, Stdio};

use crate::support::{finding_ids, memtriage, python_can_import, run_report, BIN};

// A skipped test says why in the test output.
#[allow(clippy::print_stderr)]
fn torch_available() -> bool {
    let ok = python_can_import("torch");
    if !ok {
        eprintln!("skipped: PyTorch is not installed for python3 (pip install torch)");
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
        eprintln!("skipped: needs root and unshare(1) for a private /dev/shm");
        return;
    }
    let inner = format!(
        "mount -t tmpfs -o size=16m tmpfs /dev/shm && exec {} run --json --interval 100ms -- python3 {}",
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
    let ids = finding_ids(&report);
    let shm = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "log.dataloader-shm")
        .unwrap_or_else(|| panic!("no shared-memory finding in {ids:?}"));
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
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "fork.copy-on-write")
        .unwrap_or_else(|| panic!("no copy-on-write finding in {:?}", finding_ids(&report)));
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
    for w in workers {
        let private = w["peak_uss_estimate"]["bytes"].as_u64().unwrap();
        assert!(
            private >= 100 << 20,
            "each worker copied much of the ~400 MiB dataset: {private}"
        );
    }
}
