//! `memtriage run` counts every process of the job, also those that start and end
//! between two samples, and says how it found them: the kernel's process events as
//! root, else the `--limit` cgroup's member list or the sampler's walk, with a note
//! that short-lived processes may be missing.

use std::process::{Command, Output, Stdio};

use crate::support::{memtriage, root_or_skip, run_report, skip, BIN};

const TEN_TRUES: &str = "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done";

/// Three epochs, each starting two workers that end at once: a DataLoader's shape.
const EPOCHS: &str = "
import multiprocessing as mp, time
def work(): time.sleep(0.01)
if __name__ == '__main__':
    mp.set_start_method('fork')
    for epoch in range(3):
        workers = [mp.Process(target=work) for _ in range(2)]
        for w in workers: w.start()
        for w in workers: w.join()
";

fn run_with(env: &[(&str, &str)], args: &[&str]) -> (Output, serde_json::Value) {
    let mut cmd = memtriage();
    cmd.args(["run", "--json", "--interval", "500ms"])
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let report = run_report(&out.stderr);
    (out, report)
}

/// The summary a person reads (`run` without `--json`).
fn summary_with(env: &[(&str, &str)], args: &[&str]) -> String {
    let mut cmd = memtriage();
    cmd.env("NO_COLOR", "1")
        .args(["run", "--interval", "500ms"])
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    String::from_utf8_lossy(&cmd.output().unwrap().stderr).into_owned()
}

fn notes(report: &serde_json::Value) -> String {
    report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn processes(report: &serde_json::Value) -> &Vec<serde_json::Value> {
    report["processes"].as_array().unwrap()
}

/// The job's direct children named `comm`.
fn children<'a>(report: &'a serde_json::Value, comm: &str) -> Vec<&'a serde_json::Value> {
    let job = report["pid"].as_i64().unwrap();
    processes(report)
        .iter()
        .filter(|p| p["ppid"].as_i64() == Some(job) && p["comm"] == comm)
        .collect()
}

/// `Err` with how the processes were found when it was not by the kernel's events
/// although root (a container's pid namespace): exact counts are not asserted then.
fn followed_events(report: &serde_json::Value) -> Result<(), String> {
    let tracking = &report["process_tracking"];
    if tracking["method"] == "proc_events" {
        assert_eq!(tracking["events_lost"], false, "{tracking}");
        return Ok(());
    }
    Err(tracking.to_string())
}

#[test]
fn ten_short_children_one_after_another_are_all_counted_with_their_exits() {
    if !root_or_skip("the kernel's process events need root") {
        return;
    }
    let (out, report) = run_with(&[], &["--", "sh", "-c", TEN_TRUES]);
    assert_eq!(out.status.code(), Some(0));
    if let Err(how) = followed_events(&report) {
        skip(format!(
            "exact counts not checked: the kernel's process events were not followed ({how})"
        ));
        return;
    }
    assert_eq!(processes(&report).len(), 11, "{:#}", report["processes"]);
    let trues: Vec<_> = processes(&report)
        .iter()
        .filter(|p| p["pid"] != report["pid"])
        .collect();
    assert_eq!(trues.len(), 10);
    for t in trues {
        assert_eq!(t["ppid"], report["pid"], "{t}");
        assert_eq!(t["outcome"]["exit_code"], 0, "{t}");
        let (start, end) = (
            t["started_seconds"].as_f64().unwrap(),
            t["ended_seconds"].as_f64().unwrap(),
        );
        assert!(0.0 <= start && start <= end && end < 5.0, "{t}");
        // Never sampled: its memory is unknown, not 0.
        if t["peak_rss"].is_null() {
            assert!(t["peak_pss"].is_null(), "{t}");
        }
    }
    assert!(
        !notes(&report).contains("may be missing"),
        "events need no caveat: {}",
        notes(&report)
    );
    let text = summary_with(&[], &["--", "sh", "-c", TEN_TRUES]);
    assert!(text.contains("processes  11 seen ("), "{text}");
}

