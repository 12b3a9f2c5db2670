//! `memtriage inspect` against real processes whose memory the tests control.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::Stdio;

use crate::support::{
    as_nobody, assert_between, json, memtriage, root_or_skip, skip, succeeded_json, u, Helper, MIB,
};

fn process(v: &serde_json::Value, pid: i32) -> &serde_json::Value {
    v["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .find(|p| p["pid"] == pid)
        .unwrap_or_else(|| panic!("pid {pid} not in output"))
}

#[test]
fn anonymous_memory_is_measured_as_rss_pss_and_uss() {
    let h = Helper::start(&["anon", "128"]);
    let v = json(&["inspect", &h.pid.to_string(), "--json"]);
    assert_eq!(v["schema"], "memtriage.inspect/v1");
    let p = process(&v, h.pid);
    assert_between("rss_anon", u(p, "memory.rss_anon"), 128 * MIB, 132 * MIB);
    assert_between(
        "uss",
        u(p, "rollup.private_dirty") + u(p, "rollup.private_clean"),
        128 * MIB,
        134 * MIB,
    );
    assert_between("pss", u(p, "rollup.pss"), 128 * MIB, 136 * MIB);
    assert_between("anonymous", u(p, "rollup.anonymous"), 128 * MIB, 132 * MIB);
    assert!(
        u(p, "faults.minor") >= 128 * MIB / 4096,
        "each touched page is a minor fault"
    );
    assert!(p["oom"]["score"].is_i64());
    assert!(
        p["unreadable"].as_array().expect("list").is_empty(),
        "{}",
        p["unreadable"]
    );
}

#[test]
fn a_mapped_file_shows_resident_part_of_mapped_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model weights.bin");
    std::fs::write(&path, vec![7u8; 64 << 20]).unwrap();
    let path = path.to_str().unwrap();
    let h = Helper::start(&["file", path, "24"]);
    let v = json(&["inspect", &h.pid.to_string(), "--maps", "--json"]);
    let maps = &v["maps"][0];
    let file = maps["by_file"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not among mapped files: {}", maps["by_file"]));
    assert_eq!(file["kind"], "file_mmap");
    assert_eq!(u(file, "sizes.size"), 64 * MIB);
    // Fault-around may map up to 64 KiB past the last page touched.
    assert_between("resident", u(file, "sizes.rss"), 24 * MIB, 25 * MIB);
    let p = process(&v, h.pid);
    assert!(u(p, "memory.rss_file") >= 24 * MIB);

    let human = memtriage()
        .args(["inspect", &h.pid.to_string(), "--maps"])
        .output()
        .unwrap();
    let text = String::from_utf8(human.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.ends_with(path))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("64.0 MiB"), "{line}");
}

