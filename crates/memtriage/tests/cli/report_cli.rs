//! `memtriage report`: a recorded run read back, as text and as an HTML page.

use std::process::Stdio;

use crate::support::memtriage;
use crate::support::OutputOk;

fn record_run(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("run.jsonl");
    let status = memtriage()
        .args([
            "run",
            "--interval",
            "50ms",
            "--record",
            path.to_str().unwrap(),
            "--",
        ])
        .args([
            "python3",
            "-c",
            "import time; b = bytearray(48 << 20); time.sleep(0.4)",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    path
}

#[test]
fn html_report_is_one_self_contained_page_with_charts_and_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_run(dir.path());
    let html = dir.path().join("run.html");
    memtriage()
        .args([
            "report",
            rec.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ])
        .output_ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!doctype html>"));
    assert_eq!(
        page.matches("<svg class=\"chart\"").count(),
        2,
        "a memory chart and a fault chart"
    );
    assert!(page.contains("<polygon"), "stacked memory areas");
    assert!(page.contains("exited with code 0"));
    assert!(page.contains("No memory problem found."));
    for external in ["<script", "src=\"http", "href=\"http", "@import"] {
        assert!(!page.contains(external), "self-contained: found {external}");
    }
}

#[test]
fn text_report_repeats_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_run(dir.path());
    let out = memtriage()
        .args(["report", rec.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("exited with code 0"), "{text}");
    assert!(text.contains("peak RSS"), "{text}");
}

#[test]
fn a_recording_cut_short_still_draws_and_bad_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_run(dir.path());
    let text = std::fs::read_to_string(&rec).unwrap();
    let cut: String = text.lines().take(4).collect::<Vec<_>>().join("\n") + "\n{\"type\":\"sam";
    let cut_path = dir.path().join("cut.jsonl");
    std::fs::write(&cut_path, cut).unwrap();
    let out = memtriage()
        .args(["report", cut_path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("the file is truncated"),
        "cut mid-line: {said}"
    );
    // Cut between two lines: memtriage was stopped, the file is whole.
    let stopped: String = text.lines().take(4).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(&cut_path, stopped).unwrap();
    let out = memtriage()
        .args(["report", cut_path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("ends before the job did"));

    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "hello\n").unwrap();
    for (file, needle) in [
        (junk.to_str().unwrap(), "line 1"),
        ("/no/such/file", "cannot read"),
    ] {
        let out = memtriage().args(["report", file]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle) && err.contains(file), "{err}");
    }
}

