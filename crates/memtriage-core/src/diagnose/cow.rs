//! Copy-on-write growth after fork. Forked children share their parent's pages until
//! either writes to one; CPython writes to every object it touches (reference counts),
//! so a DataLoader worker that iterates a dataset of Python objects copies it page by
//! page. The sign is forked workers whose unique memory (USS) keeps growing.

use crate::diagnose::ids;
use crate::model::finding::{Evidence, Finding, Quantity, Severity};
use crate::model::process::ProcessSnapshot;
use crate::model::tree::TreeNode;
use crate::model::units::iec;

/// A forked worker counts when it holds at least this much privately.
pub const WORKER_PRIVATE_MIN: u64 = 32 << 20;
/// The finding is raised when the workers together hold at least this much.
pub const TOTAL_PRIVATE_MIN: u64 = 64 << 20;

/// What the rule needs to know of one process: who it is, whose child, and how much
/// of its memory it holds alone. Built from a snapshot or from a run's peaks.
#[derive(Debug, Clone, PartialEq)]
pub struct Process {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// The executable; a forked worker that did not exec shares its parent's.
    pub exe: Option<String>,
    pub kernel_thread: bool,
    /// Bytes; `None` when unreadable.
    pub rss: Option<u64>,
    /// `None` when smaps_rollup could not be read.
    pub memory: Option<Memory>,
}

/// Bytes, as smaps_rollup counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    pub private_clean: u64,
    pub private_dirty: u64,
    /// Shared clean and dirty.
    pub shared: u64,
}

impl Memory {
    /// Unique set size: what only this process holds.
    pub fn uss(&self) -> u64 {
        self.private_clean + self.private_dirty
    }
}

impl From<&ProcessSnapshot> for Process {
    fn from(p: &ProcessSnapshot) -> Self {
        Process {
            pid: p.pid,
            ppid: p.ppid,
            comm: p.comm.clone(),
            exe: p.exe.clone(),
            kernel_thread: p.kernel_thread,
            rss: p.rss(),
            memory: p.rollup.as_ref().map(|r| Memory {
                private_clean: r.private_clean,
                private_dirty: r.private_dirty,
                shared: r.shared_clean + r.shared_dirty,
            }),
        }
    }
}

/// The processes of a tree snapshot, as the rule takes them.
pub fn processes(nodes: &[TreeNode]) -> Vec<Process> {
    nodes.iter().map(|n| Process::from(&n.process)).collect()
}

/// A child forked from `parent` that did not exec another program: it runs the same
/// executable. Workers may rename themselves (PyTorch's are `pt_data_worker`), so the
/// name decides only when an executable is unknown.
fn is_fork_of(child: &Process, parent: &Process) -> bool {
    match (&child.exe, &parent.exe) {
        (Some(c), Some(p)) => c == p,
        _ => child.comm == parent.comm,
    }
}