#[test]
fn shared_memory_counts_as_shmem() {
    let h = Helper::start(&["shm", "32"]);
    let v = json(&["inspect", &h.pid.to_string(), "--maps", "--json"]);
    assert_between(
        "rss_shmem",
        u(process(&v, h.pid), "memory.rss_shmem"),
        32 * MIB,
        33 * MIB,
    );
    let shm = v["maps"][0]["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "shm")
        .expect("an shm group");
    assert_between("shm resident", u(shm, "sizes.rss"), 32 * MIB, 33 * MIB);
    let file = &v["maps"][0]["by_file"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "shm")
        .unwrap()
        .clone();
    assert_eq!(
        file["deleted"], true,
        "the helper unlinks its /dev/shm file: {file}"
    );
}

#[test]
fn a_child_that_dirtied_half_its_parents_memory_has_that_much_uss() {
    let h = Helper::start(&["anon", "128", "fork", "1", "dirty", "64"]);
    let v = json(&["inspect", &h.children[0].to_string(), "--json"]);
    let child = process(&v, h.children[0]);
    let uss = u(child, "rollup.private_clean") + u(child, "rollup.private_dirty");
    assert_between("child uss", uss, 64 * MIB, 68 * MIB);
    assert_between("child rss", u(child, "rollup.rss"), 128 * MIB, 132 * MIB);
}

#[test]
fn tree_total_pss_matches_distinct_memory_and_flags_copy_on_write() {
    let h = Helper::start(&["anon", "128", "fork", "2", "dirty", "64"]);
    let v = json(&["inspect", "--tree", &h.pid.to_string(), "--json"]);
    let tree = &v["trees"][0];
    let nodes = tree["nodes"].as_array().unwrap();
    let pids: Vec<i64> = nodes
        .iter()
        .map(|n| n["process"]["pid"].as_i64().unwrap())
        .collect();
    assert_eq!(pids[0], i64::from(h.pid));
    for c in &h.children {
        assert!(
            pids.contains(&i64::from(*c)),
            "child {c} missing from {pids:?}"
        );
    }
    // Distinct memory: the parent's 128 MiB plus each child's own copy of 64 MiB.
    let distinct = (128 + 2 * 64) * MIB;
    assert_between(
        "total pss",
        u(tree, "totals.pss"),
        distinct,
        distinct + distinct / 10,
    );
    assert_between(
        "sum of rss",
        u(tree, "totals.rss_sum"),
        3 * 128 * MIB,
        3 * 134 * MIB,
    );
    let findings = tree["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["id"], "fork.copy-on-write");
    assert_eq!(findings[0]["severity"], "warn");
    assert!(findings[0]["title"]
        .as_str()
        .unwrap()
        .starts_with("2 forked workers"));
}

#[test]
fn children_that_only_read_still_share_and_raise_no_finding() {
    let h = Helper::start(&["anon", "128", "fork", "2", "read", "128"]);
    let v = json(&["inspect", "--tree", &h.pid.to_string(), "--json"]);
    let tree = &v["trees"][0];
    assert!(
        tree["findings"].as_array().unwrap().is_empty(),
        "{}",
        tree["findings"]
    );
    for n in tree["nodes"].as_array().unwrap().iter().skip(1) {
        let p = &n["process"];
        let uss = u(p, "rollup.private_clean") + u(p, "rollup.private_dirty");
        assert!(uss < 4 * MIB, "a reading child stays shared, uss {uss}");
    }
    // Three processes share 128 MiB: the tree's PSS counts it once.
    assert_between("total pss", u(tree, "totals.pss"), 128 * MIB, 140 * MIB);
}

#[test]
fn name_finds_processes_by_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unique-name-for-this-test.bin");
    std::fs::write(&path, vec![1u8; 1 << 20]).unwrap();
    let h = Helper::start(&["file", path.to_str().unwrap(), "1"]);
    let v = json(&["inspect", "--name", "unique-name-for-this-test", "--json"]);
    let pids: Vec<i64> = v["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_i64().unwrap())
        .collect();
    assert_eq!(pids, vec![i64::from(h.pid)]);
}

#[test]
fn all_lists_user_processes_and_skips_kernel_threads() {
    let h = Helper::start(&["anon", "16"]);
    let v = json(&["inspect", "--all", "--json"]);
    let procs = v["processes"].as_array().unwrap();
    assert!(procs.iter().any(|p| p["pid"] == h.pid));
    assert!(procs.iter().all(|p| p["kernel_thread"] == false));
    let pss: Vec<u64> = procs
        .iter()
        .filter_map(|p| p["rollup"]["pss"].as_u64())
        .collect();
    assert!(
        pss.windows(2).all(|w| w[0] >= w[1]),
        "sorted by PSS, largest first"
    );
}

#[test]
fn all_completes_while_processes_come_and_go() {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::process::Command::new("true").status();
            }
        })
    };
    for _ in 0..20 {
        let _ = succeeded_json(
            memtriage()
                .args(["inspect", "--all", "--json"])
                .output()
                .unwrap(),
            &["inspect", "--all", "--json"],
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    churn.join().unwrap();
}

#[test]
fn a_vanished_pid_is_named_with_its_cause_and_exits_2() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let out = memtriage()
        .args(["inspect", &pid.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("pid {pid}: no such process (it may have exited)")),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Issue 28, defect 15: with nothing read, only the error (no GPU line above it).
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bad_usage_exits_2_with_a_message() {
    for args in [
        &["inspect"][..],
        &["inspect", "0"],
        &["inspect", "notapid"],
        &["inspect", "--name", "no-such-process-anywhere-xyz"],
    ] {
        let out = memtriage().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?} printed no reason");
    }
}

#[test]
fn a_zombie_is_shown_with_its_memory_unreadable_not_zero() {
    // `sh` forks a child that exits at once, then sleeps without reaping it.
    let mut sh = std::process::Command::new("sh")
        .args(["-c", "true & exec sleep 30"])
        .spawn()
        .unwrap();
    let zombie = (0..100)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let v = json(&["inspect", "--tree", &sh.id().to_string(), "--json"]);
            v["trees"][0]["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n["process"].clone())
                .find(|p| p["state"] == "Z")
        })
        .expect("a zombie child");
    assert!(
        zombie["memory"].is_null() && zombie["rollup"].is_null(),
        "{zombie}"
    );
    let reasons = zombie["unreadable"].to_string();
    assert!(reasons.contains("zombie"), "{reasons}");
    // Not the root cgroup's usage passed off as the process's own.
    assert!(zombie["cgroup"].is_null(), "{zombie}");
    assert!(
        reasons.contains("the kernel shows the root cgroup for it"),
        "{reasons}"
    );
    sh.kill().unwrap();
    sh.wait().unwrap();
}

