//! `memtriage top` in a real terminal: tmux runs it, keys go in with send-keys, the
//! screen comes back with capture-pane. A job the test started must appear where its
//! sort puts it, fold with its workers in tree mode, survive a filter, and quitting
//! (or SIGTERM) must leave the terminal as it was.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::{have, wait_until, ShellJob};

fn memtriage_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_memtriage"))
}

/// A detached tmux session running one shell command, on a tmux server of its own,
/// killed when dropped.
///
/// Its own server (a socket in a directory of its own, removed with it): on one shared
/// server the tests, running in parallel, raced (one test's kill-session ended the
/// server while another's new-session was connecting to it, which tmux answers with
/// "server exited unexpectedly").
struct Tmux {
    name: String,
    socket_dir: tempfile::TempDir,
}

impl Tmux {
    fn start(command: &str, width: u16, height: u16) -> Tmux {
        let name = format!("memtriage-top-{}-{}", std::process::id(), rand_suffix());
        let socket_dir = tempfile::tempdir().unwrap();
        let tmux = Tmux { name, socket_dir };
        let out = tmux
            .tmux()
            .args(["new-session", "-d", "-s", &tmux.name])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .arg(command)
            .env("TERM", "xterm-256color")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    /// A tmux command addressed to this session's own server.
    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(self.socket_dir.path().join("socket"));
        command
    }

    fn keys(&self, keys: &[&str]) {
        self.tmux()
            .args(["send-keys", "-t", &self.name])
            .args(keys)
            .status()
            .unwrap();
    }

