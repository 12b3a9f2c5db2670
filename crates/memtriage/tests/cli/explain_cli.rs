//! `memtriage explain` as a user runs it: on a file, on standard input, with --json,
//! and on input it cannot read.

use std::path::PathBuf;

use crate::support::{core_fixtures, in_a_terminal, memtriage_no_color as memtriage, skip, BIN};

fn logs() -> PathBuf {
    core_fixtures().join("logs")
}

/// `explain --json FILE`, which must succeed.
fn explain_json(path: &std::path::Path) -> serde_json::Value {
    let out = memtriage()
        .args(["explain", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[test]
fn explains_a_file_for_people() {
    let path = logs().join("cuda-oom-fragmented.log");
    let out = memtriage().arg("explain").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("error CUDA out of memory on GPU 1: asked for 1.50 GiB"),
        "{stdout}"
    );
    assert!(stdout.contains("reserved by PyTorch but unallocated: 11.85 GiB (45% of allocated)"));
    assert!(stdout.contains("fix: The caching allocator is fragmented"));
    assert!(stdout.contains("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
    assert!(
        stdout.trim_end().ends_with("1 finding in 1 line (0.0 MB)"),
        "{stdout}"
    );
}

/// The engine's page marks run in the release build's regex, which lacks some of the
/// Unicode classes its unit tests have (their proptest turns them on): a mark written
/// with one would fail only here.
#[test]
fn a_manuals_numbered_section_is_a_page_in_the_built_binary() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("manual.txt");
    std::fs::write(
        &page,
        "7.4.5. Pod eviction\n\nstatus:\n  reason: Evicted\n  message: The node was low on resource: memory.\n",
    )
    .unwrap();
    let report = explain_json(&page);
    assert_eq!(report["findings"], serde_json::json!([]), "{report}");
}

#[test]
fn a_healthy_log_exits_0_and_says_so() {
    let out = memtriage()
        .arg("explain")
        .arg(logs().join("healthy-ddp-torchrun.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "no known failure found in 17 lines\n");
}

#[test]
fn reads_standard_input_with_dash_or_no_argument() {
    let log = std::fs::read(logs().join("dataloader-shm-bus-error.log")).unwrap();
    for args in [vec!["explain", "-"], vec!["explain"]] {
        let out = memtriage()
            .args(&args)
            .write_stdin(log.clone())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let stdout = text(&out.stdout);
        assert!(stdout.contains("A DataLoader worker died of a bus error: /dev/shm is too small"));
        assert!(stdout.contains("docker run --shm-size=16g"));
        assert!(
            stdout.contains("(stdin)"),
            "evidence names where it came from: {stdout}"
        );
    }
}

#[test]
fn json_report_has_schema_counts_matches_and_findings() {
    let path = logs().join("oom-dmesg-T.log");
    let v = explain_json(&path);
    assert_eq!(v["schema"], "memtriage.explain/v1");
    assert_eq!(v["source"], path.display().to_string());
    assert_eq!(v["lines"], 5);
    assert_eq!(v["bytes"], std::fs::metadata(&path).unwrap().len());
    let matches = v["matches"].as_array().unwrap();
    // invoked oom-killer, the cgroup's usage and limit, the constraint, the kill.
    assert_eq!(matches.len(), 4);
    assert_eq!(matches[1]["rule"], "kernel.memcg-usage");
    assert_eq!(matches[3]["class"], "oom_kill");
    assert_eq!(matches[3]["rule"], "kernel.oom-killed-process");
    assert_eq!(matches[3]["line_no"], 5);
    let f = &v["findings"][0];
    assert_eq!(f["id"], "log.oom-kill");
    assert_eq!(f["severity"], "error");
    assert!(f["title"]
        .as_str()
        .unwrap()
        .contains("pt_main_thread (pid 7731)"));
    assert!(f["evidence"][0]["label"].is_string());
    assert!(f["fix"]
        .as_str()
        .unwrap()
        .contains("resources.limits.memory"));
}

#[test]
fn a_real_kmsg_dump_piped_in() {
    // Two kills as /dev/kmsg gives them, with a dictionary continuation line.
    let log = std::fs::read(core_fixtures().join("kmsg-oom")).unwrap();
    let out = memtriage()
        .args(["explain", "--json"])
        .write_stdin(log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["source"], "-");
    let f = v["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0]["title"],
        "The kernel's OOM killer killed 2 processes, first python (pid 48213) holding 15.9 GiB of \
         anonymous memory: cgroup /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d.slice \
         hit its memory limit"
    );
    let killed: Vec<&str> = f[0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["label"] == "killed")
        .map(|e| e["value"].as_str().unwrap())
        .collect();
    assert_eq!(killed, ["python (pid 48213)", "pt_data_worker (pid 51002)"]);
}

#[test]
fn a_missing_file_exits_2_naming_it() {
    let out = memtriage()
        .args(["explain", "/nonexistent/train.log"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "memtriage: /nonexistent/train.log: no such file\n"
    );
}

/// A directory is read as its logs; one with none is an error that says so.
#[test]
fn a_directory_without_logs_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty-subdir")).unwrap();
    let out = memtriage().arg("explain").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no log files in it"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn non_utf8_and_crlf_logs_still_give_valid_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pod.log");
    std::fs::write(
        &path,
        b"\xfa\xfbepoch 1\r\nOut of memory: Killed process 7 (tr\xe4in) total-vm:8kB, anon-rss:4kB\r\n",
    )
    .unwrap();
    let v = explain_json(&path);
    assert_eq!(v["lines"], 2);
    assert_eq!(v["matches"][0]["line_no"], 2);
    assert!(v["matches"][0]["line"]
        .as_str()
        .unwrap()
        .contains("(tr\\xe4in)"));
}

#[test]
fn no_argument_on_a_terminal_exits_2_with_what_to_do() {
    // util-linux `script` gives the command a terminal for stdin; skip where it is absent.
    let Some(out) = in_a_terminal(&format!("{BIN} explain")) else {
        skip("no `script` to provide a terminal");
        return;
    };
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stdout);
    assert!(said.contains("no log given: name a file"), "{said}");
    assert!(said.contains("dmesg | memtriage explain"), "{said}");
}

#[test]
fn lists_its_rules() {
    let out = memtriage()
        .args(["explain", "--rules", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(table["schema"], "memtriage.rules/v1");
    let rules = table["rules"].as_array().unwrap();
    assert!(rules.len() >= 100, "{} rules", rules.len());
    for r in rules {
        for field in ["id", "class", "severity", "certainty"] {
            assert!(
                r[field].as_str().is_some_and(|v| !v.is_empty()),
                "{field}: {r}"
            );
        }
    }
    // Only the rules that read a table's rows, reached through its header line, have
    // no literal of their own (the NUL placeholder is not listed).
    let without: Vec<&str> = rules
        .iter()
        .filter(|r| r["literals"].as_array().unwrap().is_empty())
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        without,
        ["vmstat.swapping", "sar.swap-row", "table.process-memory"],
        "{without:?}"
    );

    let people = memtriage().args(["explain", "--rules"]).output().unwrap();
    let listing = text(&people.stdout);
    assert!(
        listing.contains("oom_kill") && listing.ends_with(&format!("{} rules\n", rules.len())),
        "{listing}"
    );
}

/// Issue 28, defect 2: `explain-snapshot /dev/zero` read forever and a large file of
/// zeros was read whole before "not a pickle". Devices and FIFOs are refused as
/// `report`, `cache` and `warm` refuse them, and a file that starts no pickle is
/// refused at its first byte, without reading the rest.
#[test]
fn regression_explain_snapshot_refuses_devices_fifos_and_non_pickles_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let zeros = dir.path().join("zeros.pickle");
    let file = std::fs::File::create(&zeros).unwrap();
    // 8 GiB of zeros, sparse; the command may map 1 GiB at most, so reading the file
    // whole fails where refusing it at its first byte does not.
    file.set_len(8 << 30).unwrap();
    for (path, says) in [
        (PathBuf::from("/dev/zero"), "a device, not a regular file"),
        (fifo, "a FIFO, not a regular file"),
        (zeros, "not a pickle"),
    ] {
        let mut cmd = std::process::Command::new(BIN);
        cmd.arg("explain-snapshot").arg(&path);
        // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                let one_gib = libc::rlimit {
                    rlim_cur: 1 << 30,
                    rlim_max: 1 << 30,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &one_gib) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            path.display(),
            text(&out.stderr)
        );
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
}

/// Issue 28, defect 11: `explain-snapshot --device 5` on a snapshot of device 0 gave a
/// "real demand" verdict for a device it knew nothing of, and a malformed segment list
/// exited 0 with only "no allocation history". Both are refused, saying why.
#[test]
fn regression_explain_snapshot_refuses_an_absent_device_and_a_malformed_segment_list() {
    let snapshot = core_fixtures().join("cuda-snapshots/real-demand.pickle");
    let out = memtriage()
        .args(["explain-snapshot", "--device", "5", "--requested", "1G"])
        .arg(&snapshot)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("holds nothing of CUDA device 5 (its devices: 0)"),
        "{}",
        text(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let malformed = dir.path().join("malformed.pickle");
    let made = std::process::Command::new("python3")
        .args([
            "-c",
            "import pickle, sys; pickle.dump({'segments': [1, 2]}, open(sys.argv[1], 'wb'))",
        ])
        .arg(&malformed)
        .status()
        .unwrap();
    assert!(made.success());
    let out = memtriage()
        .arg("explain-snapshot")
        .arg(&malformed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("segment 0 of `segments` is malformed"),
        "{}",
        text(&out.stderr)
    );
}

/// Issue 28, defect 15 (its full stdout): `report … > /dev/full` said "No space left on
/// device" without naming what was full; the error names standard output.
#[test]
fn regression_a_full_standard_output_is_named() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(BIN)
        .args(["explain", "--rules"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("standard output: No space left on device"),
        "{}",
        text(&out.stderr)
    );
}

fn dumps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/kernel-crashes/dumps")
}

/// A real Windows triage dump (rizin-testbins' `triage_x64.dmp`) read on Linux: the bug
/// check by name, its parameters, and the driver that holds the faulting address.
#[test]
fn explains_a_windows_triage_dump() {
    let path = dumps().join("triage_x64.dmp");
    let out = memtriage().arg("explain").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "error Windows bug check 0x1000007E SYSTEM_THREAD_EXCEPTION_NOT_HANDLED in amdppm.sys (a driver)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("suspect: amdppm.sys+0x334c (a driver)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("crashed at: 2021-02-21 01:38:22 UTC"),
        "{stdout}"
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("1 finding in a 1.4 MB crash dump (its header and triage data read)"),
        "{stdout}"
    );
    let json = explain_json(&path);
    assert_eq!(json["findings"][0]["id"], "dump.windows-bugcheck");
    assert_eq!(json["findings"][0]["certainty"], "confirmed");
    assert_eq!(json["matches"].as_array().map(Vec::len), Some(0));
}

/// A dump cut short, a user-mode minidump and a non-dump named `.dmp` are refused with
/// what they are, exit status 2.
#[test]
fn a_truncated_or_foreign_dump_exits_2_saying_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(dumps().join("triage_x64.dmp")).unwrap();
    for (name, bytes, says) in [
        (
            "cut.dmp",
            whole[..5000].to_vec(),
            "truncated: the dump header is 8192 bytes, the file has 5000",
        ),
        ("list.dmp", whole[..0x10900].to_vec(), "lies past its end"),
        (
            "user.dmp",
            b"MDMP\x93\xa7\x00\x00 and more".to_vec(),
            "a user-mode minidump",
        ),
        (
            "notes.dmp",
            b"hello\n".to_vec(),
            "not a Windows kernel dump",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = memtriage().arg("explain").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
}

/// A file that is a pipe (`memtriage explain <(dmesg)`) is read from its first byte,
/// though the first bytes were read to tell a dump from a log.
#[test]
fn a_pipe_named_as_a_file_is_read_whole() {
    use std::io::Write;
    let log = std::fs::read(logs().join("dataloader-shm-bus-error.log")).unwrap();
    let mut child = std::process::Command::new(BIN)
        .args(["explain", "--json", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&log).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["findings"][0]["id"], "log.dataloader-shm");
    assert_eq!(json["bytes"].as_u64(), Some(log.len() as u64));
}

/// An oops's report names the faulting module, the process and the taint flags.
#[test]
fn a_kernel_oops_names_its_module() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dmesg.log");
    std::fs::write(
        &path,
        "[ 1234.567890] BUG: unable to handle page fault for address: ffffb8a1c0e3f000\n\
         [ 1234.567900] #PF: supervisor read access in kernel mode\n\
         [ 1234.567915] Oops: 0000 [#1] PREEMPT SMP NOPTI\n\
         [ 1234.567920] CPU: 3 PID: 4242 Comm: python Tainted: P           OE     6.5.0-14-generic #14\n\
         [ 1234.567925] RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]\n",
    )
    .unwrap();
    let out = memtriage().arg("explain").arg(&path).output().unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "error Kernel oops in the nvidia module, a GPU driver, while python (pid 4242) ran"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("tainted: P (a proprietary module is loaded)"),
        "{stdout}"
    );
}

