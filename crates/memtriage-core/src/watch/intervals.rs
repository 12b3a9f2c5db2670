//! What one recorded interval holds, taken from the watch's view: the machine, each
//! job, each memory cgroup, the largest processes, and each OOM kill since the last
//! interval with a snapshot of that moment, as the history's store writes them.

use std::time::{SystemTime, UNIX_EPOCH};

use super::{KillRecord, MachineView};
use crate::model::history::{
    CgroupRow, CrashRow, FaultRow, Interval, JobRow, KillRow, KillSnapshot, MachineRow,
    ProcessBrief,
};
use crate::probe::system::{read_meminfo, read_pressure, read_thp_setting, shm_usage, THP_ENABLED};
use crate::Root;

/// The largest processes of an earlier sample, and when it was taken.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Earlier {
    pub at: Option<SystemTime>,
    pub largest: Vec<ProcessBrief>,
}

impl Earlier {
    pub fn of(view: &MachineView) -> Earlier {
        Earlier {
            at: view.sampled_at,
            largest: view.largest.clone(),
        }
    }

    /// The largest processes just before `kill_at`: this sample's when it was taken
    /// before the kill, else the earlier one's (the victim still among them).
    fn before<'a>(
        &'a self,
        view: &'a MachineView,
        kill_at: SystemTime,
    ) -> (&'a [ProcessBrief], Option<SystemTime>) {
        match (view.sampled_at, self.at) {
            (Some(now), _) if now <= kill_at => (&view.largest, Some(now)),
            (_, Some(then)) if then <= kill_at => (&self.largest, Some(then)),
            (now, _) => (&view.largest, now),
        }
    }
}

/// The last kill, fault and crash a reader has taken (their `seq`s), so each is written once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Taken {
    pub kills: u64,
    pub faults: u64,
    pub crashes: u64,
}

/// The interval a view describes, with the kills and faults counted after `after`;
/// `None` before its first sample.
pub fn interval_from(view: &MachineView, after: Taken, earlier: &Earlier) -> Option<Interval> {
    let t_ms = unix_ms(view.sampled_at?);
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
            page_cache: m.page_cache,
            shm_used: m.shm_used,
            shm_size: m.shm_size,
            thp: m.thp_enabled.clone(),
            thp_anon: m.thp_anon,
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
            .map(|c| {
                let event = |name: &str| c.events.iter().find(|(k, _)| k == name).map(|(_, n)| *n);
                CgroupRow {
                    cgroup: c.path.clone(),
                    usage: c.usage,
                    limit: c.limit.flatten(),
                    oom_kill: event("oom_kill"),
                    peak: c.peak,
                    oom: event("oom"),
                    oom_group_kill: event("oom_group_kill"),
                    max_events: event("max"),
                    high_events: event("high"),
                }
            })
            .collect(),
        processes: view.largest.clone(),
        kills: view
            .oom
            .recent
            .iter()
            .filter(|k| k.seq > after.kills)
            .map(|k| {
                let (largest, at) = earlier.before(view, k.at);
                kill_row(k, largest, at)
            })
            .collect(),
        faults: view
            .oom
            .faults
            .iter()
            .filter(|f| f.seq > after.faults)
            .map(|f| FaultRow {
                t_ms: unix_ms(f.at),
                pid: f.fault.pid,
                comm: f.fault.comm.clone(),
                signal: f.fault.signal,
                object: f.fault.object.clone(),
                cmdline: f.cmdline.clone(),
                cgroup: f.cgroup.clone(),
            })
            .collect(),
        crashes: view
            .oom
            .crashes
            .iter()
            .filter(|c| c.seq > after.crashes)
            .map(|c| CrashRow {
                t_ms: unix_ms(c.at),
                pid: c.crash.pid,
                comm: c.crash.comm.clone(),
                text: c.crash.text.clone(),
                cmdline: c.cmdline.clone(),
                cgroup: c.cgroup.clone(),
            })
            .collect(),
    })
}

/// The last kill and fault a view holds, to pass as `after` next time.
pub fn taken(view: &MachineView) -> Taken {
    Taken {
        kills: view.oom.recent.last().map_or(0, |k| k.seq),
        faults: view.oom.faults.last().map_or(0, |f| f.seq),
        crashes: view.oom.crashes.last().map_or(0, |c| c.seq),
    }
}

fn kill_row(k: &KillRecord, largest: &[ProcessBrief], largest_at: Option<SystemTime>) -> KillRow {
    let report = k.report.as_ref();
    let snapshot = KillSnapshot {
        largest: largest.to_vec(),
        memory_stat: k.memory_stat.clone(),
        task_table: k.task_table.clone(),
        file_rss: report.and_then(|r| r.file_rss),
        shmem_rss: report.and_then(|r| r.shmem_rss),
        oom_score_adj: report.and_then(|r| r.oom_score_adj),
        largest_at_ms: largest_at.map(unix_ms),
        signal: k.signal.clone(),
        killer_settings: k.killer_settings.clone(),
    };
    KillRow {
        t_ms: unix_ms(k.at),
        pid: k.pid,
        victim: Some(k.victim.clone()).filter(|v| !v.is_empty()),
        cmdline: k.cmdline.clone(),
        cgroup: Some(k.cgroup.clone()).filter(|c| !c.is_empty()),
        limit_cgroup: report.and_then(|r| r.oom_memcg.clone()),
        constraint: report.map(|r| r.constraint),
        anon_rss: report.and_then(|r| r.anon_rss),
        total_vm: report.and_then(|r| r.total_vm),
        killer: k.killer.to_string(),
        source: k.source,
        snapshot_json: serde_json::to_string(&snapshot).ok(),
    }
}

