//! `run --trace-signals`: who sent the signals that ended the job's processes. No
//! wait status says it (siginfo's sender is lost once the process is dead), but the
//! kernel's `signal_generate` tracepoint names the sending task of every signal. A
//! tracefs instance of memtriage's own records only that event, only for the signals
//! that end a job (HUP, INT, QUIT, ABRT, KILL, TERM), while the job runs, and is removed
//! afterwards; the machine's own tracing is left as it was. Needs root and tracefs
//! mounted (systemd mounts it at /sys/kernel/tracing).

use std::path::{Path, PathBuf};

use crate::model::run::SignalSent;
use crate::probe::root::Root;

const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
const INSTANCE_PREFIX: &str = "memtriage-";
const EVENT: &str = "events/signal/signal_generate";
/// SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGKILL, SIGTERM.
const FILTER: &str = "sig == 1 || sig == 2 || sig == 3 || sig == 6 || sig == 9 || sig == 15";
/// `code` of a signal the kernel sent itself (the OOM killer, a fault), not a process.
const SI_KERNEL: i32 = 0x80;

/// A tracefs instance recording signals, removed when dropped.
#[derive(Debug)]
pub struct SignalTrace {
    dir: PathBuf,
}

impl SignalTrace {
    /// Starts recording; `Err` says why it cannot (no tracefs mounted, not root).
    /// Instances left by a memtriage that was killed are removed first.
    pub fn start(root: &Root) -> Result<SignalTrace, String> {
        let base = TRACEFS
            .iter()
            .map(|p| root.path(p))
            .find(|p| p.join("instances").is_dir())
            .ok_or("tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)")?;
        remove_abandoned(root, &base.join("instances"));
        let dir = base
            .join("instances")
            .join(format!("{INSTANCE_PREFIX}{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot make a tracing instance at {}: {e}", dir.display()))?;
        let trace = SignalTrace { dir };
        let event = trace.dir.join(EVENT);
        std::fs::write(event.join("filter"), FILTER)
            .and_then(|()| std::fs::write(event.join("enable"), "1"))
            .map_err(|e| format!("cannot enable signal_generate: {e}"))?;
        Ok(trace)
    }

    /// The signals sent to `pids` while it recorded, oldest first; the instance is
    /// removed.
    pub fn finish(self, pids: &std::collections::HashSet<i32>) -> Vec<SignalSent> {
        let text = std::fs::read_to_string(self.dir.join("trace")).unwrap_or_default();
        text.lines()
            .filter_map(parse_line)
            .filter(|s| pids.contains(&s.target_pid))
            .collect()
    }
}

impl Drop for SignalTrace {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join(EVENT).join("enable"), "0");
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Instances whose memtriage is gone (killed before it could remove its own).
fn remove_abandoned(root: &Root, instances: &Path) {
    let Ok(entries) = std::fs::read_dir(instances) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(INSTANCE_PREFIX))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !root.path(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::write(e.path().join(EVENT).join("enable"), "0");
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// `  earlyoom-812   [001] d..1. 1234.567890: signal_generate: sig=15 errno=0 code=0
/// comm=python3 pid=4412 grp=1 res=0`: the sender is the task before the CPU column.
pub fn parse_line(line: &str) -> Option<SignalSent> {
    let (head, fields) = line.split_once(": signal_generate: ")?;
    let (task, rest) = head.trim_start().split_once(" [")?;
    let (sender_comm, sender_pid) = task.trim_end().rsplit_once('-')?;
    let at_seconds: f64 = rest.split_whitespace().last()?.parse().ok()?;
    let field = |name: &str| -> Option<i32> {
        fields
            .split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))?
            .parse()
            .ok()
    };
    // `comm=` may hold spaces: the target's pid is the `pid=` after it.
    let target_pid = fields
        .rsplit_once(" pid=")?
        .1
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(SignalSent {
        signal: field("sig")?,
        target_pid,
        sender_pid: sender_pid.parse().ok()?,
        sender_comm: sender_comm.to_string(),
        by_kernel: field("code")? == SI_KERNEL,
        at_boot_seconds: at_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sender_is_the_task_that_generated_the_signal() {
        // Captured on this machine's kernel (6.18): bash sending SIGTERM to a sleep.
        let s = parse_line(
            "            bash-18655   [001] dN.1. 67728.230824: signal_generate: sig=15 errno=0 code=0 comm=sleep pid=18657 grp=1 res=0",
        )
        .unwrap();
        assert_eq!((s.sender_comm.as_str(), s.sender_pid), ("bash", 18655));
        assert_eq!((s.signal, s.target_pid, s.by_kernel), (15, 18657, false));
        assert_eq!(s.at_boot_seconds, 67728.230824);
        // A sender whose name has a dash and a space; the kernel's own kill (code 128).
        let s = parse_line(
            " kworker/u8:2-my job-77 [000] d..2. 5.5: signal_generate: sig=9 errno=0 code=128 comm=py thon pid=42 grp=1 res=0",
        )
        .unwrap();
        assert_eq!(
            (s.sender_comm.as_str(), s.sender_pid),
            ("kworker/u8:2-my job", 77)
        );
        assert_eq!((s.target_pid, s.by_kernel), (42, true));
        assert!(parse_line("# tracer: nop").is_none());
    }
}
