//! The kernel's OOM report, one block per kill: from `X invoked oom-killer:` to its
//! `Killed process` line, with what the block says beyond the kill itself: the memory
//! cgroup's usage and limit (`memory: usage 307200kB, limit 307200kB, failcnt 12`,
//! printed for cgroup v1 and v2 alike) and the task table (every process the cgroup
//! held, its resident pages and name).

use super::kmsg::{oom_kills, parse_line};
use super::oom_task_table::row;
use crate::model::system::OomKill;

/// Bytes a page of the task table counts: this machine's page size (the reports read
/// are this node's own; 64 KiB on some arm64 nodes).
fn page() -> u64 {
    // SAFETY: sysconf reads a constant of the running system.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as u64,
        _ => 4096,
    }
}

/// One kill's report.
#[derive(Debug, Clone, PartialEq)]
pub struct OomReport {
    pub kill: OomKill,
    /// The limited cgroup's usage, limit and how often it was hit.
    pub usage: Option<u64>,
    pub limit: Option<u64>,
    pub failcnt: Option<u64>,
    /// The task table's rows, largest first.
    pub tasks: Vec<TaskRow>,
}

/// A process of the task table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    pub pid: i32,
    pub rss: u64,
    pub name: String,
}

/// Every report in `lines`, oldest first. A block cut before its `Killed process`
/// line gives nothing: there is no kill to tell of.
pub fn reports<S: AsRef<str>>(lines: &[S]) -> Vec<OomReport> {
    let mut out = Vec::new();
    let mut block: Vec<&str> = Vec::new();
    for line in lines {
        let line = line.as_ref();
        let message = parse_line(line).message;
        if message.contains("invoked oom-killer:") {
            block.clear();
        }
        block.push(line);
        if message.contains("Killed process ") {
            out.extend(report(&block));
            block.clear();
        }
    }
    out
}

fn report(block: &[&str]) -> Option<OomReport> {
    let kill = oom_kills(block.iter().copied()).pop()?;
    let mut r = OomReport {
        kill,
        usage: None,
        limit: None,
        failcnt: None,
        tasks: Vec::new(),
    };
    for line in block {
        let message = parse_line(line).message;
        let message = message.trim();
        if let Some(rest) = message.strip_prefix("memory: usage ") {
            // `307200kB, limit 307200kB, failcnt 12`
            let mut parts = rest.split(", ");
            r.usage = parts.next().and_then(kb);
            r.limit = parts
                .next()
                .and_then(|p| p.strip_prefix("limit "))
                .and_then(kb);
            r.failcnt = parts
                .next()
                .and_then(|p| p.strip_prefix("failcnt "))
                .and_then(|n| n.trim().parse().ok());
        } else if let Some(row) = task_row(message) {
            r.tasks.push(row);
        }
    }
    r.tasks.sort_by_key(|t| std::cmp::Reverse(t.rss));
    Some(r)
}

fn kb(v: &str) -> Option<u64> {
    v.trim()
        .strip_suffix("kB")?
        .parse::<u64>()
        .ok()?
        .checked_mul(1024)
}

fn task_row(message: &str) -> Option<TaskRow> {
    let r = row(message)?;
    Some(TaskRow {
        pid: r.pid,
        rss: r.rss_pages.checked_mul(page())?,
        name: r.name.to_string(),
    })
}

#[cfg(test)]
/// A Slurm step's cgroup v1 OOM report on 6.x, as /dev/kmsg gives it.
pub(crate) const SLURM_REPORT: &[&str] = &[
    "4,900,5000000000,-;pt_data_worker invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
    "6,901,5000000100,-;memory: usage 307200kB, limit 307200kB, failcnt 118",
    "6,902,5000000200,-;memory+swap: usage 307200kB, limit 9007199254740988kB, failcnt 0",
    "6,903,5000000300,-;Memory cgroup stats for /slurm/uid_0/job_7:",
    "6,904,5000000400,-;Tasks state (memory values in pages):",
    "6,905,5000000500,-;[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
    "6,906,5000000600,-;[   4200]     0  4200    60000    10240   200000        0             0 python3",
    "6,907,5000000700,-;[   4242]     0  4242    90000    64000   600000        0             0 pt_data_worker",
    "6,908,5000000800,-;[   4190]     0  4190     2000      300    40000        0             0 slurm_script",
    "6,909,5000000900,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/slurm/uid_0/job_7/step_batch,task_memcg=/slurm/uid_0/job_7/step_batch/task_0,task=pt_data_worker,pid=4242,uid=0",
    "3,910,5000001000,-;Memory cgroup out of memory: Killed process 4242 (pt_data_worker) total-vm:360000kB, anon-rss:255000kB, file-rss:1000kB, shmem-rss:0kB, UID:0 pgtables:600kB oom_score_adj:0",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_gives_the_kill_the_limit_and_the_cgroups_processes() {
        let mut lines = vec!["6,800,4000000000,-;an unrelated line"];
        lines.extend_from_slice(SLURM_REPORT);
        let r = reports(&lines);
        assert_eq!(r.len(), 1);
        let r = &r[0];
        assert_eq!((r.kill.pid, r.kill.comm.as_str()), (4242, "pt_data_worker"));
        assert_eq!(
            r.kill.oom_memcg.as_deref(),
            Some("/slurm/uid_0/job_7/step_batch")
        );
        assert_eq!(
            (r.usage, r.limit, r.failcnt),
            (Some(300 << 20), Some(300 << 20), Some(118))
        );
        let names: Vec<&str> = r.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["pt_data_worker", "python3", "slurm_script"]);
        assert_eq!(r.tasks[0].rss, 64000 * page());
    }

    #[test]
    fn a_report_cut_before_its_kill_gives_nothing() {
        assert!(reports(&SLURM_REPORT[..9]).is_empty());
    }
}
