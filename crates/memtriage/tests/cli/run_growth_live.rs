//! `memtriage run` on jobs whose memory grows at a known rate (the test helper's
//! `grow` step): the early warning before an OOM kill and how close its estimate
//! is, the snapshot near the ceiling, the leak-like finding, and silence for a flat job.

use std::process::{Output, Stdio};

use crate::support::{
    finding_ids, helper_binary, is_root, memtriage, root_or_skip, run_report, MIB,
};

/// `memtriage run --json ARGS… -- memtriage-testhelper STEPS…`, at the default interval.
fn run_helper(args: &[&str], steps: &[&str]) -> (Output, serde_json::Value) {
    let out = memtriage()
        .args(["run", "--json"])
        .args(args)
        .arg("--")
        .arg(helper_binary())
        .args(steps)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = run_report(&out.stderr);
    (out, report)
}

/// The lines memtriage printed on stderr with its prefix.
fn warning_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("memtriage: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn steady_growth_under_a_limit_is_warned_before_the_kill_with_a_close_estimate() {
    if !root_or_skip("--limit needs root to make a cgroup") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("growth.jsonl");
    // 40 MiB/s toward 400 MiB: killed about 10 s in.
    let (out, report) = run_helper(
        &["--limit", "400M", "--record", record.to_str().unwrap()],
        &["grow", "40", "30"],
    );
    assert_eq!(out.status.code(), Some(137), "{report}");
    let job = report["pid"].as_i64().unwrap();

    let lines = warning_lines(&out);
    assert_eq!(lines.len(), 1, "one warning: {lines:?}");
    let expected = format!("memtriage: pid {job} grows ");
    assert!(
        lines[0].starts_with(&expected)
            && lines[0].contains("/min; the 400 MiB limit is reached in ~"),
        "{}",
        lines[0]
    );

    let warning = &report["growth"]["warning"];
    let (t, estimate) = (
        warning["at_seconds"].as_f64().unwrap(),
        warning["seconds_to_ceiling"].as_f64().unwrap(),
    );
    let rate = warning["bytes_per_second"].as_f64().unwrap() / MIB as f64;
    assert!(
        (28.0..=52.0).contains(&rate),
        "slope {rate} MiB/s, grown at 40"
    );
    assert_eq!(
        format!("memtriage: {}", warning["message"].as_str().unwrap()),
        lines[0]
    );

    // The kill's time, from the recording's exit event of the job.
    let text = std::fs::read_to_string(&record).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "event")
        .collect();
    let kill = events
        .iter()
        .find(|e| e["event"] == "exit" && e["pid"] == job)
        .unwrap_or_else(|| panic!("no exit event: {events:?}"))["t"]
        .as_f64()
        .unwrap();
    let real = kill - t;
    assert!(real > 0.0, "warned at {t} s, killed at {kill} s");
    assert!(
        (estimate - real).abs() <= 0.5 * real,
        "warned at {t:.1} s that the limit is {estimate:.1} s away; the kill came {real:.1} s later"
    );
    let recorded = events
        .iter()
        .find(|e| e["event"] == "warning")
        .unwrap_or_else(|| panic!("no warning event: {events:?}"));
    assert_eq!(recorded["label"], warning["message"]);
    assert!((recorded["t"].as_f64().unwrap() - t).abs() < 1e-9);
    assert!(events.iter().any(|e| e["event"] == "snapshot"));

    // Near the ceiling the tree was read in full: the job's anonymous memory grew.
    let snapshot = &report["near_ceiling"];
    assert!(snapshot["at_seconds"].as_f64().unwrap() <= kill);
    let biggest = &snapshot["processes"][0];
    assert_eq!(biggest["pid"], job);
    let anon = biggest["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "anon_mmap")
        .unwrap_or_else(|| panic!("{biggest}"));
    assert!(
        anon["sizes"]["rss"].as_u64().unwrap() >= 300 * MIB,
        "{anon}"
    );

    // The OOM verdict carries the warning and the snapshot as evidence.
    let oom = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "run.oom-killed")
        .unwrap_or_else(|| panic!("{:?}", finding_ids(&report)));
    let evidence = oom["evidence"].to_string();
    assert!(evidence.contains("early warning at"), "{evidence}");
    assert!(evidence.contains("anon mmap"), "{evidence}");
    assert!(!finding_ids(&report).contains(&"run.leak-like-growth".to_string()));
}

#[test]
fn a_job_that_grows_steadily_and_ends_well_gets_the_leak_like_finding() {
    // 10 MiB/s for 8 s, then exits 0.
    let (out, report) = run_helper(&[], &["grow", "10", "8"]);
    assert_eq!(out.status.code(), Some(0), "{report}");
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "run.leak-like-growth")
        .unwrap_or_else(|| panic!("{:?} {}", finding_ids(&report), report["growth"]));
    assert_eq!(f["severity"], "info");
    assert_eq!(f["evidence"][0]["unit"], "bytes");
    let per_minute = f["evidence"][0]["quantity"].as_u64().unwrap();
    assert!(
        (420 * MIB..=780 * MIB).contains(&per_minute),
        "grew 600 MiB/min, measured {} MiB/min",
        per_minute / MIB
    );
    let episode = &report["growth"]["episode"];
    assert!(episode["r_squared"].as_f64().unwrap() >= 0.9, "{episode}");
}

#[test]
fn a_flat_job_gets_neither_a_warning_nor_the_leak_finding() {
    // 100 MiB held for 6 s; under a 128 MiB limit when root (78%: no snapshot either).
    let limit: &[&str] = if is_root() { &["--limit", "128M"] } else { &[] };
    let (out, report) = run_helper(limit, &["anon", "100", "sleep", "6"]);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(warning_lines(&out).is_empty(), "{:?}", warning_lines(&out));
    assert!(
        finding_ids(&report).is_empty(),
        "{:?}",
        finding_ids(&report)
    );
    let growth = &report["growth"];
    assert!(growth["warning"].is_null(), "{growth}");
    assert!(growth["episode"].is_null(), "{growth}");
    assert_eq!(growth["warnings"], 0);
    assert!(report["near_ceiling"].is_null());
    if is_root() {
        assert_eq!(growth["ceiling"]["source"], "job_limit");
        assert_eq!(growth["ceiling"]["bytes"], 128 * MIB);
    }
}