/// A directory of rotated pod logs as the real tools compressed them (gzip, zstd),
/// with a healthy one and a name that is not there: one process reads them all, each
/// gets its report, the summary says which shows which failure, and the unread one
/// makes the exit status 2. JSON lines for programs.
#[test]
fn many_logs_and_compressed_ones_are_read_in_one_process() {
    for tool in ["gzip", "zstd"] {
        if !crate::support::have(tool) {
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("a-healthy.log"),
        "epoch 1 loss 0.41\nepoch 2 loss 0.39\n",
    )
    .unwrap();
    std::fs::write(d.join("b-pod.log"), "step 300\nKilled\n").unwrap();
    std::fs::write(
        d.join("c-rank0.log"),
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
    )
    .unwrap();
    // gzip replaces the file by default; zstd keeps it unless told.
    for (tool, flags, file) in [
        ("gzip", &["-q"][..], "b-pod.log"),
        ("zstd", &["-q", "--rm"][..], "c-rank0.log"),
    ] {
        let status = std::process::Command::new(tool)
            .args(flags)
            .arg(d.join(file))
            .status()
            .unwrap();
        assert!(status.success(), "{tool} {file}");
    }
    let out = memtriage()
        .arg("explain")
        .arg(d)
        .arg(d.join("gone.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("4 logs: 2 with a failure, 1 healthy, 1 unreadable"),
        "{shown}"
    );
    for expected in [
        "a-healthy.log  no known failure",
        "b-pod.log.gz   warn A process was killed by SIGKILL",
        "c-rank0.log.zst  error",
        "gone.log  not read:",
    ] {
        let line = expected.split("  ").next().unwrap();
        assert!(
            shown.lines().any(
                |l| l.contains(line) && l.contains(expected.split("  ").last().unwrap().trim())
            ),
            "no summary line for {expected}: {shown}"
        );
    }
    let out = memtriage()
        .args(["explain", "--json"])
        .arg(d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "three reports and the summary");
    assert_eq!(lines[1]["findings"][0]["id"], "log.sigkill");
    assert_eq!(lines[2]["findings"][0]["id"], "log.cuda-oom");
    assert_eq!(lines[3]["schema"], "memtriage.explain-summary/v1");
    assert_eq!(lines[3]["with_failure"], 2);
}
