//! Helpers shared by every CLI test module: the `memtriage` binary as a command, the
//! engine's captured fixtures, real processes built by `memtriage-testhelper`, a
//! terminal from util-linux `script`, and the checks a test makes before it runs
//! (root, a tool, a Python module, a condition that must come true), with [`skip`],
//! the one way a test skips: shared with the engine's tests, and a failure under CI
//! (the rule is in `crates/memtriage-core/src/tests/skip.rs`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

// Shared with the engine's tests.
#[path = "../../../../memtriage-core/src/tests/built.rs"]
mod built;
#[path = "../../../../memtriage-core/src/tests/roots.rs"]
mod roots;
#[path = "../../../../memtriage-core/src/tests/skip.rs"]
mod skip;
// The harness binary, which includes this module too, uses a part.
#[allow(unused_imports)]
pub use built::fake_nvml;
#[allow(unused_imports)]
pub use roots::{copy_tree, write};
#[allow(unused_imports)]
pub use skip::{skip, skip_by_chance};

pub const MIB: u64 = 1 << 20;

/// The path of the `memtriage` binary that cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_memtriage");

/// `memtriage` with the test's environment: colour is decided by the streams alone.
pub fn memtriage() -> Command {
    Command::new(BIN)
}

/// `memtriage` with `NO_COLOR=1`, for tests that read its text; `assert_cmd`'s command,
/// so a test can feed it standard input.
pub fn memtriage_no_color() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(BIN);
    c.env("NO_COLOR", "1");
    c
}

/// The engine's captured trees and logs (`crates/memtriage-core/tests/fixtures`).
pub fn core_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../memtriage-core/tests/fixtures")
}

/// Whether this test runs with an effective uid of 0: the privilege that making a
/// cgroup or dropping to another user needs.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
    })
}

/// Whether `python3` can import `module`.
pub fn python_can_import(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Polls `done` every `every` until it holds or `within` has passed; whether it held.
pub fn wait_until(within: Duration, every: Duration, mut done: impl FnMut() -> bool) -> bool {
    let began = Instant::now();
    loop {
        if done() {
            return true;
        }
        if began.elapsed() >= within {
            return false;
        }
        std::thread::sleep(every);
    }
}

/// Runs `sh -c LINE` under util-linux `script`, which gives it a terminal on stdin,
/// stdout and stderr; `None` where `script` is not on the PATH.
pub fn in_a_terminal(line: &str) -> Option<Output> {
    let script = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("script"))
        .find(|p| p.is_file())?;
    Some(
        Command::new(script)
            .args(["-qec", line, "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .expect("run script"),
    )
}

/// Runs memtriage and parses its JSON stdout; fails the test on a non-zero exit.
pub fn json(args: &[&str]) -> serde_json::Value {
    succeeded_json(
        memtriage().args(args).output().expect("run memtriage"),
        args,
    )
}

/// The JSON of a run that must have exited 0.
pub fn succeeded_json(out: Output, args: &[&str]) -> serde_json::Value {
    assert!(
        out.status.success(),
        "memtriage {args:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("memtriage printed JSON")
}

/// The helper's executable, brought up to date once per test run, for a job run
/// under `memtriage run`, where [`Helper`] cannot wait for its ready line.
pub fn helper_binary() -> PathBuf {
    built::built("memtriage-testhelper", "memtriage-testhelper")
}

/// A process tree built by the helper, killed when dropped.
pub struct Helper {
    child: Child,
    stdin: Option<ChildStdin>,
    pub pid: i32,
    pub children: Vec<i32>,
}

impl Helper {
    pub fn start(steps: &[&str]) -> Helper {
        let path = helper_binary();
        let mut child = Command::new(&path)
            .args(steps)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stdin = child.stdin.take();
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("helper stdout"))
            .read_line(&mut line)
            .expect("read helper's ready line");
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some("ready"), "helper said {line:?}");
        let pids: Vec<i32> = words.map(|w| w.parse().expect("pid")).collect();
        Helper {
            child,
            stdin,
            pid: pids[0],
            children: pids[1..].to_vec(),
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.wait();
    }
}

/// Asserts `value` lies in `[low, high]` bytes, printing MiB on failure.
pub fn assert_between(what: &str, value: u64, low: u64, high: u64) {
    assert!(
        (low..=high).contains(&value),
        "{what} = {:.1} MiB, expected between {:.1} and {:.1} MiB",
        value as f64 / MIB as f64,
        low as f64 / MIB as f64,
        high as f64 / MIB as f64
    );
}

pub fn u(v: &serde_json::Value, path: &str) -> u64 {
    let mut cur = v;
    for key in path.split('.') {
        cur = match key.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[key],
        };
    }
    cur.as_u64()
        .unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

/// The JSON report `memtriage run --json` prints last on stderr, after the job's own
/// output.
pub fn run_report(stderr: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stderr);
    let start = text
        .rfind("\n{\n")
        .map(|i| i + 1)
        .or_else(|| text.starts_with("{\n").then_some(0));
    start
        .and_then(|i| serde_json::from_str(&text[i..]).ok())
        .unwrap_or_else(|| panic!("no JSON report on stderr:\n{text}"))
}

/// The ids of a report's findings, in order.
pub fn finding_ids(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["id"].as_str().expect("id").to_string())
        .collect()
}

/// The report's finding with this id; the test fails, naming the ids there were, when
/// there is none.
pub fn finding<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no {id} finding in {:?}", finding_ids(report)))
}

