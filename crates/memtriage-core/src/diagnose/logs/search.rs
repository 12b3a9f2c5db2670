//! Finding the lines a prefilter anchor is on. Every group's hits in a region are
//! found in one pass over it, a cache-sized block at a time: each block is folded to
//! lower case once and searched by every group while it is in the core's cache. A
//! large region is cut at line ends into one part per core.

use std::sync::OnceLock;

use memchr::{memchr2, memrchr2};

use super::engine::Engine;
use super::prefilter::{fold_case, Region};

/// How much of a region is folded to lower case and searched at a time.
const FOLD_BLOCK: usize = 64 << 10;

/// Regions at least this large are cut into one part per core.
pub(super) const PARALLEL_MIN: usize = 1 << 20;

pub(super) fn parallelism() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Every prefilter group's hits in a region (the first on each line, in order), and
/// for each group the first hit not yet passed.
#[derive(Debug)]
pub(super) struct Hits {
    per_group: Vec<Vec<usize>>,
    next: Vec<usize>,
}

impl Hits {
    /// The first hit at or after `pos`, from any group.
    pub(super) fn next_hit(&mut self, pos: usize) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (hits, next) in self.per_group.iter().zip(&mut self.next) {
            while hits.get(*next).is_some_and(|h| *h < pos) {
                *next += 1;
            }
            if let Some(&h) = hits.get(*next) {
                best = Some(best.map_or(h, |b| b.min(h)));
            }
        }
        best
    }
}

/// The hits of every group in `region`.
pub(super) fn search(engine: &Engine, region: &[u8]) -> Hits {
    let groups = engine.prefilter.groups();
    let cores = if region.len() >= PARALLEL_MIN {
        parallelism()
    } else {
        1
    };
    let parts = line_aligned_parts(region, cores);
    let mut per_part: Vec<Option<Vec<Vec<usize>>>> = vec![None; parts.len()];
    std::thread::scope(|scope| {
        let spawned: Vec<_> = parts[1..]
            .iter()
            .map(|part| {
                let text = &region[part.clone()];
                scope.spawn(move || hits_by_group(engine, text))
            })
            .collect();
        per_part[0] = Some(hits_by_group(engine, &region[parts[0].clone()]));
        for (slot, handle) in per_part[1..].iter_mut().zip(spawned) {
            *slot = handle.join().ok();
        }
    });
    let mut per_group: Vec<Vec<usize>> = vec![Vec::new(); groups];
    for (part, found) in parts.iter().zip(per_part) {
        // A part whose thread failed is searched here: no hit is lost.
        let found = found.unwrap_or_else(|| hits_by_group(engine, &region[part.clone()]));
        for (all, some) in per_group.iter_mut().zip(found) {
            all.extend(some.into_iter().map(|h| part.start + h));
        }
    }
    Hits {
        next: vec![0; groups],
        per_group,
    }
}

/// `text` cut into about `n` parts, each ending at a line end (or the text's end).
fn line_aligned_parts(text: &[u8], n: usize) -> Vec<std::ops::Range<usize>> {
    let mut parts = Vec::with_capacity(n);
    let mut start = 0;
    for i in 1..n {
        let target = text.len() * i / n;
        if target <= start {
            continue;
        }
        // Just after the last line end before the target, if any past `start`.
        let Some(end) = memrchr2(b'\n', b'\r', &text[start..target]).map(|j| start + j + 1) else {
            continue;
        };
        parts.push(start..end);
        start = end;
    }
    parts.push(start..text.len());
    parts
}

/// Where one group is in a pass over a text: no hit is wanted before `pos`.
#[derive(Clone, Copy)]
struct Cursor {
    pos: usize,
}

/// The first hit of each group on each line of `text` that has one. A block is
/// folded with [`Prefilter::longest_literal`](super::prefilter::Prefilter::longest_literal)
/// bytes on each side, so a literal that begins in it is seen whole and a group that
/// must look back (below) finds what it needs.
fn hits_by_group(engine: &Engine, text: &[u8]) -> Vec<Vec<usize>> {
    let prefilter = &engine.prefilter;
    let groups = prefilter.groups();
    let overlap = prefilter.longest_literal();
    let mut hits: Vec<Vec<usize>> = vec![Vec::new(); groups];
    let mut cursors = vec![Cursor { pos: 0 }; groups];
    let mut folded = Vec::with_capacity(FOLD_BLOCK + 2 * overlap);
    let mut start = 0;
    while start < text.len() {
        let limit = (start + FOLD_BLOCK).min(text.len());
        let behind = start.saturating_sub(overlap);
        let end = (limit + overlap).min(text.len());
        let block = &text[behind..end];
        if (0..groups).any(|g| prefilter.searches_folded(g) && cursors[g].pos < limit) {
            fold_case(block, &mut folded);
        }
        let region = Region {
            text: block,
            folded: &folded,
        };
        for (g, (cursor, out)) in cursors.iter_mut().zip(&mut hits).enumerate() {
            if cursor.pos < limit {
                let at = Block {
                    region,
                    behind,
                    limit,
                    overlap,
                };
                search_block(engine, g, text, &at, cursor, out);
            }
        }
        start = limit;
    }
    hits
}

