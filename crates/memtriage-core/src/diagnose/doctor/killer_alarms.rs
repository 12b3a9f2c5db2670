//! Killers about to act on memory that reclaim would give back: the kubelet counts
//! active page cache as used (kubernetes#43916), so a node that reads much data nears
//! its eviction threshold with gigabytes reclaimable; systemd-oomd acts on pressure,
//! and reclaiming a dataset's page cache is pressure, so it kills whole cgroups with
//! memory to spare (systemd#23606 at 51% pressure with 6 of 32 GB used).

use crate::model::finding::{Finding, Severity};
use crate::model::ids;
use crate::model::killers::{KillerKind, OomKiller, Trigger};
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{ev, finding, Profile, GIB};

/// Near acting: room under this share of memory.
const NEAR_SHARE: f64 = 0.10;
/// Memory that is still plenty: MemAvailable over this share of memory.
const PLENTY_SHARE: f64 = 0.25;

pub(super) fn false_alarms(sys: &SystemSnapshot, _profile: Profile) -> Vec<Finding> {
    let Some(killers) = &sys.oom_killers else {
        return Vec::new();
    };
    killers
        .iter()
        .filter(|k| k.running)
        .filter_map(|k| match (k.kind, k.trigger.as_ref()?) {
            (KillerKind::Kubelet, Trigger::NodeAvailable { bytes }) => kubelet(sys, *bytes),
            (
                KillerKind::SystemdOomd,
                Trigger::Pressure {
                    percent, seconds, ..
                },
            ) => oomd(sys, k, *percent, *seconds),
            _ => None,
        })
        .collect()
}

/// The kubelet near its eviction threshold while page cache it counts as used could
/// be reclaimed.
fn kubelet(sys: &SystemSnapshot, threshold: u64) -> Option<Finding> {
    let mem = sys.memory.as_ref()?;
    let total = mem.total?;
    let node_available = mem.free? + mem.inactive_file?;
    let available = mem.available?;
    let room = node_available.saturating_sub(threshold);
    let counted_as_used = available.saturating_sub(node_available);
    let near = (room as f64) < total as f64 * NEAR_SHARE;
    if !near || counted_as_used < GIB {
        return None;
    }
    Some(finding(
        ids::KILLERS_FALSE_ALARM,
        Severity::Warn,
        format!(
            "the kubelet is {} from evicting pods while {} of page cache it counts as used \
             could be reclaimed",
            iec(room),
            iec(counted_as_used)
        ),
        vec![
            ev(
                "the kubelet's memory.available",
                format!(
                    "{} (MemFree + Inactive(file)); evicts under {}",
                    iec(node_available),
                    iec(threshold)
                ),
                "/proc/meminfo, the kubelet's evictionHard",
            ),
            ev("MemAvailable", iec(available), "/proc/meminfo"),
        ],
        "The kubelet takes the working set as memory in use, active page cache included; \
         the kernel would reclaim that cache before any process ran short. Pods that read \
         datasets or checkpoints are evicted with memory to spare (kubernetes#43916).",
        "Give the training pods requests equal to their limits (Guaranteed QoS, evicted \
         last); lower evictionHard memory.available, or read large files with \
         posix_fadvise(DONTNEED) after use so their cache does not stay active."
            .into(),
    ))
}

