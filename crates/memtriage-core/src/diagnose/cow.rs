//! Copy-on-write growth after fork. Forked children share their parent's pages until
//! either writes to one; CPython writes to every object it touches (reference counts),
//! so a DataLoader worker that iterates a dataset of Python objects copies it page by
//! page. Only a child forked without exec shares anything (torchrun's ranks and
//! `spawn` workers exec an interpreter of their own), and only pages of the mappings
//! it inherited are copies: what it allocated itself is its own memory. Both are
//! measured by `probe::fork`; this rule only judges the figures, for `run` and
//! `inspect --tree` alike. `why`, which has only the record's PSS, builds its
//! finding with [`copy_on_write`] too.

use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::process::{process_label, RankInfo};
use crate::model::units::iec;

/// A forked worker counts when it copied at least this much.
pub const WORKER_PRIVATE_MIN: u64 = 32 << 20;
/// The finding is raised when the workers together copied at least this much.
pub const TOTAL_PRIVATE_MIN: u64 = 64 << 20;

/// What the rule needs to know of one process: who it is, whose child, whether it
/// was forked without exec, and what it copied. Built from a tree snapshot or from
/// a run's summaries.
#[derive(Debug, Clone, PartialEq)]
pub struct Process {
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// Its rank under a distributed launcher, where known (a run reads it).
    pub rank: Option<RankInfo>,
    pub kernel_thread: bool,
    /// `Some(true)` when forked from its parent without exec since, `Some(false)`
    /// when it exec'd, `None` when that could not be told (see `probe::fork`).
    pub forked_without_exec: Option<bool>,
    /// Bytes; `None` when unreadable.
    pub rss: Option<u64>,
    /// Private memory (USS), bytes; `None` when unreadable.
    pub private: Option<u64>,
    /// For a process forked without exec: what it copied of its parent's memory;
    /// `None` when not read.
    pub copied: Option<Copied>,
}

/// Private dirty bytes in mappings inherited from the parent, with the RSS of the
/// same reading (the copies are resident, so never more than it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    pub bytes: u64,
    pub rss: u64,
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Why copying after fork matters.
const COPY_ON_WRITE_WHY: &str = "Forked workers share the parent's memory only until it is \
     written; Python's reference counts write to every object a worker touches, so each \
     DataLoader worker ends up with its own copy of the dataset and N workers cost N times the \
     memory.";

/// Per parent: one warning when its forked workers copied a lot of its memory, or
/// one note when children hold a lot privately and whether they copied it cannot be
/// told.
pub fn findings(processes: &[Process]) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in processes {
        let children = || {
            processes
                .iter()
                .filter(|c| c.ppid == p.pid && c.pid != p.pid && !c.kernel_thread)
        };
        let workers: Vec<(&Process, Copied)> = children()
            .filter(|c| c.forked_without_exec == Some(true))
            .filter_map(|c| Some((c, c.copied?)))
            .filter(|(_, m)| m.bytes >= WORKER_PRIVATE_MIN)
            .collect();
        let total: u64 = workers.iter().map(|(_, m)| m.bytes).sum();
        if !workers.is_empty() && total >= TOTAL_PRIVATE_MIN {
            out.push(copied_finding(p, &workers, total));
            continue;
        }
        let unknown: Vec<(&Process, u64)> = children()
            .filter(|c| match c.forked_without_exec {
                None => true,
                Some(forked) => forked && c.copied.is_none(),
            })
            .filter_map(|c| Some((c, c.private?)))
            .filter(|(_, private)| *private >= WORKER_PRIVATE_MIN)
            .collect();
        let unknown_total: u64 = unknown.iter().map(|(_, b)| b).sum();
        if !unknown.is_empty() && unknown_total >= TOTAL_PRIVATE_MIN {
            out.push(unknown_finding(p, &unknown, unknown_total));
        }
    }
    out
}

fn parent_evidence(p: &Process) -> Evidence {
    let label = format!("parent {}", process_label(p.pid, &p.comm, p.rank.as_ref()));
    let source = format!("/proc/{}/smaps_rollup", p.pid);
    match (p.rss, p.private) {
        (Some(rss), Some(private)) => Evidence::text(
            label,
            format!("RSS {}, private {}", iec(rss), iec(private)),
            source,
        )
        .with_quantity(Quantity::Bytes(private)),
        _ => Evidence::text(label, "memory unreadable", source),
    }
}

