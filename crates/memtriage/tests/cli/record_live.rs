//! `memtriage record` on the real machine: it writes intervals a user can query with
//! SQLite (here Python's sqlite3), stops cleanly on SIGTERM, and refuses a database
//! it must not touch.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{
    memtriage, root_or_skip, skip, skip_by_chance, wait_until, MemoryCgroup, OutputOk, ShellJob,
    SmallTmpfs, MIB,
};

fn sqlite(db: &std::path::Path, query: &str) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nfor row in c.execute(sys.argv[2]): print(*row, sep='|')",
        ])
        .arg(db)
        .arg(query)
        .output_ok();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn intervals_are_recorded_for_sqlite_and_sigterm_stops_cleanly() {
    let job = ShellJob::start("anon 64");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut record = start_recorder(&db, &[]);
    let name = format!("memtriage-testh[{}]", job.pid());
    let recorded = wait_until(Duration::from_secs(20), Duration::from_millis(300), || {
        db.exists()
            && sqlite(
                &db,
                &format!("SELECT count(*) FROM jobs WHERE job = '{name}'"),
            )
            .trim()
            .parse::<u64>()
            .is_ok_and(|n| n >= 2)
    });
    assert!(recorded, "two intervals of the job were not recorded");
    // SAFETY: a signal to the process this test started.
    unsafe {
        libc::kill(record.id() as i32, libc::SIGTERM);
    }
    let status = record.wait().unwrap();
    assert_eq!(status.code(), Some(0), "record ends cleanly on SIGTERM");

    let rss: Vec<u64> = sqlite(&db, &format!("SELECT rss FROM jobs WHERE job = '{name}'"))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(
        rss.iter().all(|&r| (64 << 20..96 << 20).contains(&r)),
        "{rss:?}"
    );
    assert_eq!(
        sqlite(&db, "SELECT value FROM meta WHERE key = 'schema_version'").trim(),
        "4"
    );
    assert_eq!(sqlite(&db, "PRAGMA journal_mode").trim(), "wal");
    let machine = sqlite(
        &db,
        "SELECT mem_available, page_cache FROM machine ORDER BY t DESC LIMIT 1",
    );
    let (available, cache) = machine.trim().split_once('|').unwrap();
    assert!(available.parse::<u64>().unwrap() > 0);
    assert!(cache.parse::<u64>().unwrap() > 0, "the page cache: {cache}");
    let names = sqlite(
        &db,
        &format!("SELECT n.comm, p.job FROM processes p JOIN process_names n USING (pid) WHERE p.pid = {}", job.pid()),
    );
    assert!(
        names
            .lines()
            .next()
            .is_some_and(|l| l == format!("memtriage-testh|{name}")),
        "the job's process is among the largest, with its name: {names}"
    );
}

