//! One name per cgroup: the path from the hierarchy's true root, as the kernel log
//! prints it (`task_memcg=`). `/proc/PID/cgroup` shows paths relative to the reader's
//! cgroup namespace instead: inside a container whose namespace sits three levels
//! down, another pod's cgroup reads `/../../podB/ctr`. Matching a kill in the log to
//! a cgroup's counters, or to a process seen earlier, needs the one form.

use crate::model::process::CgroupVersion;
use crate::parse::cgroup::Membership;
use crate::probe::cgroup::{own_membership, Hierarchy};
use crate::probe::root::Root;

#[derive(Debug, Clone)]
pub struct CgroupNames {
    hierarchy: Hierarchy,
    /// Where this cgroup namespace's root sits, from the true root, where the mount
    /// says it is below it (its root is `..` steps) and it could be found.
    ns_root: Option<String>,
}

impl CgroupNames {
    pub fn new(root: &Root, hierarchy: Hierarchy) -> Self {
        let ns_root = locate_namespace_root(root, &hierarchy);
        CgroupNames { hierarchy, ns_root }
    }

    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// This hierarchy's path of a process, from its `/proc/PID/cgroup` text.
    pub fn of_process(&self, m: Membership) -> Option<String> {
        let ns_path = match self.hierarchy.version {
            CgroupVersion::V2 => m.v2,
            CgroupVersion::V1 => m.v1_memory,
        }?;
        self.absolute(&ns_path)
    }

    /// The kernel's name of the cgroup `/proc/PID/cgroup` shows here as `ns_path`;
    /// `None` where it cannot be told.
    pub fn absolute(&self, ns_path: &str) -> Option<String> {
        let mount_root = self.hierarchy.mount.root.as_str();
        // In the host's namespace (a `/` root, or a subtree mounted by path) the
        // paths shown are the kernel's.
        if mount_root == "/" || !self.hierarchy.mounts_true_root() {
            return Some(ns_path.to_string());
        }
        match &self.ns_root {
            Some(base) => resolve(&format!("{base}/{ns_path}")),
            None => {
                let inner = ns_path.strip_prefix(mount_root)?;
                (inner.is_empty() || inner.starts_with('/')).then(|| {
                    if inner.is_empty() {
                        "/".to_string()
                    } else {
                        inner.to_string()
                    }
                })
            }
        }
    }
}

/// `a/b/../c` → `/a/c`; `None` when `..` climbs above the root.
fn resolve(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if part == ".." {
            parts.pop()?;
        } else {
            parts.push(part);
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// With the host's hierarchy mounted from `..` steps above this namespace's root,
/// the namespace's root is the directory that many levels down holding this process
/// (found by the one bounded walk of the tree, [`Hierarchy::walk`]).
fn locate_namespace_root(root: &Root, h: &Hierarchy) -> Option<String> {
    if h.mount.root == "/" || !h.mounts_true_root() {
        return None;
    }
    let depth = h.mount.root.split('/').filter(|c| *c == "..").count();
    let m = own_membership(root).ok()?;
    let own = match h.version {
        CgroupVersion::V2 => m.v2,
        CgroupVersion::V1 => m.v1_memory,
    }?;
    if own.split('/').any(|c| c == "..") {
        return None;
    }
    let me = std::process::id().to_string();
    let mut level = Vec::new();
    let complete = h.walk(root, depth, &mut |cg, d| {
        if d == depth {
            level.push(cg.dir.clone());
        }
    });
    // Past the walk's cap the one that holds us may be among those not met.
    if !complete {
        return None;
    }
    level.into_iter().find_map(|candidate| {
        let mine = candidate
            .join(own.trim_start_matches('/'))
            .join("cgroup.procs");
        let procs = std::fs::read_to_string(mine).ok()?;
        procs
            .split_whitespace()
            .any(|p| p == me)
            .then(|| h.path_of(root, &candidate))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(mount_root: &str, ns_root: Option<&str>) -> CgroupNames {
        let mount = crate::parse::mountinfo::parse(&format!(
            "30 25 0:26 {mount_root} /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
        ))
        .into_iter()
        .next()
        .unwrap();
        CgroupNames {
            hierarchy: Hierarchy {
                mount,
                version: CgroupVersion::V2,
            },
            ns_root: ns_root.map(str::to_string),
        }
    }

    #[test]
    fn paths_in_a_containers_namespace_become_the_kernels() {
        let n = names(
            "/../../..",
            Some("/kubepods.slice/kubepods-burstable.slice/podA"),
        );
        assert_eq!(
            n.absolute("/../podB/ctr").as_deref(),
            Some("/kubepods.slice/kubepods-burstable.slice/podB/ctr")
        );
        assert_eq!(
            n.absolute("/../../../system.slice/kubelet.service")
                .as_deref(),
            Some("/system.slice/kubelet.service")
        );
        assert_eq!(
            n.absolute("/").as_deref(),
            Some("/kubepods.slice/kubepods-burstable.slice/podA")
        );
        assert_eq!(n.absolute("/../../../../x"), None, "above the root");
        // Where the namespace's root was not found, only paths through the mount's root.
        let n = names("/../../..", None);
        assert_eq!(
            n.absolute("/../../../system.slice").as_deref(),
            Some("/system.slice")
        );
        assert_eq!(n.absolute("/../podB"), None);
        // The host's own namespace: paths are the kernel's already.
        assert_eq!(names("/", None).absolute("/a/b").as_deref(), Some("/a/b"));
    }
}
