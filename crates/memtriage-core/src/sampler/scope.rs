//! Which processes a sampler follows, found afresh at every tick.

use std::collections::{HashMap, HashSet};

use crate::probe::process::{all_pids, parent_links};
use crate::probe::root::Root;

/// The processes a sampler follows. Membership is looked up at every tick, so
/// processes that appear later (forked workers, a pod's new containers) are picked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every descendant of this process, not itself: the job it started, the
    /// processes under it, and orphans reparented to it as their subreaper.
    Supervised,
    /// A process and all its descendants (what the tests follow; front ends follow
    /// a job they started, every process, or pids).
    #[cfg(test)]
    Tree(i32),
    /// Every process on the machine (kernel threads, which have no memory of their
    /// own, are left out).
    All,
    /// These processes, while they live.
    Pids(Vec<i32>),
}

/// Finds a scope's members.
pub(crate) struct Members {
    root: Root,
    scope: Scope,
    /// `/proc/PID/task/TID/children` exists (CONFIG_PROC_CHILDREN): descendants are
    /// found without reading every process's `stat`.
    children_files: bool,
}

impl Members {
    pub fn new(root: &Root, scope: Scope) -> Self {
        let children_files = match scope {
            Scope::All | Scope::Pids(_) => false,
            _ => {
                let me = std::process::id();
                root.path(&format!("/proc/{me}/task/{me}/children"))
                    .exists()
            }
        };
        Members {
            root: root.clone(),
            scope,
            children_files,
        }
    }

    /// Pids in the scope now, in no promised order.
    pub fn pids(&self) -> Vec<i32> {
        match &self.scope {
            Scope::Supervised => self.descendants(std::process::id() as i32),
            #[cfg(test)]
            Scope::Tree(pid) => {
                let mut pids = vec![*pid];
                pids.extend(self.descendants(*pid));
                pids
            }
            Scope::All => all_pids(&self.root).unwrap_or_default(),
            Scope::Pids(pids) => pids.clone(),
        }
    }

    fn descendants(&self, of: i32) -> Vec<i32> {
        if self.children_files {
            descendants_by_children_files(&self.root, of)
        } else {
            descendants_by_scan(&self.root, of)
        }
    }
}

fn descendants_by_children_files(root: &Root, of: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut queue = vec![of];
    let mut seen = HashSet::from([of]);
    while let Some(pid) = queue.pop() {
        // Every thread's list: a child belongs to the thread that forked it.
        let Ok(tasks) = std::fs::read_dir(root.path(&format!("/proc/{pid}/task"))) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in text
                .split_ascii_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
            {
                if seen.insert(child) {
                    found.push(child);
                    queue.push(child);
                }
            }
        }
    }
    found
}

fn descendants_by_scan(root: &Root, of: i32) -> Vec<i32> {
    let links = parent_links(root).unwrap_or_default();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for link in links {
        children.entry(link.ppid).or_default().push(link.pid);
    }
    let mut found = Vec::new();
    let mut queue = vec![of];
    let mut seen = HashSet::from([of]);
    while let Some(pid) = queue.pop() {
        for &c in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(c) {
                found.push(c);
                queue.push(c);
            }
        }
    }
    found
}