/// The acceptance test: a job that was not started under `run` grows at a
/// known rate in a memory cgroup until the kernel kills it; `why`, from the record
/// alone, names the victim, the cgroup and its limit, and the growth: the slope
/// within 30% of the real one, its start within two intervals.
#[test]
fn why_explains_an_oom_kill_nobody_supervised_from_the_record() {
    if !root_or_skip("an OOM kill in a memory cgroup and the kernel log need root") {
        return;
    }
    // 5 s at its base, then 16 MiB/s until the 160 MiB limit: killed after ~10 s.
    let RecordedKill {
        report,
        status,
        cgroup,
        started_ms,
        dir,
        db,
    } = record_a_kill("why-test", 160 * MIB, "sleep 5 grow 16 60");
    assert_eq!(status.code(), Some(137), "the job was to be OOM-killed");
    let growth_starts_ms = started_ms + 5000;
    let death = &report["death"];
    assert_eq!(death["victim"], "memtriage-testh", "{report:#}");
    assert_eq!(death["cgroup"], cgroup.path.as_str(), "{report:#}");
    assert_eq!(death["limit_bytes"], 160 * MIB, "{report:#}");
    assert!(
        report["job"]
            .as_str()
            .unwrap()
            .starts_with("memtriage-testh["),
        "{report:#}"
    );
    let growth = &report["growth"];
    let slope = growth["bytes_per_second"].as_f64().unwrap();
    let real = (16 * MIB) as f64;
    assert!(
        (slope - real).abs() <= 0.3 * real,
        "slope {:.1} MiB/s, the job grew 16 MiB/s: {report:#}",
        slope / MIB as f64
    );
    let start_off = (growth["started_ms"].as_i64().unwrap() - growth_starts_ms).abs();
    assert!(
        start_off <= 2000,
        "the growth started {start_off} ms from when it really did (two intervals: 2000 ms)"
    );
    let finding = &report["findings"][0];
    assert_eq!(finding["id"], "run.oom-killed");
    assert!(
        finding["title"].as_str().unwrap().ends_with(&format!(
            "at its cgroup's memory limit ({}, 160 MiB)",
            death["limit_cgroup"].as_str().unwrap()
        )),
        "{finding:#}"
    );

    // As people read it, and `why PID` finds the same death.
    let pid = death["pid"].as_i64().unwrap().to_string();
    let text = memtriage().args(["why", &pid, "--db"]).arg(&db).output_ok();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("memtriage-testh (pid ") && text.contains("growth of memtriage-testh["),
        "{text}"
    );
    let none = memtriage().args(["why", "1", "--db"]).arg(&db).output_ok();
    assert!(String::from_utf8_lossy(&none.stdout).contains("no death of pid 1 recorded"));

    // The window as `run`'s page: the job's memory and the kill on one time axis.
    let job = report["job"].as_str().unwrap();
    let page = dir.path().join("window.html");
    memtriage()
        .args(["report", "--db"])
        .arg(&db)
        .args(["--from", "10m", "--job", job, "--html"])
        .arg(&page)
        .output_ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg") && html.contains("OOM kill: memtriage-testh (pid "),
        "{html}"
    );
    assert!(html.contains(&format!("<h1>memtriage record: history of {job}</h1>")));
    let empty = memtriage()
        .args(["report", "--db"])
        .arg(&db)
        .args(["--job", "no-such-job[1]", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&empty.stderr).contains("nothing recorded of job no-such-job[1]")
    );
}

/// A job the kernel killed in a memory cgroup of its own while a recorder ran.
struct RecordedKill {
    /// `why PID --json` for the kill.
    report: serde_json::Value,
    status: std::process::ExitStatus,
    cgroup: MemoryCgroup,
    /// When the job started (Unix ms).
    started_ms: i64,
    dir: tempfile::TempDir,
    db: std::path::PathBuf,
}

/// Records the machine at 1 s while the test helper runs `steps` in a new cgroup
/// limited to `limit` (named as `run --limit` names its own, so doctor elsewhere
/// knows the kill was made on purpose), and explains its kill.
fn record_a_kill(name: &str, limit: u64, steps: &str) -> RecordedKill {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut record = start_recorder(&db, &[]);
    assert!(intervals_written(&db, 1), "the recorder wrote nothing");
    let cgroup = MemoryCgroup::new(
        &format!("memtriage-run-{name}-{}", std::process::id()),
        limit,
    );
    let started_ms = unix_ms();
    let status = cgroup.run_helper_steps(steps);
    // The kill is counted once both sources agree (or after the wait for the other).
    let report = why_once_recorded(
        &db,
        &mut record,
        "oom_kills",
        &format!("cgroup = '{}'", cgroup.path),
    );
    RecordedKill {
        report,
        status,
        cgroup,
        started_ms,
        dir,
        db,
    }
}

