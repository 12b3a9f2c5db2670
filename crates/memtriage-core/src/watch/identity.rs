//! Who each process is, read once when it is first seen and kept for a while after
//! it ends: its command line and its memory cgroup. A victim of the OOM killer whose container is gone by the time
//! its kill is read is still named from here.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::model::shell;
use crate::probe::cgroup::{membership, Hierarchies, Hierarchy};
use crate::probe::procdir;
use crate::probe::root::Root;

use super::cgroup_names::CgroupNames;

/// One process as first seen.
#[derive(Debug, Clone)]
pub struct Identity {
    pub comm: String,
    /// Arguments joined by spaces; empty where unreadable (a kernel thread has none).
    pub cmdline: String,
    /// Its memory cgroup, as the kernel names it (see `cgroup_names`; v2 where the
    /// controller is there, else v1's); `None` where it is in no memory cgroup
    /// visible here, or its name cannot be told.
    pub cgroup: Option<String>,
    /// When it was last seen alive; `None` while it is.
    pub ended: Option<Instant>,
}

/// Identities by pid, those of ended processes kept for `keep`.
pub struct Identities {
    root: Root,
    names: Option<CgroupNames>,
    by_pid: HashMap<i32, Identity>,
    keep: Duration,
}

impl Identities {
    pub fn new(root: &Root, keep: Duration) -> Self {
        let hierarchies = Hierarchies::discover(root).unwrap_or_default();
        Identities {
            root: root.clone(),
            names: hierarchies
                .preferred()
                .cloned()
                .map(|h| CgroupNames::new(root, h)),
            by_pid: HashMap::new(),
            keep,
        }
    }

    /// The hierarchy whose cgroups [`Identity::cgroup`] names.
    pub fn hierarchy(&self) -> Option<&Hierarchy> {
        self.names.as_ref().map(CgroupNames::hierarchy)
    }

    pub fn get(&self, pid: i32) -> Option<&Identity> {
        self.by_pid.get(&pid)
    }

    /// Marks the live processes of a sample: new ones are read, ended ones marked,
    /// long-ended ones forgotten. A process whose name changed (it exec'd, or its pid
    /// was reused) is read again.
    pub fn update<'a>(&mut self, live: impl IntoIterator<Item = (i32, &'a str)>, now: Instant) {
        let mut seen = std::collections::HashSet::new();
        for (pid, comm) in live {
            seen.insert(pid);
            let known = self
                .by_pid
                .get(&pid)
                .is_some_and(|id| id.ended.is_none() && id.comm == comm);
            if !known {
                let identity = self.read(pid, comm);
                self.by_pid.insert(pid, identity);
            }
        }
        for (pid, id) in self.by_pid.iter_mut() {
            if id.ended.is_none() && !seen.contains(pid) {
                id.ended = Some(now);
            }
        }
        let keep = self.keep;
        self.by_pid.retain(|_, id| {
            id.ended
                .is_none_or(|t| now.saturating_duration_since(t) < keep)
        });
    }

    /// Processes of `cgroup` that ended at or after `since`.
    pub fn ended_in(&self, cgroup: &str, since: Instant) -> Vec<(i32, &Identity)> {
        self.by_pid
            .iter()
            .filter(|(_, id)| id.cgroup.as_deref() == Some(cgroup))
            .filter(|(_, id)| id.ended.is_some_and(|t| t >= since))
            .map(|(pid, id)| (*pid, id))
            .collect()
    }

    /// Live processes' cgroups, each once.
    pub fn live_cgroups(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .by_pid
            .values()
            .filter(|id| id.ended.is_none())
            .filter_map(|id| id.cgroup.as_deref())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn read(&self, pid: i32, comm: &str) -> Identity {
        let cmdline = procdir::args(&self.root, pid)
            .map(|args| shell::join(&args))
            .unwrap_or_default();
        let cgroup = self
            .names
            .as_ref()
            .and_then(|names| names.of_process(membership(&self.root, pid).ok()?));
        Identity {
            comm: comm.to_string(),
            cmdline,
            cgroup,
            ended: None,
        }
    }
}
