//! `memtriage doctor` as a user runs it: on captured roots (`--root`), where the
//! outcome is known, and once on this machine.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::support::{copy_tree, core_fixtures, memtriage, memtriage_no_color, skip, BIN};

fn baseline() -> std::path::PathBuf {
    core_fixtures().join("system")
}

fn fake_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&baseline(), dir.path());
    dir
}

fn doctor(root: &Path, args: &[&str]) -> std::process::Output {
    memtriage_no_color()
        .arg("--root")
        .arg(root)
        .arg("doctor")
        .args(args)
        .output()
        .unwrap()
}

fn json(root: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = doctor(root, &all);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().unwrap(), v)
}

fn finding<'a>(v: &'a serde_json::Value, id: &str) -> Option<&'a serde_json::Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
}

#[test]
fn json_report_has_schema_profile_system_and_findings() {
    let root = fake_root();
    let (code, v) = json(root.path(), &["--profile", "shared"]);
    assert_eq!(code, 0);
    assert_eq!(v["schema"], "memtriage.doctor/v1");
    assert_eq!(v["profile"], "shared");
    assert_eq!(v["system"]["schema"], "memtriage.system/v1");
    // Bytes are integers of bytes.
    assert_eq!(v["system"]["memory"]["total"], 24684092u64 * 1024);
    assert_eq!(v["system"]["vm"]["max_map_count"], 65530);
    let findings = v["findings"].as_array().unwrap();
    for f in findings {
        for key in ["id", "severity", "title", "evidence", "why", "fix"] {
            assert!(f.get(key).is_some(), "{key} missing in {f}");
        }
        assert!(["ok", "info", "warn", "error"].contains(&f["severity"].as_str().unwrap()));
    }
    assert_eq!(finding(&v, "memory.ok").unwrap()["severity"], "ok");
    assert_eq!(
        finding(&v, "max-map-count.low").unwrap()["severity"],
        "info"
    );
    let ev = &finding(&v, "max-map-count.low").unwrap()["evidence"][0];
    assert_eq!(ev["value"], "65530");
    assert_eq!(ev["source"], "/proc/sys/vm/max_map_count");
}

