//! Whether the memory figures of a log rose, and how a rise is told: each series (a
//! label a job printed its memory under, a process in pasted snapshots) is judged on
//! its own readings.

use std::collections::BTreeMap;

use super::{LogMatch, KEEP_FIRST};
use crate::model::finding::Evidence;
use crate::model::units::iec;

/// Series kept at most: a process table of hundreds of rows keeps the first seen.
const MAX_SERIES: usize = 256;

/// Memory figures a log printed, by series: the first and last [`KEEP_FIRST`] of each,
/// so that a series of many readings (a process table's rows) pushes out no other.
#[derive(Debug, Clone, Default)]
pub(super) struct Figures {
    by_series: BTreeMap<String, Vec<LogMatch>>,
}

impl Figures {
    pub(super) fn push(&mut self, m: LogMatch) {
        let Some(name) = m.capture("series") else {
            return;
        };
        if !self.by_series.contains_key(name) && self.by_series.len() >= MAX_SERIES {
            return;
        }
        let readings = self.by_series.entry(name.to_string()).or_default();
        if readings.len() >= 2 * KEEP_FIRST {
            readings.remove(KEEP_FIRST);
        }
        readings.push(m);
    }

    /// Every figure kept, in the order of the log's lines.
    pub(super) fn in_order(&self) -> Vec<LogMatch> {
        let mut all: Vec<LogMatch> = self.by_series.values().flatten().cloned().collect();
        all.sort_by_key(|m| m.line_no);
        all
    }
}

/// Readings of one memory figure the job printed, in order; growth when it rose by a
/// fifth or more from first to last, most steps went up, and it still rose at the end.
///
/// Snapshots a person pasted (`ps aux` now and two hours later) need fewer readings
/// than a job's periodic prints: nobody pastes three unless they rose.
pub(super) fn memory_growth(group: &[&LogMatch]) -> Option<(String, Vec<(u64, u64)>)> {
    // By series: its readings (line, bytes), and whether they are snapshots.
    type Readings = (Vec<(u64, u64)>, bool);
    let mut series: BTreeMap<&str, Readings> = BTreeMap::new();
    for m in group.iter().filter(|m| m.capture("series").is_some()) {
        let (Some(name), Some(bytes)) = (
            m.capture("series"),
            m.capture("bytes").and_then(|b| b.parse::<u64>().ok()),
        ) else {
            continue;
        };
        let entry = series.entry(name).or_default();
        entry.0.push((m.line_no, bytes));
        entry.1 |= m.capture("snapshot").is_some();
    }
    series
        .into_iter()
        .filter(|(_, (r, snapshots))| rising(r) || (*snapshots && snapshots_rising(r)))
        .max_by_key(|(_, (r, _))| r.len())
        .map(|(name, (r, _))| (name.to_string(), r))
}

const SNAPSHOTS_MIN_READINGS: usize = 3;

/// Snapshots that rose at each one, by a fifth or more in all.
fn snapshots_rising(readings: &[(u64, u64)]) -> bool {
    let (Some(first), Some(last)) = (readings.first(), readings.last()) else {
        return false;
    };
    readings.len() >= SNAPSHOTS_MIN_READINGS
        && first.1 > 0
        && readings.windows(2).all(|w| w[1].1 > w[0].1)
        && last.1 as f64 >= first.1 as f64 * GROWTH_MIN_RISE
}

const GROWTH_MIN_READINGS: usize = 4;
const GROWTH_MIN_RISE: f64 = 1.2;
/// A long series that rises at nearly every reading grows however slowly: a leak of a
/// few MB an iteration is +5% over the stretch of log a user pastes.
const STEADY_MIN_READINGS: usize = 8;
const STEADY_MIN_RISE: f64 = 1.05;

/// Three readings are enough where each rose by a tenth and the last is half again the
/// first (`current RAM usage now 1632 MiB`, `2394 MiB`, `3158 MiB`, one a cell run):
/// a job's warm-up rises too, but settles within its first readings.
const SHORT_SERIES_READINGS: usize = 3;
const SHORT_SERIES_STEP: f64 = 1.1;
const SHORT_SERIES_RISE: f64 = 1.5;

fn rising(readings: &[(u64, u64)]) -> bool {
    if readings.len() == SHORT_SERIES_READINGS {
        let each_step = readings
            .windows(2)
            .all(|w| w[0].1 > 0 && w[1].1 as f64 >= w[0].1 as f64 * SHORT_SERIES_STEP);
        return each_step && readings[2].1 as f64 >= readings[0].1 as f64 * SHORT_SERIES_RISE;
    }
    if readings.len() < GROWTH_MIN_READINGS {
        return false;
    }
    let first = readings[0].1 as f64;
    let last = readings[readings.len() - 1].1 as f64;
    let ups = readings.windows(2).filter(|w| w[1].1 > w[0].1).count();
    let downs = readings.windows(2).filter(|w| w[1].1 < w[0].1).count();
    let tail = &readings[readings.len() - GROWTH_MIN_READINGS..];
    let still_rising = tail[tail.len() - 1].1 > tail[0].1;
    let fast = last >= first * GROWTH_MIN_RISE && ups >= 2 * downs.max(1);
    let steady = readings.len() >= STEADY_MIN_READINGS
        && last >= first * STEADY_MIN_RISE
        && ups >= 4 * downs.max(1);
    first > 0.0 && still_rising && (fast || steady)
}

/// The readings' evidence and the title: from what to what, over how many readings.
pub(super) fn growth_evidence(
    name: &str,
    readings: &[(u64, u64)],
    as_printed: bool,
    source: &str,
    out: &mut Vec<Evidence>,
) -> String {
    let (first_line, first) = readings[0];
    let (last_line, last) = readings[readings.len() - 1];
    if as_printed {
        out.push(Evidence::text(
            format!("{name}, first reading"),
            first.to_string(),
            format!("{source}:{first_line}"),
        ));
        out.push(Evidence::text(
            format!("{name}, last reading"),
            last.to_string(),
            format!("{source}:{last_line}"),
        ));
        out.push(Evidence::count("readings", readings.len() as u64, source));
        return format!(
            "The job's {name} rose from {first} to {last} (units as printed) over {} readings",
            readings.len()
        );
    }
    let steps = (readings.len() - 1) as u64;
    let per = last.saturating_sub(first) / steps.max(1);
    out.push(Evidence::bytes(
        format!("{name}, first reading"),
        first,
        format!("{source}:{first_line}"),
    ));
    out.push(Evidence::bytes(
        format!("{name}, last reading"),
        last,
        format!("{source}:{last_line}"),
    ));
    out.push(Evidence::bytes("rise per reading (mean)", per, source));
    out.push(Evidence::count("readings", readings.len() as u64, source));
    format!(
        "The job's {name} rose from {} to {} over {} readings ({} per reading)",
        iec(first),
        iec(last),
        readings.len(),
        iec(per)
    )
}