fn copied_finding(p: &Process, workers: &[(&Process, Copied)], total: u64) -> Finding {
    let n = workers.len();
    let mut evidence = vec![parent_evidence(p)];
    for (c, m) in workers {
        let private = c
            .private
            .map_or_else(|| "unreadable".to_string(), |b| iec(b).to_string());
        evidence.push(
            Evidence::text(
                format!("worker {}", process_label(c.pid, "", c.rank.as_ref())),
                format!(
                    "copied {} of its RSS {} (private in all {private})",
                    iec(m.bytes),
                    iec(m.rss)
                ),
                format!(
                    "private dirty bytes of /proc/{}/smaps in the mappings of /proc/{}/maps",
                    c.pid, p.pid
                ),
            )
            .with_quantity(Quantity::Bytes(m.bytes)),
        );
    }
    evidence.push(
        Evidence::text(
            "memory the workers copied together",
            format!("{} ({} on average each)", iec(total), iec(total / n as u64)),
            "sum of the copies",
        )
        .with_quantity(Quantity::Bytes(total)),
    );
    copy_on_write(CopyOnWrite {
        parent: process_label(p.pid, "", p.rank.as_ref()),
        workers: n,
        bytes: total,
        measured: Measured::Copied,
        evidence,
    })
}

/// How the workers' copies of their parent's memory were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measured {
    /// Exactly: their private dirty bytes in the mappings inherited from the parent
    /// (`run`, `inspect --tree`). How sure that is, the caller says.
    Copied,
    /// From the record: their PSS near their RSS, so their pages are mostly their
    /// own rather than shared (`why`). Likely, not confirmed.
    OwnPss,
}

/// What the `fork.copy-on-write` finding is built from.
#[derive(Debug, Clone)]
pub struct CopyOnWrite {
    /// The parent as named: `pid 100 (rank 1)`, `python3[10]`.
    pub parent: String,
    pub workers: usize,
    /// What they hold that they copied, together.
    pub bytes: u64,
    pub measured: Measured,
    pub evidence: Vec<Evidence>,
}

/// `fork.copy-on-write`: forked workers that copied their parent's memory.
pub fn copy_on_write(c: CopyOnWrite) -> Finding {
    let n = c.workers;
    let (held, assessment) = match c.measured {
        Measured::Copied => ("copied from it", None),
        Measured::OwnPss => (
            "of their own (PSS)",
            Some(Assessment {
                certainty: Certainty::Likely,
                cause: CauseKind::UserCode,
                confirm: "memtriage run -- CMD: it tells copied pages from shared ones per worker."
                    .into(),
            }),
        ),
    };
    Finding {
        assessment,
        id: ids::FORK_COPY_ON_WRITE.into(),
        severity: Severity::Warn,
        title: format!(
            "{n} forked worker{} of {} {} {} {held}: memory copied after fork",
            plural(n, "", "s"),
            c.parent,
            plural(n, "holds", "hold"),
            iec(c.bytes)
        ),
        evidence: c.evidence,
        why: COPY_ON_WRITE_WHY.into(),
        fix: "Hold the dataset in memory that reference counts do not touch: numpy arrays, \
              Arrow tables or torch tensors instead of lists/dicts of Python objects; or put it \
              in shared memory (multiprocessing.shared_memory, tensor.share_memory_(), np.memmap \
              of a file). Otherwise start workers without fork \
              (DataLoader(..., multiprocessing_context=\"forkserver\") or \"spawn\") and load \
              per worker only what it needs, lower num_workers, and call gc.freeze() before the \
              workers start so the garbage collector does not touch the parent's objects."
            .into(),
    }
}

