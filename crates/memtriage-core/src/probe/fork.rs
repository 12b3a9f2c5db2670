//! Whether a child was forked from its parent without exec, and how much of what it
//! inherited it has since copied. Only such a child shares its parent's pages
//! copy-on-write; an exec'd child (torchrun's ranks, `spawn` workers) starts a fresh
//! address space, and its private memory is what it allocated, not a copy.
//!
//! The test is the layout exec chooses (stat fields 28, 47-51: see
//! [`MemoryLayout`]): a fork copies it, an exec randomises it. The copies are the
//! child's `Private_Dirty` bytes in mappings whose addresses its parent still maps,
//! never in mappings of its own (a new mmap, a tensor it allocated).

use crate::model::process::Rollup;
use crate::parse::smaps::{private_dirty_by_mapping, MappingDirty};
use crate::parse::smaps_rollup;
use crate::parse::stat::MemoryLayout;
use crate::probe::procdir::ProcDir;

/// `Some(true)` when the child still has the layout its parent gave it at fork,
/// `Some(false)` when it exec'd since, `None` when either layout is unknown.
pub fn forked_without_exec(
    child: Option<&MemoryLayout>,
    parent: Option<&MemoryLayout>,
) -> Option<bool> {
    Some(child? == parent?)
}

/// Bytes the child copied of what it inherited: for each of its mappings, its
/// private dirty bytes, at most the part of the mapping's range that the parent maps
/// too (a mapping the child grew, or a new one the kernel merged with an inherited
/// one, counts only over the inherited addresses). Both lists are in address order,
/// as the kernel prints them.
pub fn copied_after_fork(child: &[MappingDirty], parent: &[MappingDirty]) -> u64 {
    let mut copied = 0u64;
    let mut first = 0;
    for m in child {
        // Parent ranges ending before this mapping starts cannot overlap later ones.
        while first < parent.len() && parent[first].end <= m.start {
            first += 1;
        }
        let shared: u64 = parent[first..]
            .iter()
            .take_while(|p| p.start < m.end)
            .map(|p| p.end.min(m.end).saturating_sub(p.start.max(m.start)))
            .sum();
        copied += m.private_dirty.min(shared);
    }
    copied
}

/// One reading of a forked child: its rollup (the whole of smaps summed, so no
/// `smaps_rollup` is read besides) and what it copied of its parent's memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkReading {
    pub rollup: Rollup,
    /// Private dirty bytes in inherited mappings; at most `rollup.rss`.
    pub copied: u64,
}

/// Reads the child's smaps and the parent's maps. `None` when either could not be
/// read: what was copied is then unknown, not 0.
pub fn read(child: &ProcDir, parent: &ProcDir) -> Option<ForkReading> {
    let parent_maps = parent.read_to_end("maps").ok()?;
    let smaps = child.read_to_end("smaps").ok()?;
    let rollup = smaps_rollup::parse(&smaps)?;
    let copied = copied_after_fork(
        &private_dirty_by_mapping(&smaps),
        &private_dirty_by_mapping(&parent_maps),
    )
    .min(rollup.rss);
    Some(ForkReading { rollup, copied })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(start: u64, end: u64, private_dirty: u64) -> MappingDirty {
        MappingDirty {
            start,
            end,
            private_dirty,
            rss: private_dirty,
        }
    }

    fn layout(start_stack: u64) -> MemoryLayout {
        MemoryLayout {
            start_stack,
            start_brk: 0x5000,
            arg_start: 0x7000,
            arg_end: 0x7100,
            env_start: 0x7100,
            env_end: 0x7200,
        }
    }

    #[test]
    fn a_fork_keeps_the_layout_an_exec_changes_it_and_unknown_stays_unknown() {
        let parent = layout(0x9000);
        assert_eq!(
            forked_without_exec(Some(&parent), Some(&parent)),
            Some(true)
        );
        assert_eq!(
            forked_without_exec(Some(&layout(0x9100)), Some(&parent)),
            Some(false)
        );
        assert_eq!(forked_without_exec(None, Some(&parent)), None);
        assert_eq!(forked_without_exec(Some(&parent), None), None);
    }

    #[test]
    fn only_dirty_pages_of_inherited_mappings_count() {
        let parent = [m(0x1000, 0x9000, 0), m(0x20000, 0x30000, 0)];
        let child = [
            // Inherited and half rewritten.
            m(0x1000, 0x9000, 0x4000),
            // The child's own mapping between the parent's: nothing copied.
            m(0x10000, 0x18000, 0x8000),
            // Inherited, untouched.
            m(0x20000, 0x30000, 0),
            // A tensor the child allocated above everything the parent maps.
            m(0x100000, 0x900000, 0x800000),
        ];
        assert_eq!(copied_after_fork(&child, &parent), 0x4000);
    }

    #[test]
    fn a_mapping_grown_past_the_inherited_range_counts_at_most_the_overlap() {
        // The heap the parent had at fork, grown by the child to four times its size
        // and dirtied throughout: at most the inherited part counts.
        let parent = [m(0x10000, 0x14000, 0)];
        let child = [m(0x10000, 0x20000, 0x10000)];
        assert_eq!(copied_after_fork(&child, &parent), 0x4000);
        // A child mapping spanning several of the parent's (merged by the kernel).
        let parent = [
            m(0x0, 0x1000, 0),
            m(0x2000, 0x3000, 0),
            m(0x5000, 0x6000, 0),
        ];
        let child = [m(0x0, 0x4000, 0x4000)];
        assert_eq!(copied_after_fork(&child, &parent), 0x2000);
        assert_eq!(copied_after_fork(&child, &[]), 0);
        assert_eq!(copied_after_fork(&[], &parent), 0);
    }
}
