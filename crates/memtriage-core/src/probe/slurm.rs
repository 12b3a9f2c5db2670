//! A Slurm job as its node can still learn of it once it ended: `scontrol show job`
//! (the job stays known to slurmctld while its epilog runs, and `MinJobAge` after),
//! and, in an epilog, the environment slurmd gives it (`SLURM_JOB_UID`,
//! `SLURM_JOB_STDERR`, `SLURM_JOB_EXIT_CODE2`, …). The files of its output, where they
//! went.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::model::slurm::{MemRequest, SlurmJob};
use crate::parse::slurm::{mem_size, scontrol_job, tres_mem, ScontrolJob};
use crate::probe::command::bounded_output;
use crate::probe::files::tail;
use crate::probe::root::Root;
use crate::probe::system::uptime_seconds;

/// scontrol is asked once, and not waited for longer than this: an epilog that hangs
/// drains the node.
const SCONTROL_TIMEOUT: Duration = Duration::from_secs(5);

/// The job `id` as scontrol and (in its epilog) the environment say.
pub fn job(id: u64) -> SlurmJob {
    let shown = bounded_output(
        "scontrol",
        &["show", "job", "-o", &id.to_string()],
        SCONTROL_TIMEOUT,
    )
    .map(|out| scontrol_job(&out))
    .filter(|j| j.job_id == Some(id))
    .unwrap_or_default();
    let env = Epilog::of(id);
    combine(id, shown, env.as_ref())
}

/// What slurmd put in the epilog's environment, when it is this job's.
#[derive(Debug, Default)]
struct Epilog {
    uid: Option<u32>,
    gid: Option<u32>,
    user: Option<String>,
    work_dir: Option<String>,
    stdout: Option<String>,
    stderr: Option<String>,
    /// `0:125`.
    exit_code: Option<String>,
    node: Option<String>,
}

impl Epilog {
    fn of(id: u64) -> Option<Epilog> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        (var("SLURM_JOB_ID")? == id.to_string()).then(|| Epilog {
            uid: var("SLURM_JOB_UID").and_then(|v| v.parse().ok()),
            gid: var("SLURM_JOB_GID").and_then(|v| v.parse().ok()),
            user: var("SLURM_JOB_USER"),
            work_dir: var("SLURM_JOB_WORK_DIR"),
            stdout: var("SLURM_JOB_STDOUT"),
            stderr: var("SLURM_JOB_STDERR"),
            exit_code: var("SLURM_JOB_EXIT_CODE2"),
            node: var("SLURMD_NODENAME"),
        })
    }
}

fn combine(id: u64, shown: ScontrolJob, env: Option<&Epilog>) -> SlurmJob {
    let e = |f: fn(&Epilog) -> Option<String>| env.and_then(f);
    // slurmd's word first: scontrol's line holds text the job's owner wrote (its
    // working directory, its command), which could imitate a field.
    let work_dir = e(|e| e.work_dir.clone()).or_else(|| shown.work_dir.clone());
    let user = e(|e| e.user.clone()).or_else(|| shown.user.clone());
    let node = e(|e| e.node.clone());
    let from_env = e(|e| e.stderr.clone().or(e.stdout.clone()))
        .map(|pattern| expand(&pattern, id, user.as_deref(), node.as_deref()))
        // Patterns only slurmctld knows (`%x`, `%A`, `%a`): scontrol's expansion.
        .filter(|p| !p.contains('%'));
    let output = from_env
        .or_else(|| shown.std_err.clone().or(shown.std_out.clone()))
        .or_else(|| Some(format!("slurm-{id}.out")))
        .map(|p| match (p.starts_with('/'), &work_dir) {
            (false, Some(dir)) => PathBuf::from(dir).join(p),
            _ => PathBuf::from(p),
        })
        .filter(|p| p.is_absolute());
    let owner = env.and_then(|e| Some((e.uid?, e.gid?)));
    SlurmJob {
        id,
        uid: owner.map(|o| o.0).or(shown.uid),
        gid: owner.map(|o| o.1).or(shown.gid),
        owner_from_slurmd: owner.is_some(),
        user,
        state: shown.state.clone(),
        reason: shown.reason.clone(),
        exit_code: shown
            .exit_code
            .clone()
            .or_else(|| e(|e| e.exit_code.clone())),
        derived_exit_code: shown.derived_exit_code.clone(),
        output,
        mem_request: mem_request(&shown),
        started_unix: shown.start_time.as_deref().and_then(local_time),
        ended_unix: shown.end_time.as_deref().and_then(local_time),
    }
}

fn mem_request(job: &ScontrolJob) -> Option<MemRequest> {
    let node_bytes = job.tres.as_deref().and_then(tres_mem);
    if let Some(m) = job.mem_per_node.as_ref().filter(|m| mem_size(m).is_some()) {
        return Some(MemRequest {
            option: "--mem",
            written: m.clone(),
            node_bytes: mem_size(m).or(node_bytes),
        });
    }
    job.mem_per_cpu.as_ref().map(|m| MemRequest {
        option: "--mem-per-cpu",
        written: m.clone(),
        node_bytes,
    })
}

