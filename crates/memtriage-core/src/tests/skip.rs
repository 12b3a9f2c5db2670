//! Skipping a test: the one way every test of the workspace does it (the engine's
//! tests through `support`, the CLI's through `cli/support`, which includes this file).
//!
//! A test that cannot run here calls [`skip`] with what is missing, and returns.
//! Outside CI that prints `skipped: REASON` on stderr and appends `TEST: REASON` to the
//! run's list of skips, which `./test.sh` counts and prints at the end: the file
//! `$MEMTRIAGE_SKIPPED_LOG` names (test.sh sets it), else `skipped-tests.txt` in the
//! target directory's `tmp/`.
//!
//! Under CI (`CI` set to anything but empty, `0` or `false`) a skip fails the test
//! with its reason instead, because CI provides everything the tests need:
//! - every tool and Python module they use: `.ci/run` installs them (tmux, chromium,
//!   prometheus and promtool, curl, openssl, systemd-analyze, torch, numpy,
//!   safetensors; util-linux's `script`, `setpriv` and `unshare` come with the system);
//! - root, and what root may do there: make memory cgroups, mount a tmpfs, unshare a
//!   mount namespace, drop to `nobody`, choose the next pid, read the kernel log,
//!   listen to the kernel's process events;
//! - the machine: 24 GiB of memory, `/dev/shm`, the cgroup v1 memory controller at
//!   `/sys/fs/cgroup/memory` (v2 at `/sys/fs/cgroup/unified`), a kernel that logs
//!   segfaults (`debug.exception-trace=1`) and refuses root pid 1's maps.
//!
//! So a missing one there is a broken CI, not a reason to pass. Only what no machine
//! can promise, a chance of the moment (the kernel's log rate limit dropped a line,
//! other processes took the pid a test waited for), goes through [`skip_by_chance`],
//! which is a skip under CI too. A new skip is [`skip`] unless it is such a chance;
//! a new need of the tests is installed by `.ci/run`, not skipped in CI.
#![allow(dead_code)]

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

/// The environment variable naming the file every skip is appended to.
pub const SKIPPED_LOG_ENV: &str = "MEMTRIAGE_SKIPPED_LOG";

/// Skips the calling test for something this machine lacks; under CI, fails it
/// (CI provides it: see the module's rule).
pub fn skip(reason: impl Display) {
    if in_ci() {
        panic!(
            "{reason}: under CI a failure, not a skip, since CI provides every tool and \
             privilege the tests need (.ci/run; the rule: crates/memtriage-core/src/tests/skip.rs)"
        );
    }
    record(&reason.to_string());
}

/// Skips the calling test for a chance of the moment that no machine can promise,
/// CI's included (see the module's rule): a skip under CI too.
pub fn skip_by_chance(reason: impl Display) {
    record(&format!("{reason} (by chance)"));
}

/// Whether this runs under CI: `CI` set to anything but empty, `0` or `false`.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

// A skipped test says so in the test output.
#[allow(clippy::print_stderr)]
fn record(reason: &str) {
    eprintln!("skipped: {reason}");
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let Some(log) = log_path() else {
        return;
    };
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // One write of a whole line on an append-only file: tests skipping at the same
    // time do not interleave.
    let line = format!("{}::{test}: {reason}\n", env!("CARGO_CRATE_NAME"));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("(the skip was not recorded in {}: {e})", log.display());
    }
}

/// `$MEMTRIAGE_SKIPPED_LOG`, else `skipped-tests.txt` in the target directory's
/// `tmp/` (cargo names it to integration tests; a unit test finds it from its own
/// executable, `target/PROFILE/deps/NAME`).
fn log_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(SKIPPED_LOG_ENV).filter(|p| !p.is_empty()) {
        return Some(p.into());
    }
    let tmp = match option_env!("CARGO_TARGET_TMPDIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let exe = std::env::current_exe().ok()?;
            let deps = exe.parent()?;
            if !deps.ends_with("deps") {
                return None;
            }
            deps.parent()?.parent()?.join("tmp")
        }
    };
    Some(tmp.join("skipped-tests.txt"))
}