#[test]
fn json_report_is_the_recorded_runs_final_report() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_run(dir.path());
    let out = memtriage()
        .args(["report", rec.to_str().unwrap(), "--json"])
        .output_ok();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "memtriage.run/v1");
    assert_eq!(v["outcome"]["exit_code"], 0);
    assert!(
        v["peak_tree_rss"]["bytes"].as_u64().unwrap() >= 48 << 20,
        "{v}"
    );
    // The same report the recording's last line holds.
    let text = std::fs::read_to_string(&rec).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(v, last["report"]);

    // A recording cut short has no final report to print: a clear error, not `null`.
    let cut: String = text.lines().take(4).collect::<Vec<_>>().join("\n") + "\n";
    let cut_path = dir.path().join("cut.jsonl");
    std::fs::write(&cut_path, cut).unwrap();
    let out = memtriage()
        .args(["report", cut_path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no final report"), "{err}");
}

/// Regression: the recording's final report was written before the diagnosis, so
/// `report` of a job that crashed showed no finding at all.
#[test]
fn a_recorded_crash_is_reported_with_its_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.jsonl");
    let run = memtriage()
        .args(["run", "--json", "--record", path.to_str().unwrap(), "--"])
        .args([
            "python3",
            "-c",
            "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(139), "128 + SIGSEGV");
    // The job's own faulthandler text comes first on stderr, then the report.
    let stderr = String::from_utf8_lossy(&run.stderr);
    let start = stderr.find("\n{\n").map_or(0, |i| i + 1);
    let live: serde_json::Value = serde_json::from_str(&stderr[start..]).unwrap();
    let ids = |report: &serde_json::Value| -> Vec<String> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(ids(&live).contains(&"run.segfault".to_string()), "{live}");

    let out = memtriage()
        .args(["report", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let recorded: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        ids(&recorded),
        ids(&live),
        "the recording keeps the diagnosis"
    );

    let text = memtriage()
        .args(["report", path.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("segmentation fault"), "{text}");
}

/// A job that keeps 4 MiB more every step at line 4, whose source text needs escaping.
/// It sleeps on the same line: where the kernel refuses the fault counter, lines are
/// charged by where the thread is when measured.
const LEAK: &str = "\
import time
kept = []
for i in range(80):
    kept.append(bytearray(4 << 20)); time.sleep(0.02)  # a <leak> & \"more\"
print(len(kept))
";

/// A real run of `LEAK` (a script: `python3 -c` code has no source text to show),
/// recorded; the recording's path.
fn record_leak(dir: &std::path::Path) -> std::path::PathBuf {
    let script = dir.join("leak.py");
    std::fs::write(&script, LEAK).unwrap();
    let path = dir.join("leak.jsonl");
    let status = memtriage()
        .args(["run", "--interval", "50ms", "--record"])
        .arg(&path)
        .args(["--", "python3"])
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    path
}

#[test]
fn html_report_shows_where_the_memory_went_with_the_leaking_line_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_leak(dir.path());
    let html = dir.path().join("leak.html");
    memtriage()
        .args(["report", rec.to_str().unwrap(), "--html"])
        .arg(&html)
        .output_ok();
    let page = std::fs::read_to_string(&html).unwrap();
    let section = page
        .split("<h2>Where the memory went</h2>")
        .nth(1)
        .unwrap_or_else(|| panic!("no section: {page}"));
    let section = section.split("<h2>").next().unwrap();
    // The first line shown, the weightiest, is the planted one, told a leak.
    let first = section
        .split("<tr><td class=\"at\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no line: {section}"));
    let first = first.split("</tr>").next().unwrap();
    assert!(
        first.contains(">leak.py:4</code> in <code>&lt;module&gt;</code>"),
        "{first}"
    );
    assert!(first.contains("<td class=\"kind leak\""), "{first}");
    assert!(
        first.contains(
            "<code class=\"src\">kept.append(bytearray(4 &lt;&lt; 20)); time.sleep(0.02)  \
             # a &lt;leak&gt; &amp; &quot;more&quot;</code>"
        ),
        "{first}"
    );
    assert!(first.contains("<svg class=\"held\""), "its chart: {first}");
    assert!(!page.contains("<leak>"), "the job's text is escaped");
    // Kept: at least 200 of the 320 MiB it took (the rest may be after the last write).
    let anon = first.split("</td><td>").nth(1).unwrap();
    let kept = anon.split(" / ").next().unwrap();
    assert!(kept.ends_with(" MiB"), "{anon}");
    let mib: f64 = kept.trim_end_matches(" MiB").parse().unwrap();
    assert!((200.0..=330.0).contains(&mib), "kept {kept}");
}

#[test]
fn text_report_names_the_leaking_line_as_run_did() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_leak(dir.path());
    let out = memtriage()
        .args(["report", rec.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output_ok();
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  lines      "))
        .collect();
    let first = rows
        .first()
        .unwrap_or_else(|| panic!("no lines row: {text}"));
    assert!(first.contains("leak.py:4 in <module>"), "{first}");
    assert!(first.contains("leak, kept "), "{first}");
    // Its source text, cut at 60 characters (the page has it whole).
    assert!(
        first.ends_with("`kept.append(bytearray(4 << 20)); time.sleep(0.02)  # a <leak…`"),
        "{first}"
    );
    assert!(rows.len() <= 3, "one process, at most 3 lines: {rows:#?}");
    // The rows are the summary's, before the blank line and the verdict.
    let summary = text.trim_start().split("\n\n").next().unwrap();
    assert!(summary.starts_with("memtriage: python3 "), "{text}");
    assert!(summary.contains(first), "{text}");
}
