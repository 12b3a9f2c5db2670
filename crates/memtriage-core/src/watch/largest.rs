//! The machine's largest processes at a sample, by resident memory: who each is (name,
//! command line, memory cgroup, job) and what it holds. The recorder keeps them each
//! interval and with each OOM kill, so `why` can name a victim's job after it is gone
//! and say what else held memory when it died.

use crate::model::history::ProcessBrief;
use crate::sampler::Sample;

use super::identity::Identities;

/// Processes kept per sample.
pub const LARGEST: usize = 20;

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
