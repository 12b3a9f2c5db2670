//! The machine's largest processes at a sample, by resident memory: who each is (name,
//! command line, memory cgroup, job) and what it holds. The recorder keeps them each
//! interval and with each OOM kill, so `why` can name a victim's job after it is gone
//! and say what else held memory when it died.

use serde::{Deserialize, Serialize};

use crate::sampler::Sample;

use super::identity::Identities;

/// Processes kept per sample.
pub const LARGEST: usize = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessBrief {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// Empty where unreadable (a kernel thread has none).
    pub cmdline: String,
    /// Its memory cgroup, where known.
    pub cgroup: Option<String>,
    /// The group (job) the watch counts it under.
    pub job: String,
    pub rss: u64,
    /// From the last `smaps_rollup` read on the sampler's budget; `None` before one,
    /// or where it cannot be read (another user's process, without the capability).
    pub pss: Option<u64>,
    pub swap: Option<u64>,
    /// Forked from its parent without exec (a worker sharing the parent's pages
    /// copy-on-write); `None` where that could not be told.
    #[serde(default)]
    pub forked_without_exec: Option<bool>,
}

/// The `n` largest processes of `sample`; `jobs` are their group names, in its order.
pub fn largest(
    sample: &Sample,
    jobs: &[String],
    identities: &Identities,
    n: usize,
) -> Vec<ProcessBrief> {
    let mut order: Vec<usize> = (0..sample.processes.len().min(jobs.len())).collect();
    order.sort_by(|&a, &b| sample.processes[b].rss.cmp(&sample.processes[a].rss));
    order
        .into_iter()
        .take(n)
        .map(|i| {
            let p = &sample.processes[i];
            let id = identities.get(p.pid);
            ProcessBrief {
                pid: p.pid,
                ppid: p.ppid,
                comm: p.comm.clone(),
                cmdline: id.map(|id| id.cmdline.clone()).unwrap_or_default(),
                cgroup: id.and_then(|id| id.cgroup.clone()),
                job: jobs[i].clone(),
                rss: p.rss,
                pss: p.pss.as_ref().map(|r| r.pss),
                swap: p.pss.as_ref().map(|r| r.swap),
                forked_without_exec: p.forked_without_exec,
            }
        })
        .collect()
}
