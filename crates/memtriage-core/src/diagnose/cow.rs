//! Copy-on-write growth after fork. Forked children share their parent's pages until
//! either writes to one; CPython writes to every object it touches (reference counts),
//! so a DataLoader worker that iterates a dataset of Python objects copies it page by
//! page. The sign is forked workers whose unique memory (USS) keeps growing.

use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::process::ProcessSnapshot;
use crate::model::tree::TreeNode;

/// A forked worker counts when it holds at least this much privately.
pub const WORKER_PRIVATE_MIN: u64 = 32 << 20;
/// The finding is raised when the workers together hold at least this much.
pub const TOTAL_PRIVATE_MIN: u64 = 64 << 20;

pub const FINDING_ID: &str = "fork.copy-on-write";

/// A child forked from `parent` that did not exec another program: it runs the same
/// executable. Workers may rename themselves (PyTorch's are `pt_data_worker`), so the
/// name decides only when an executable is unknown.
fn is_fork_of(child: &ProcessSnapshot, parent: &ProcessSnapshot) -> bool {
    match (&child.exe, &parent.exe) {
        (Some(c), Some(p)) => c == p,
        _ => child.comm == parent.comm,
    }
}

/// One finding per parent whose forked children hold a lot of private memory.
pub fn findings(nodes: &[TreeNode]) -> Vec<Finding> {
    let mut out = Vec::new();
    for parent in nodes {
        let p = &parent.process;
        let workers: Vec<_> = nodes
            .iter()
            .map(|n| &n.process)
            .filter(|c| c.ppid == p.pid && c.pid != p.pid && !c.kernel_thread && is_fork_of(c, p))
            .filter_map(|c| Some((c, c.rollup.as_ref()?)))
            .filter(|(_, r)| r.uss() >= WORKER_PRIVATE_MIN)
            .collect();
        let total: u64 = workers.iter().map(|(_, r)| r.uss()).sum();
        if workers.is_empty() || total < TOTAL_PRIVATE_MIN {
            continue;
        }
        let n = workers.len();
        let mut evidence = vec![Evidence::new(
            format!("parent pid {} ({})", p.pid, p.comm),
            match (p.rss(), p.uss()) {
                (Some(rss), Some(uss)) => format!("RSS {}, private {}", iec(rss), iec(uss)),
                _ => "memory unreadable".into(),
            },
            format!("/proc/{}/smaps_rollup", p.pid),
        )];
        for (c, r) in &workers {
            evidence.push(Evidence::new(
                format!("worker pid {}", c.pid),
                format!(
                    "private {} (dirty {}), shared {}",
                    iec(r.uss()),
                    iec(r.private_dirty),
                    iec(r.shared_clean + r.shared_dirty)
                ),
                format!("/proc/{}/smaps_rollup", c.pid),
            ));
        }
        evidence.push(Evidence::new(
            "private memory of the workers together",
            format!("{} ({} on average each)", iec(total), iec(total / n as u64)),
            "sum of USS",
        ));
        out.push(Finding {
            id: FINDING_ID.into(),
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

/// IEC units for evidence text, e.g. `3.2 GiB`.
pub fn iec(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else if value >= 100.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::process::{Faults, Rollup};

    fn proc(pid: i32, ppid: i32, comm: &str, private_dirty: u64) -> TreeNode {
        TreeNode {
            depth: usize::from(pid != 100),
            process: ProcessSnapshot {
                pid,
                ppid,
                comm: comm.into(),
                cmdline: vec![],
                exe: None,
                state: 'S',
                uid: Some(0),
                user: None,
                threads: 1,
                kernel_thread: false,
                memory: None,
                rollup: Some(Rollup {
                    rss: private_dirty + (100 << 20),
                    pss: private_dirty + (50 << 20),
                    private_dirty,
                    shared_clean: 100 << 20,
                    ..Rollup::default()
                }),
                faults: Faults::default(),
                oom: None,
                cgroup: None,
                unreadable: vec![],
            },
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
        assert_eq!(f[0].id, FINDING_ID);
        assert!(
            f[0].title
                .contains("2 forked workers of pid 100 hold 128 MiB"),
            "{}",
            f[0].title
        );
        assert_eq!(f[0].evidence.len(), 4);
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
            n.process.exe = Some("/usr/bin/python3.11".into());
        }
        assert_eq!(findings(&nodes).len(), 1);
        nodes[2].process.exe = Some("/usr/bin/ffmpeg".into());
        let f = findings(&nodes);
        assert!(
            f[0].title.starts_with("1 forked worker of pid 100"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn iec_units() {
        assert_eq!(iec(512), "512 B");
        assert_eq!(iec(1536), "1.5 KiB");
        assert_eq!(iec(3 << 30), "3.0 GiB");
        assert_eq!(iec(300 << 20), "300 MiB");
    }
}
