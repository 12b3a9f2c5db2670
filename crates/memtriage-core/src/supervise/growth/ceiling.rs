//! The memory a job's tree can reach before the kernel steps in: its `--limit`; else
//! the room left under the limit of the cgroup it runs in (a Slurm job step, a
//! container); else, or when that is more, the machine's `MemAvailable`. Read once,
//! as the job starts, when its tree holds next to nothing yet.

use crate::model::growth::{CeilingSource, MemoryCeiling};
use crate::model::process::CgroupMemory;
use crate::probe::cgroup::CgroupReader;
use crate::probe::root::Root;
use crate::probe::system::read_meminfo;

/// Reads what bounds the job whose main process is `job`. `None` when nothing could
/// be read: no limit and no `MemAvailable`.
pub fn discover(root: &Root, job_limit: Option<u64>, job: i32) -> Option<MemoryCeiling> {
    if job_limit.is_some() {
        return choose(job_limit, None, None);
    }
    let cgroup = CgroupReader::discover(root).for_pid(job).ok().flatten();
    let available = read_meminfo(root).ok().and_then(|m| m.available);
    choose(None, cgroup.as_ref(), available)
}

/// The tightest bound of those read.
pub fn choose(
    job_limit: Option<u64>,
    cgroup: Option<&CgroupMemory>,
    mem_available: Option<u64>,
) -> Option<MemoryCeiling> {
    if let Some(limit) = job_limit {
        return Some(MemoryCeiling {
            source: CeilingSource::JobLimit,
            bytes: limit,
            limit: Some(limit),
            cgroup: None,
        });
    }
    let by_cgroup = cgroup.and_then(|cg| {
        Some(MemoryCeiling {
            source: CeilingSource::EnclosingCgroup,
            bytes: cg.headroom?,
            limit: Some(cg.limit?),
            cgroup: Some(cg.limit_set_by.clone().unwrap_or_else(|| cg.path.clone())),
        })
    });
    let by_machine = mem_available.map(|bytes| MemoryCeiling {
        source: CeilingSource::MemAvailable,
        bytes,
        limit: None,
        cgroup: None,
    });
    match (by_cgroup, by_machine) {
        (Some(cg), Some(machine)) if machine.bytes < cg.bytes => Some(machine),
        (Some(cg), _) => Some(cg),
        (None, machine) => machine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::process::CgroupVersion;

    const GIB: u64 = 1 << 30;

    fn step_cgroup(limit: u64, headroom: u64) -> CgroupMemory {
        CgroupMemory {
            version: CgroupVersion::V2,
            path: "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0".into(),
            dir: "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0/user/task_0".into(),
            usage: Some(limit - headroom),
            peak: None,
            limit: Some(limit),
            limit_set_by: Some("/system.slice/slurmstepd.scope/job_7/step_0".into()),
            headroom: Some(headroom),
            high: None,
            swap_limit: None,
            oom_kills: None,
        }
    }

    #[test]
    fn the_jobs_own_limit_wins() {
        let c = choose(
            Some(400 << 20),
            Some(&step_cgroup(32 * GIB, 30 * GIB)),
            Some(GIB),
        )
        .unwrap();
        assert_eq!(c.source, CeilingSource::JobLimit);
        assert_eq!(c.bytes, 400 << 20);
    }

    #[test]
    fn under_slurm_the_room_left_in_the_steps_cgroup_is_the_ceiling() {
        let c = choose(
            None,
            Some(&step_cgroup(32 * GIB, 30 * GIB)),
            Some(200 * GIB),
        )
        .unwrap();
        assert_eq!(c.source, CeilingSource::EnclosingCgroup);
        assert_eq!(c.bytes, 30 * GIB);
        assert_eq!(c.limit, Some(32 * GIB));
        assert_eq!(
            c.cgroup.as_deref(),
            Some("/system.slice/slurmstepd.scope/job_7/step_0")
        );
    }

    #[test]
    fn a_cgroup_limit_above_what_the_machine_has_is_not_the_ceiling() {
        let c = choose(
            None,
            Some(&step_cgroup(1024 * GIB, 1000 * GIB)),
            Some(50 * GIB),
        )
        .unwrap();
        assert_eq!(c.source, CeilingSource::MemAvailable);
        assert_eq!(c.bytes, 50 * GIB);
    }

    #[test]
    fn without_a_limit_memavailable_is_the_ceiling_and_unknown_is_none() {
        let mut unlimited = step_cgroup(GIB, GIB);
        unlimited.limit = None;
        unlimited.headroom = None;
        let c = choose(None, Some(&unlimited), Some(8 * GIB)).unwrap();
        assert_eq!(c.source, CeilingSource::MemAvailable);
        assert_eq!(choose(None, Some(&unlimited), None), None);
        assert_eq!(choose(None, None, None), None);
    }
}