/// Waits for this test's death in `table` (rows `matching` an SQL condition: other
/// tests kill processes too, and the recorder sees the whole machine), stops the
/// recorder, and returns `why PID --json` for it.
fn why_once_recorded(
    db: &std::path::Path,
    record: &mut std::process::Child,
    table: &str,
    matching: &str,
) -> serde_json::Value {
    let query = format!("SELECT pid FROM {table} WHERE {matching} ORDER BY t DESC LIMIT 1");
    let mut pid = String::new();
    let recorded = wait_until(Duration::from_secs(30), Duration::from_millis(300), || {
        pid = sqlite(db, &query).trim().to_string();
        !pid.is_empty() && pid != "None"
    });
    stop_recorder(record);
    assert!(recorded, "nothing was recorded in {table} where {matching}");
    let out = memtriage()
        .args(["why", &pid, "--json", "--db"])
        .arg(db)
        .output_ok();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether `db` holds `n` intervals within 20 s.
fn intervals_written(db: &std::path::Path, n: u64) -> bool {
    wait_until(Duration::from_secs(20), Duration::from_millis(100), || {
        db.exists() && count(db, "machine") >= n
    })
}

/// SIGTERM, and the recorder ends cleanly.
fn stop_recorder(record: &mut std::process::Child) {
    // SAFETY: a signal to the process this test started.
    unsafe { libc::kill(record.id() as i32, libc::SIGTERM) };
    assert_eq!(
        record.wait().unwrap().code(),
        Some(0),
        "record ends cleanly on SIGTERM"
    );
}

/// `memtriage record` at a 1 s interval into `db`, with `more` arguments.
fn start_recorder(db: &std::path::Path, more: &[&str]) -> std::process::Child {
    memtriage()
        .args(["record", "--interval", "1s", "--db"])
        .arg(db)
        .args(more)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn a_database_from_a_newer_memtriage_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let made = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.execute('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')\nc.execute(\"INSERT INTO meta VALUES ('schema_version', '7')\")\nc.commit()",
        ])
        .arg(&db)
        .status()
        .unwrap();
    assert!(made.success());
    let before = std::fs::read(&db).unwrap();
    let out = memtriage()
        .args(["record", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("newer memtriage (schema 7")
            && err.contains("history.db")
            && err.contains("(--db PATH names the database)"),
        "{err}"
    );
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the database was changed"
    );
}

/// A history that is not there: `why` and `report --db` say so, and the CLI names
/// its option (the engine's message names none: Python has no `--db`).
#[test]
fn a_missing_history_is_a_clear_error_that_names_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    for args in [
        vec!["why", "--db"],
        vec!["report", "--html", "/dev/null", "--db"],
    ] {
        let out = memtriage().args(&args).arg(&db).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("none.db: no such database")
                && err.contains("(--db PATH names the database)"),
            "{args:?}: {err}"
        );
    }
    assert!(!db.exists(), "reading made a database");
}

fn count(db: &std::path::Path, table: &str) -> u64 {
    sqlite(db, &format!("SELECT count(*) FROM {table}"))
        .trim()
        .parse()
        .unwrap()
}

/// `kill -9` mid-write: the database opens, passes SQLite's integrity check, holds
/// every interval up to the last one or two, and a new recorder goes on with it.
#[test]
fn a_recorder_killed_with_sigkill_leaves_a_whole_database_that_the_next_one_continues() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut record = start_recorder(&db, &[]);
    assert!(intervals_written(&db, 4), "the recorder wrote nothing");
    let killed_at = unix_ms();
    record.kill().unwrap();
    record.wait().unwrap();
    assert_eq!(sqlite(&db, "PRAGMA integrity_check").trim(), "ok");
    let last: i64 = sqlite(&db, "SELECT max(t) FROM machine")
        .trim()
        .parse()
        .unwrap();
    assert!(
        killed_at - last <= 2500,
        "more than the interval in flight was lost: the last is {} ms before the kill",
        killed_at - last
    );
    let before = count(&db, "machine");
    let mut again = start_recorder(&db, &[]);
    assert!(wait_until(
        Duration::from_secs(20),
        Duration::from_millis(100),
        || { count(&db, "machine") >= before + 2 }
    ));
    stop_recorder(&mut again);
}

