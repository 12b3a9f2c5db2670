//! Starting the job and learning how it (and any orphan we adopt) ended.

use crate::probe::procdir::own_rss;
use crate::probe::root::Root;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::Sender;

use crate::error::{Error, Result};
use crate::model::run::Outcome;

/// The job as started: its pid and the read ends of its output pipes.
pub struct Started {
    pub pid: i32,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// memtriage's resident set when it forked the job: the child's high-water mark
    /// (`ru_maxrss`) keeps the copy it had before exec, so a mark no higher than this
    /// may be memtriage's, not the job's. `None` when it could not be read.
    pub forked_rss: Option<u64>,
}

/// Spawns the command directly (no shell) with stdin and the environment as they are,
/// plus `PYTHONFAULTHANDLER=1` unless set, so a native crash in Python prints the
/// Python stack. The job dies with memtriage (PR_SET_PDEATHSIG), and joins
/// `cgroup_procs` (an open `cgroup.procs`) before exec so everything it allocates
/// is charged there. `oom_score_adj` is set before exec, so every worker inherits it.
/// `env`: variables set for the job on top of this process's environment.
pub fn spawn(
    command: &[OsString],
    env: &[(OsString, OsString)],
    cgroup_procs: Option<&OwnedFd>,
    oom_score_adj: Option<i32>,
) -> Result<Started> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| Error::bad_input("command", "none given: name the program to run"))?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    if std::env::var_os("PYTHONFAULTHANDLER").is_none() {
        cmd.env("PYTHONFAULTHANDLER", "1");
    }
    let parent = std::process::id() as i32;
    let procs_fd = cgroup_procs.map(|fd| fd.as_raw_fd());
    // Formatted before fork: nothing may allocate between fork and exec.
    let oom_score_adj = oom_score_adj.map(|v| format!("{v}\n").into_bytes());
    // SAFETY: only async-signal-safe calls (sigprocmask, prctl, getppid, write)
    // between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // memtriage blocks the signals it forwards; the job must not inherit that
            // mask (std resets it only when it can use posix_spawn).
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                // memtriage died between fork and prctl: do not run unsupervised.
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(fd) = procs_fd {
                let zero = b"0\n";
                if libc::write(fd, zero.as_ptr().cast(), zero.len()) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(value) = &oom_score_adj {
                let fd = libc::open(
                    c"/proc/self/oom_score_adj".as_ptr(),
                    libc::O_WRONLY | libc::O_CLOEXEC,
                );
                if fd < 0 || libc::write(fd, value.as_ptr().cast(), value.len()) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(fd);
            }
            Ok(())
        });
    }
    let forked_rss = own_rss(&Root::host());
    let mut child = cmd
        .spawn()
        .map_err(|e| cannot_start(&program.to_string_lossy(), &e))?;
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stderr = child.stderr.take().map(OwnedFd::from);
    let pid = child.id() as i32;
    // `child` is dropped without waiting: the reaper thread owns waiting.
    match (stdout, stderr) {
        (Some(stdout), Some(stderr)) => Ok(Started {
            pid,
            stdout,
            stderr,
            forked_rss,
        }),
        _ => Err(Error::internal("could not capture the job's output")),
    }
}

/// Why the job did not start, as a shell would say it (and with its exit code).
fn cannot_start(program: &str, e: &std::io::Error) -> Error {
    let (detail, not_found) = match e.raw_os_error() {
        Some(libc::ENOENT) if !program.contains('/') => ("command not found".into(), true),
        Some(libc::ENOENT) => ("no such file".into(), true),
        // execve says EACCES for a directory too: not a file to chmod.
        Some(libc::EACCES) if std::path::Path::new(program).is_dir() => {
            ("is a directory".into(), false)
        }
        Some(libc::EACCES) => (
            "permission denied: is it executable? chmod +x it, or run it through its interpreter"
                .into(),
            false,
        ),
        Some(libc::ENOEXEC) => (
            "not an executable this machine can run (no #! line, or another architecture)".into(),
            false,
        ),
        Some(libc::EISDIR) => ("is a directory".into(), false),
        _ => (format!("cannot start: {e}"), false),
    };
    Error::CannotStart {
        program: program.to_string(),
        detail,
        not_found,
    }
}

/// A process memtriage reaped: the job's main process or an adopted orphan.
#[derive(Debug, Clone, Copy)]
pub struct Reaped {
    pub pid: i32,
    pub outcome: Outcome,
    /// Kernel accounting of the process and the descendants it waited for.
    pub max_rss: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

impl Reaped {
    /// The job's end when it could not be observed (the reaper found no child).
    pub fn unseen(pid: i32) -> Self {
        Reaped {
            pid,
            outcome: Outcome {
                exit_code: None,
                signal: None,
                core_dumped: false,
            },
            max_rss: 0,
            minor_faults: 0,
            major_faults: 0,
        }
    }
}

pub fn outcome_from_status(status: i32) -> Outcome {
    if libc::WIFEXITED(status) {
        Outcome {
            exit_code: Some(libc::WEXITSTATUS(status)),
            signal: None,
            core_dumped: false,
        }
    } else if libc::WIFSIGNALED(status) {
        Outcome {
            exit_code: None,
            signal: Some(libc::WTERMSIG(status)),
            core_dumped: libc::WCOREDUMP(status),
        }
    } else {
        Outcome {
            exit_code: None,
            signal: None,
            core_dumped: false,
        }
    }
}

/// Reaps every child until none is left, sending each to `tx`. memtriage is the
/// job's subreaper, so orphaned descendants are reparented to it and reaped here,
/// with their kernel accounting, instead of lingering as zombies.
pub fn reap_all(tx: Sender<Reaped>) {
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for the kernel to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes into the two locals it is given.
        let pid = unsafe { libc::wait4(-1, &mut status, 0, &mut usage) };
        if pid < 0 {
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                _ => return, // ECHILD: nothing left to wait for
            }
        }
        let reaped = Reaped {
            pid,
            outcome: outcome_from_status(status),
            max_rss: (usage.ru_maxrss.max(0) as u64) * 1024,
            minor_faults: usage.ru_minflt.max(0) as u64,
            major_faults: usage.ru_majflt.max(0) as u64,
        };
        if tx.send(reaped).is_err() {
            return;
        }
    }
}
