//! The memory cgroups a machine-wide view reports: those holding the processes it
//! samples, and those above them that set a limit, capped by usage.

use std::collections::BTreeSet;

use crate::model::process::CgroupVersion;
use crate::parse::workload::{from_cgroup_path, Workload};
use crate::probe::cgroup::Hierarchy;
use crate::probe::root::Root;

use super::identity::Identities;

/// One cgroup's counters; each `None` where its file is missing or unreadable.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupView {
    /// As `/proc/PID/cgroup` and the kernel log name it.
    pub path: String,
    pub version: CgroupVersion,
    pub usage: Option<u64>,
    /// `Some(None)`: no limit of its own.
    pub limit: Option<Option<u64>>,
    pub peak: Option<u64>,
    /// `memory.events` (v2: counted in the cgroup and below it, from kernel 5.2) or
    /// the `oom_kill` line of `memory.oom_control` (v1: in the cgroup itself).
    pub events: Vec<(String, u64)>,
    pub workload: Workload,
}

/// The cgroups of live processes and their limiting ancestors, largest usage first,
/// at most `max`; and how many the cap left out.
pub fn read(
    root: &Root,
    hierarchy: &Hierarchy,
    identities: &Identities,
    max: usize,
) -> (Vec<CgroupView>, usize) {
    let mut paths: BTreeSet<String> = BTreeSet::new();
    for path in identities.live_cgroups() {
        paths.insert(path.to_string());
        let mut up = parent(path);
        while let Some(p) = up {
            if p == "/" {
                break;
            }
            let Some(dir) = hierarchy.cgroup(root, &p) else {
                break;
            };
            if matches!(dir.limit(), Some(Some(_))) {
                paths.insert(p.clone());
            }
            up = parent(&p);
        }
    }
    let mut views: Vec<CgroupView> = paths
        .into_iter()
        .filter_map(|path| {
            let dir = hierarchy.cgroup(root, &path)?;
            // Gone since its process was seen.
            if !dir.dir.is_dir() {
                return None;
            }
            Some(CgroupView {
                usage: dir.usage(),
                limit: dir.limit(),
                peak: dir.peak(),
                events: dir.events().unwrap_or_default(),
                workload: from_cgroup_path(&path),
                version: hierarchy.version,
                path,
            })
        })
        .collect();
    views.sort_by(|a, b| b.usage.cmp(&a.usage).then(a.path.cmp(&b.path)));
    let dropped = views.len().saturating_sub(max);
    views.truncate(max);
    (views, dropped)
}

fn parent(path: &str) -> Option<String> {
    let trimmed = path.trim_end_matches('/');
    let (head, _) = trimmed.rsplit_once('/')?;
    Some(if head.is_empty() {
        "/".into()
    } else {
        head.into()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn parent_walks_up_to_the_root() {
        assert_eq!(super::parent("/a/b").as_deref(), Some("/a"));
        assert_eq!(super::parent("/a").as_deref(), Some("/"));
        assert_eq!(super::parent("/"), None);
    }
}
