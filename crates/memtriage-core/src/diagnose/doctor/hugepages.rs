//! Transparent huge pages and persistent huge page pools.

use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{ev, finding, sysctl_fix, unreadable, Profile};

const THP: &str = "/sys/kernel/mm/transparent_hugepage";
use crate::model::system::HUGEPAGES;

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
    if let Some(f) = defrag_finding(enabled, defrag, profile) {
        let (id, severity, title, why, value) = f;
        out.push(finding(
            id,
            severity,
            title,
            evidence.clone(),
            why,
            write("defrag", value),
        ));
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

type DefragAdvice = (&'static str, Severity, String, &'static str, &'static str);

/// What the defrag setting costs, judged with `enabled`: huge pages are only allocated
/// where `enabled` allows (with `madvise`, only in regions that ask: PyTorch's
/// allocator, jemalloc), so the same defrag value stalls different faults. `always`,
/// `madvise` and `defer+madvise` all compact synchronously in regions that ask;
/// `always` does so everywhere when `enabled` is `always`; `defer` never stalls.
fn defrag_finding(enabled: &str, defrag: Option<&str>, profile: Profile) -> Option<DefragAdvice> {
    let defrag = defrag?;
    if enabled == "never" {
        return None;
    }
    let everywhere = defrag == "always" && enabled == "always";
    let in_regions_that_ask = matches!(defrag, "always" | "madvise" | "defer+madvise");
    match profile {
        Profile::Training if everywhere => Some((
            ids::THP_DEFRAG_ALWAYS,
            Severity::Info,
            "THP defrag is `always`: page faults may stall in compaction".into(),
            "With enabled=always and defrag=always a page fault that finds no free 2 MiB page \
             compacts memory synchronously; steps that allocate take random pauses. \
             defer+madvise keeps the stall to regions that ask for huge pages and compacts in \
             the background for the rest.",
            "defer+madvise",
        )),
        Profile::Training => None,
        _ if everywhere => Some((
            ids::THP_DEFRAG_ALWAYS,
            Severity::Warn,
            "THP defrag is `always`: page faults stall in direct compaction".into(),
            "With enabled=always and defrag=always any page fault that finds no free 2 MiB \
             page compacts memory synchronously: tail latency spikes of tens of milliseconds \
             under memory pressure. defer never stalls a fault: kcompactd makes huge pages in \
             the background.",
            "defer",
        )),
        Profile::Inference if in_regions_that_ask => Some((
            ids::THP_DEFRAG_MADVISE,
            Severity::Info,
            format!(
                "THP defrag is `{defrag}`: regions that ask for huge pages stall in compaction on fault"
            ),
            "PyTorch's allocator and jemalloc ask for huge pages (madvise); with this defrag \
             value their page faults compact memory synchronously when no 2 MiB page is free, \
             a latency spike in serving. defer never stalls a fault: kcompactd makes huge pages \
             in the background.",
            "defer",
        )),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn advice(
        enabled: &str,
        defrag: &str,
        profile: Profile,
    ) -> Option<(&'static str, &'static str)> {
        defrag_finding(enabled, Some(defrag), profile).map(|(id, _, _, _, value)| (id, value))
    }

    #[test]
    fn defrag_advice_follows_the_whole_thp_state() {
        use Profile::{Inference, Shared, Training};
        let always = Some((ids::THP_DEFRAG_ALWAYS, "defer+madvise"));
        let stalls_everywhere = Some((ids::THP_DEFRAG_ALWAYS, "defer"));
        let stalls_where_asked = Some((ids::THP_DEFRAG_MADVISE, "defer"));
        for defrag in ["always", "defer", "defer+madvise", "madvise", "never"] {
            assert_eq!(advice("never", defrag, Inference), None, "{defrag}");
        }
        let cases = [
            ("always", "always", Training, always),
            ("always", "always", Inference, stalls_everywhere),
            ("always", "always", Shared, stalls_everywhere),
            ("always", "madvise", Training, None),
            ("always", "madvise", Inference, stalls_where_asked),
            ("always", "defer+madvise", Inference, stalls_where_asked),
            ("always", "defer", Inference, None),
            ("always", "never", Inference, None),
            // enabled=madvise: only regions that ask get huge pages at all, so `always`
            // stalls no more faults than `madvise`, and defer+madvise's background
            // compaction for everyone else has no one to serve.
            ("madvise", "always", Training, None),
            ("madvise", "always", Inference, stalls_where_asked),
            ("madvise", "madvise", Inference, stalls_where_asked),
            ("madvise", "defer+madvise", Inference, stalls_where_asked),
            ("madvise", "defer", Inference, None),
            ("madvise", "madvise", Training, None),
            ("madvise", "madvise", Shared, None),
        ];
        for (enabled, defrag, profile, want) in cases {
            assert_eq!(
                advice(enabled, defrag, profile),
                want,
                "{enabled} {defrag} {profile:?}"
            );
        }
    }
}
