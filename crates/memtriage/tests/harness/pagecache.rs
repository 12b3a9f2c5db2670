//! Fault harness for `cache`, `warm` and `evict`: the bad cases made to happen on the
//! real kernel, repeatedly. A directory churned by another thread while it is walked;
//! the commands as another user on root's files. Each case asserts what the user must
//! see: the other results present and true, the vanished or refused item named, the
//! exit status as documented, no figure invented.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::support::{as_nobody, disk_scratch, memtriage, root_or_skip, succeeded_json, MIB};

/// Runs of each command against the churned directory: enough to meet a 1-in-20 race.
const ITERATIONS: usize = 20;
const STABLE_FILES: usize = 4;

fn write_file(path: &Path, bytes: usize) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&vec![5u8; bytes]).unwrap();
    f.sync_all().unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// Creates, truncates and deletes files and directories under `dir` until stopped.
fn churn(dir: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut rounds = 0u64;
        while !stop.load(Ordering::Relaxed) {
            for i in 0..16 {
                let f = dir.join(format!("churn-{i:02}.bin"));
                let _ = std::fs::write(&f, vec![1u8; 64 * 1024]);
                let _ = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&f)
                    .and_then(|h| h.set_len(4096));
                let sub = dir.join(format!("churn-dir-{i:02}"));
                let _ = std::fs::create_dir(&sub);
                let _ = std::fs::write(sub.join("inner.bin"), b"x");
            }
            for i in 0..16 {
                let _ = std::fs::remove_file(dir.join(format!("churn-{i:02}.bin")));
                let sub = dir.join(format!("churn-dir-{i:02}"));
                let _ = std::fs::remove_dir_all(&sub);
            }
            rounds += 1;
        }
        rounds
    })
}

#[test]
fn a_directory_churned_while_walked_loses_no_other_file() {
    let dir = disk_scratch();
    let stable: Vec<PathBuf> = (0..STABLE_FILES)
        .map(|i| {
            let p = dir.path().join(format!("stable-{i}.bin"));
            write_file(&p, MIB as usize);
            p
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let churner = churn(dir.path().to_path_buf(), stop.clone());
    let d = dir.path().to_str().unwrap();
    let mut skipped_seen = 0;
    for _ in 0..ITERATIONS {
        for command in ["cache", "evict", "warm"] {
            let args = [command, d, "--json"];
            let v = succeeded_json(memtriage().args(args).output().unwrap(), &args);
            let files = v["files"].as_array().unwrap();
            for s in &stable {
                let f = files
                    .iter()
                    .find(|f| f["path"] == s.to_str().unwrap())
                    .unwrap_or_else(|| panic!("{command}: {} missing from {v}", s.display()));
                assert_eq!(f["size"], MIB, "{command}: {f}");
            }
            for s in v["skipped"].as_array().expect("skipped is always listed") {
                assert!(
                    s["path"].as_str().unwrap().contains("churn-"),
                    "{command}: only churned files vanish: {s}"
                );
                assert_eq!(s["reason"], "vanished during the walk", "{s}");
                skipped_seen += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = churner.join().unwrap();
    assert!(rounds > 0, "the directory was churned");
    eprintln!(
        "{} runs while the directory was churned {rounds} times; {skipped_seen} files skipped as vanished",
        3 * ITERATIONS
    );
}

/// A file of root's on the disk, for a command run as nobody; `None` (skipped) unless
/// this test runs as root.
fn a_file_of_roots(bytes: usize) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if !root_or_skip("needs root to run the command as another user") {
        return None;
    }
    let dir = disk_scratch();
    let f = dir.path().join("roots.bin");
    write_file(&f, bytes);
    Some((dir, f))
}

#[test]
fn evict_as_another_user_gives_no_invented_figures() {
    let Some((_dir, f)) = a_file_of_roots(8 * MIB as usize) else {
        return;
    };
    let path = f.to_str().unwrap();
    let out = as_nobody(&["evict", path, "--json"]);
    let v = succeeded_json(out, &["evict", path, "--json"]);
    let e = &v["files"][0];
    assert!(
        e["cached_before"].is_null() && e["cached_after"].is_null(),
        "{e}"
    );
    let why = e["unknown"].as_str().unwrap();
    assert!(
        why.contains("cachestat refuses files you neither own nor may write")
            && why.contains("run as the file's owner or as root"),
        "{why}"
    );
    let text = String::from_utf8_lossy(&as_nobody(&["evict", path]).stdout).into_owned();
    assert!(text.contains("cached before and after unknown"), "{text}");
    // The pages were dropped all the same, as root sees.
    let root_view = succeeded_json(
        memtriage()
            .args(["cache", path, "--json"])
            .output()
            .unwrap(),
        &["cache", path],
    );
    assert!(
        root_view["files"][0]["cached"].as_u64().unwrap() < MIB,
        "{root_view}"
    );
}

/// Issue 28, defect 15: `warm` of a file whose residency the kernel hides said "read
/// 24.0 MiB … (78.3 GiB/s), 100% now in the page cache": a cache's speed given as a
/// read, and a residency nobody measured.
#[test]
fn regression_warm_as_another_user_invents_no_residency_or_disk_rate() {
    let Some((_dir, f)) = a_file_of_roots(8 * MIB as usize) else {
        return;
    };
    let path = f.to_str().unwrap();
    let v = succeeded_json(as_nobody(&["warm", path, "--json"]), &["warm", path]);
    let w = &v["files"][0];
    assert!(w["cached_after"].is_null(), "{w}");
    assert!(
        w["unknown"]
            .as_str()
            .is_some_and(|u| u.contains("run as the file's owner or as root")),
        "{w}"
    );
    let text = String::from_utf8_lossy(&as_nobody(&["warm", path]).stdout).into_owned();
    assert!(
        text.contains("cached before and after unknown")
            && !text.contains("/s)")
            && !text.contains("now in the page cache"),
        "{text}"
    );
}

#[test]
fn cache_as_another_user_says_what_refused_it() {
    if !root_or_skip("needs root to run the command as another user") {
        return;
    }
    let dir = disk_scratch();
    let f = dir.path().join("roots.bin");
    write_file(&f, MIB as usize);
    let path = f.to_str().unwrap();
    let named = as_nobody(&["cache", path]);
    let err = String::from_utf8_lossy(&named.stderr);
    assert_eq!(named.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cachestat refuses files you neither own nor may write")
            && !err.contains("has no cachestat"),
        "{err}"
    );
    // Inside a walk, the refused file is skipped with the reason, not the end of it.
    let d = dir.path().to_str().unwrap();
    let walked = as_nobody(&["cache", d, "--json"]);
    let v = succeeded_json(walked, &["cache", d]);
    assert_eq!(v["files"].as_array().unwrap().len(), 0, "{v}");
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{v}");
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("cachestat refuses"),
        "{v}"
    );
}
