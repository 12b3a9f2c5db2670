//! `memtriage run` on a machine with a userspace OOM killer: a real earlyoom (Debian's,
//! started here with a floor a few GiB under what the machine has free) and a job that
//! grows toward it. The warning names earlyoom and whom it will pick before it acts;
//! the verdict names earlyoom, its threshold and its own log line; the job's status
//! (143) passes through.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::{finding, have, helper_binary, memtriage, run_report, wait_until};

/// The helper under a name of its own, so this earlyoom prefers this test's processes
/// and no other test's (`--prefer '^eoom-job$'`).
fn job_binary(dir: &Path) -> PathBuf {
    let path = dir.join("eoom-job");
    std::fs::copy(helper_binary(), &path).unwrap();
    path
}

fn meminfo(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = text.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        << 10
}

/// One earlyoom at a time: two would each see the other's test's memory.
static ONE_EARLYOOM: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// earlyoom, stopped when dropped; the tests that start one run one after another.
struct Earlyoom {
    child: Child,
    log: PathBuf,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Earlyoom {
    /// Sends SIGTERM when MemAvailable falls `room` under what it is now.
    fn start(dir: &Path, room: u64) -> Earlyoom {
        let turn = ONE_EARLYOOM.lock().unwrap_or_else(|e| e.into_inner());
        let total = meminfo("MemTotal:");
        let floor = meminfo("MemAvailable:") - room;
        let percent = format!("{:.2}", floor as f64 * 100.0 / total as f64);
        let log = dir.join("earlyoom.log");
        let child = Command::new("earlyoom")
            .args([
                "-m",
                &percent,
                "-s",
                "100",
                "-r",
                "0",
                "--prefer",
                "^eoom-job$",
            ])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::from(
                std::fs::OpenOptions::new().append(true).open(&log).unwrap(),
            ))
            .spawn()
            .unwrap();
        let started = wait_until(Duration::from_secs(10), Duration::from_millis(20), || {
            std::fs::read_to_string(&log).is_ok_and(|t| t.contains("sending SIGTERM when"))
        });
        assert!(
            started,
            "earlyoom did not start: {:?}",
            std::fs::read_to_string(&log)
        );
        Earlyoom {
            child,
            log,
            _turn: turn,
        }
    }
}

impl Drop for Earlyoom {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn earlyoom_is_named_before_it_acts_and_after_with_whom_it_picks() {
    if !have("earlyoom") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = job_binary(dir.path());
    let earlyoom = Earlyoom::start(dir.path(), 3 << 30);

