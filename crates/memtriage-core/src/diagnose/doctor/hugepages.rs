//! Transparent huge pages and persistent huge page pools.

use crate::diagnose::ids;
use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{ev, finding, sysctl_fix, unreadable, Profile};

const THP: &str = "/sys/kernel/mm/transparent_hugepage";
const HUGEPAGES: &str = "/sys/kernel/mm/hugepages";

pub(super) fn thp(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let t = &sys.thp;
    let Some(enabled) = t.enabled.as_deref() else {
        return vec![unreadable(
            sys,
            ids::THP_UNREADABLE,
            "transparent huge page settings",
            &[("thp.enabled", "/sys/kernel/mm/transparent_hugepage/enabled")],
        )];
    };
    let defrag = t.defrag.as_deref();
    let evidence = vec![
        ev("enabled", enabled, &format!("{THP}/enabled")),
        ev(
            "defrag",
            defrag.unwrap_or("unreadable"),
            &format!("{THP}/defrag"),
        ),
        ev(
            "shmem_enabled",
            t.shmem_enabled.as_deref().unwrap_or("unreadable"),
            &format!("{THP}/shmem_enabled"),
        ),
    ];
    let write = |file: &str, value: &str| {
        format!(
            "echo {value} > {THP}/{file}\n\
             echo 'w {THP}/{file} - - - - {value}' >> /etc/tmpfiles.d/90-memtriage.conf   # keeps it after reboot"
        )
    };
    let mut out = Vec::new();
    if enabled == "never" && profile != Profile::Shared {
        out.push(finding(
            ids::THP_DISABLED,
            Severity::Info,
            "transparent huge pages are off".into(),
            evidence.clone(),
            "Large tensors in 4 KiB pages need 512 times the TLB entries of 2 MiB pages; \
             CPU-side data loading and optimizer steps on CPU slow down.",
            write("enabled", "madvise"),
        ));
    }
    if enabled == "always" && profile == Profile::Shared {
        out.push(finding(
            ids::THP_ENABLED_ALWAYS,
            Severity::Info,
            "transparent huge pages always on, on a shared machine".into(),
            evidence.clone(),
            "With THP always every sparse allocation can take a whole 2 MiB page; many users' \
             processes together waste RAM that madvise mode would leave to them.",
            write("enabled", "madvise"),
        ));
    }
    if enabled != "never" {
        match (defrag, profile) {
            (Some("always"), Profile::Training) => out.push(finding(
                ids::THP_DEFRAG_ALWAYS,
                Severity::Info,
                "THP defrag is `always`: page faults may stall in compaction".into(),
                evidence.clone(),
                "With defrag=always a page fault that finds no free 2 MiB page compacts memory \
                 synchronously; steps that allocate take random pauses.",
                write("defrag", "defer+madvise"),
            )),
            (Some("always"), _) => out.push(finding(
                ids::THP_DEFRAG_ALWAYS,
                Severity::Warn,
                "THP defrag is `always`: page faults stall in direct compaction".into(),
                evidence.clone(),
                "With defrag=always any page fault that finds no free 2 MiB page compacts memory \
                 synchronously: tail latency spikes of tens of milliseconds under memory pressure.",
                write("defrag", "defer+madvise"),
            )),
            (Some("madvise"), Profile::Inference) => out.push(finding(
                ids::THP_DEFRAG_MADVISE,
                Severity::Info,
                "THP defrag is `madvise`; latency-sensitive serving prefers `defer+madvise`".into(),
                evidence.clone(),
                "With defrag=madvise, regions that ask for huge pages (PyTorch, jemalloc) compact \
                 synchronously on fault; defer+madvise compacts in the background for everyone else.",
                write("defrag", "defer+madvise"),
            )),
            _ => {}
        }
    }
    if out.is_empty() {
        out.push(finding(
            ids::THP_OK,
            Severity::Ok,
            format!(
                "transparent huge pages: enabled={enabled}, defrag={}",
                defrag.unwrap_or("unreadable")
            ),
            evidence,
            "Huge pages cut TLB misses for large tensors; synchronous compaction costs latency.",
            String::new(),
        ));
    }
    out
}

pub(super) fn hugepages(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let Some(pools) = &sys.hugepages else {
        return vec![unreadable(
            sys,
            ids::HUGEPAGES_UNREADABLE,
            "huge page pools",
            &[("hugepages", HUGEPAGES)],
        )];
    };
    let total_ram = sys.memory.as_ref().and_then(|m| m.total);
    let mut evidence: Vec<Evidence> = pools
        .iter()
        .map(|p| {
            ev(
                &format!("{} pages", iec(p.page_size)),
                format!(
                    "{} total ({}), {} free{}",
                    p.total,
                    iec(p.bytes()),
                    p.free,
                    p.reserved
                        .map_or(String::new(), |r| format!(", {r} reserved"))
                ),
                &format!("{HUGEPAGES}/hugepages-{}kB/", p.page_size / 1024),
            )
        })
        .collect();
    if evidence.is_empty() {
        evidence.push(ev("huge page pools", "none", HUGEPAGES));
    }
    let mut out = Vec::new();
    for p in pools {
        if p.total == 0 || p.free < p.total || p.reserved.is_some_and(|r| r > 0) {
            continue;
        }
        let big = total_ram.is_some_and(|t| p.bytes() > t / 10);
        let fix = if sys.memory.as_ref().and_then(|m| m.hugepage_size) == Some(p.page_size) {
            sysctl_fix(&[("vm.nr_hugepages", "0".into())])
        } else {
            format!(
                "echo 0 > {HUGEPAGES}/hugepages-{}kB/nr_hugepages\n# and drop hugepages= / hugepagesz= from the kernel command line",
                p.page_size / 1024
            )
        };
        out.push(finding(
            ids::HUGEPAGES_POOL_UNUSED,
            if big { Severity::Warn } else { Severity::Info },
            format!(
                "{} of RAM reserved as {} huge pages that nothing uses",
                iec(p.bytes()),
                iec(p.page_size)
            ),
            evidence.clone(),
            "A huge page pool takes its RAM away from every other use when it is sized; unless a \
             program maps hugetlbfs (DPDK, some inference servers), it is RAM the jobs cannot have.",
            fix,
        ));
    }
    if out.is_empty() {
        let reserved: u64 = pools.iter().map(|p| p.bytes()).sum();
        out.push(finding(
            ids::HUGEPAGES_OK,
            Severity::Ok,
            if reserved == 0 {
                "no persistent huge page pool reserves RAM".into()
            } else {
                format!("huge page pools of {} in use", iec(reserved))
            },
            evidence,
            "Persistent huge page pools hold RAM whether or not anything uses them.",
            String::new(),
        ));
    }
    out
}
