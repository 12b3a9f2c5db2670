//! `memtriage report --html` checked as people see it: the page of a real recorded
//! OOM kill, laid out by a real headless browser (Debian's `chromium`), and what is
//! on screen measured there: the charts have their size, every event marker lies
//! inside its chart and on the time axis the two charts share, no two labels cover
//! each other, the findings are visible, and nothing logs an error or is fetched.
//!
//! `MEMTRIAGE_BLESS_SCREENSHOT=1` also writes the page's screenshot to
//! `docs/run-report.png`, the picture the README shows.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{memtriage, root_or_skip, skip, wait_until, OutputOk};

/// A job that starts a short-lived helper (its death is an event), then grows 8 MiB
/// every 50 ms until the kernel kills it at the limit.
const JOB: &str = "\
import subprocess, time
subprocess.Popen(['sh', '-c', 'sleep 0.3 &'])
chunks = []
for _ in range(64):
    chunks.append(bytearray(8 << 20))
    time.sleep(0.05)
print('survived')
";

/// Measures the laid-out page and writes the verdict as JSON into the DOM, where
/// `--dump-dom` reads it back. Errors are caught from the first moment by `TRAP`.
const TRAP: &str = r#"<script>window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || (e.target && (e.target.src || e.target.href)) || e.type)), true);
window.addEventListener('unhandledrejection', e => window.__errors.push(String(e.reason)));
</script>"#;
const PROBE: &str = r#"<script>(function () {
  const box = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height});
  const verdict = {errors: window.__errors, charts: [], findings: [], resources: performance.getEntriesByType('resource').map(e => e.name)};
  for (const svg of document.querySelectorAll('svg.chart')) {
    const chart = {name: svg.dataset.chart, box: box(svg.getBoundingClientRect()), plot: box(svg.querySelector('rect.plot').getBoundingClientRect()), markers: [], xticks: []};
    for (const g of svg.querySelectorAll('g.marker')) {
      const text = g.querySelector('text');
      chart.markers.push({kind: g.dataset.kind, t: Number(g.dataset.t), box: box(g.getBoundingClientRect()), line: box(g.querySelector('line').getBoundingClientRect()), label: text ? text.textContent : null, label_box: text ? box(text.getBoundingClientRect()) : null});
    }
    for (const t of svg.querySelectorAll('text.xtick')) {
      const r = t.getBoundingClientRect();
      chart.xticks.push({t: Number(t.dataset.t), x: (r.left + r.right) / 2, label: t.textContent});
    }
    verdict.charts.push(chart);
  }
  for (const f of document.querySelectorAll('.finding h3')) {
    const style = getComputedStyle(f);
    verdict.findings.push({text: f.textContent, box: box(f.getBoundingClientRect()), shown: style.visibility === 'visible' && style.display !== 'none' && Number(style.opacity) > 0});
  }
  verdict.page_width = document.documentElement.scrollWidth;
  const out = document.createElement('pre');
  out.id = 'memtriage-verdict';
  out.textContent = JSON.stringify(verdict);
  document.body.appendChild(out);
})();</script>"#;

/// Where Debian's (or another) Chromium is, if installed.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MEMTRIAGE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Runs headless Chromium on `page` with `args`, at the README's window size; its
/// stdout and stderr. Fails the test when it hangs.
fn browse(browser: &Path, profile: &Path, args: &[&str], page: &Path) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,1600",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", browser.display()));
    let finished = wait_until(Duration::from_secs(90), Duration::from_millis(100), || {
        child.try_wait().unwrap().is_some()
    });
    if !finished {
        let _ = child.kill();
        let _ = child.wait();
        panic!("chromium did not finish in 90 s");
    }
    (
        std::fs::read_to_string(out_path).unwrap(),
        std::fs::read_to_string(err_path).unwrap(),
    )
}

/// The verdict the probe left in the dumped DOM.
fn verdict_in(dom: &str, stderr: &str) -> serde_json::Value {
    let start = dom
        .find("<pre id=\"memtriage-verdict\">")
        .unwrap_or_else(|| panic!("the probe did not run; chromium said:\n{stderr}\n{dom}"));
    let rest = &dom[start..];
    let text = &rest[rest.find('>').unwrap() + 1..rest.find("</pre>").unwrap()];
    let json = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

fn f(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// Whether `inner` lies within `outer`, with half a pixel for rounding.
fn inside(inner: &serde_json::Value, outer: &serde_json::Value) -> bool {
    f(inner, "left") >= f(outer, "left") - 0.5
        && f(inner, "right") <= f(outer, "right") + 0.5
        && f(inner, "top") >= f(outer, "top") - 0.5
        && f(inner, "bottom") <= f(outer, "bottom") + 0.5
}

fn overlap(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    f(a, "left") < f(b, "right") - 0.5
        && f(b, "left") < f(a, "right") - 0.5
        && f(a, "top") < f(b, "bottom") - 0.5
        && f(b, "top") < f(a, "bottom") - 0.5
}

/// Records the OOM-killed job in `dir` and draws its page; the page's path.
fn recorded_oom_page(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("grow.py"), JOB).unwrap();
    let status = memtriage()
        .current_dir(dir)
        .args([
            "run",
            "--interval",
            "100ms",
            "--limit",
            "96M",
            "--record",
            "run.jsonl",
            "--",
            "python3",
            "grow.py",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(137),
        "the job is OOM-killed at its limit"
    );
    memtriage()
        .current_dir(dir)
        .args(["report", "run.jsonl", "--html", "run.html"])
        .output_ok();
    dir.join("run.html")
}

/// Chromium, or `None` (the test skips) where it is missing outside CI; CI must check
/// the page in a real browser, and fails without one (.ci/run installs Debian's).
fn browser_or_skip() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        skip("no chromium on the PATH (apt-get install chromium)");
    }
    found
}