    // The victim earlyoom picks first: a small job offered with --oom-score-adj 1000.
    let mut offered = memtriage()
        .args(["run", "--json", "--oom-score-adj", "1000", "--"])
        .arg(&job)
        .args(["anon", "16"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(offered.stdout.as_mut().unwrap())
        .read_line(&mut ready)
        .unwrap();
    let offered_pid: i32 = ready.split_whitespace().nth(1).unwrap().parse().unwrap();

    // The job that grows 200 MiB/s toward earlyoom's floor 3 GiB away: ~15 s.
    let grower = memtriage()
        .args(["run", "--json", "--"])
        .arg(&job)
        .args(["grow", "200", "60"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let offered = offered.wait_with_output().unwrap();
    let log = std::fs::read_to_string(&earlyoom.log).unwrap();
    drop(earlyoom);

    // The offered job: earlyoom's first victim, and its status passed through.
    let first = run_report(&offered.stderr);
    assert_eq!(offered.status.code(), Some(143), "{first}\n{log}");
    let f = finding(&first, "run.userspace-oom-kill");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("SIGTERM from earlyoom (pid "),
        "{f}"
    );

    // The grower: warned first, naming earlyoom and the offered job as its victim.
    let report = run_report(&grower.stderr);
    assert_eq!(grower.status.code(), Some(143), "{report}\n{log}");
    let warning = &report["growth"]["warning"];
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.contains("earlyoom (pid ") && message.contains("will send SIGTERM to"),
        "{message}"
    );
    assert!(
        message.contains(&format!("pid {offered_pid}, not this job")),
        "predicted the offered job, pid {offered_pid}: {message}\n{log}"
    );
    assert!(
        message.contains("the kernel's OOM killer would act at ~"),
        "{message}"
    );
    let warned_at = warning["at_seconds"].as_f64().unwrap();
    let ended_at = report["wall_seconds"].as_f64().unwrap();
    assert!(
        warned_at + 1.0 <= ended_at,
        "warned at {warned_at:.1} s, killed at {ended_at:.1} s"
    );
    assert_eq!(report["growth"]["ceiling"]["source"], "killer", "{report}");

    // The verdict: earlyoom, its threshold, its own line, and whom else it signalled.
    let f = finding(&report, "run.userspace-oom-kill");
    let evidence = f["evidence"].to_string();
    assert_eq!(f["certainty"], "confirmed", "{f}");
    assert!(evidence.contains("MemAvailable falls under"), "{evidence}");
    assert!(
        evidence.contains(&format!("sending SIGTERM to process {}", report["pid"])),
        "{evidence}"
    );
    assert!(
        evidence.contains(&format!("eoom-job (pid {offered_pid})")),
        "also signalled: {evidence}"
    );
    assert!(
        !report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == "run.terminated"),
        "not a request to stop: {report}"
    );
}

#[test]
fn inspect_tree_and_top_list_the_killers_first_to_act_first() {
    if !have("earlyoom") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A floor 6 GiB under MemAvailable: earlyoom acts long before the kernel would.
    let earlyoom = Earlyoom::start(dir.path(), 6 << 30);
    let me = std::process::id().to_string();
    let out = memtriage()
        .args(["inspect", "--tree", "--json", &me])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let killers = report["trees"][0]["killers"].as_array().unwrap();
    assert_eq!(killers[0]["killer"]["kind"], "earlyoom", "{killers:?}");
    assert_eq!(
        killers[0]["killer"]["pid"].as_u64(),
        Some(u64::from(earlyoom.child.id())),
        "{killers:?}"
    );
    let room = killers[0]["room"].as_u64().unwrap() as f64 / (1u64 << 30) as f64;
    assert!(
        (4.0..=7.0).contains(&room),
        "{room:.2} GiB before earlyoom acts, set 6"
    );
    assert!(
        killers.iter().any(|k| k["killer"]["kind"] == "kernel"),
        "the kernel's is always there: {killers:?}"
    );
    let text = memtriage()
        .args(["inspect", "--tree", &me])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("killers earlyoom (pid ") && l.contains("from now")),
        "{text}"
    );

    // `top`'s header: the first to act, and whom it would pick.
    let out = memtriage()
        .args(["top", "--once", "--json", "--interval", "300ms"])
        .output()
        .unwrap();
    let frame: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &frame["header"]["killers"]["reach"][0];
    assert_eq!(first["killer"]["kind"], "earlyoom", "{frame:#}");
    let room = first["room"].as_u64().unwrap() as f64 / (1u64 << 30) as f64;
    assert!((4.0..=7.0).contains(&room), "{room:.2} GiB in top, set 6");
    assert!(
        frame["header"]["killers"]["first_victim"]["pid"].is_i64(),
        "earlyoom picks by oom_score: {frame:#}"
    );
    let text = memtriage()
        .args(["top", "--once", "--interval", "300ms"])
        .env("COLUMNS", "160")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("earlyoom acts after ")
            && l.contains(" acts after ")
            && l.contains(", picks ")),
        "{text}"
    );
    drop(earlyoom);
}