/// A block of the text being searched: its region (and lower-case copy), where it
/// begins in the text, and where the literals it answers for must begin before.
struct Block<'a> {
    region: Region<'a>,
    behind: usize,
    limit: usize,
    overlap: usize,
}

/// One group's hits whose literal begins before the block's limit; moves the cursor
/// past them.
fn search_block(
    engine: &Engine,
    group: usize,
    text: &[u8],
    block: &Block<'_>,
    cursor: &mut Cursor,
    out: &mut Vec<usize>,
) {
    let Block {
        region,
        behind,
        limit,
        overlap,
    } = *block;
    let mut from = cursor.pos - behind;
    while let Some(hit) = engine.prefilter.find(group, region, from) {
        let hit = behind + hit;
        if hit >= limit {
            // Hits come in the order of their anchors: a literal that begins before
            // `limit` may have its anchor after this one's. The next block looks
            // back far enough to see it.
            cursor.pos = (behind + from).max(limit - overlap.min(limit));
            return;
        }
        out.push(hit);
        let next_line = memchr2(b'\n', b'\r', &text[hit..]).map_or(text.len(), |i| hit + i + 1);
        if next_line >= limit {
            cursor.pos = next_line;
            return;
        }
        from = next_line - behind;
    }
    cursor.pos = limit;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::logs::engine::engine;

    /// Every group's hits, one line at a time in the whole region's lower-case copy.
    fn hits_unblocked(engine: &Engine, group: usize, text: &[u8]) -> Vec<usize> {
        let mut folded = Vec::new();
        fold_case(text, &mut folded);
        let region = Region {
            text,
            folded: &folded,
        };
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(hit) = engine.prefilter.find(group, region, pos) {
            out.push(hit);
            pos = memchr2(b'\n', b'\r', &text[hit..]).map_or(text.len(), |i| hit + i + 1);
        }
        out
    }

    fn log_with_failures_at_every_offset() -> String {
        let lines = [
            "Memory cgroup out of memory: Killed process 4242 (python)",
            "TORCH.OUTOFMEMORYERROR: CUDA OUT OF MEMORY. Tried to allocate 2.00 GiB",
            "RuntimeError: DataLoader worker (pid 9) is killed by signal: Bus error.",
            "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
            "bash: line 1: 77 Killed python train.py",
        ];
        let mut text = String::new();
        let mut n = 0usize;
        while text.len() < 3 * FOLD_BLOCK + 5000 {
            let filler = "x".repeat(n % 97);
            text.push_str(&format!("step {n} loss 0.1 killed_frac=0.5 {filler}\n"));
            if n % 7 == 0 {
                text.push_str(lines[n % lines.len()]);
                text.push('\n');
            }
            n += 1;
        }
        text
    }

    #[test]
    fn blocks_find_what_the_whole_region_holds_across_their_edges() {
        let e = engine().unwrap();
        let text = log_with_failures_at_every_offset();
        let found = hits_by_group(e, text.as_bytes());
        for (group, hits) in found.iter().enumerate() {
            assert_eq!(
                hits,
                &hits_unblocked(e, group, text.as_bytes()),
                "group {group}"
            );
        }
        assert!(found.iter().map(Vec::len).sum::<usize>() > 100);
    }

    #[test]
    fn parts_cut_at_line_ends_find_what_one_part_does() {
        let e = engine().unwrap();
        let text = log_with_failures_at_every_offset();
        let whole = hits_by_group(e, text.as_bytes());
        for n in [2, 3, 7] {
            let parts = line_aligned_parts(text.as_bytes(), n);
            assert_eq!(parts.last().map(|p| p.end), Some(text.len()));
            let mut joined: Vec<Vec<usize>> = vec![Vec::new(); whole.len()];
            for part in parts {
                for (all, some) in joined
                    .iter_mut()
                    .zip(hits_by_group(e, &text.as_bytes()[part.clone()]))
                {
                    all.extend(some.into_iter().map(|h| part.start + h));
                }
            }
            assert_eq!(joined, whole, "{n} parts");
        }
    }
}
