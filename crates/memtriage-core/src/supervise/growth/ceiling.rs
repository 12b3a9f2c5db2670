//! The memory a job's tree can reach before something kills it: its `--limit`; else
//! the room left under the limit of the cgroup it runs in (a Slurm job step, a
//! container); else, or when that is more, the machine's `MemAvailable`; and before
//! any of them, a userspace killer whose threshold comes first (earlyoom at its floor
//! of MemAvailable, the kubelet, Ray's monitor). Read once, as the job starts, when
//! its tree holds next to nothing yet.

use crate::diagnose::killers;
use crate::model::growth::{CeilingSource, KillerCeiling, MemoryCeiling};
use crate::model::killers::{KillerKind, OomKiller, Trigger};
use crate::model::process::CgroupMemory;
use crate::model::system::MemInfo;
use crate::probe::cgroup::CgroupReader;
use crate::probe::root::Root;
use crate::probe::system::read_meminfo;

/// Reads what bounds the job whose main process is `job`, `killers` being the
/// machine's (`probe::killers::find`). `None` when nothing could be read: no limit
/// and no `MemAvailable`.
pub fn discover(
    root: &Root,
    job_limit: Option<u64>,
    job: i32,
    killers: &[OomKiller],
) -> Option<MemoryCeiling> {
    let mem = read_meminfo(root).ok();
    let cgroup = match job_limit {
        Some(_) => None,
        None => CgroupReader::discover(root).for_pid(job).ok().flatten(),
    };
    let available = mem.as_ref().and_then(|m| m.available);
    let mut kernel = choose(job_limit, cgroup.as_ref(), available)?;
    kernel.group_kill = kernel.source == CeilingSource::EnclosingCgroup
        && killers.iter().any(|k| {
            matches!(
                k.trigger,
                Some(Trigger::Limit {
                    group_kill: true,
                    ..
                })
            )
        });
    Some(match mem {
        Some(mem) => first_killer(kernel, killers, &mem),
        None => kernel,
    })
}

/// A userspace killer that acts before the kernel's ceiling, as the ceiling.
pub fn first_killer(kernel: MemoryCeiling, killers: &[OomKiller], mem: &MemInfo) -> MemoryCeiling {
    let userspace = killers
        .iter()
        .filter(|k| !matches!(k.kind, KillerKind::Kernel | KillerKind::Slurm));
    let first = userspace
        .filter_map(|k| Some((k, killers::room(k, mem, None)?)))
        .filter(|(_, room)| *room < kernel.bytes)
        .min_by_key(|(_, room)| *room);
    let Some((k, room)) = first else {
        return kernel;
    };
    MemoryCeiling {
        source: CeilingSource::Killer,
        bytes: room,
        limit: None,
        cgroup: None,
        group_kill: false,
        killer: Some(KillerCeiling {
            kind: k.kind,
            label: k.label(),
            threshold: killers::threshold(k),
            action: killers::action_phrase(k).into(),
            victim_rule: k.victim.describe(),
            kernel_bytes: kernel.bytes,
        }),
    }
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
            group_kill: false,
            killer: None,
        });
    }
    let by_cgroup = cgroup.and_then(|cg| {
        Some(MemoryCeiling {
            source: CeilingSource::EnclosingCgroup,
            bytes: cg.headroom?,
            limit: Some(cg.limit?),
            cgroup: Some(cg.limit_set_by.clone().unwrap_or_else(|| cg.path.clone())),
            group_kill: false,
            killer: None,
        })
    });
    let by_machine = mem_available.map(|bytes| MemoryCeiling {
        source: CeilingSource::MemAvailable,
        bytes,
        limit: None,
        cgroup: None,
        group_kill: false,
        killer: None,
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
    fn earlyoom_is_the_ceiling_when_its_floor_comes_before_the_kernels() {
        let earlyoom = crate::diagnose::killers::earlyoom_for_tests(17 * GIB);
        let mem = MemInfo {
            total: Some(24 * GIB),
            available: Some(21 * GIB),
            swap_total: Some(0),
            swap_free: Some(0),
            ..Default::default()
        };
        let kernel = choose(None, None, mem.available).unwrap();
        let c = first_killer(kernel.clone(), std::slice::from_ref(&earlyoom), &mem);
        assert_eq!(c.source, CeilingSource::Killer);
        assert_eq!(c.bytes, 4 * GIB);
        let k = c.killer.unwrap();
        assert_eq!(k.kernel_bytes, 21 * GIB);
        assert_eq!(k.label, "earlyoom (pid 812, -m 72)");
        assert_eq!(k.action, "send SIGTERM to");
        // Installed but not running, or a floor under what the kernel leaves: the kernel's.
        let idle = OomKiller {
            running: false,
            ..earlyoom.clone()
        };
        assert_eq!(first_killer(kernel.clone(), &[idle], &mem), kernel);
        let tight = choose(None, Some(&step_cgroup(4 * GIB, 2 * GIB)), mem.available).unwrap();
        assert_eq!(first_killer(tight.clone(), &[earlyoom], &mem), tight);
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