#[test]
fn a_kernel_thread_is_marked_and_has_no_user_memory() {
    let v = json(&["inspect", "2", "--json"]);
    let p = process(&v, 2);
    assert_eq!(p["kernel_thread"], true);
    assert!(p["memory"].is_null() && p["rollup"].is_null());
    assert_eq!(p["cmdline"].as_array().unwrap().len(), 0);
}

#[test]
fn another_users_process_reads_as_unreadable_not_zero() {
    if !root_or_skip("needs root to run memtriage as another user") {
        return;
    }
    let h = Helper::start(&["anon", "8"]);
    let v = succeeded_json(
        memtriage()
            .args(["inspect", &h.pid.to_string(), "--json"])
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap(),
        &["inspect", &h.pid.to_string(), "--json"],
    );
    let p = process(&v, h.pid);
    assert!(
        p["rollup"].is_null(),
        "smaps_rollup of root's process is not nobody's to read"
    );
    let reasons = p["unreadable"].to_string();
    assert!(
        reasons.contains("smaps_rollup") && reasons.contains("permission denied"),
        "{reasons}"
    );
    assert!(u(p, "memory.rss") >= 8 * MIB, "status stays readable");

    // The same in the every-process table: RSS shown, and each sum says what it left
    // out rather than pass the caller's processes off as the machine's.
    let all = memtriage()
        .args(["inspect", "--all", "--json"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&all.stdout).unwrap();
    let p = process(&v, h.pid);
    assert!(p["rollup"].is_null(), "{p}");
    assert!(u(p, "memory.rss") >= 8 * MIB, "{p}");
    let table = memtriage()
        .args(["inspect", "--all"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{} ", h.pid)))
        .unwrap_or_else(|| panic!("no row for {}: {text}", h.pid));
    assert!(row.contains(" MiB"), "RSS shown, not -: {row}");
    assert!(
        text.contains("unreadable, left out") && text.contains("from /proc/PID/status"),
        "{text}"
    );
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let mut child = memtriage()
        .args(["inspect", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The size an IEC figure at the start of `text` says (`64.1 MiB`: one decimal, so
/// within 0.05 of the unit), and the text after it.
fn iec_size(text: &str) -> (u64, &str) {
    let (number, rest) = text.split_once(' ').unwrap_or_else(|| panic!("{text}"));
    let unit_len = rest.find([' ', ',', ')']).unwrap_or(rest.len());
    let unit: u64 = match &rest[..unit_len] {
        "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => panic!("{other:?} is no IEC unit: {text}"),
    };
    let value: f64 = number.parse().unwrap_or_else(|_| panic!("{text}"));
    ((value * unit as f64) as u64, &rest[unit_len..])
}

#[test]
fn human_output_uses_iec_units_and_no_colour_off_a_terminal() {
    let h = Helper::start(&["anon", "64"]);
    let out = memtriage()
        .args(["inspect", &h.pid.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // `rss         66.0 MiB (anon 64.1 MiB, file 1.9 MiB, shmem 0 B), peak 66.0 MiB`
    let rss = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("rss "))
        .unwrap_or_else(|| panic!("no rss line: {text}"));
    let (total, rest) = iec_size(rss.trim_start());
    assert_between("rss", total, 64 * MIB, 96 * MIB);
    let anon = rest
        .strip_prefix(" (anon ")
        .unwrap_or_else(|| panic!("{rss}"));
    assert_between("rss anon", iec_size(anon).0, 64 * MIB, 66 * MIB);
    assert!(
        !text.contains('\x1b'),
        "no escape codes when stdout is not a terminal"
    );
    let coloured = memtriage()
        .args(["inspect", &h.pid.to_string(), "--color", "always"])
        .output()
        .unwrap();
    assert!(String::from_utf8(coloured.stdout).unwrap().contains('\x1b'));
    let _ = std::io::stdout().flush();
}

/// Regression: procfs's stat parser turned such a name into `�` (and panicked on a
/// cut-short line); a process may name itself with any 15 bytes.
#[test]
fn a_process_named_with_non_utf8_bytes_and_parentheses_is_shown_faithfully() {
    let mut py = std::process::Command::new("python3")
        .args([
            "-c",
            "import ctypes, sys; ctypes.CDLL(None).prctl(15, b'caf\\xe9 (x) y', 0, 0, 0); \
             print('ok', flush=True); sys.stdin.read()",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(py.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ok");
    let v = json(&["inspect", &py.id().to_string(), "--json"]);
    drop(py.stdin.take());
    py.wait().unwrap();
    assert_eq!(process(&v, py.id() as i32)["comm"], "caf\\xe9 (x) y");
}

/// Where the kernel refuses root pid 1's maps (a sandboxed init, a container without
/// CAP_SYS_PTRACE), "run as root" would be advice the user already follows: the
/// message names the ptrace check.
#[test]
fn maps_refused_to_root_name_the_ptrace_check() {
    if !root_or_skip("needs root to be refused as root") {
        return;
    }
    match std::fs::read("/proc/1/maps") {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
        _ => {
            skip("this kernel lets root read pid 1's maps");
            return;
        }
    }
    let out = memtriage()
        .args(["inspect", "--maps", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the kernel's ptrace access check refused") && !err.contains("run as root"),
        "{err}"
    );
}

#[test]
fn maps_of_a_kernel_thread_say_there_are_none_and_sort_by_faults_shows_them() {
    let out = memtriage()
        .args(["inspect", "--maps", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pid 2 maps no memory regions"), "{text}");
    assert!(!text.contains("KIND"), "no empty table: {text}");

    let out = memtriage()
        .args(["inspect", "--all", "--sort", "faults"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().next().unwrap_or("").contains("MINFLT"),
        "{text}"
    );
}

/// Issue 28, defect 4: `inspect --tree` as `nobody` on root's processes said `total PSS
/// 0 B (the true footprint)` (JSON `"pss": 0`) with every PSS unreadable. Nothing read
/// is `null` and "unknown"; the tree's sums say they are of the processes read.
#[test]
fn regression_a_tree_whose_pss_nobody_could_read_is_unknown_not_zero() {
    if !root_or_skip("needs root to run memtriage as another user") {
        return;
    }
    let h = Helper::start(&["anon", "8"]);
    let args = ["inspect", "--tree", &h.pid.to_string(), "--json"];
    let v = succeeded_json(as_nobody(&args), &args);
    let totals = &v["trees"][0]["totals"];
    assert!(totals["pss"].is_null(), "{totals}");
    assert!(totals["uss_sum"].is_null(), "{totals}");
    assert!(totals["unreadable"].as_u64().unwrap() >= 1, "{totals}");
    let text = as_nobody(&args[..3]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("PSS unknown (unreadable)") && !text.contains("the true footprint"),
        "{text}"
    );
}

/// Issue 28, defect 15 (its `inspect` part): `--name ''` matched every process.
#[test]
fn regression_an_empty_name_pattern_is_refused() {
    let out = memtriage()
        .args(["inspect", "--name", ""])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("name pattern: empty"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
