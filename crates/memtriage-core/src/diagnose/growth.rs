//! How a job's memory grew: a steady growth over most of a supervised run that ended
//! well looks like a leak (an info finding, with its slope); for a job killed at its
//! ceiling, the early warning given and the snapshot taken near the ceiling are
//! evidence of what grew, and so is the growth the record shows before a death
//! (`why`). Rates are said one way for all of them.

use crate::model::finding::{Evidence, Finding, Quantity, Severity};
use crate::model::growth::{CeilingSnapshot, GrowthSummary};
use crate::model::ids;
use crate::model::run::Outcome;
use crate::model::units::iec;
use crate::model::why::Growth;

/// A growth this small is a runtime warming up (allocator arenas, JIT caches).
pub const LEAK_MIN_BYTES: u64 = 32 << 20;
/// ... or this small a share of what the tree held at its end.
pub const LEAK_MIN_SHARE_OF_END: f64 = 0.2;
/// Steady for at least this long and this share of the run: loading a model at
/// start-up is growth too, but it settles.
pub const LEAK_MIN_SECONDS: f64 = 5.0;
pub const LEAK_MIN_SHARE_OF_RUN: f64 = 0.5;
/// A line explains this much of the growth: it is steady, not a few steps.
pub const LEAK_MIN_R_SQUARED: f64 = 0.9;

/// Where the growth figures come from, as evidence names it.
const SOURCE: &str = "/proc/PID/smaps_rollup PSS, /proc/PID/stat RSS between readings";

/// Bytes a minute at `bytes_per_second`, rounded; a fall is 0.
pub fn per_minute(bytes_per_second: f64) -> u64 {
    (bytes_per_second * 60.0).round().max(0.0) as u64
}

/// A growth rate as people read it: per second when fast, per minute otherwise.
pub fn rate(bytes_per_second: f64) -> String {
    let per_second = bytes_per_second.max(0.0);
    if per_second >= (1u64 << 20) as f64 {
        format!("{}/s", iec(per_second.round() as u64))
    } else {
        format!("{}/min", iec(per_minute(per_second)))
    }
}

/// `run.leak-like-growth`: the tree grew steadily over most of a run that exited 0.
pub fn leak_like_growth(
    growth: &GrowthSummary,
    outcome: &Outcome,
    wall_seconds: f64,
) -> Option<Finding> {
    if outcome.exit_code != Some(0) {
        return None;
    }
    let e = growth.episode?;
    let grown = e.grown_bytes();
    let leak_like = e.bytes_per_second > 0.0
        && e.r_squared >= LEAK_MIN_R_SQUARED
        && e.seconds() >= LEAK_MIN_SECONDS
        && e.seconds() >= LEAK_MIN_SHARE_OF_RUN * wall_seconds
        && grown >= LEAK_MIN_BYTES
        && grown as f64 >= LEAK_MIN_SHARE_OF_END * e.end_bytes as f64;
    if !leak_like {
        return None;
    }
    let per_minute = per_minute(e.bytes_per_second);
    let mut evidence = vec![
        Evidence::text(
            "growth of the job's memory",
            format!(
                "{}/min, steady (r² {:.2}) from {:.1} s to {:.1} s of a {:.1} s run",
                iec(per_minute),
                e.r_squared,
                e.started_seconds,
                e.last_seen_seconds,
                wall_seconds
            ),
            SOURCE,
        )
        .with_quantity(Quantity::Bytes(per_minute)),
        Evidence::text(
            "the job's memory",
            format!("{} → {}", iec(e.start_bytes), iec(e.end_bytes)),
            SOURCE,
        )
        .with_quantity(Quantity::Bytes(grown)),
    ];
    if let Some(c) = &growth.ceiling {
        let room = c.bytes.saturating_sub(e.end_bytes);
        evidence.push(
            Evidence::text(
                "at this rate, the ceiling",
                format!(
                    "{} of room left at the end: used up after {:.0} more minutes",
                    iec(room),
                    room as f64 / e.bytes_per_second / 60.0
                ),
                "the run's memory limit, its cgroup's limit, or MemAvailable at the start",
            )
            .with_quantity(Quantity::Bytes(room)),
        );
    }
    Some(Finding {
        assessment: None,
        id: ids::RUN_LEAK_LIKE_GROWTH.into(),
        severity: Severity::Info,
        title: format!(
            "memory grew steadily, {}/min over {:.0} s: a leak, or a cache without a bound",
            iec(per_minute),
            e.seconds()
        ),
        evidence,
        why: "Memory that keeps growing in step with time, instead of settling after start-up, is how a leak looks: a cache or history without a bound, tensors kept alive (losses appended to a list instead of `loss.item()`). This run ended before it ran out; a longer one may not.".into(),
        fix: "Find what grows: `memtriage inspect --maps PID` twice, a minute apart, shows which regions grew; in Python compare two `tracemalloc.take_snapshot()`s. Rerun under `memtriage run --limit SIZE` to see when it would be killed.".into(),
    })
}