#[test]
fn three_epochs_of_two_short_workers_show_six_workers() {
    if !root_or_skip("the kernel's process events need root") {
        return;
    }
    let (out, report) = run_with(&[], &["--", "python3", "-c", EPOCHS]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Err(how) = followed_events(&report) {
        skip(format!(
            "exact counts not checked: the kernel's process events were not followed ({how})"
        ));
        return;
    }
    let workers = children(&report, "python3");
    assert_eq!(workers.len(), 6, "{:#}", report["processes"]);
    assert!(workers.iter().all(|w| w["outcome"]["exit_code"] == 0));
    // Epochs one after another: each worker started after the one two before it ended.
    let starts: Vec<f64> = workers
        .iter()
        .map(|w| w["started_seconds"].as_f64().unwrap())
        .collect();
    let ends: Vec<f64> = workers
        .iter()
        .map(|w| w["ended_seconds"].as_f64().unwrap())
        .collect();
    for i in 2..6 {
        assert!(starts[i] >= ends[i - 2], "{starts:?} {ends:?}");
    }
}

#[test]
fn a_child_killed_between_samples_is_listed_with_its_signal() {
    if !root_or_skip("the kernel's process events need root") {
        return;
    }
    let (out, report) = run_with(&[], &["--", "sh", "-c", "sh -c 'kill -KILL $$'; exit 0"]);
    assert_eq!(out.status.code(), Some(0));
    if let Err(how) = followed_events(&report) {
        skip(format!(
            "exact counts not checked: the kernel's process events were not followed ({how})"
        ));
        return;
    }
    let job = &report["pid"];
    let killed: Vec<_> = processes(&report)
        .iter()
        .filter(|p| &p["ppid"] == job)
        .collect();
    assert_eq!(killed.len(), 1, "{:#}", report["processes"]);
    assert_eq!(killed[0]["outcome"]["signal"], 9);
}

#[test]
fn without_events_the_limit_cgroup_is_polled_and_the_summary_says_what_may_be_missed() {
    if !root_or_skip("--limit needs root to make a cgroup") {
        return;
    }
    // Children that outlive the 20 ms poll but not the 500 ms sample.
    let (out, report) = run_with(
        &[("MEMTRIAGE_NO_PROC_EVENTS", "1")],
        &[
            "--limit",
            "512M",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.15; done",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let tracking = &report["process_tracking"];
    assert_eq!(tracking["method"], "cgroup_procs", "{tracking}");
    assert_eq!(tracking["poll_ms"], 20);
    assert!(tracking["events_unavailable"]
        .as_str()
        .unwrap()
        .contains("MEMTRIAGE_NO_PROC_EVENTS"));
    assert_eq!(
        children(&report, "sleep").len(),
        10,
        "{:#}",
        report["processes"]
    );
    let said = notes(&report);
    assert!(
        said.contains("cgroup.procs every 20 ms") && said.contains("may be missing"),
        "{said}"
    );
}

#[test]
fn without_events_or_limit_the_walk_is_named_and_reaped_processes_still_count() {
    let (out, report) = run_with(
        &[("MEMTRIAGE_NO_PROC_EVENTS", "1")],
        &["--", "sh", "-c", TEN_TRUES],
    );
    assert_eq!(out.status.code(), Some(0));
    let tracking = &report["process_tracking"];
    assert_eq!(tracking["method"], "descendant_walk", "{tracking}");
    assert_eq!(tracking["poll_ms"], 500);
    // The job itself is reaped by memtriage, so it is never lost.
    assert!(
        processes(&report).iter().any(|p| p["pid"] == report["pid"]),
        "{:#}",
        report["processes"]
    );
    let said = notes(&report);
    assert!(
        said.contains("walking the job's tree at each sample every 500 ms")
            && said.contains("may be missing"),
        "{said}"
    );
    let text = summary_with(
        &[("MEMTRIAGE_NO_PROC_EVENTS", "1")],
        &["--", "sh", "-c", "exit 0"],
    );
    assert!(
        text.contains("note       processes were found by walking"),
        "{text}"
    );
}

/// Linux 6.6 and later let any user listen to process events (outside a
/// container's namespaces); older kernels need CAP_NET_ADMIN. Either way a user
/// gets every process, or is told why not.
#[test]
fn a_user_without_root_gets_every_process_or_is_told_why_not() {
    if !root_or_skip("needs root to become another user") {
        return;
    }
    let out = Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            BIN,
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            &format!("{TEN_TRUES}; exit 4"),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    if out.status.code() == Some(127) || out.status.code() == Some(126) {
        skip(format!("nobody cannot run {BIN}"));
        return;
    }
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = run_report(&out.stderr);
    let tracking = &report["process_tracking"];
    if tracking["method"] == "proc_events" {
        assert_eq!(processes(&report).len(), 11, "{:#}", report["processes"]);
    } else {
        assert_eq!(tracking["method"], "descendant_walk", "{tracking}");
        let why = tracking["events_unavailable"].as_str().unwrap();
        assert!(
            why.contains("CAP_NET_ADMIN") || why.contains("namespace"),
            "{why}"
        );
        assert!(notes(&report).contains("may be missing"));
    }
}