/// `--max-size`: the oldest intervals go first and the file stays near the bound.
#[test]
fn max_size_drops_the_oldest_intervals_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut record = memtriage()
        .args([
            "record",
            "--interval",
            "100ms",
            "--max-size",
            "200KiB",
            "--db",
        ])
        .arg(&db)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = |db: &std::path::Path| -> Option<i64> {
        sqlite(db, "SELECT min(t) FROM machine").trim().parse().ok()
    };
    assert!(wait_until(
        Duration::from_secs(20),
        Duration::from_millis(100),
        || db.exists() && first(&db).is_some()
    ));
    let oldest = first(&db).unwrap();
    // The bound is reached after some thousand intervals; on a busy machine each takes
    // longer (`.ci/under-load` with a build beside it drew 60 s without a trim).
    let trimmed = wait_until(Duration::from_secs(240), Duration::from_millis(300), || {
        first(&db).is_some_and(|t| t > oldest)
    });
    stop_recorder(&mut record);
    assert!(trimmed, "the oldest interval was never dropped");
    let pages: u64 = sqlite(&db, "PRAGMA page_count").trim().parse().unwrap();
    let page: u64 = sqlite(&db, "PRAGMA page_size").trim().parse().unwrap();
    assert!(
        pages * page <= 400 << 10,
        "{} KiB for a 200 KiB bound",
        (pages * page) >> 10
    );
    assert!(count(&db, "machine") > 0, "it trimmed everything");
}

/// A full disk (a small tmpfs): recording pauses and says so, nothing written is
/// lost, and it resumes when space returns.
#[test]
fn a_full_disk_pauses_recording_and_space_returning_resumes_it() {
    if !root_or_skip("mounting a small tmpfs needs root") {
        return;
    }
    let disk = SmallTmpfs::mount("4m");
    let db = disk.path().join("history.db");
    let mut record = start_recorder(&db, &[]);
    let stderr = record.stderr.take().unwrap();
    let lines = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let lines = lines.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let mut all = lines.lock().unwrap();
                all.push_str(&l);
                all.push('\n');
            }
        })
    };
    assert!(intervals_written(&db, 2), "the recorder wrote nothing");
    let filler = disk.fill();
    let paused = wait_until(Duration::from_secs(30), Duration::from_millis(200), || {
        lines.lock().unwrap().contains("paused")
    });
    let kept = count(&db, "machine");
    std::fs::remove_file(&filler).unwrap();
    let resumed = wait_until(Duration::from_secs(30), Duration::from_millis(200), || {
        lines.lock().unwrap().contains("resumed")
    });
    assert!(wait_until(
        Duration::from_secs(20),
        Duration::from_millis(200),
        || { count(&db, "machine") >= kept + 2 }
    ));
    stop_recorder(&mut record);
    reader.join().unwrap();
    let said = lines.lock().unwrap().clone();
    assert!(paused, "no pause was said: {said}");
    assert!(said.contains("disk is full"), "{said}");
    assert!(resumed, "no resume was said: {said}");
    assert_eq!(sqlite(&db, "PRAGMA integrity_check").trim(), "ok");
}

/// A recorder without CAP_SYS_PTRACE records other users' processes without PSS;
/// `why` says so, with the fix.
#[test]
fn a_recorder_that_cannot_read_other_users_pss_is_said_so_by_why() {
    if !root_or_skip("needs root to become another user") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let db = dir.path().join("history.db");
    let record = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(crate::support::BIN)
        .args(["record", "--interval", "1s", "--db"])
        .arg(&db)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let recorded = wait_until(Duration::from_secs(20), Duration::from_millis(200), || {
        db.exists() && count(&db, "machine") >= 2
    });
    // SAFETY: a signal to the process this test started.
    unsafe { libc::kill(record.id() as i32, libc::SIGTERM) };
    let out = record.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(recorded, "nobody's recorder wrote nothing: {said}");
    assert!(said.contains("without CAP_SYS_PTRACE"), "{said}");
    let why = memtriage()
        .args(["why", "--json", "--db"])
        .arg(&db)
        .output_ok();
    let report: serde_json::Value = serde_json::from_slice(&why.stdout).unwrap();
    assert_eq!(report["death"], serde_json::Value::Null);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("without CAP_SYS_PTRACE") && notes.contains("PSS"),
        "{report:#}"
    );
    // Other users' processes (root's, alive still) were recorded with RSS, no PSS.
    let rows = sqlite(&db, "SELECT pid, pss IS NOT NULL FROM processes");
    let root_owned = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|st| {
            st.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .is_some_and(|ids| ids.split_whitespace().next() == Some("0"))
        })
    };
    let of_root: Vec<(&str, &str)> = rows
        .lines()
        .filter_map(|l| l.split_once('|'))
        .filter(|(pid, _)| root_owned(pid))
        .collect();
    assert!(!of_root.is_empty(), "no root process was recorded: {rows}");
    assert!(
        of_root.iter().all(|(_, has_pss)| *has_pss == "0"),
        "root's processes have a PSS in nobody's record: {of_root:?}"
    );
}