/// Lays `page` out in the browser and checks what any page must show: no console
/// error, nothing fetched, no sideways scrolling, both charts at their size on one
/// time axis, every marker inside its chart and on that axis, no two labels on top
/// of each other. The probe's verdict, for the caller's own checks.
fn laid_out(browser: &Path, profile: &Path, page: &Path, dir: &Path) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();

    // The probe goes into a copy: the page itself stays script-free.
    let probed = dir.join("probed.html");
    let with_probe = html
        .replacen("<head>", &format!("<head>{TRAP}"), 1)
        .replacen("</body>", &format!("{PROBE}</body>"), 1);
    assert_ne!(with_probe, html, "the page has a head and a body to probe");
    std::fs::write(&probed, with_probe).unwrap();
    let (dom, stderr) = browse(browser, profile, &["--dump-dom"], &probed);
    let v = verdict_in(&dom, &stderr);

    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert_eq!(v["errors"], serde_json::json!([]), "errors on the page");
    assert_eq!(
        v["resources"],
        serde_json::json!([]),
        "the page fetched something: it must be self-contained"
    );
    assert!(
        f(&v, "page_width") <= 1200.0,
        "the page scrolls sideways: {v}"
    );

    let charts = v["charts"].as_array().unwrap();
    let names: Vec<&str> = charts.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["memory", "faults"]);
    for c in charts {
        let (b, plot) = (&c["box"], &c["plot"]);
        assert!(
            f(b, "width") > 600.0 && f(b, "height") > 200.0,
            "{} chart drawn at {b}",
            c["name"]
        );
        assert!(inside(plot, b), "{} plot outside its svg", c["name"]);
        let markers = c["markers"].as_array().unwrap();
        assert!(!markers.is_empty(), "{} chart has no markers", c["name"]);
        for m in markers {
            assert!(
                inside(&m["box"], b),
                "{} marker {} at {} lies outside its chart {b}",
                c["name"],
                m["kind"],
                m["box"]
            );
            let x = f(&m["line"], "left");
            assert!(
                x >= f(plot, "left") - 0.5 && x <= f(plot, "right") + 0.5,
                "{} marker {} at x {x} is off the time axis {plot}",
                c["name"],
                m["kind"]
            );
        }
        let labels: Vec<&serde_json::Value> = markers
            .iter()
            .filter(|m| !m["label_box"].is_null())
            .map(|m| &m["label_box"])
            .collect();
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                assert!(!overlap(a, b), "labels cover each other: {a} {b}");
            }
        }
    }

    // One time axis: each tick at the same x in both charts, the same ticks.
    let ticks = |c: &serde_json::Value| -> Vec<(f64, f64, String)> {
        c["xticks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (f(t, "t"), f(t, "x"), t["label"].as_str().unwrap().into()))
            .collect()
    };
    let (a, b) = (ticks(&charts[0]), ticks(&charts[1]));
    assert!(a.len() >= 3, "{a:?}");
    assert_eq!(a.len(), b.len());
    for (ta, tb) in a.iter().zip(&b) {
        assert_eq!((ta.0, &ta.2), (tb.0, &tb.2));
        assert!(
            (ta.1 - tb.1).abs() < 0.5,
            "tick {} at {} and {}",
            ta.2,
            ta.1,
            tb.1
        );
    }
    v
}