fn unknown_finding(p: &Process, children: &[(&Process, u64)], total: u64) -> Finding {
    let n = children.len();
    let mut evidence = vec![parent_evidence(p)];
    for (c, private) in children {
        let how = match c.forked_without_exec {
            None => "whether it exec'd after fork is unreadable (stat fields 28, 47-51 read 0)",
            Some(_) => "forked without exec; its smaps or its parent's maps could not be read",
        };
        evidence.push(
            Evidence::text(
                format!("child {}", process_label(c.pid, &c.comm, c.rank.as_ref())),
                format!("private {}; {how}", iec(*private)),
                format!("/proc/{}/stat", c.pid),
            )
            .with_quantity(Quantity::Bytes(*private)),
        );
    }
    Finding {
        assessment: None,
        id: ids::FORK_COPY_ON_WRITE_UNKNOWN.into(),
        severity: Severity::Info,
        title: format!(
            "{n} child{} of {} {} {} privately; whether it was copied after fork is unknown",
            plural(n, "", "ren"),
            process_label(p.pid, "", p.rank.as_ref()),
            plural(n, "holds", "hold"),
            iec(total)
        ),
        evidence,
        why: "Only a child forked without exec shares its parent's pages copy-on-write; the \
              kernel shows the addresses that tell a fork from an exec, and a process's \
              mappings, only to a reader allowed to ptrace it."
            .into(),
        fix: "Run memtriage as the job's owner or as root (or with CAP_SYS_PTRACE) to tell \
              copies from memory the children allocated themselves."
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child forked without exec that copied `copied` bytes of its parent's memory.
    fn proc(pid: i32, ppid: i32, comm: &str, copied: u64) -> Process {
        Process {
            pid,
            ppid,
            comm: comm.into(),
            rank: None,
            kernel_thread: false,
            forked_without_exec: Some(true),
            rss: Some(copied + (100 << 20)),
            private: Some(copied),
            copied: Some(Copied {
                bytes: copied,
                rss: copied + (100 << 20),
            }),
        }
    }

    #[test]
    fn a_ranks_workers_are_named_with_their_rank() {
        let rank = |worker| {
            Some(RankInfo {
                rank: 1,
                local_rank: Some(1),
                world_size: Some(2),
                worker,
            })
        };
        let mut nodes = vec![
            proc(100, 1, "python3", 10 << 20),
            proc(101, 100, "pt_data_worker", 64 << 20),
            proc(102, 100, "pt_data_worker", 64 << 20),
        ];
        nodes[0].rank = rank(false);
        nodes[1].rank = rank(true);
        nodes[2].rank = rank(true);
        let f = findings(&nodes);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].title
                .starts_with("2 forked workers of pid 100 (rank 1) hold 128 MiB"),
            "{}",
            f[0].title
        );
        let labels: Vec<&str> = f[0].evidence.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels[0], "parent pid 100 (python3, rank 1)");
        assert_eq!(labels[1], "worker pid 101 (rank 1 worker)");

        nodes[1].forked_without_exec = None;
        nodes[2].forked_without_exec = None;
        let f = findings(&nodes);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].title
                .starts_with("2 children of pid 100 (rank 1) hold"),
            "{}",
            f[0].title
        );
        assert_eq!(
            f[0].evidence[1].label,
            "child pid 101 (pt_data_worker, rank 1 worker)"
        );
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
        assert!(
            f[0].evidence[1]
                .value
                .contains("copied 64.0 MiB of its RSS 164 MiB"),
            "{:?}",
            f[0].evidence[1]
        );
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
        let mut nodes = vec![
            proc(100, 1, "bash", 1 << 20),
            proc(101, 100, "python", 900 << 20),
        ];
        nodes[1].forked_without_exec = Some(false);
        assert!(findings(&nodes).is_empty());
    }

    /// torchrun's ranks run the same interpreter as torchrun, and allocate a lot: they
    /// exec'd, so what they hold is theirs, not a copy.
    #[test]
    fn ranks_that_exec_the_same_interpreter_raise_nothing() {
        let mut nodes = vec![
            proc(100, 1, "python3", 50 << 20),
            proc(101, 100, "python3", 300 << 20),
            proc(102, 100, "python3", 300 << 20),
        ];
        for rank in &mut nodes[1..] {
            rank.forked_without_exec = Some(false);
        }
        assert!(findings(&nodes).is_empty());
    }

    #[test]
    fn renamed_workers_count_by_how_they_started_not_by_name() {
        let mut nodes = vec![
            proc(100, 1, "python3", 10 << 20),
            proc(101, 100, "pt_data_worker", 64 << 20),
            proc(102, 100, "pt_data_worker", 64 << 20),
        ];
        assert_eq!(findings(&nodes).len(), 1);
        nodes[2].comm = "ffmpeg".into();
        nodes[2].forked_without_exec = Some(false);
        let f = findings(&nodes);
        assert!(
            f[0].title.starts_with("1 forked worker of pid 100 holds"),
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
        nodes[2].copied = None;
        nodes[2].private = None;
        let f = findings(&nodes);
        assert!(
            f[0].title
                .starts_with("1 forked worker of pid 100 holds 64.0 MiB"),
            "{}",
            f[0].title
        );
        nodes[1].copied = None;
        nodes[1].private = None;
        assert!(findings(&nodes).is_empty());
    }

    /// Stat's layout reads 0 to a reader without ptrace access: the rule says it
    /// cannot tell, never guesses a copy from private memory.
    #[test]
    fn children_not_known_to_be_forks_get_a_note_not_a_warning() {
        let mut nodes = vec![
            proc(100, 1, "python", 10 << 20),
            proc(101, 100, "python", 200 << 20),
            proc(102, 100, "python", 200 << 20),
        ];
        for c in &mut nodes[1..] {
            c.forked_without_exec = None;
            c.copied = None;
        }
        let f = findings(&nodes);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].id, ids::FORK_COPY_ON_WRITE_UNKNOWN);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].title
                .starts_with("2 children of pid 100 hold 400 MiB privately; whether"),
            "{}",
            f[0].title
        );
        // Forked, but the smaps could not be read: unknown too.
        nodes[1].forked_without_exec = Some(true);
        assert_eq!(findings(&nodes)[0].id, ids::FORK_COPY_ON_WRITE_UNKNOWN);
        // Small children: nothing worth saying.
        for c in &mut nodes[1..] {
            c.private = Some(1 << 20);
        }
        assert!(findings(&nodes).is_empty());
    }
}
