//! What one recorded interval holds, taken from the watch's view: the machine, each
//! job and each memory cgroup, as `store` writes them.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::watch::MachineView;

use super::store::{CgroupRow, Interval, JobRow, MachineRow};

/// The interval a view describes; `None` before its first sample.
pub fn interval_from(view: &MachineView) -> Option<Interval> {
    let at = view.sampled_at?;
    let t_ms = at
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
        .min(i64::MAX as u128) as i64;
    let m = &view.machine;
    Some(Interval {
        machine: MachineRow {
            t_ms,
            mem_available: m.mem_available,
            swap_used: m.swap_used,
            psi_some: m
                .pressure
                .as_ref()
                .and_then(|p| Some(p.some.as_ref()?.avg10)),
            psi_full: m
                .pressure
                .as_ref()
                .and_then(|p| Some(p.full.as_ref()?.avg10)),
            page_cache: None,
            shm_used: m.shm_used,
        },
        jobs: view
            .groups
            .iter()
            .filter(|g| g.live)
            .map(|g| JobRow {
                job: g.name.clone(),
                processes: g.processes as u64,
                rss: g.rss,
                pss: g.pss,
                swap: g.swap,
                minor_faults: g.minor_faults,
                major_faults: g.major_faults,
            })
            .collect(),
        cgroups: view
            .cgroups
            .iter()
            .map(|c| CgroupRow {
                cgroup: c.path.clone(),
                usage: c.usage,
                limit: c.limit.flatten(),
                oom_kill: c
                    .events
                    .iter()
                    .find(|(k, _)| k == "oom_kill")
                    .map(|(_, n)| *n),
            })
            .collect(),
    })
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
        .min(i64::MAX as u128) as i64
}
