//! The cgroups' own OOM kill counters, read in one bounded walk of the hierarchy and
//! compared with the walk before. Where the kernel has `memory.events.local` (v2,
//! ≥ 5.2), `memory.events` also counts the cgroups below, and the local count says
//! which kills were the cgroup's own; a rise that neither it nor a cgroup below
//! explains was in a cgroup removed since. Elsewhere (v1, v2 before 5.2) each counter
//! is the cgroup's own.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::probe::cgroup::{Hierarchy, WALK_MAX_DEPTH};
use crate::probe::root::Root;

/// One walk of the hierarchy's counters.
pub(super) struct Walk {
    /// `oom_kill` of each directory whose counter was read.
    counts: HashMap<PathBuf, u64>,
    /// v2's `memory.events.local` (kernel ≥ 5.2), where there is one.
    local: HashMap<PathBuf, u64>,
    /// Every directory met, read or not.
    seen: HashSet<PathBuf>,
    /// The walk stopped at its cap: directories it missed are not new.
    capped: bool,
    pub at: Instant,
}

/// Kills a cgroup's counters rose by: `exact` where they were the cgroup's own;
/// otherwise they were in a cgroup below it that is gone.
pub(super) struct Rise {
    pub dir: PathBuf,
    pub kills: u64,
    pub exact: bool,
}

impl Walk {
    /// Reads the `oom_kill` counters (and v2's local ones) of every cgroup of the
    /// hierarchy, in the one bounded walk of its tree.
    pub fn take(root: &Root, h: &Hierarchy, at: Instant) -> Walk {
        let mut counts = HashMap::new();
        let mut local = HashMap::new();
        let mut seen = HashSet::new();
        let complete = h.walk(root, WALK_MAX_DEPTH, &mut |cg, _| {
            seen.insert(cg.dir.clone());
            if let Some(n) = cg.oom_kills() {
                counts.insert(cg.dir.clone(), n);
            }
            if let Some(n) = cg.local_oom_kills() {
                local.insert(cg.dir.clone(), n);
            }
        });
        Walk {
            counts,
            local,
            seen,
            capped: !complete,
            at,
        }
    }

    /// Whether any cgroup's counter could be read.
    pub fn read_any(&self) -> bool {
        !self.counts.is_empty()
    }

    /// Each cgroup's rise since `before`, where there was one.
    pub fn rises_since(&self, before: &Walk) -> Vec<Rise> {
        let rise = |now_counts: &HashMap<PathBuf, u64>, then: &HashMap<PathBuf, u64>, d: &Path| {
            let n = now_counts.get(d).copied()?;
            Some(match then.get(d) {
                Some(&t) => n.saturating_sub(t),
                // Met before but unreadable then: a baseline now.
                None if before.seen.contains(d) => 0,
                // Made since the last walk: its kills are new, unless that walk
                // stopped short and may simply have missed it.
                None if before.capped => 0,
                None => n,
            })
        };
        let mut found = Vec::new();
        for dir in self.counts.keys() {
            let Some(total) = rise(&self.counts, &before.counts, dir) else {
                continue;
            };
            if total == 0 {
                continue;
            }
            match rise(&self.local, &before.local, dir) {
                Some(own) => {
                    let below: u64 = self
                        .counts
                        .keys()
                        .filter(|d| d.parent() == Some(dir.as_path()))
                        .filter_map(|d| rise(&self.counts, &before.counts, d))
                        .sum();
                    found.push(Rise {
                        dir: dir.clone(),
                        kills: own,
                        exact: true,
                    });
                    found.push(Rise {
                        dir: dir.clone(),
                        kills: total.saturating_sub(own).saturating_sub(below),
                        exact: false,
                    });
                }
                None => found.push(Rise {
                    dir: dir.clone(),
                    kills: total,
                    exact: true,
                }),
            }
        }
        found
    }
}