#[test]
fn an_error_finding_exits_1_and_comes_first() {
    let root = fake_root();
    let mi = root.path().join("proc/self/mountinfo");
    let text = fs::read_to_string(&mi).unwrap();
    fs::write(&mi, text.replace("size=24684092k", "size=65536k")).unwrap();

    let (code, v) = json(root.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(v["findings"][0]["id"], "shm.too-small");
    assert_eq!(v["findings"][0]["severity"], "error");

    let out = doctor(root.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("memtriage doctor --profile training\n"),
        "{text}"
    );
    assert!(text.contains("/dev/shm is only 64.0 MiB"), "{text}");
    assert!(
        text.contains("fix: mount -o remount,size=5G /dev/shm"),
        "{text}"
    );
    assert!(
        text.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("1 error, "),
        "{text}"
    );
}

#[test]
fn no_error_exits_0_with_header_and_counts() {
    let root = fake_root();
    let out = doctor(root.path(), &["--profile", "training"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        "memory 23.5 GiB total, 22.9 GiB available · swap off · /dev/shm 23.5 GiB · cgroup no limit"
    );
    // Problems in full, passed checks one line each.
    assert!(text.contains("warn  vm.max_map_count is 65530"), "{text}");
    assert!(
        text.contains("fix: sysctl -w vm.max_map_count=1048576"),
        "{text}"
    );
    let ok_line = lines
        .iter()
        .find(|l| l.contains("panic-on-oom.ok"))
        .unwrap();
    assert!(ok_line.contains("vm.panic_on_oom is 0"), "{ok_line}");
    let last = lines.last().unwrap();
    assert!(last.starts_with("0 error, 2 warn, 1 info, "), "{last}");
    assert!(last.ends_with(" ok"));
    assert!(!text.contains('\x1b'), "NO_COLOR must turn colour off");
}

#[test]
fn profile_changes_the_recommendation() {
    let root = fake_root();
    fs::write(root.path().join("proc/sys/vm/overcommit_memory"), "1\n").unwrap();
    let (_, training) = json(root.path(), &["--profile", "training"]);
    let (_, shared) = json(root.path(), &["--profile", "shared"]);
    assert_eq!(
        finding(&training, "overcommit.ok").unwrap()["severity"],
        "ok"
    );
    assert!(finding(&training, "overcommit.always").is_none());
    let always = finding(&shared, "overcommit.always").unwrap();
    assert_eq!(always["severity"], "warn");
    assert!(always["fix"]
        .as_str()
        .unwrap()
        .contains("sysctl -w vm.overcommit_memory=2"));

    let (_, inference) = json(root.path(), &["--profile", "inference"]);
    assert_eq!(inference["profile"], "inference");
    assert_eq!(
        finding(&inference, "thp.defrag-madvise").unwrap()["severity"],
        "info"
    );
    assert!(finding(&training, "thp.defrag-madvise").is_none());
}

#[test]
fn bad_profile_is_usage_error() {
    let root = fake_root();
    let out = doctor(root.path(), &["--profile", "gaming"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn empty_root_reports_unreadable_without_failing() {
    let root = tempfile::tempdir().unwrap();
    let (code, v) = json(root.path(), &[]);
    assert_eq!(code, 0);
    assert!(v["system"]["memory"].is_null());
    assert!(!v["system"]["unreadable"].as_array().unwrap().is_empty());
    assert_eq!(
        finding(&v, "memory.unreadable").unwrap()["severity"],
        "info"
    );
    let out = doctor(root.path(), &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("memory - total, - available"), "{text}");
}

#[test]
fn runs_on_this_machine() {
    let out = memtriage()
        .args(["doctor", "--color", "never"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("memory.ok") || text.contains("available"),
        "{text}"
    );
    assert!(text.contains("overcommit"), "{text}");
    let last = text.trim_end().lines().last().unwrap();
    assert!(last.contains(" error, ") && last.ends_with(" ok"), "{last}");
    let errors: usize = last.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(code == 1, errors > 0, "exit code follows the error count");

    let out = memtriage()
        .args(["doctor", "--json", "--profile", "inference"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = v["system"]["memory"]["total"].as_u64().unwrap();
    let avail = v["system"]["memory"]["available"].as_u64().unwrap();
    assert!(total > 0 && avail <= total);
    assert!(v["findings"].as_array().unwrap().len() >= 10);

    // DAMON as this kernel runs it, read here with a shell pipeline: a running kdamond
    // with a `pageout` scheme (Firecracker guests have one) is proactive reclaim.
    let damon = Command::new("sh")
        .args([
            "-c",
            "cd /sys/kernel/mm/damon/admin/kdamonds 2>/dev/null && for k in [0-9]*; do \
             [ \"$(cat $k/state)\" = on ] && cat $k/contexts/*/schemes/*/action; done | grep -c pageout",
        ])
        .output()
        .unwrap();
    let schemes: usize = String::from_utf8_lossy(&damon.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    let reclaim = v["system"]["proactive_reclaim"].as_array().unwrap();
    let module_on = fs::read_to_string("/sys/module/damon_reclaim/parameters/enabled")
        .is_ok_and(|s| s.trim() == "Y");
    assert_eq!(
        reclaim.len(),
        schemes + usize::from(module_on),
        "{reclaim:?}"
    );
    let id = if reclaim.is_empty() {
        "proactive-reclaim.ok"
    } else {
        "proactive-reclaim.active"
    };
    assert!(finding(&v, id).is_some(), "{id} expected");
}

/// As an unprivileged user where dmesg_restrict=1 the kernel log is refused: doctor
/// says why instead of reporting no OOM kills. Needs root to drop to `nobody`.
#[test]
fn unprivileged_user_is_told_why_the_kernel_log_is_unreadable() {
    let restricted = fs::read_to_string("/proc/sys/kernel/dmesg_restrict").map(|s| s.trim() == "1");
    let Ok(out) = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(BIN)
        .args(["doctor", "--json"])
        .output()
    else {
        skip("setpriv not available");
        return;
    };
    if out.stdout.is_empty() {
        skip(format!(
            "cannot run as nobody: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
        return;
    }
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 1, "exit {code}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if restricted.unwrap_or(false) {
        assert!(
            v["system"]["oom_kills"].is_null(),
            "{}",
            v["system"]["oom_kills"]
        );
        let reason = v["system"]["unreadable"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["field"] == "oom_kills")
            .unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            reason.contains("reading the kernel log needs root or CAP_SYSLOG; dmesg_restrict=1"),
            "{reason}"
        );
        let oom = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"].as_str().unwrap().starts_with("oom."))
            .unwrap();
        let shown = oom["evidence"].to_string();
        assert!(shown.contains("CAP_SYSLOG"), "{shown}");
    }
    // DAMON's files are root's (0600): unreadable for nobody, never "none running".
    let nr_kdamonds = "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds";
    if fs::metadata(nr_kdamonds).is_ok_and(|m| m.permissions().mode() & 0o004 == 0) {
        assert!(
            finding(&v, "proactive-reclaim.unreadable").is_some(),
            "{}",
            v["findings"]
        );
        assert!(finding(&v, "proactive-reclaim.ok").is_none());
    }
}

/// A node that rebooted after a panic keeps the oops in pstore: doctor reads it (read
/// only) and names the driver, as `explain` would; an error, so doctor exits 1.
#[test]
fn an_oops_kept_in_pstore_is_the_earlier_boots_crash() {
    let root = fake_root();
    let pstore = root.path().join("sys/fs/pstore");
    fs::create_dir_all(&pstore).unwrap();
    fs::write(
        pstore.join("dmesg-efi-172563812601001"),
        "Panic#1 Part1\n\
         <4>[ 9182.443107] BUG: unable to handle page fault for address: ffffb8a1c0e3f000\n\
         <4>[ 9182.443121] #PF: supervisor read access in kernel mode\n\
         <4>[ 9182.443140] CPU: 3 PID: 4242 Comm: python Tainted: P           OE     6.5.0-14-generic #14\n\
         <4>[ 9182.443152] RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]\n\
         <0>[ 9182.451001] Kernel panic - not syncing: Fatal exception\n",
    )
    .unwrap();
    let (code, v) = json(root.path(), &[]);
    assert_eq!(code, 1);
    let crash = finding(&v, "crash.previous-boot").expect("crash finding");
    assert_eq!(crash["severity"], "error");
    assert!(
        crash["title"]
            .as_str()
            .unwrap()
            .starts_with("An earlier boot crashed: Kernel oops in the nvidia module"),
        "{crash:#}"
    );
    assert_eq!(
        crash["evidence"][0]["value"],
        "/sys/fs/pstore/dmesg-efi-172563812601001"
    );
    // An empty pstore is no crash; no pstore or kdump at all, a check not made.
    let (_, plain) = json(fake_root().path(), &[]);
    assert_eq!(finding(&plain, "crash.ok").unwrap()["severity"], "ok");
    let empty = tempfile::tempdir().unwrap();
    let (_, none) = json(empty.path(), &[]);
    assert_eq!(
        finding(&none, "crash.unreadable").unwrap()["severity"],
        "info"
    );
}