/// The unit in deploy/ is one systemd accepts without a warning, and its command
/// line is one this binary records with.
#[test]
fn the_systemd_unit_verifies_and_its_command_records() {
    let unit_text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/systemd/memtriage-record.service"
    ))
    .unwrap();
    let unit_text = unit_text.replace("/usr/local/bin/memtriage", crate::support::BIN);
    for wanted in [
        "MemoryMax=",
        "Nice=",
        "IOSchedulingClass=idle",
        "OOMScoreAdjust=",
    ] {
        assert!(unit_text.contains(wanted), "the unit lacks {wanted}");
    }
    let dir = tempfile::tempdir().unwrap();
    crate::support::systemd_verify("memtriage-record.service", &unit_text);
    let exec = unit_text
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    let db = dir.path().join("history.db");
    let args: Vec<String> = exec
        .split_whitespace()
        .skip(1)
        .map(|a| {
            if a == "/var/lib/memtriage/history.db" {
                db.display().to_string()
            } else {
                a.to_string()
            }
        })
        .collect();
    let record = memtriage()
        .args(&args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let recorded = wait_until(Duration::from_secs(30), Duration::from_millis(200), || {
        db.exists() && count(&db, "machine") >= 1
    });
    // SAFETY: a signal to the process this test started.
    unsafe { libc::kill(record.id() as i32, libc::SIGTERM) };
    let out = record.wait_with_output().unwrap();
    assert!(recorded, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
}

/// A segfault nobody supervised: the kernel's line is recorded, and `why` gives
/// `run`'s finding for it with the process's command line.
#[test]
fn why_explains_a_segfault_the_kernel_logged() {
    if !root_or_skip("reading the kernel log needs root") {
        return;
    }
    let trace = std::fs::read_to_string("/proc/sys/debug/exception-trace").unwrap_or_default();
    if trace.trim() == "0" {
        skip("debug.exception-trace is 0, the kernel logs no segfaults");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut record = start_recorder(&db, &[]);
    assert!(intervals_written(&db, 1), "the recorder wrote nothing");
    // Alive for two intervals first, so the recorder has read its command line.
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import ctypes, time; time.sleep(2.5); ctypes.string_at(0)",
        ])
        .spawn()
        .unwrap();
    let pid = child.id();
    let crashed = child.wait().unwrap();
    assert_eq!(crashed.signal(), Some(libc::SIGSEGV));
    // The kernel rate-limits these lines (other tests crash processes at the same
    // time): what it did not log cannot be recorded.
    let logged = wait_until(Duration::from_secs(5), Duration::from_millis(200), || {
        Command::new("dmesg").output().is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout).contains(&format!("[{pid}]: segfault at"))
        })
    });
    if !logged {
        stop_recorder(&mut record);
        skip_by_chance("the kernel's rate limit dropped the segfault's line");
        return;
    }
    let report = why_once_recorded(&db, &mut record, "faults", "cmdline LIKE '%string_at%'");
    assert_eq!(report["death"]["kind"], "fault", "{report:#}");
    assert_eq!(report["death"]["signal"], "SIGSEGV", "{report:#}");
    assert!(
        report["death"]["cmdline"]
            .as_str()
            .is_some_and(|c| c.contains("string_at")),
        "{report:#}"
    );
    assert_eq!(report["findings"][0]["id"], "run.segfault", "{report:#}");
}

