//! Helpers shared by every engine test module: the captured fixtures, writing and
//! copying fake roots, child processes that are killed and reaped when dropped, and
//! [`skip`], the one way a test skips (a failure under CI; see `skip.rs`).
//! Shared by two test binaries (the engine's own tests and `tests/engine`), each of
//! which uses a part.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

#[path = "built.rs"]
mod built;
#[path = "roots.rs"]
mod roots;
#[path = "skip.rs"]
mod skip;
// Each of the two test binaries uses a part.
#[allow(unused_imports)]
pub use built::fake_nvml;
#[allow(unused_imports)]
pub use roots::{copy_tree, write};
#[allow(unused_imports)]
pub use skip::{skip, skip_by_chance};

/// `crates/memtriage-core/tests/fixtures`: captured system trees, kernel output, logs.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A child killed and reaped when dropped, so a failed assertion leaves nothing behind.
pub struct Job(pub Child);

impl Job {
    pub fn spawn(program: &str, args: &[&str]) -> Self {
        Job(Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {program}: {e}")))
    }

    /// `sleep 30`: a process that stays put while a test reads it. Returned once it
    /// sleeps: on a busy machine it may still be exec'ing and faulting its pages in
    /// when a test reads it the first time.
    pub fn sleeper() -> Self {
        let job = Self::spawn("sleep", &["30"]);
        let stat = format!("/proc/{}/stat", job.pid());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            let asleep = std::fs::read_to_string(&stat).is_ok_and(|s| s.contains("(sleep) S "));
            if asleep {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        job
    }

    pub fn pid(&self) -> i32 {
        self.0.id() as i32
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
