//! `--limit`: a memory cgroup made for the job, so "works on my box, OOM-killed in
//! the cluster" reproduces under the cluster's budget. Swap is capped too, or the
//! job would swap where the cluster kills it.

use std::fs::{self, OpenOptions};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::guard::Guard;
use crate::error::{Error, Result};
use crate::model::process::CgroupVersion;
use crate::probe::cgroup::{CgroupDir, CgroupFiles, Hierarchies};
use crate::probe::root::Root;

/// The smallest limit a job can start under: below it the process is killed while it
/// execs, before it has a name, and the run would diagnose nothing useful.
pub const MIN_LIMIT: u64 = 4 << 20;

/// Why `limit` is too small to run a job under; `None` where it is not.
pub fn too_small(limit: u64) -> Option<String> {
    (limit < MIN_LIMIT).then(|| {
        format!(
            "under {}, a job is killed while it starts: give it room to run (e.g. 256M)",
            crate::model::units::iec(MIN_LIMIT)
        )
    })
}

/// cgroup v1 shows no limit as PAGE_COUNTER_MAX pages (2^63 - 4096 bytes with 4 KiB
/// pages); v2 writes `max`, which is no number. Anything from 2^62 on is no limit.
const KERNEL_UNLIMITED: u64 = 1 << 62;

pub struct JobCgroup {
    pub version: CgroupVersion,
    pub dir: PathBuf,
    /// The limit the kernel holds (the one asked for, rounded to pages).
    pub limit: u64,
    /// `cgroup.procs`, open for the job to join between fork and exec.
    pub procs: OwnedFd,
    /// Kills the cgroup's processes if memtriage dies before [`JobCgroup::remove`];
    /// `None` where it could not be forked (the job runs, as before, without it).
    guard: Option<Guard>,
}

impl JobCgroup {
    /// Creates `memtriage-run-PID` at the top of the hierarchy that has the memory
    /// controller (a v2 cgroup with processes cannot enable controllers below it),
    /// with its guard: call it before memtriage becomes a subreaper.
    pub fn create(root: &Root, limit: u64) -> Result<Self> {
        if let Some(why) = too_small(limit) {
            return Err(Error::bad_input(
                format!("memory limit {}", crate::model::units::iec(limit)),
                why,
            ));
        }
        let hierarchies = Hierarchies::discover(root)?;
        let Some(hierarchy) = hierarchies.preferred() else {
            return Err(Error::refused(
                "memory limit",
                "no cgroup memory controller is mounted (neither cgroup v2 with memory nor v1 memory)",
                "run where the cgroup memory controller is mounted, or without a memory limit",
            ));
        };
        let (version, top) = (hierarchy.version, root.path(&hierarchy.mount.mount_point));
        remove_abandoned(root, &top);
        let dir = top.join(format!("{CGROUP_PREFIX}{}", std::process::id()));
        let denied = |e: std::io::Error, what: &Path| {
            Error::refused(
                "memory limit",
                format!("cannot set up a memory cgroup at {}: {e}", what.display()),
                "run as root, or with write access to the cgroup tree",
            )
        };
        if version == CgroupVersion::V2 {
            // Enabling an already enabled controller is a no-op; failing here is fine
            // when it is enabled, which the write of memory.max below then proves.
            let _ = fs::write(top.join("cgroup.subtree_control"), "+memory");
        }
        fs::create_dir(&dir).map_err(|e| denied(e, &dir))?;
        let cg = JobCgroupDir { dir: dir.clone() };
        let files = CgroupFiles::for_version(version);
        let (limit_file, swap_file) = (files.limit, files.swap_limit);
        // v2 caps swap alone; v1 caps memory plus swap, so the same number.
        let swap_value = match version {
            CgroupVersion::V2 => "0".to_string(),
            CgroupVersion::V1 => limit.to_string(),
        };
        fs::write(dir.join(limit_file), limit.to_string())
            .map_err(|e| denied(e, &dir.join(limit_file)))?;
        // The kernel rounds to pages and takes a number past what it counts as no
        // limit at all: the limit is what it holds.
        let held = fs::read_to_string(dir.join(limit_file))
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|held| *held < KERNEL_UNLIMITED);
        let Some(limit) = held else {
            drop(cg);
            return Err(Error::bad_input(
                format!("memory limit {}", crate::model::units::iec(limit)),
                "more than the kernel counts: it holds no limit then; give one under the \
                 machine's memory",
            ));
        };
        // Absent without swap accounting (v1 without swapaccount=1): nothing to cap then.
        let _ = fs::write(dir.join(swap_file), swap_value);
        let procs = OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
            .map_err(|e| denied(e, &dir.join("cgroup.procs")))?;
        let guard = Guard::watch(&dir).ok();
        std::mem::forget(cg);
        Ok(JobCgroup {
            version,
            dir,
            limit,
            procs: procs.into(),
            guard,
        })
    }

    /// The same cgroup, for reading its usage, peak and OOM kills.
    pub fn watch(&self) -> CgroupDir {
        CgroupDir {
            version: self.version,
            dir: self.dir.clone(),
        }
    }

    /// Removes the cgroup once the job's processes have left it. Processes the job
    /// left running keep it (and their limit): it is not removed then, and the next
    /// run's [`remove_abandoned`] takes it once they end. Returns whether it is gone.
    pub fn remove(self) -> bool {
        if let Some(guard) = self.guard {
            guard.release();
        }
        // A process just reaped may take a moment to leave the cgroup.
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match fs::remove_dir(&self.dir) {
                Ok(()) => return true,
                Err(_) if Instant::now() < deadline && !has_processes(&self.dir) => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(_) => return false,
            }
        }
    }
}

