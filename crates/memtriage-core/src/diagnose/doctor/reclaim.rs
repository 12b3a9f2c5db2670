//! Proactive reclaim (DAMON) that pages out memory with no pressure.

use crate::model::finding::{Finding, Severity};
use crate::model::ids;
use crate::model::system::SystemSnapshot;

use super::{ev, finding, unreadable, Profile};

pub(super) fn proactive_reclaim(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let why = "Proactive reclaim pages out memory that has sat idle, with no memory pressure: \
               the page cache of a model warmed before its first request, or of a dataset read \
               once per epoch, is dropped after the idle time and the next access reads the disk \
               again. Locked (mlocked) pages are exempt.";
    if sys.unreadable_reason("proactive_reclaim").is_some() {
        return vec![unreadable(
            sys,
            ids::PROACTIVE_RECLAIM_UNREADABLE,
            "proactive reclaim (DAMON)",
            &[("proactive_reclaim", "/sys/kernel/mm/damon/admin/kdamonds")],
        )];
    }
    if sys.proactive_reclaim.is_empty() {
        return vec![finding(
            ids::PROACTIVE_RECLAIM_OK,
            Severity::Ok,
            "no proactive reclaim (DAMON pageout) is running".into(),
            vec![ev(
                "DAMON pageout schemes running",
                "none",
                "/sys/kernel/mm/damon/admin/kdamonds, /sys/module/damon_reclaim/parameters",
            )],
            why,
            String::new(),
        )];
    }
    let idle = |r: &crate::model::system::ProactiveReclaim| {
        r.min_idle_seconds
            .map_or("an unknown time".to_string(), |s| format!("{s:.0} s"))
    };
    let evidence = sys
        .proactive_reclaim
        .iter()
        .map(|r| {
            ev(
                "reclaims memory idle for",
                format!("{} ({})", idle(r), r.operations),
                &r.source,
            )
        })
        .collect();
    let shortest = sys
        .proactive_reclaim
        .iter()
        .filter_map(|r| r.min_idle_seconds)
        .min_by(f64::total_cmp);
    let stop: Vec<String> = sys
        .proactive_reclaim
        .iter()
        .map(|r| match r.source.find("/contexts/") {
            Some(i) => format!("echo off > {}/state", &r.source[..i]),
            None => format!("echo N > {}/enabled", r.source),
        })
        .collect();
    let page_cache = sys.proactive_reclaim.iter().any(|r| r.reaches_page_cache());
    let idle = shortest.map_or("a while".to_string(), |s| format!("{s:.0} s"));
    vec![finding(
        ids::PROACTIVE_RECLAIM_ACTIVE,
        if profile == Profile::Inference && page_cache {
            Severity::Warn
        } else {
            Severity::Info
        },
        if page_cache {
            format!("proactive reclaim pages out memory idle for {idle}: warmed files do not stay cached")
        } else {
            format!("proactive reclaim pages out the idle memory of the processes it watches ({idle})")
        },
        evidence,
        why,
        format!(
            "memtriage warm --lock MODEL_DIR   # pins the weights: locked pages are not reclaimed\n\
             # (from Python: memtriage.cache.warm(MODEL_DIR, lock=True))\n\
             # or, where the machine's owner allows (it may be how the host takes memory back):\n{}",
            stop.join("\n")
        ),
    )]
}
