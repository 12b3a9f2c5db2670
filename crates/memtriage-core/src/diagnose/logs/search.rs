//! Finding the next line a prefilter anchor is on: each group's earlier answer is
//! kept while it lies ahead, and a large region is searched by the groups in parallel.

use std::sync::OnceLock;

use memchr::memchr2;

use super::engine::Engine;

/// Where one prefilter group last searched a region from, and what it found.
#[derive(Debug, Clone, Default)]
pub(super) struct Searched {
    from: Option<usize>,
    hit: Option<usize>,
    /// All the group's hits in the region, found in advance, and the first not passed.
    known: Option<(Vec<usize>, usize)>,
}

/// Regions at least this large are searched by the prefilter groups in parallel.
pub(super) const PARALLEL_MIN: usize = 1 << 20;

pub(super) fn parallelism() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Every group's hits in the region (the first on each line), as [`Searched`]
/// answers that [`next_hit`] then takes in turn.
pub(super) fn search_in_parallel(engine: &Engine, region: &[u8]) -> Vec<Searched> {
    // As many threads as cores, each searching its share of the groups: more threads
    // than cores would only take turns.
    let groups = engine.prefilter.groups();
    let workers = parallelism().min(groups);
    // A group whose thread failed keeps no answer and is searched as it is asked.
    let mut hits: Vec<Option<Vec<usize>>> = vec![None; groups];
    std::thread::scope(|scope| {
        let spawned: Vec<_> = (1..workers)
            .map(|w| {
                scope.spawn(move || {
                    (w..groups)
                        .step_by(workers)
                        .map(|g| (g, line_hits(engine, g, region)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for g in (0..groups).step_by(workers) {
            hits[g] = Some(line_hits(engine, g, region));
        }
        for handle in spawned {
            for (g, h) in handle.join().unwrap_or_default() {
                hits[g] = Some(h);
            }
        }
    });
    hits.into_iter()
        .map(|h| Searched {
            from: None,
            hit: None,
            known: h.map(|h| (h, 0)),
        })
        .collect()
}

/// The first hit of `group` on each line of `region` that has one.
fn line_hits(engine: &Engine, group: usize, region: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(hit) = engine.prefilter.find(group, region, pos) {
        out.push(hit);
        pos = memchr2(b'\n', b'\r', &region[hit..]).map_or(region.len(), |i| hit + i + 1);
    }
    out
}

/// The first prefilter hit at or after `pos`, from any group. A group's earlier
/// answer stands while it lies ahead, so each group reads each byte about once.
pub(super) fn next_hit(
    engine: &Engine,
    region: &[u8],
    pos: usize,
    searched: &mut [Searched],
) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (group, s) in searched.iter_mut().enumerate() {
        if let Some((hits, next)) = &mut s.known {
            while hits.get(*next).is_some_and(|h| *h < pos) {
                *next += 1;
            }
            if let Some(h) = hits.get(*next) {
                best = Some(best.map_or(*h, |b: usize| b.min(*h)));
            }
            continue;
        }
        let still_ahead = s.from.is_some_and(|f| f <= pos) && s.hit.is_none_or(|h| h >= pos);
        if !still_ahead {
            s.from = Some(pos);
            s.hit = engine.prefilter.find(group, region, pos);
        }
        if let Some(h) = s.hit {
            best = Some(best.map_or(h, |b: usize| b.min(h)));
        }
    }
    best
}