/// A job nobody supervised, killed by earlyoom while `memtriage record` ran (told
/// nothing of earlyoom): `why` names earlyoom, its threshold and the machine then.
#[test]
fn why_names_earlyoom_for_a_job_the_recorder_saw_it_kill() {
    if !have("earlyoom") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = job_binary(dir.path());
    let earlyoom = Earlyoom::start(dir.path(), 3 << 30);
    let db = dir.path().join("history.db");
    let recorder = crate::support::Recorder::start(&db);
    // 200 MiB/s toward earlyoom's floor 3 GiB away.
    let mut grower = Command::new(&job)
        .args(["grow", "200", "60"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = grower.id().to_string();
    let status = grower.wait().unwrap();
    let log = std::fs::read_to_string(&earlyoom.log).unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{log}");
    let mut report = serde_json::Value::Null;
    let explained = wait_until(Duration::from_secs(30), Duration::from_millis(500), || {
        let out = memtriage()
            .args(["why", &pid, "--json", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        report = serde_json::from_slice(&out.stdout).unwrap_or_default();
        report["death"]["pid"].is_i64()
    });
    drop(recorder);
    drop(earlyoom);
    assert!(
        explained,
        "no death of pid {pid} recorded: {report:#}
{log}"
    );
    assert_eq!(report["death"]["signal"], "SIGTERM", "{report:#}");
    assert_eq!(report["death"]["killer"], "earlyoom", "{report:#}");
    let f = &report["findings"][0];
    assert_eq!(f["id"], "run.userspace-oom-kill", "{report:#}");
    assert_eq!(f["certainty"], "confirmed", "{f:#}");
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains("MemAvailable falls under") && evidence.contains("earlyoom acts under"),
        "its threshold and the machine against it: {evidence}"
    );
}

/// tracefs where it is not mounted yet (a machine without systemd): the test needs it.
fn tracefs_mounted() -> bool {
    let mounted = || std::path::Path::new("/sys/kernel/tracing/instances").is_dir();
    if !mounted() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .status();
    }
    mounted()
}

#[test]
fn trace_signals_names_who_sent_the_sigterm() {
    if !crate::support::root_or_skip("a tracefs instance needs root") {
        return;
    }
    assert!(tracefs_mounted(), "tracefs could not be mounted");
    let mut run = memtriage()
        .args([
            "run",
            "--trace-signals",
            "--json",
            "--",
            "sh",
            "-c",
            "echo $$; exec sleep 30",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(run.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let job: i32 = line.trim().parse().unwrap();
    let mut kill = Command::new("kill")
        .args(["-TERM", &job.to_string()])
        .spawn()
        .unwrap();
    let sender = kill.id();
    assert!(kill.wait().unwrap().success());
    let out = run.wait_with_output().unwrap();
    let report = run_report(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{report}");
    let f = finding(&report, "run.terminated");
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains(&format!("kill (pid {sender})")),
        "the sender, pid {sender}: {evidence}"
    );
    let sent = &report["signals_sent"][0];
    assert_eq!(
        (sent["signal"].as_i64(), sent["target_pid"].as_i64()),
        (Some(15), Some(job as i64))
    );
    // The run's tracing instance is gone.
    let left: Vec<_> = std::fs::read_dir("/sys/kernel/tracing/instances")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("memtriage-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A Ray task that keeps 256 MiB every quarter second until Ray's memory monitor
/// kills its worker.
const RAY_GROWER: &str = r#"
import time
import ray

ray.init(num_cpus=1, include_dashboard=False)

@ray.remote(max_retries=0)
def grow():
    hoard = []
    while True:
        block = bytearray(256 << 20)
        memoryview(block)[::4096] = b"\x01" * (len(block) // 4096)
        hoard.append(block)
        time.sleep(0.25)

ray.get(grow.remote())
"#;

/// Ray's memory monitor comes with the job (`ray.init()` starts the raylet inside
/// it): found as it appears, with its threshold from the raylet's environment; the
/// warning names it before it acts, and the worker's SIGKILL is its.
#[test]
fn rays_memory_monitor_started_by_the_job_is_named_before_it_acts_and_after() {
    if !crate::support::python_can_import("ray") {
        crate::support::skip("Ray is not installed for python3 (pip install ray)");
        return;
    }
    // The killers of this test alone: no earlyoom of another test beside it.
    let _turn = ONE_EARLYOOM.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("grow.py");
    std::fs::write(&script, RAY_GROWER).unwrap();
    // Ray's threshold 3 GiB under what is available now.
    let total = meminfo("MemTotal:") as f64;
    let share = 1.0 - (meminfo("MemAvailable:") - (3 << 30)) as f64 / total;
    // As Ray's settings are shown: the number itself, no trailing zeros ("0.21").
    let threshold = format!("{}", (share * 1000.0).round() / 1000.0);
    let out = memtriage()
        .args(["run", "--json", "--", "python3"])
        .arg(&script)
        .env("RAY_memory_usage_threshold", &threshold)
        .env("RAY_memory_monitor_refresh_ms", "250")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = run_report(&out.stderr);
    assert_ne!(
        out.status.code(),
        Some(0),
        "the task was to be killed: {report}"
    );
    let ray = report["killers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "ray")
        .unwrap_or_else(|| panic!("the raylet the job started: {}", report["killers"]));
    assert!(
        ray["settings"]
            .as_str()
            .unwrap()
            .contains(&format!("RAY_memory_usage_threshold={threshold}")),
        "{ray}"
    );
    let message = report["growth"]["warning"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(message.contains("Ray's memory monitor"), "{message}");
    let f = finding(&report, "run.userspace-oom-kill");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("SIGKILL from Ray's memory monitor (pid "),
        "{f}"
    );
    // Ray's own words name the worker it chose (the driver prints them), so the kill
    // is confirmed whatever the sampled low point shows, and the victim is that worker,
    // not a helper Ray's shutdown SIGKILLed beside it.
    assert_eq!(f["certainty"], "confirmed", "{f}");
    assert!(title.contains("(ray::grow)"), "{title}");
}