/// For a job killed at its ceiling: the early warning, and what the largest processes
/// held when the tree neared the ceiling. `label` names a process by pid and comm
/// (with its rank, where the run read one).
pub fn before_the_kill(
    growth: Option<&GrowthSummary>,
    snapshot: Option<&CeilingSnapshot>,
    label: impl Fn(i32, &str) -> String,
) -> Vec<Evidence> {
    let mut evidence = Vec::new();
    if let Some(w) = growth.and_then(|g| g.warning.as_ref()) {
        evidence.push(
            Evidence::text(
                format!("early warning at {:.1} s", w.at_seconds),
                w.message.clone(),
                SOURCE,
            )
            .with_quantity(Quantity::Seconds(w.seconds_to_ceiling)),
        );
    }
    if let Some(s) = snapshot {
        for p in &s.processes {
            let kinds: Vec<String> = p
                .by_kind
                .iter()
                .filter(|k| k.sizes.resident() > 0)
                .take(3)
                .map(|k| format!("{} {}", k.kind.label(), iec(k.sizes.resident())))
                .collect();
            let file = p
                .by_file
                .first()
                .filter(|f| f.sizes.resident() > 0)
                .map(|f| format!("; largest file {} {}", f.path, iec(f.sizes.resident())))
                .unwrap_or_default();
            evidence.push(
                Evidence::text(
                    format!(
                        "{} at {:.1} s, {} of the {} ceiling",
                        label(p.pid, &p.comm),
                        s.at_seconds,
                        iec(s.tree_bytes),
                        iec(s.ceiling_bytes)
                    ),
                    format!("{}{file}", kinds.join(", ")),
                    "/proc/PID/smaps",
                )
                .with_quantity(Quantity::Bytes(p.rss)),
            );
        }
    }
    evidence
}

/// How `what` (a job, a cgroup) grew until it died at `died_ms`, from the record
/// (`source` names the series).
pub fn until_death(what: &str, g: &Growth, died_ms: i64, source: &str) -> Evidence {
    let per_minute = per_minute(g.bytes_per_second);
    Evidence::text(
        format!("growth of {what} before it died"),
        format!(
            "{}/min (r² {:.2}) from {} to {}, starting {:.0} s before the kill",
            iec(per_minute),
            g.r_squared,
            iec(g.start_bytes),
            iec(g.end_bytes),
            (died_ms - g.started_ms) as f64 / 1000.0
        ),
        source,
    )
    .with_quantity(Quantity::Bytes(per_minute))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::growth::{CeilingSource, GrowthEpisode, MemoryCeiling};

    const MIB: u64 = 1 << 20;

    fn ok() -> Outcome {
        Outcome {
            exit_code: Some(0),
            signal: None,
            core_dumped: false,
        }
    }

    fn growth(start: f64, end: f64, from: u64, to: u64, r2: f64) -> GrowthSummary {
        GrowthSummary {
            ceiling: Some(MemoryCeiling {
                source: CeilingSource::MemAvailable,
                bytes: 8 << 30,
                limit: None,
                cgroup: None,
                group_kill: false,
                killer: None,
            }),
            episode: Some(GrowthEpisode {
                started_seconds: start,
                last_seen_seconds: end,
                start_bytes: from,
                end_bytes: to,
                bytes_per_second: (to - from) as f64 / (end - start),
                r_squared: r2,
            }),
            warning: None,
            warnings: 0,
            pressure_warning: None,
        }
    }

    #[test]
    fn steady_growth_over_most_of_a_run_that_ended_well_is_leak_like() {
        let f = leak_like_growth(&growth(0.5, 8.0, 10 * MIB, 85 * MIB, 0.99), &ok(), 8.3).unwrap();
        assert_eq!(f.id, ids::RUN_LEAK_LIKE_GROWTH);
        assert_eq!(f.severity, Severity::Info);
        assert!(f.title.contains("600 MiB/min"), "{}", f.title);
        assert_eq!(f.evidence[1].quantity, Some(Quantity::Bytes(75 * MIB)));
    }

    #[test]
    fn no_leak_when_it_failed_settled_was_small_or_was_not_steady() {
        let g = growth(0.5, 8.0, 10 * MIB, 85 * MIB, 0.99);
        let failed = Outcome {
            exit_code: Some(1),
            ..ok()
        };
        assert!(leak_like_growth(&g, &failed, 8.3).is_none());
        let killed = Outcome {
            exit_code: None,
            signal: Some(9),
            core_dumped: false,
        };
        assert!(leak_like_growth(&g, &killed, 8.3).is_none());
        // Start-up growth that then settled for the rest of a long run.
        assert!(leak_like_growth(&g, &ok(), 600.0).is_none());
        // A few MiB of allocator warm-up.
        let small = growth(0.5, 8.0, 10 * MIB, 30 * MIB, 0.99);
        assert!(leak_like_growth(&small, &ok(), 8.3).is_none());
        // 40 MiB on top of 4 GiB.
        let relative = growth(0.5, 8.0, 4096 * MIB, 4136 * MIB, 0.99);
        assert!(leak_like_growth(&relative, &ok(), 8.3).is_none());
        let steps = growth(0.5, 8.0, 10 * MIB, 85 * MIB, 0.6);
        assert!(leak_like_growth(&steps, &ok(), 8.3).is_none());
        let no_episode = GrowthSummary { episode: None, ..g };
        assert!(leak_like_growth(&no_episode, &ok(), 8.3).is_none());
    }
}