#[test]
fn html_page_of_an_oom_kill_is_laid_out_whole_in_a_real_browser() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    if !root_or_skip("--limit needs root to make a cgroup") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = recorded_oom_page(dir.path());
    let profile = dir.path().join("chromium-profile");
    let v = laid_out(&browser, &profile, &page, dir.path());
    let charts = v["charts"].as_array().unwrap();

    // The story at a glance: the helper's death and the OOM kill, labelled.
    let memory = &charts[0];
    let labelled: Vec<(&str, &str)> = memory["markers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| Some((m["kind"].as_str()?, m["label"].as_str()?)))
        .collect();
    assert!(
        labelled
            .iter()
            .any(|(k, l)| *k == "oom-kill" && l.contains("the kernel OOM-killed pid")),
        "{labelled:?}"
    );
    assert!(
        labelled
            .iter()
            .any(|(k, l)| *k == "exit" && l.contains("exited with code 0")),
        "the helper's death: {labelled:?}"
    );

    let findings = v["findings"].as_array().unwrap();
    let oom = findings
        .iter()
        .find(|x| x["text"].as_str().unwrap().contains("out of memory"))
        .unwrap_or_else(|| panic!("no OOM finding on the page: {findings:?}"));
    assert_eq!(oom["shown"], true);
    assert!(f(&oom["box"], "width") > 100.0 && f(&oom["box"], "height") > 5.0);
    assert!(f(&oom["box"], "right") <= 1200.0);

    if std::env::var_os("MEMTRIAGE_BLESS_SCREENSHOT").is_some() {
        let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/run-report.png");
        std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
        let arg = format!("--screenshot={}", shot.display());
        let (_, stderr) = browse(&browser, &profile, &[&arg], &page);
        assert!(shot.is_file(), "no screenshot written: {stderr}");
    }
}

/// A recording of a DataLoader-like job written by hand: eight workers ending within
/// a few milliseconds, the early warning, a failure line, an OOM-kill event and one
/// event kind this page has never heard of, most of them within a second.
fn crowded_recording() -> String {
    let mut lines = vec![
        r#"{"type":"header","schema":"memtriage.record/v1","command":["python3","train.py"],"interval_ms":500,"limit":null,"started_unix_ms":1}"#.to_string(),
        r#"{"type":"event","t":0.0,"event":"start","pid":100}"#.to_string(),
    ];
    for i in 0..=20 {
        let t = i as f64 * 0.5;
        let rss = (100 + i * 40) << 20;
        let pss = if i == 7 {
            "null".to_string()
        } else {
            (rss - (8 << 20)).to_string()
        };
        lines.push(format!(
            r#"{{"type":"sample","t":{t},"processes":[{{"pid":100,"ppid":1,"comm":"python3","rss":{rss},"minflt":0,"majflt":0}}],"tree_rss":{rss},"tree_pss":{pss},"shm_used":0,"swap_used":0,"cgroup_usage":null,"minor_faults_per_second":{},"major_faults_per_second":{}}}"#,
            31272.0 + i as f64 * 17.0,
            i as f64 * 3.0
        ));
    }
    for w in 0..8 {
        lines.push(format!(
            r#"{{"type":"event","t":{},"event":"exit","pid":{},"outcome":{{"exit_code":0,"signal":null,"core_dumped":false}}}}"#,
            2.0 + w as f64 * 0.003,
            200 + w
        ));
    }
    lines.extend([
        r#"{"type":"event","t":2.01,"event":"exit","pid":300,"outcome":{"exit_code":null,"signal":9,"core_dumped":false}}"#.to_string(),
        r#"{"type":"event","t":8.9,"event":"warning","pid":100,"label":"pid 100 and 3 workers grow 1.1 GiB/min; the 1.0 GiB limit is reached in ~1 min"}"#.to_string(),
        r#"{"type":"event","t":9.1,"event":"failure-line","pid":100,"label":"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"}"#.to_string(),
        r#"{"type":"event","t":9.2,"event":"gpu-reset","pid":100}"#.to_string(),
        r#"{"type":"event","t":9.95,"event":"oom-kill","pid":100,"label":"the kernel killed pid 100 (python3): out of memory"}"#.to_string(),
        r#"{"type":"event","t":10.0,"event":"exit","pid":100,"outcome":{"exit_code":null,"signal":9,"core_dumped":false}}"#.to_string(),
    ]);
    lines.join("\n") + "\n"
}

#[test]
fn crowded_events_keep_their_labels_apart_and_inside_the_chart_in_a_real_browser() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.jsonl"), crowded_recording()).unwrap();
    memtriage()
        .current_dir(dir.path())
        .args(["report", "run.jsonl", "--html", "run.html"])
        .output_ok();
    let profile = dir.path().join("chromium-profile");
    let v = laid_out(&browser, &profile, &dir.path().join("run.html"), dir.path());
    let labels: Vec<String> = v["charts"][0]["markers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["label"].as_str().map(str::to_string))
        .collect();
    for expected in [
        "8 processes exited with code 0",
        "pid 300 killed by signal 9 (SIGKILL)",
        "limit is reached in ~1 min",
        "CUDA out of memory",
        "gpu-reset pid 100 (python3)",
        "the kernel killed pid 100 (python3): out of memory",
        "pid 100 (python3) killed by signal 9 (SIGKILL)",
    ] {
        assert!(
            labels.iter().any(|l| l.contains(expected)),
            "no label with {expected:?} in {labels:#?}"
        );
    }
}
