//! `inspect` over captured /proc trees: the odd cases a live machine rarely shows.

use crate::support::{memtriage, succeeded_json, write};

/// A process whose comm has spaces and parentheses, and whose argv has a byte that
/// is not UTF-8, on a kernel without smaps_rollup (before 4.14).
fn captured_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        "proc/self/mountinfo",
        b"25 1 253:0 / / rw - ext4 /dev/vda rw\n",
    );
    write(
        r,
        "etc/passwd",
        b"root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n",
    );
    write(
        r,
        "proc/4242/stat",
        b"4242 (my (odd) job) S 1 4242 4242 0 -1 4194560 5000 120 3 1 10 5 0 0 20 0 3 0 100 \
          1073741824 65536 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
    );
    write(
        r,
        "proc/4242/status",
        b"Name:\tmy (odd) job\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\nVmPeak:\t 2097152 kB\n\
          VmSize:\t 1048576 kB\nVmLck:\t 0 kB\nVmHWM:\t 300000 kB\nVmRSS:\t 262144 kB\nRssAnon:\t 200000 kB\n\
          RssFile:\t 60000 kB\nRssShmem:\t 2144 kB\nVmPTE:\t 512 kB\nVmSwap:\t 0 kB\nThreads:\t3\n",
    );
    write(
        r,
        "proc/4242/cmdline",
        b"python3\0train \xff.py\0--lr=3e-4\0",
    );
    write(r, "proc/4242/oom_score", b"667\n");
    write(r, "proc/4242/oom_score_adj", b"0\n");
    write(r, "proc/4242/cgroup", b"0::/\n");
    dir
}

/// `inspect 4242 --json` over the captured root, which must succeed.
fn inspect_json(root: &tempfile::TempDir) -> serde_json::Value {
    let args = [
        "--root",
        root.path().to_str().unwrap(),
        "inspect",
        "4242",
        "--json",
    ];
    succeeded_json(memtriage().args(args).output().unwrap(), &args)
}

#[test]
fn odd_names_and_missing_kernel_files_are_shown_faithfully() {
    let root = captured_root();
    let v = inspect_json(&root);
    let p = &v["processes"][0];
    assert_eq!(p["comm"], "my (odd) job");
    assert_eq!(p["ppid"], 1);
    assert_eq!(p["threads"], 3);
    assert_eq!(p["user"], "alice");
    assert_eq!(
        p["cmdline"],
        serde_json::json!(["python3", "train \\xff.py", "--lr=3e-4"])
    );
    assert_eq!(p["memory"]["rss"], 262144 * 1024);
    assert_eq!(p["faults"]["minor"], 5000);
    assert_eq!(p["faults"]["major"], 3);
    assert_eq!(p["oom"]["score"], 667);
    assert!(p["rollup"].is_null(), "no smaps_rollup: unknown, not zero");
    let reasons = p["unreadable"].to_string();
    assert!(
        reasons.contains("smaps_rollup") && reasons.contains("not provided by this kernel"),
        "{reasons}"
    );
}

#[test]
fn a_truncated_stat_is_a_clear_error_naming_the_file() {
    let root = captured_root();
    write(root.path(), "proc/4242/stat", b"4242 (my (odd) job) S 1 42");
    let out = memtriage()
        .args(["--root", root.path().to_str().unwrap(), "inspect", "4242"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("proc/4242/stat: malformed"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn an_empty_rollup_is_unreadable_with_its_reason() {
    let root = captured_root();
    write(root.path(), "proc/4242/smaps_rollup", b"");
    let v = inspect_json(&root);
    let p = &v["processes"][0];
    assert!(p["rollup"].is_null());
    assert!(
        p["unreadable"].to_string().contains("no address space"),
        "{}",
        p["unreadable"]
    );
}

#[test]
fn a_rollup_is_read_into_pss_and_uss() {
    let root = captured_root();
    write(
        root.path(),
        "proc/4242/smaps_rollup",
        b"00400000-7ffd2c1f5000 ---p 00000000 00:00 0                          [rollup]\n\
          Rss:              262144 kB\nPss:              131072 kB\nPss_Anon:          100000 kB\n\
          Shared_Clean:      65536 kB\nShared_Dirty:      65536 kB\nPrivate_Clean:      1024 kB\n\
          Private_Dirty:    130048 kB\nAnonymous:        200000 kB\nAnonHugePages:    100000 kB\nSwap: 0 kB\n",
    );
    let out = memtriage()
        .args(["--root", root.path().to_str().unwrap(), "inspect", "4242"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("pss         128 MiB"), "{text}");
    assert!(
        text.contains("uss         128 MiB (private clean 1.0 MiB, dirty 127 MiB)"),
        "{text}"
    );
    assert!(
        text.contains("THP 97.7 MiB of 195 MiB anon (50%)"),
        "{text}"
    );
    assert!(
        text.contains("pid 4242 python3 'train \\xff.py' --lr=3e-4"),
        "{text}"
    );
}

#[test]
fn before_smaps_rollup_existed_the_regions_of_smaps_are_added_up() {
    let root = captured_root();
    write(
        root.path(),
        "proc/4242/smaps",
        b"00400000-00500000 r-xp 00000000 fd:00 1234    /usr/bin/python3\n\
          Size:               1024 kB\nRss:                 800 kB\nPss:                 400 kB\n\
          Shared_Clean:        800 kB\nShared_Dirty:          0 kB\nPrivate_Clean:         0 kB\n\
          Private_Dirty:         0 kB\nAnonymous:             0 kB\nAnonHugePages:         0 kB\n\
          Swap:                  0 kB\nVmFlags: rd ex mr mw me dw\n\
          7f0000000000-7f0010000000 rw-p 00000000 00:00 0 \n\
          Size:             262144 kB\nRss:              200000 kB\nPss:              200000 kB\n\
          Shared_Clean:          0 kB\nShared_Dirty:          0 kB\nPrivate_Clean:         0 kB\n\
          Private_Dirty:    200000 kB\nAnonymous:        200000 kB\nAnonHugePages:    100000 kB\n\
          Swap:               1024 kB\nVmFlags: rd wr mr mw me ac\n",
    );
    let v = inspect_json(&root);
    let r = &v["processes"][0]["rollup"];
    assert_eq!(r["rss"], 200_800 * 1024);
    assert_eq!(r["pss"], 200_400 * 1024);
    assert_eq!(r["private_dirty"], 200_000 * 1024);
    assert_eq!(r["anon_huge_pages"], 100_000 * 1024);
    assert_eq!(r["swap"], 1024 * 1024);
    assert!(
        !v["processes"][0]["unreadable"]
            .to_string()
            .contains("smaps"),
        "{v}"
    );
}