/// Runs `memtriage run --json --interval 100ms ARGS…` with no stdin; its output and
/// the report it printed on stderr.
pub fn run_json(args: &[&str]) -> (Output, serde_json::Value) {
    let out = memtriage()
        .args(["run", "--json", "--interval", "100ms"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run memtriage");
    let report = run_report(&out.stderr);
    (out, report)
}

/// A scratch directory on the real disk (not tmpfs, whose pages are not a cache that
/// can be evicted), readable by other users for the tests that run as one.
pub fn disk_scratch() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("memtriage-test-")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The helper started under a shell, as a user starts a job (a process started by
/// the test itself would belong to the job `cargo test` is): its pids, the first the
/// helper's own; it ends when dropped.
pub struct ShellJob {
    shell: Child,
    pub pids: Vec<i32>,
}

impl ShellJob {
    pub fn start(steps: &str) -> ShellJob {
        let mut shell = Command::new("sh")
            .args(["-c", &format!("\"$0\" {steps}; true")])
            .arg(helper_binary())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start sh");
        let mut ready = String::new();
        BufReader::new(shell.stdout.take().expect("helper stdout"))
            .read_line(&mut ready)
            .expect("read helper's ready line");
        let pids: Vec<i32> = ready
            .split_whitespace()
            .skip(1)
            .filter_map(|p| p.parse().ok())
            .collect();
        assert!(!pids.is_empty(), "helper said {ready:?}");
        ShellJob { shell, pids }
    }

    pub fn pid(&self) -> i32 {
        self.pids[0]
    }
}

impl Drop for ShellJob {
    fn drop(&mut self) {
        drop(self.shell.stdin.take());
        let _ = self.shell.wait();
    }
}

/// `Command::output` that asserts the command succeeded, showing its stderr if not.
pub trait OutputOk {
    fn output_ok(&mut self) -> Output;
}

impl OutputOk for Command {
    fn output_ok(&mut self) -> Output {
        let out = self.output().expect("run the command");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// A memory cgroup with a hard limit and no swap, made for one test and removed after.
pub struct MemoryCgroup {
    pub dir: PathBuf,
    /// As the kernel names it (`task_memcg=`).
    pub path: String,
}

impl MemoryCgroup {
    pub fn new(name: &str, limit: u64) -> MemoryCgroup {
        let v2 = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"));
        let base = if v2 {
            "/sys/fs/cgroup"
        } else {
            "/sys/fs/cgroup/memory"
        };
        let dir = Path::new(base).join(name);
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir).expect("make a memory cgroup");
        if v2 {
            std::fs::write(dir.join("memory.max"), limit.to_string()).unwrap();
            let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        } else {
            std::fs::write(dir.join("memory.limit_in_bytes"), limit.to_string()).unwrap();
            let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), limit.to_string());
            let _ = std::fs::write(dir.join("memory.swappiness"), "0");
        }
        MemoryCgroup {
            dir,
            path: format!("/{name}"),
        }
    }

    /// Runs the test helper allocating `mib` MiB inside the cgroup, until it ends.
    pub fn run_helper(&self, mib: u64) -> std::process::ExitStatus {
        self.run_helper_steps(&format!("anon {mib}"))
    }

    /// Runs the test helper with `steps` inside the cgroup, below a shell (so it is
    /// a job of its own, `memtriage-testh[PID]`), until it ends.
    pub fn run_helper_steps(&self, steps: &str) -> std::process::ExitStatus {
        let script = format!(
            "echo $$ > {}/cgroup.procs && {} {steps}; exit $?",
            self.dir.display(),
            helper_binary().display()
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .unwrap()
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Whether a tool this test needs is on the PATH; where it is not, the test is
/// [`skip`]ped (a failure under CI, which installs it: .ci/run).
pub fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        skip(format!("{tool} is not installed (.ci/run installs it)"));
    }
    found
}

/// Whether this test runs as root; where not, the test is [`skip`]ped, saying `why`
/// it needs root (a failure under CI, which runs as root).
pub fn root_or_skip(why: &str) -> bool {
    let root = is_root();
    if !root {
        skip(why);
    }
    root
}

/// A tmpfs of `size` (`4m`) mounted on a temporary directory, unmounted when dropped:
/// a disk that fills. Needs root.
pub struct SmallTmpfs {
    pub dir: tempfile::TempDir,
}

impl SmallTmpfs {
    pub fn mount(size: &str) -> SmallTmpfs {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(mounted.success(), "mount -t tmpfs failed");
        SmallTmpfs { dir }
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Fills what is left with a file; returns it, to remove.
    pub fn fill(&self) -> std::path::PathBuf {
        let filler = self.dir.path().join("filler");
        let _ = Command::new("dd")
            .args(["if=/dev/zero", "bs=64k"])
            .arg(format!("of={}", filler.display()))
            .stderr(Stdio::null())
            .status();
        filler
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// `systemd-analyze verify` accepts the unit `text` (saved as `name`) without a word;
/// where systemd-analyze is not installed, says so (CI installs it).
pub fn systemd_verify(name: &str, text: &str) {
    if !have("systemd-analyze") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let unit = dir.path().join(name);
    std::fs::write(&unit, text).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.trim().is_empty(),
        "systemd-analyze verify {name}: {said}"
    );
}

/// memtriage run as `nobody` (the tests that need it are root, to switch).
pub fn as_nobody(args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    memtriage()
        .args(args)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap()
}

/// `memtriage record` every second into a database, its output dropped; started once
/// it has written, stopped (SIGTERM, then waited for) when dropped.
pub struct Recorder {
    child: std::process::Child,
}

impl Recorder {
    pub fn start(db: &std::path::Path) -> Recorder {
        let child = memtriage()
            .args(["record", "--interval", "1s", "--db"])
            .arg(db)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let recording = wait_until(Duration::from_secs(30), Duration::from_millis(100), || {
            db.exists()
        });
        assert!(recording, "the recorder wrote nothing in 30 s");
        Recorder { child }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // SAFETY: a signal to the recorder this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}