    fn screen(&self) -> String {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (10 s at most) for the screen to satisfy `done`; the last screen.
    fn wait(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        self.wait_for(Duration::from_secs(10), what, done)
    }

    /// Waits (`most` at most) for the screen to satisfy `done`; the last screen.
    fn wait_for(&self, most: Duration, what: &str, done: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let ok = wait_until(most, Duration::from_millis(200), || {
            last = self.screen();
            done(&last)
        });
        assert!(ok, "{what}; the screen was:\n{last}");
        last
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

/// The pid column of each process line below the table's header.
fn row_pids(screen: &str) -> Vec<i32> {
    screen
        .lines()
        .skip_while(|l| !l.starts_with("PID"))
        .skip(1)
        .filter_map(|l| {
            l.trim_start_matches('!')
                .split_whitespace()
                .next()?
                .trim_start_matches('!')
                .parse()
                .ok()
        })
        .collect()
}

/// A size as `top` prints it (`192 MiB`), in MiB.
fn size_of(number: &str, unit: &str) -> Option<f64> {
    let n: f64 = number.parse().ok()?;
    Some(match unit {
        "B" => n / (1 << 20) as f64,
        "KiB" => n / 1024.0,
        "MiB" => n,
        "GiB" => n * 1024.0,
        "TiB" => n * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// `stty -a`'s words after top ended, written by the pane's shell.
fn terminal_after(file: &Path) -> String {
    let mut text = String::new();
    wait_until(Duration::from_secs(10), Duration::from_millis(100), || {
        text = std::fs::read_to_string(file).unwrap_or_default();
        text.contains("EXITED")
    });
    text
}

fn assert_restored(stty: &str) {
    assert!(stty.contains("EXITED 0"), "top's exit: {stty}");
    let words: Vec<&str> = stty.split_whitespace().collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(
            words.contains(&mode),
            "{mode} not restored after top: {stty}"
        );
    }
}

#[test]
fn a_job_sorts_folds_filters_and_quitting_restores_the_terminal() {
    if !have("tmux") {
        return;
    }
    // A job under a shell: 192 MiB and three forked workers.
    let job = ShellJob::start("anon 192 fork 3");
    assert_eq!(job.pids.len(), 4);
    let dir = tempfile::tempdir().unwrap();
    let after = dir.path().join("after");
    let command = format!(
        "{} top --interval 500ms; echo EXITED $? > {f}.tmp; stty -a >> {f}.tmp; mv {f}.tmp {f}; sleep 30",
        memtriage_bin().display(),
        f = after.display()
    );
    let tmux = Tmux::start(&command, 120, 40);

    // By RSS, in order: the job's processes (192 MiB each, shared) are near the top,
    // and no row below has more RSS than one above.
    let screen = tmux.wait("the job's processes are high in the RSS sort", |s| {
        let pids = row_pids(s);
        let first_ten = &pids[..pids.len().min(10)];
        job.pids.iter().all(|p| first_ten.contains(p))
    });
    let rss: Vec<f64> = screen
        .lines()
        .skip_while(|l| !l.starts_with("PID"))
        .skip(1)
        .filter_map(|l| size_of(l.split_whitespace().nth(4)?, l.split_whitespace().nth(5)?))
        .collect();
    assert!(
        rss.len() > 4 && rss.windows(2).all(|w| w[0] >= w[1]),
        "not in RSS order:\n{screen}"
    );
    assert!(screen.contains("MemAvailable"), "{screen}");

    // Sorted by minor faults instead, the header marks it.
    tmux.keys(&["2"]);
    tmux.wait("the sort changes", |s| s.contains("sort:minor-faults"));

    // Tree mode folds the workers into their job, with totals.
    tmux.keys(&["3", "t"]);
    // One whole frame: a capture taken while the terminal redraws can hold the new
    // rows under the old header. What sharing saves needs every worker's PSS, read on
    // the sampler's budget: on a busy machine the last reading can take a while.
    let folded = "the job folds with its workers under tree:on";
    tmux.wait_for(Duration::from_secs(40), folded, |s| {
        // Not necessarily first: on a shared machine a larger job may lead.
        let folded = s
            .lines()
            .skip_while(|l| !l.starts_with("PID"))
            .any(|l| l.contains("memtriage-testh [4]") && l.contains("shares"));
        folded && s.contains("tree:on")
    });

    // A filter keeps only the job.
    tmux.keys(&["t", "/"]);
    tmux.keys(&["-l", "testh"]);
    tmux.keys(&["Enter"]);
    // Other tests' helpers may share the name: every row must match, the job's among them.
    let screen = tmux.wait("the filter leaves the job", |s| {
        let pids = row_pids(s);
        s.contains("filter:testh") && job.pids.iter().all(|p| pids.contains(p))
    });
    let rows: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.starts_with("PID"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(
        rows.iter().all(|l| l.contains("testh")),
        "the filter let others through:\n{screen}"
    );

    // The detail pane of the selected process: its regions, read on demand.
    tmux.keys(&["Enter"]);
    tmux.wait(
        "the detail pane shows the selected process's regions",
        |s| {
            s.contains("resident by kind:") && s.contains("anon") && s.contains("memtriage-testh (")
        },
    );

    tmux.keys(&["q"]);
    assert_restored(&terminal_after(&after));
}

#[test]
fn sigterm_and_a_small_terminal_leave_the_terminal_restored() {
    if !have("tmux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let after = dir.path().join("after");
    let marker = "61s";
    let command = format!(
        "{} top --interval 500ms --window {marker}; echo EXITED $? > {f}.tmp; stty -a >> {f}.tmp; mv {f}.tmp {f}; sleep 30",
        memtriage_bin().display(),
        f = after.display()
    );
    let tmux = Tmux::start(&command, 80, 24);
    let screen = tmux.wait("top draws in 80x24", |s| {
        s.contains("PID") && s.contains("q quit")
    });
    assert!(screen.lines().all(|l| l.chars().count() <= 80), "{screen}");
    // Anchored: the pane's shell has the same words in its command line.
    let pgrep = Command::new("pgrep")
        .args([
            "-f",
            &format!(
                "^{} top --interval 500ms --window {marker}",
                memtriage_bin().display()
            ),
        ])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&pgrep.stdout)
        .split_whitespace()
        .next()
        .and_then(|p| p.parse::<i32>().ok())
        .expect("top's pid");
    // SAFETY: a signal to the process this test started.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    assert_restored(&terminal_after(&after));
}

/// A terminal that goes away (an SSH connection dropped) ends `top`: it must not
/// spin on a terminal that only returns end-of-file.
#[test]
fn a_terminal_that_hangs_up_ends_top() {
    if !have("tmux") {
        return;
    }
    let marker = "63s";
    let command = format!(
        "{} top --interval 500ms --window {marker}",
        memtriage_bin().display()
    );
    let tmux = Tmux::start(&command, 100, 30);
    tmux.wait("top draws", |s| s.contains("q quit"));
    let pattern = format!(
        "^{} top --interval 500ms --window {marker}",
        memtriage_bin().display()
    );
    drop(tmux);
    let gone = wait_until(Duration::from_secs(10), Duration::from_millis(200), || {
        !Command::new("pgrep")
            .args(["-f", &pattern])
            .status()
            .unwrap()
            .success()
    });
    assert!(gone, "top still runs after its terminal hung up");
}

/// The table's header line of a screen.
fn column_header(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with("PID"))
        .unwrap_or("")
        .to_string()
}

/// A terminal resized under `top` (a window dragged wider, an SSH client resized) is
/// redrawn at its new size: columns come and go with the width, no line is longer
/// than the terminal, and the footer stays on its last line.
#[test]
fn resizing_the_terminal_redraws_with_the_columns_that_fit() {
    if !have("tmux") {
        return;
    }
    let marker = "67s";
    let command = format!(
        "{} top --interval 300ms --window {marker}",
        memtriage_bin().display()
    );
    let tmux = Tmux::start(&command, 80, 24);
    let resize = |w: u16, h: u16| {
        let ok = tmux
            .tmux()
            .args(["resize-window", "-t", &tmux.name])
            .args(["-x", &w.to_string(), "-y", &h.to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux resize-window failed");
    };
    let fits = |s: &str, w: usize, h: usize| {
        let lines: Vec<&str> = s.lines().collect();
        lines.len() <= h
            && lines.iter().all(|l| l.chars().count() <= w)
            && lines.get(h - 1).is_some_and(|l| l.starts_with("q quit"))
    };
    let narrow = tmux.wait("top draws in 80x24", |s| {
        fits(s, 80, 24) && column_header(s).contains("HISTORY")
    });
    let header = column_header(&narrow);
    assert!(
        !header.contains("USER") && !header.contains("GROW/m"),
        "80 columns leave the user and growth out: {header}"
    );

    resize(160, 40);
    tmux.wait("top redraws at 160x40 with more columns", |s| {
        let h = column_header(s);
        fits(s, 160, 40) && h.contains("USER") && h.contains("GROW/m") && h.contains("USS")
    });

    resize(80, 24);
    tmux.wait("top redraws at 80x24 again", |s| {
        let h = column_header(s);
        fits(s, 80, 24) && !h.contains("USER") && h.contains("HISTORY")
    });
}

/// Issue 28, defect 15: in an 80-column terminal `inspect --all` and `top --once`
/// printed lines of 101–184 characters (top drew 120 columns unless $COLUMNS was set;
/// inspect cut commands at 80 whatever the rest took). Every line fits the terminal now.
#[test]
fn regression_inspect_all_and_top_once_fit_an_80_column_terminal() {
    if !have("tmux") {
        return crate::support::skip("tmux is not installed");
    }
    let bin = memtriage_bin();
    let command = format!(
        "env -u COLUMNS sh -c '{b} inspect --all; {b} top --once; echo DONE; sleep 60'",
        b = bin.display()
    );
    let t = Tmux::start(&command, 80, 400);
    t.wait("both commands ended", |s| s.contains("DONE"));
    // Joined: a line the terminal wrapped comes back whole.
    let out = t
        .tmux()
        .args(["capture-pane", "-p", "-J", "-S", "-", "-t", &t.name])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("COMMAND") && text.contains("PID"), "{text}");
    let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
    assert!(long.is_empty(), "lines wider than the terminal: {long:#?}");
}