/// systemd-oomd's pressure already half way to its limit while memory is plenty.
fn oomd(sys: &SystemSnapshot, k: &OomKiller, limit: f64, seconds: f64) -> Option<Finding> {
    let mem = sys.memory.as_ref()?;
    let (total, available) = (mem.total?, mem.available?);
    let full = sys.pressure.as_ref()?.full.as_ref()?.avg10;
    let plenty = available as f64 >= total as f64 * PLENTY_SHARE;
    if full < limit / 2.0 || !plenty {
        return None;
    }
    Some(finding(
        ids::KILLERS_FALSE_ALARM,
        Severity::Warn,
        format!(
            "memory pressure is {full:.0}% with {} of {} available: systemd-oomd kills \
             whole cgroups over {limit:.0}% for {seconds:.0} s",
            iec(available),
            iec(total)
        ),
        vec![
            ev(
                "memory pressure (full, avg10)",
                format!("{full:.1}%"),
                "/proc/pressure/memory",
            ),
            ev("MemAvailable", iec(available), "/proc/meminfo"),
            ev("systemd-oomd", k.settings.clone(), &k.settings_from),
        ],
        "Pressure counts time stalled on memory, and reclaiming page cache (a dataset read \
         through it, a checkpoint loaded) is such a stall: systemd-oomd then kills every \
         process of the watched cgroup, a user's whole session, with memory available \
         (systemd#23606, #35270).",
        "Raise ManagedOOMMemoryPressureLimit= (e.g. 80%) on the slice the jobs run in \
         (`systemctl edit user@.service`), or run them in a scope it avoids: `systemd-run \
         --user --scope -p ManagedOOMPreference=avoid python train.py`."
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::killers::earlyoom_for_tests;
    use crate::model::system::{MemInfo, MemoryPressure, PressureLine};

    fn machine(available: u64, free: u64, inactive_file: u64, full: f64) -> SystemSnapshot {
        SystemSnapshot {
            memory: Some(MemInfo {
                total: Some(32 * GIB),
                available: Some(available),
                free: Some(free),
                inactive_file: Some(inactive_file),
                ..Default::default()
            }),
            pressure: Some(MemoryPressure {
                some: None,
                full: Some(PressureLine {
                    avg10: full,
                    avg60: full,
                    avg300: full,
                    total_us: 0,
                }),
            }),
            ..SystemSnapshot::empty()
        }
    }

    fn with(mut sys: SystemSnapshot, killer: OomKiller) -> SystemSnapshot {
        sys.oom_killers = Some(vec![killer]);
        sys
    }

    fn kubelet_killer() -> OomKiller {
        OomKiller {
            kind: KillerKind::Kubelet,
            trigger: Some(Trigger::NodeAvailable { bytes: 100 << 20 }),
            ..earlyoom_for_tests(0)
        }
    }

    #[test]
    fn the_kubelet_near_eviction_with_reclaimable_cache_is_a_false_alarm() {
        // 1.5 GiB free + inactive of 32: near; 20 GiB available: 18.5 GiB active cache.
        let near = with(machine(20 * GIB, GIB, GIB / 2, 0.0), kubelet_killer());
        let f = false_alarms(&near, Profile::Training);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].id, ids::KILLERS_FALSE_ALARM);
        assert!(
            f[0].title.contains("18.5 GiB of page cache"),
            "{}",
            f[0].title
        );
        // Truly short: nothing reclaimable beyond what the kubelet counts.
        let short = with(machine(GIB + GIB / 2, GIB, GIB / 2, 0.0), kubelet_killer());
        assert!(false_alarms(&short, Profile::Training).is_empty());
        // Far from its threshold.
        let far = with(machine(20 * GIB, 10 * GIB, 5 * GIB, 0.0), kubelet_killer());
        assert!(false_alarms(&far, Profile::Training).is_empty());
    }

    #[test]
    fn oomd_half_way_to_its_pressure_limit_with_memory_to_spare_is_a_false_alarm() {
        let oomd = OomKiller {
            kind: KillerKind::SystemdOomd,
            settings: "DefaultMemoryPressureLimit=60%".into(),
            trigger: Some(Trigger::Pressure {
                percent: 60.0,
                seconds: 30.0,
                swap_used_percent: 90.0,
                cgroups: vec![],
            }),
            ..earlyoom_for_tests(0)
        };
        let stalled = with(machine(20 * GIB, GIB, GIB, 35.0), oomd.clone());
        let f = false_alarms(&stalled, Profile::Training);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].title
                .starts_with("memory pressure is 35% with 20.0 GiB"),
            "{}",
            f[0].title
        );
        let calm = with(machine(20 * GIB, GIB, GIB, 5.0), oomd.clone());
        assert!(false_alarms(&calm, Profile::Training).is_empty());
        // Pressure with memory truly short is no false alarm.
        let short = with(machine(2 * GIB, GIB, GIB, 35.0), oomd.clone());
        assert!(false_alarms(&short, Profile::Training).is_empty());
        let idle = with(
            machine(20 * GIB, GIB, GIB, 35.0),
            OomKiller {
                running: false,
                ..oomd
            },
        );
        assert!(false_alarms(&idle, Profile::Training).is_empty());
    }
}
