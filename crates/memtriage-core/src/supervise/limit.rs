//! `--limit`: a memory cgroup made for the job, so "works on my box, OOM-killed in
//! the cluster" reproduces under the cluster's budget. Swap is capped too, or the
//! job would swap where the cluster kills it.

use std::fs::{self, OpenOptions};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::model::process::CgroupVersion;
use crate::parse::mountinfo;
use crate::probe::root::Root;
use crate::sampler::CgroupWatch;

pub struct JobCgroup {
    pub version: CgroupVersion,
    pub dir: PathBuf,
    pub limit: u64,
    /// `cgroup.procs`, open for the job to join between fork and exec.
    pub procs: OwnedFd,
}

impl JobCgroup {
    /// Creates `memtriage-run-PID` at the top of the hierarchy that has the memory
    /// controller (a v2 cgroup with processes cannot enable controllers below it).
    pub fn create(root: &Root, limit: u64) -> Result<Self> {
        let mounts = root
            .read_optional("/proc/self/mountinfo")?
            .map(|t| mountinfo::parse(&t))
            .unwrap_or_default();
        let v2 = mounts.iter().find(|m| m.fs_type == "cgroup2").filter(|m| {
            fs::read_to_string(root.path(&m.mount_point).join("cgroup.controllers"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        });
        let v1 = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.iter().any(|o| o == "memory"));
        let (version, top) = match (v2, v1) {
            (Some(m), _) => (CgroupVersion::V2, root.path(&m.mount_point)),
            (None, Some(m)) => (CgroupVersion::V1, root.path(&m.mount_point)),
            (None, None) => {
                return Err(Error::Invalid(
                    "--limit: no cgroup memory controller is mounted (neither cgroup v2 with memory nor v1 memory)".into(),
                ))
            }
        };
        let dir = top.join(format!("memtriage-run-{}", std::process::id()));
        let denied = |e: std::io::Error, what: &Path| {
            Error::Invalid(format!(
                "--limit: cannot set up a memory cgroup at {}: {e} (needs root, or write access to the cgroup tree)",
                what.display()
            ))
        };
        if version == CgroupVersion::V2 {
            // Enabling an already enabled controller is a no-op; failing here is fine
            // when it is enabled, which the write of memory.max below then proves.
            let _ = fs::write(top.join("cgroup.subtree_control"), "+memory");
        }
        fs::create_dir(&dir).map_err(|e| denied(e, &dir))?;
        let cg = JobCgroupDir { dir: dir.clone() };
        let (limit_file, swap_file, swap_value) = match version {
            CgroupVersion::V2 => ("memory.max", "memory.swap.max", "0".to_string()),
            CgroupVersion::V1 => (
                "memory.limit_in_bytes",
                "memory.memsw.limit_in_bytes",
                limit.to_string(),
            ),
        };
        fs::write(dir.join(limit_file), limit.to_string())
            .map_err(|e| denied(e, &dir.join(limit_file)))?;
        // Absent without swap accounting (v1 without swapaccount=1): nothing to cap then.
        let _ = fs::write(dir.join(swap_file), swap_value);
        let procs = OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
            .map_err(|e| denied(e, &dir.join("cgroup.procs")))?;
        std::mem::forget(cg);
        Ok(JobCgroup {
            version,
            dir,
            limit,
            procs: procs.into(),
        })
    }

    /// The same cgroup, for reading its usage, peak and OOM kills.
    pub fn watch(&self) -> CgroupWatch {
        CgroupWatch {
            version: self.version,
            dir: self.dir.clone(),
        }
    }

    /// Kills what is left in the cgroup and removes it. Returns whether it is gone.
    pub fn remove(self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match fs::remove_dir(&self.dir) {
                Ok(()) => return true,
                Err(_) if Instant::now() < deadline => {
                    let procs =
                        fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
                    for pid in procs.lines() {
                        if let Ok(pid) = pid.trim().parse::<i32>() {
                            // SAFETY: signalling a leftover process of the job's own cgroup.
                            unsafe {
                                libc::kill(pid, libc::SIGKILL);
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(_) => return false,
            }
        }
    }
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
