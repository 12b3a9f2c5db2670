//! The Slurm epilog on a real single-node Slurm (Debian's slurm-wlm and munge, started
//! by `deploy/slurm/test-cluster`): a job whose DataLoader worker is OOM-killed at its
//! `--mem` gets memtriage's verdict at the end of its own output; a job that ends well
//! gets nothing, one that segfaults gets the segfault's verdict, one run under
//! `memtriage run` is not explained twice; and the epilog with memtriage missing,
//! failing or hanging still exits 0.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{have, root_or_skip, wait_until, BIN};

const EPILOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/slurm/epilog");
const TEST_CLUSTER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../deploy/slurm/test-cluster"
);

/// The cluster, stopped and removed when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    mode: String,
    _turn: std::sync::MutexGuard<'static, ()>,
}

/// One cluster at a time: they share the machine's ports and Slurm's cgroup.
static ONE_CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Cluster {
    /// Up, its epilog reading the history at `db`; `mode`: `poll` for Slurm's own
    /// polling (OverMemoryKill), else cgroups where the kernel allows them.
    fn up(db: &Path, mode: &str) -> Cluster {
        let turn = ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(TEST_CLUSTER)
            .arg("up")
            .arg(dir.path())
            .arg(BIN)
            .env("MEMTRIAGE_DB", db)
            .env("MEMTRIAGE_SLURM_MODE", mode)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "test-cluster up: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let mode = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Cluster {
            dir,
            mode,
            _turn: turn,
        }
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf());
        c
    }

    /// Submits `script` with `args`, waits for it to end; returns its id and output.
    fn run(&self, name: &str, args: &[&str], script: &str) -> (u64, PathBuf) {
        let jobs = self.dir.path().join("jobs");
        std::fs::create_dir_all(&jobs).unwrap();
        // Any user's job may write its output here.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&jobs, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let script_path = jobs.join(format!("{name}.sh"));
        std::fs::write(&script_path, format!("#!/bin/sh\n{script}\n")).unwrap();
        let output = jobs.join(format!("{name}.out"));
        let out = self
            .command("sbatch")
            .args(["--parsable", "--wait", "--chdir"])
            .arg(&jobs)
            .arg("--output")
            .arg(&output)
            .args(args)
            .arg(&script_path)
            .output()
            .unwrap();
        let id: u64 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .split(';')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("sbatch: {}", String::from_utf8_lossy(&out.stderr)));
        // sbatch --wait returns as the job completes; its epilog may still run.
        let done = wait_until(Duration::from_secs(60), Duration::from_millis(200), || {
            let shown = self
                .command("scontrol")
                .args(["show", "job", "-o", &id.to_string()])
                .output()
                .unwrap();
            !String::from_utf8_lossy(&shown.stdout).contains("COMPLETING")
        });
        assert!(done, "job {id} still completing after 60 s");
        (id, output)
    }

    fn node_state(&self) -> String {
        let out = self
            .command("sinfo")
            .args(["-h", "-n", "localhost", "-o", "%T"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(TEST_CLUSTER)
            .arg("down")
            .arg(self.dir.path())
            .status();
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

const LEAKY_LOADER: &str = r#"python3 - <<'PY'
import time
import torch
from torch.utils.data import DataLoader, Dataset

hoard = []

class Leaky(Dataset):
    """Each item keeps 32 MiB in the worker that made it: the worker grows."""
    def __len__(self):
        return 100_000
    def __getitem__(self, i):
        block = bytearray(32 << 20)
        memoryview(block)[::4096] = b"\x01" * (len(block) // 4096)
        hoard.append(block)
        time.sleep(0.5)  # 64 MiB/s: the recorder sees it grow
        return i

for _ in DataLoader(Leaky(), num_workers=1, batch_size=None):
    pass
PY"#;

#[test]
fn the_epilog_explains_each_slurm_job_that_died_of_memory_in_its_own_output() {
    if !root_or_skip("slurmctld, slurmd and munged run as root here")
        || !have("slurmctld")
        || !have("munged")
    {
        return;
    }
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("history.db");
    let cluster = Cluster::up(&db, "auto");
    eprintln!("test-cluster mode: {}", cluster.mode);
    let recorder = crate::support::Recorder::start(&db);

    // A DataLoader worker that grows past --mem.
    let (id, output) = cluster.run("leaky", &["--mem=1G"], LEAKY_LOADER);
    let text = read(&output);
    eprintln!("job {id}'s output:\n{text}");
    let verdict = text
        .lines()
        .find(|l| l.starts_with("memtriage (Slurm epilog):"))
        .unwrap_or_else(|| panic!("no verdict in job {id}'s output:\n{text}"));
    assert!(
        verdict.contains(&format!(
            "job {id}: out of memory: the kernel killed pt_data_worker (pid "
        )) && verdict.contains("a DataLoader worker"),
        "{verdict}"
    );
    assert!(verdict.contains("--mem=1G"), "{verdict}");
    assert!(
        text.contains("#SBATCH --mem="),
        "the fix in Slurm's terms:\n{text}"
    );
    assert!(text.contains("fewer DataLoader workers"), "{text}");
    assert!(
        text.find("memtriage (Slurm epilog):") > text.find("Traceback"),
        "the verdict comes after the job's own output:\n{text}"
    );
    // The recorder on the node adds what it saw: how the job grew, the worker's own
    // pages (which of the two depends on how many intervals the growth spanned).
    assert!(
        text.contains("memtriage record kept on the node")
            || text.contains("the record's largest processes"),
        "nothing from the history:\n{text}"
    );
    drop(recorder);

    // Another user's job: the verdict is appended as that user, to a file it owns.
    let (id, output) = cluster.run(
        "nobody",
        &["--mem=200M", "--uid=nobody", "--gid=nogroup"],
        "awk 'BEGIN { s = \"x\"; while (1) s = s s }'",
    );
    let text = read(&output);
    assert!(
        text.contains(&format!(
            "memtriage (Slurm epilog): job {id}: out of memory: the kernel killed awk (pid "
        )),
        "{text}"
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(&output).unwrap().uid(),
        65534,
        "owned by nobody still"
    );

    // A job that ends well gets nothing.
    let (_, output) = cluster.run("fine", &["--mem=100M"], "echo fine");
    assert_eq!(read(&output), "fine\n");

    // A segfault gets the segfault's verdict.
    let (id, output) = cluster.run(
        "segv",
        &["--mem=200M"],
        "python3 -c 'import ctypes; ctypes.string_at(0)'",
    );
    let text = read(&output);
    assert!(
        text.contains(&format!("memtriage (Slurm epilog): job {id}: ")) && text.contains("SIGSEGV"),
        "{text}"
    );

    // Under `memtriage run`, its own verdict stands alone.
    let (_, output) = cluster.run(
        "supervised",
        &["--mem=200M"],
        &format!("{BIN} run -- python3 -c 'b = bytearray(1 << 30)'"),
    );
    let text = read(&output);
    assert!(text.contains("memtriage: "), "run's verdict: {text}");
    assert!(
        !text.contains("memtriage (Slurm epilog)"),
        "explained twice:\n{text}"
    );

    assert_eq!(cluster.node_state(), "idle", "the node stays up");
}

/// Where Slurm polls memory itself (`OverMemoryKill`, no cgroups), it kills the whole
/// step and the kernel logs nothing: the verdict rests on Slurm's own line.
#[test]
fn a_step_slurm_polled_and_killed_is_explained_by_slurms_line() {
    if !root_or_skip("slurmctld, slurmd and munged run as root here")
        || !have("slurmctld")
        || !have("munged")
    {
        return;
    }
    let history = tempfile::tempdir().unwrap();
    let cluster = Cluster::up(&history.path().join("none.db"), "poll");
    assert_eq!(cluster.mode, "poll");
    let (id, output) = cluster.run(
        "polled",
        &["--mem=200M"],
        "python3 -c 'import time\nh = []\nwhile True:\n    b = bytearray(32 << 20); memoryview(b)[::4096] = b\"\\x01\" * 8192; h.append(b); time.sleep(0.2)'",
    );
    let text = read(&output);
    assert!(
        text.contains(&format!("memtriage (Slurm epilog): job {id}: out of memory: Slurm killed step {id}.batch of job {id} at its memory limit")),
        "{text}"
    );
    assert!(text.contains("OverMemoryKill"), "{text}");
}

#[test]
fn the_epilog_exits_0_with_memtriage_missing_failing_or_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let hangs = dir.path().join("hangs");
    std::fs::write(&hangs, "#!/bin/sh\nsleep 120\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hangs, std::fs::Permissions::from_mode(0o755)).unwrap();
    for memtriage in [
        Path::new("/nonexistent/memtriage"),
        Path::new("/bin/false"),
        &hangs,
    ] {
        let started = Instant::now();
        let status = Command::new(EPILOG)
            .env("SLURM_JOB_ID", "1")
            .env("MEMTRIAGE", memtriage)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{}", memtriage.display());
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{} took {:?}",
            memtriage.display(),
            started.elapsed()
        );
    }
}