/// The machine's MemAvailable in KiB.
fn mem_available_kib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// MemAvailable every 100 ms (milliseconds since the start, KiB) until `done`.
fn watch_available(done: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Vec<(u128, u64)> {
    let start = std::time::Instant::now();
    let mut seen = Vec::new();
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        seen.push((start.elapsed().as_millis(), mem_available_kib()));
        std::thread::sleep(Duration::from_millis(100));
    }
    seen
}

/// Whether MemAvailable fell by at least `per_second` of itself over every one-second
/// window that ends within some one-second stretch: then a check each second, at any
/// phase, sees the fall at least once.
fn fell_fast_for_a_while(seen: &[(u128, u64)], per_second: f64) -> bool {
    let rates: Vec<bool> = seen
        .iter()
        .enumerate()
        .map(|(i, &(t, now))| {
            let earlier = seen[..i].iter().rev().find(|(s, _)| t - s >= 1000);
            earlier.is_some_and(|&(s, before)| {
                let seconds = (t - s) as f64 / 1000.0;
                before.saturating_sub(now) as f64 / before as f64 / seconds >= per_second
            })
        })
        .collect();
    rates.windows(11).any(|w| w.iter().all(|&fast| fast))
}

/// While memory pressure rises (here MemAvailable falls by gigabytes in a second),
/// the machine is recorded each second between the 10 s intervals.
#[test]
fn a_fast_fall_of_available_memory_is_recorded_each_second() {
    // A quarter of what is available, at most 6 GiB, taken in 2 s: 12% a second, six
    // times what the recorder looks for (a 4 GiB cap over 4 s fell 2.8% a second on a
    // 23 GiB machine, too near the 2% to be seen each time).
    let mib = (mem_available_kib() / 1024 / 4).min(6144);
    if mib < 512 {
        skip("under 2 GiB available, too little to fall fast safely");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut record = memtriage()
        .args(["record", "--interval", "10s", "--db"])
        .arg(&db)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(intervals_written(&db, 1), "the recorder wrote nothing");
    std::thread::sleep(Duration::from_millis(1500));
    let before = count(&db, "machine");
    let started = unix_ms();
    // An eighth every quarter second, held 3 s, then freed: the recording each second
    // goes on 10 s after the fall, long enough that a recorder starved of CPU by other
    // work (it runs at nice 10) still finishes a walk of every process. Two takers, a
    // half each: the kernel zeroes the pages it hands out, on a VM near 1 GB/s a CPU,
    // so one taker beside the suite's other tests fell 1.3% a second, under the 2%.
    let script = format!(
        "import time\nchunks = []\nfor _ in range(8):\n    b = bytearray({sixteenth} << 20)\n    for i in range(0, len(b), 4096): b[i] = 1\n    chunks.append(b)\n    time.sleep(0.25)\ntime.sleep(3)",
        sixteenth = mib / 16
    );
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = std::thread::spawn({
        let done = done.clone();
        move || watch_available(done)
    });
    let takers: Vec<_> = (0..2)
        .map(|_| {
            Command::new("python3")
                .args(["-c", &script])
                .spawn()
                .unwrap()
        })
        .collect();
    // Both are waited for, whatever the first one's status.
    let exits: Vec<bool> = takers
        .into_iter()
        .map(|mut taker| taker.wait().unwrap().success())
        .collect();
    let grew = exits.iter().all(|ok| *ok);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert!(grew);
    let ended = unix_ms();
    let during = count(&db, "machine") - before;
    // Samples of the jobs asked for during the fall are written when they come, stamped
    // when the walk ended: on a busy machine a walk of every process can take a second
    // or two (recording each second goes on after the fall too).
    let until = ended + 2000;
    let jobs_sampled_during_the_fall = || -> u64 {
        sqlite(
            &db,
            &format!("SELECT count(DISTINCT t) FROM jobs WHERE t >= {started} AND t <= {until}"),
        )
        .trim()
        .parse()
        .unwrap()
    };
    wait_until(Duration::from_secs(5), Duration::from_millis(250), || {
        jobs_sampled_during_the_fall() >= 2
    });
    let with_jobs = jobs_sampled_during_the_fall();
    stop_recorder(&mut record);
    // Other work on the machine (a test's job OOM-killed beside this one) can give back
    // as much as this one takes: the recorder is held to a fall that happened, 2.5% a
    // second where it looks for 2%.
    let megabytes: Vec<u64> = seen.iter().map(|&(_, kib)| kib >> 10).collect();
    if !fell_fast_for_a_while(&seen, 0.025) {
        skip_by_chance(format!(
            "other work gave memory back while this test took it: MemAvailable (MiB, \
             every 100 ms) was {megabytes:?}"
        ));
        return;
    }
    assert!(
        during >= 2,
        "{during} rows while {mib} MiB were taken in two seconds: the fall was not \
         recorded each second; MemAvailable (MiB, every 100 ms): {megabytes:?}"
    );
    // The 10 s interval falls at most once in those 7 s: the rest were asked for.
    assert!(
        with_jobs >= 2,
        "{with_jobs} samples with the jobs' figures taken during the fall: only the machine's were recorded each second"
    );
}

/// Forked workers that dirtied their copy of the parent's memory, then one grew into
/// the cgroup's limit: `why` adds `run`'s `fork.copy-on-write` to the kill.
#[test]
fn why_names_forked_workers_that_copied_their_parent() {
    if !root_or_skip("an OOM kill in a memory cgroup needs root") {
        return;
    }
    // A 160 MiB parent, two workers that write all of it (a copy each), then grow.
    let kill = record_a_kill(
        "why-fork-test",
        640 * MIB,
        "anon 160 fork 2 dirty 160 sleep 6 grow 24 60",
    );
    assert!(!kill.status.success(), "the job was to be OOM-killed");
    let report = kill.report;
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert_eq!(
        ids[..2.min(ids.len())],
        ["run.oom-killed", "fork.copy-on-write"],
        "{report:#}"
    );
    // The machine may really have stalled on memory while the cgroup reclaimed.
    assert!(
        ids[2..].iter().all(|id| *id == "run.swap-thrashing"),
        "{report:#}"
    );
}

/// Issue 28, defect 13: `record --max-size 1K` was accepted and kept nothing, and `why`
/// then asked whether the recorder was running. A bound under what one interval needs
/// is refused before anything is made, by `record` and `serve --record` alike.
#[test]
fn regression_a_size_bound_too_small_to_keep_an_interval_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    for args in [
        vec!["record", "--max-size", "1K", "--db"],
        vec![
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--record-max-size",
            "100K",
            "--record",
        ],
    ] {
        let out = memtriage().args(&args).arg(&db).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("too small to keep one interval") && err.contains("160 KiB or more"),
            "{args:?}: {err}"
        );
        assert!(!db.exists(), "{args:?} made the database");
    }
    // The bound the error names is taken, and keeps intervals.
    let mut record = memtriage()
        .args(["record", "--interval", "1s", "--max-size", "160K", "--db"])
        .arg(&db)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(intervals_written(&db, 2), "nothing kept under 160 KiB");
    stop_recorder(&mut record);
}

/// Issue 28, defect 15 (its `why` part): `why 0` was accepted while `inspect 0` is
/// refused, and `--since 30s` refused while `--interval 30s` is taken.
#[test]
fn regression_why_refuses_pid_0_and_takes_since_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let out = memtriage()
        .args(["why", "0", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pid 0: not a valid process id") && !err.contains("--db PATH"),
        "{err}"
    );
    let out = memtriage()
        .args(["why", "--since", "30s", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such database") && !err.contains("unit"),
        "{err}"
    );
}