fn has_processes(dir: &Path) -> bool {
    let mut pids = Vec::new();
    crate::probe::cgroup::procs_below(dir, &mut pids);
    !pids.is_empty()
}

/// Whether a cgroup directory's name is one `--limit` makes, and for which
/// memtriage process.
pub fn owner_of(name: &str) -> Option<i32> {
    name.strip_prefix(CGROUP_PREFIX)?.parse().ok()
}

use crate::model::system::RUN_LIMIT_CGROUP_PREFIX as CGROUP_PREFIX;

/// [`remove_abandoned`] where `--limit` would make its cgroup: every run cleans up
/// after the runs before it, limited or not.
pub fn remove_abandoned_runs(root: &Root) {
    if let Ok(hierarchies) = Hierarchies::discover(root) {
        if let Some(h) = hierarchies.preferred() {
            remove_abandoned(root, &root.path(&h.mount.mount_point));
        }
    }
}

/// Removes the empty cgroups of earlier runs whose memtriage is gone (killed before
/// it could clean up, or ended while processes of its job still ran there).
/// Returns the directories removed.
pub fn remove_abandoned(root: &Root, top: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(top) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let Some(owner) = entry.file_name().to_str().and_then(owner_of) else {
            continue;
        };
        if owner_alive(root, owner) {
            continue;
        }
        let dir = entry.path();
        if !has_processes(&dir) && fs::remove_dir(&dir).is_ok() {
            removed.push(dir);
        }
    }
    removed
}

/// A memtriage process with this pid runs now (a pid reused by another program
/// does not own the cgroup).
fn owner_alive(root: &Root, pid: i32) -> bool {
    crate::probe::procdir::comm(root, pid).is_some_and(|c| c == "memtriage")
}

/// Removes a half-made cgroup if setting it up fails.
struct JobCgroupDir {
    dir: PathBuf,
}

impl Drop for JobCgroupDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_too_small_to_start_a_job_is_bad_input_before_any_cgroup_is_made() {
        let e = JobCgroup::create(&Root::host(), 4096)
            .err()
            .expect("refused");
        assert_eq!(e.kind(), crate::error::ErrorKind::BadInput);
        assert!(
            e.to_string().contains("a job is killed while it starts"),
            "{e}"
        );
        assert!(too_small(MIN_LIMIT).is_none());
    }
}
