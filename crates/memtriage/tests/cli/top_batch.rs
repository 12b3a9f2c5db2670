//! `memtriage top` for scripts: `--once` and `--iterations N`, as JSON or as the
//! screen's text, and the error where an interactive view has no terminal.

use std::process::Stdio;

use crate::support::{assert_between, memtriage, Helper, OutputOk};

const MIB: u64 = 1 << 20;

#[test]
fn once_as_json_has_the_machine_and_a_started_process_with_its_rates() {
    let job = Helper::start(&["anon", "96"]);
    let out = memtriage()
        .args(["top", "--once", "--json", "--interval", "300ms"])
        .output_ok();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "one frame: {text}");
    let frame: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(frame["schema"], "memtriage.top/v1");
    assert!(frame["header"]["mem_total"].as_u64().unwrap() > 0);
    let row = frame["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == job.pid)
        .expect("the started process is in the frame");
    assert_between("its RSS", row["rss"].as_u64().unwrap(), 96 * MIB, 120 * MIB);
    assert!(
        row["minor_rate"].is_number(),
        "--once waits for a second sample: {row}"
    );
}

#[test]
fn iterations_print_that_many_frames_and_text_without_json() {
    let out = memtriage()
        .args(["top", "--iterations", "2", "--json", "--interval", "200ms"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    let out = memtriage()
        .args(["top", "--once", "--interval", "200ms", "--sort", "pss"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("MemAvailable") && text.contains("PID") && text.contains("sort:pss"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
}

#[test]
fn without_a_terminal_the_interactive_view_says_what_to_use() {
    let out = memtriage()
        .arg("top")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--once"));
    let out = memtriage()
        .args(["top", "--sort", "size"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("major-faults"));
}
