//! vm sysctls that limit or stall jobs: max_map_count and dirty page thresholds.

use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{ev, finding, opt_num, sysctl_fix, unreadable, vm_path, Profile, GIB};

/// Distros that raised it (Fedora 39, Ubuntu 23.10, Arch) use this or more.
pub const MAX_MAP_COUNT_RECOMMENDED: u64 = 1_048_576;
/// Below this a loader that maps many shards runs out of mappings.
pub const MAX_MAP_COUNT_MIN: u64 = 262_144;

use crate::model::system::MEMINFO;

pub(super) fn max_map_count(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(n) = sys.vm.max_map_count else {
        return vec![unreadable(
            sys,
            ids::MAX_MAP_COUNT_UNREADABLE,
            "vm.max_map_count",
            &[("vm.max_map_count", "/proc/sys/vm/max_map_count")],
        )];
    };
    let evidence = vec![ev(
        "vm.max_map_count",
        n.to_string(),
        &vm_path("max_map_count"),
    )];
    let why = "Each mmapped shard, safetensors file and allocator arena is one or more mappings; \
               at the limit mmap fails with ENOMEM and loaders die with \"Cannot allocate memory\" \
               though RAM is free (65530, the old default, is low for many mmapped shards).";
    if n >= MAX_MAP_COUNT_MIN {
        return vec![finding(
            ids::MAX_MAP_COUNT_OK,
            Severity::Ok,
            format!("vm.max_map_count is {n}"),
            evidence,
            why,
            String::new(),
        )];
    }
    vec![finding(
        ids::MAX_MAP_COUNT_LOW,
        if profile == Profile::Shared {
            Severity::Info
        } else {
            Severity::Warn
        },
        format!("vm.max_map_count is {n}; mmap-heavy data loaders need more"),
        evidence,
        why,
        sysctl_fix(&[("vm.max_map_count", MAX_MAP_COUNT_RECOMMENDED.to_string())]),
    )]
}

pub(super) fn dirty(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let v = &sys.vm;
    let total = sys.memory.as_ref().and_then(|m| m.total);
    let threshold = |bytes: Option<u64>, ratio: Option<u64>| match (bytes, ratio, total) {
        (Some(b), _, _) if b > 0 => Some(b),
        (_, Some(r), Some(t)) => Some(t / 100 * r),
        _ => None,
    };
    let (Some(limit), Some(background)) = (
        threshold(v.dirty_bytes, v.dirty_ratio),
        threshold(v.dirty_background_bytes, v.dirty_background_ratio),
    ) else {
        return vec![unreadable(
            sys,
            ids::DIRTY_UNREADABLE,
            "dirty page thresholds",
            &[
                ("vm.dirty_ratio", "/proc/sys/vm/dirty_ratio"),
                (
                    "vm.dirty_background_ratio",
                    "/proc/sys/vm/dirty_background_ratio",
                ),
                ("memory.total", MEMINFO),
            ],
        )];
    };
    let evidence = vec![
        ev(
            "vm.dirty_ratio",
            opt_num(v.dirty_ratio),
            &vm_path("dirty_ratio"),
        ),
        ev(
            "vm.dirty_bytes",
            opt_num(v.dirty_bytes),
            &vm_path("dirty_bytes"),
        ),
        ev(
            "vm.dirty_background_ratio",
            opt_num(v.dirty_background_ratio),
            &vm_path("dirty_background_ratio"),
        ),
        ev(
            "vm.dirty_background_bytes",
            opt_num(v.dirty_background_bytes),
            &vm_path("dirty_background_bytes"),
        ),
        Evidence::bytes(
            "writers block at about",
            limit,
            "dirty threshold of MemTotal",
        ),
        Evidence::bytes(
            "background writeback starts at about",
            background,
            "dirty threshold of MemTotal",
        ),
    ];
    let why = "A checkpoint save is written to page cache first; with a high threshold tens of \
               GiB pile up dirty, then writers (the training loop, the next save) block while \
               they are flushed at disk speed.";
    if limit > 16 * GIB || background > 4 * GIB {
        return vec![finding(
            ids::DIRTY_THRESHOLDS_HIGH,
            Severity::Info,
            format!(
                "up to {} may be dirty before writers block; writeback starts at {}",
                iec(limit),
                iec(background)
            ),
            evidence,
            why,
            sysctl_fix(&[
                ("vm.dirty_background_bytes", (GIB).to_string()),
                ("vm.dirty_bytes", (4 * GIB).to_string()),
            ]),
        )];
    }
    vec![finding(
        ids::DIRTY_OK,
        Severity::Ok,
        format!(
            "dirty page thresholds: writeback at {}, block at {}",
            iec(background),
            iec(limit)
        ),
        evidence,
        why,
        String::new(),
    )]
}