fn unix_ms(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
        .min(i64::MAX as u128) as i64
}

/// PSI `some avg10` (percent of time at least one task stalled on memory) from
/// which pressure counts as rising.
pub const PRESSURE_SOME_PERCENT: f64 = 5.0;
/// ... or `full avg10`: every task stalled at once.
pub const PRESSURE_FULL_PERCENT: f64 = 1.0;
/// ... or MemAvailable falling this share of itself in one second.
pub const AVAILABLE_FALL_PER_SECOND: f64 = 0.02;

/// The machine's figures now, read directly (a few small files: cheap enough each
/// second): what is recorded between intervals while pressure rises.
pub fn machine_now(root: &Root) -> MachineRow {
    let meminfo = read_meminfo(root).ok();
    let pressure = read_pressure(root).ok().flatten();
    let shm = shm_usage(root).ok();
    MachineRow {
        t_ms: now_ms(),
        mem_available: meminfo.as_ref().and_then(|m| m.available),
        swap_used: meminfo.as_ref().and_then(|m| m.swap_used()),
        psi_some: pressure.as_ref().and_then(|p| Some(p.some.as_ref()?.avg10)),
        psi_full: pressure.as_ref().and_then(|p| Some(p.full.as_ref()?.avg10)),
        page_cache: meminfo.as_ref().and_then(|m| m.cached),
        shm_used: shm.as_ref().and_then(|s| s.used),
        shm_size: shm.as_ref().and_then(|s| s.total),
        thp: read_thp_setting(root, THP_ENABLED).ok().flatten(),
        thp_anon: meminfo.as_ref().and_then(|m| m.anon_huge_pages),
    }
}

/// Whether memory pressure is rising between two readings of the machine: tasks
/// stall on memory (PSI), or MemAvailable falls fast. Unknown figures say nothing.
pub fn pressure_rising(before: &MachineRow, now: &MachineRow) -> bool {
    let stalls = now.psi_some.is_some_and(|p| p >= PRESSURE_SOME_PERCENT)
        || now.psi_full.is_some_and(|p| p >= PRESSURE_FULL_PERCENT);
    let seconds = (now.t_ms - before.t_ms) as f64 / 1000.0;
    let falling = match (before.mem_available, now.mem_available) {
        (Some(b), Some(n)) if seconds > 0.0 && b > 0 => {
            (b.saturating_sub(n) as f64 / b as f64) / seconds >= AVAILABLE_FALL_PER_SECOND
        }
        _ => false,
    };
    stalls || falling
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    unix_ms(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t_ms: i64, available_mib: u64, psi_some: Option<f64>) -> MachineRow {
        MachineRow {
            t_ms,
            mem_available: Some(available_mib << 20),
            psi_some,
            ..MachineRow::default()
        }
    }

    #[test]
    fn pressure_rises_with_stalls_or_a_fast_fall_and_unknown_says_nothing() {
        let calm = at(0, 8000, Some(0.0));
        assert!(!pressure_rising(&calm, &at(1000, 7990, Some(0.2))));
        assert!(
            pressure_rising(&calm, &at(1000, 7990, Some(12.0))),
            "stalls"
        );
        assert!(
            pressure_rising(&calm, &at(1000, 7600, Some(0.0))),
            "5% gone in a second"
        );
        assert!(
            !pressure_rising(&calm, &at(10_000, 7600, Some(0.0))),
            "5% over ten seconds"
        );
        let unknown = MachineRow {
            t_ms: 1000,
            ..MachineRow::default()
        };
        assert!(!pressure_rising(&calm, &unknown));
    }

    #[test]
    fn a_kill_is_shown_with_the_largest_processes_of_the_sample_before_it() {
        use std::time::Duration;
        let brief = |pid: i32| ProcessBrief {
            pid,
            ppid: 1,
            comm: "p".into(),
            cmdline: String::new(),
            cgroup: None,
            job: format!("p[{pid}]"),
            rss: 1 << 20,
            pss: None,
            swap: None,
            forked_without_exec: None,
        };
        let t0 = UNIX_EPOCH + Duration::from_secs(1_000);
        let earlier = Earlier {
            at: Some(t0),
            largest: vec![brief(7), brief(9)],
        };
        let view = MachineView {
            sampled_at: Some(t0 + Duration::from_secs(10)),
            largest: vec![brief(9)],
            ..MachineView::default()
        };
        // Killed between the two samples: the victim (7) is in the earlier one.
        let (largest, at) = earlier.before(&view, t0 + Duration::from_secs(4));
        assert_eq!((largest.len(), at), (2, Some(t0)));
        // Killed after this sample was taken: this one is the moment before.
        let (largest, at) = earlier.before(&view, t0 + Duration::from_secs(12));
        assert_eq!((largest.len(), at), (1, view.sampled_at));
        // No sample before the kill at all: the first after it, saying when.
        let none = Earlier::default();
        let (largest, at) = none.before(&view, t0);
        assert_eq!((largest.len(), at), (1, view.sampled_at));
    }

    #[test]
    fn the_machine_is_read_now() {
        let m = machine_now(&Root::host());
        assert!(m.mem_available.is_some_and(|a| a > 0));
        assert!((m.t_ms - now_ms()).abs() < 5000);
    }
}
