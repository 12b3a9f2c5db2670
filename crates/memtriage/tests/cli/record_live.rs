//! `memtriage record` on the real machine: it writes intervals a user can query with
//! SQLite (here Python's sqlite3), stops cleanly on SIGTERM, and refuses a database
//! it must not touch.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{memtriage, wait_until, OutputOk, ShellJob};

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
    let mut record = memtriage()
        .args(["record", "--interval", "1s", "--db"])
        .arg(&db)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
        "1"
    );
    assert_eq!(sqlite(&db, "PRAGMA journal_mode").trim(), "wal");
    let machine = sqlite(
        &db,
        "SELECT mem_available, page_cache FROM machine ORDER BY t DESC LIMIT 1",
    );
    let (available, cache) = machine.trim().split_once('|').unwrap();
    assert!(available.parse::<u64>().unwrap() > 0);
    assert_eq!(cache, "None", "what was not read is NULL, not 0");
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
        err.contains("newer memtriage (schema 7") && err.contains("history.db"),
        "{err}"
    );
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the database was changed"
    );
}