/// The last `bytes` of the job's output, read as root: only a regular file (no link
/// followed at its last step, no device or FIFO opened) owned by the job's owner, so
/// a job cannot have root read what it could not.
pub fn output_tail(path: &Path, owner: Option<u32>, bytes: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    if owner.is_some_and(|uid| meta.uid() != uid) {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!("owned by uid {}, not the job's owner", meta.uid()),
        ));
    }
    tail(&mut f, bytes)
}

/// When the machine booted, in Unix seconds (what the kernel log's times count
/// from), and how long ago.
pub fn boot_unix(root: &Root) -> Option<(f64, f64)> {
    let uptime = uptime_seconds(root).ok()?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    Some((now - uptime, uptime))
}

/// Whether a recorder wrote the history in the last minute (its write-ahead log or
/// the file itself).
pub fn being_written(db: &Path) -> bool {
    // SQLite's write-ahead log is the database's path with `-wal` added.
    let wal = std::path::PathBuf::from(format!("{}-wal", db.display()));
    [wal.as_path(), db].iter().any(|p| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() < 60))
    })
}

/// `%j %J %u %N %n %t %s %%` as slurmd expands them for a batch job's output.
fn expand(pattern: &str, id: u64, user: Option<&str>, node: Option<&str>) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('j' | 'J') => out.push_str(&id.to_string()),
            Some('u') => out.push_str(user.unwrap_or("%u")),
            Some('N') => out.push_str(node.unwrap_or("%N")),
            Some('n' | 't') => out.push('0'),
            Some('s') => out.push_str("batch"),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `2026-11-28T21:00:01` in the node's time zone, as Unix seconds.
fn local_time(text: &str) -> Option<i64> {
    let (date, time) = text.split_once('T')?;
    let d: Vec<i32> = date
        .split('-')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let t: Vec<i32> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let ([year, month, day], [hour, minute, second]) = (d.as_slice(), t.as_slice()) else {
        return None;
    };
    // SAFETY: a zeroed tm is valid; mktime reads it and the time zone only.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = *day;
    tm.tm_hour = *hour;
    tm.tm_min = *minute;
    tm.tm_sec = *second;
    tm.tm_isdst = -1;
    // SAFETY: tm is initialised above.
    let t = unsafe { libc::mktime(&mut tm) };
    (t != -1).then_some(t as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The epilog reads the job's output as root: a link, a FIFO or a file of another
    /// owner is not read (a job cannot have root open a device or read what it could
    /// not).
    #[test]
    fn regression_the_output_is_read_only_as_a_regular_file_of_the_jobs_owner() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("slurm-7.out");
        std::fs::write(&file, "epoch 1\n").unwrap();
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        assert_eq!(output_tail(&file, Some(me), 1 << 10).unwrap(), "epoch 1\n");
        assert!(
            output_tail(&file, Some(me + 1), 1 << 10).is_err(),
            "another owner's"
        );
        let link = dir.path().join("link.out");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(output_tail(&link, Some(me), 1 << 10).is_err(), "a link");
        let fifo = dir.path().join("fifo.out");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a C string path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(
            output_tail(&fifo, Some(me), 1 << 10).is_err(),
            "a FIFO, without blocking"
        );
    }

    #[test]
    fn an_epilogs_output_pattern_is_expanded_as_slurmd_does() {
        assert_eq!(
            expand("logs/%u-%j.%N.err", 7, Some("alice"), Some("n1")),
            "logs/alice-7.n1.err"
        );
        assert_eq!(expand("100%%-%x.out", 7, None, None), "100%-%x.out");
    }

    #[test]
    fn the_job_from_the_environment_alone_has_its_output_under_its_work_dir() {
        let env = Epilog {
            uid: Some(1000),
            gid: Some(1000),
            user: Some("alice".into()),
            work_dir: Some("/home/alice".into()),
            stdout: None,
            stderr: Some("err-%j.log".into()),
            exit_code: Some("0:125".into()),
            node: Some("n1".into()),
        };
        let job = combine(7, ScontrolJob::default(), Some(&env));
        assert_eq!(job.output, Some(PathBuf::from("/home/alice/err-7.log")));
        assert_eq!((job.uid, job.gid), (Some(1000), Some(1000)));
        assert!(job.slurm_says_oom());
        let defaults = combine(
            7,
            ScontrolJob::default(),
            Some(&Epilog {
                stderr: None,
                ..env
            }),
        );
        assert_eq!(
            defaults.output,
            Some(PathBuf::from("/home/alice/slurm-7.out"))
        );
    }

    #[test]
    fn a_local_time_reads_back_as_itself() {
        let t = local_time("2026-11-28T21:00:01").unwrap();
        let u = local_time("2026-11-28T21:00:11").unwrap();
        assert_eq!(u - t, 10);
        assert_eq!(local_time("Unknown"), None);
    }
}