/// One finding per parent whose forked children hold a lot of private memory.
pub fn findings(processes: &[Process]) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in processes {
        let workers: Vec<(&Process, Memory)> = processes
            .iter()
            .filter(|c| c.ppid == p.pid && c.pid != p.pid && !c.kernel_thread && is_fork_of(c, p))
            .filter_map(|c| Some((c, c.memory?)))
            .filter(|(_, m)| m.uss() >= WORKER_PRIVATE_MIN)
            .collect();
        let total: u64 = workers.iter().map(|(_, m)| m.uss()).sum();
        if workers.is_empty() || total < TOTAL_PRIVATE_MIN {
            continue;
        }
        let n = workers.len();
        let parent = match (p.rss, p.memory) {
            (Some(rss), Some(m)) => Evidence::text(
                format!("parent pid {} ({})", p.pid, p.comm),
                format!("RSS {}, private {}", iec(rss), iec(m.uss())),
                format!("/proc/{}/smaps_rollup", p.pid),
            )
            .with_quantity(Quantity::Bytes(m.uss())),
            _ => Evidence::text(
                format!("parent pid {} ({})", p.pid, p.comm),
                "memory unreadable",
                format!("/proc/{}/smaps_rollup", p.pid),
            ),
        };
        let mut evidence = vec![parent];
        for (c, m) in &workers {
            evidence.push(
                Evidence::text(
                    format!("worker pid {}", c.pid),
                    format!(
                        "private {} (dirty {}), shared {}",
                        iec(m.uss()),
                        iec(m.private_dirty),
                        iec(m.shared)
                    ),
                    format!("/proc/{}/smaps_rollup", c.pid),
                )
                .with_quantity(Quantity::Bytes(m.uss())),
            );
        }
        evidence.push(
            Evidence::text(
                "private memory of the workers together",
                format!("{} ({} on average each)", iec(total), iec(total / n as u64)),
                "sum of USS",
            )
            .with_quantity(Quantity::Bytes(total)),
        );
        out.push(Finding {
            id: ids::FORK_COPY_ON_WRITE.into(),
            severity: Severity::Warn,
            title: format!(
                "{n} forked worker{} of pid {} hold {} privately: memory copied after fork",
                if n == 1 { "" } else { "s" },
                p.pid,
                iec(total)
            ),
            evidence,
            why: "Forked workers share the parent's memory only until it is written; Python's \
                  reference counts write to every object a worker touches, so each DataLoader \
                  worker ends up with its own copy of the dataset and N workers cost N times the memory."
                .into(),
            fix: "Hold the dataset in memory that reference counts do not touch: numpy arrays, \
                  Arrow tables or torch tensors instead of lists/dicts of Python objects; or put it \
                  in shared memory (multiprocessing.shared_memory, tensor.share_memory_(), np.memmap \
                  of a file). Otherwise start workers without fork \
                  (DataLoader(..., multiprocessing_context=\"forkserver\") or \"spawn\") and load \
                  per worker only what it needs, lower num_workers, and call gc.freeze() before the \
                  workers start so the garbage collector does not touch the parent's objects."
                .into(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(pid: i32, ppid: i32, comm: &str, private_dirty: u64) -> Process {
        Process {
            pid,
            ppid,
            comm: comm.into(),
            exe: None,
            kernel_thread: false,
            rss: Some(private_dirty + (100 << 20)),
            memory: Some(Memory {
                private_clean: 0,
                private_dirty,
                shared: 100 << 20,
            }),
        }
    }

    #[test]
    fn workers_that_unshared_the_parent_raise_one_finding() {
        let nodes = vec![
            proc(100, 1, "python", 10 << 20),
            proc(101, 100, "python", 64 << 20),
            proc(102, 100, "python", 64 << 20),
        ];
        let f = findings(&nodes);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].id, ids::FORK_COPY_ON_WRITE);
        assert!(
            f[0].title
                .contains("2 forked workers of pid 100 hold 128 MiB"),
            "{}",
            f[0].title
        );
        assert_eq!(f[0].evidence.len(), 4);
        assert_eq!(f[0].evidence[3].quantity, Some(Quantity::Bytes(128 << 20)));
    }

    #[test]
    fn workers_that_still_share_raise_nothing() {
        let nodes = vec![
            proc(100, 1, "python", 500 << 20),
            proc(101, 100, "python", 1 << 20),
            proc(102, 100, "python", 2 << 20),
        ];
        assert!(findings(&nodes).is_empty());
    }

    #[test]
    fn children_that_exec_another_program_are_not_forked_workers() {
        let nodes = vec![
            proc(100, 1, "bash", 1 << 20),
            proc(101, 100, "python", 900 << 20),
        ];
        assert!(findings(&nodes).is_empty());
    }

    #[test]
    fn renamed_workers_of_the_same_executable_are_forks() {
        let mut nodes = vec![
            proc(100, 1, "python3", 10 << 20),
            proc(101, 100, "pt_data_worker", 64 << 20),
            proc(102, 100, "pt_data_worker", 64 << 20),
        ];
        for n in &mut nodes {
            n.exe = Some("/usr/bin/python3.11".into());
        }
        assert_eq!(findings(&nodes).len(), 1);
        nodes[2].exe = Some("/usr/bin/ffmpeg".into());
        let f = findings(&nodes);
        assert!(
            f[0].title.starts_with("1 forked worker of pid 100"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn a_worker_whose_memory_is_unreadable_is_not_counted() {
        let mut nodes = vec![
            proc(100, 1, "python", 10 << 20),
            proc(101, 100, "python", 64 << 20),
            proc(102, 100, "python", 64 << 20),
        ];
        nodes[2].memory = None;
        let f = findings(&nodes);
        assert!(
            f[0].title
                .starts_with("1 forked worker of pid 100 hold 64.0 MiB"),
            "{}",
            f[0].title
        );
        nodes[1].memory = None;
        assert!(findings(&nodes).is_empty());
    }
}
