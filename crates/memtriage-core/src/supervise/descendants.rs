//! Every process of the job, however briefly it lived. Samples come every tick and
//! miss what starts and ends between two; this follows the tree on its own:
//!
//! - with the kernel's process events (on the host; as root before Linux 6.6),
//!   every fork, exec and exit of memtriage's descendants, with parent, name,
//!   lifetime and exit status;
//! - else, under `--limit`, the job's cgroup's `cgroup.procs`, read every
//!   [`CGROUP_POLL`] (one small file: cheap enough to read far more often than a
//!   sample);
//! - else only what the sampler's walk found, plus what memtriage reaped itself.
//!
//! [`DescendantWatch::start`] runs before the job is spawned, so its first fork is
//! seen; [`Descendants::merge_into`] joins what was seen to the sampled summaries,
//! and the report says which method was used and whether processes may be missing.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::model::run::{Outcome, ProcessSummary, ProcessTracking, TrackingMethod};
use crate::parse::proc_connector::ProcEvent;
use crate::probe::proc_events::{ProcEventSocket, Received, DATAGRAM_MAX};
use crate::probe::root::Root;

use super::child::{outcome_from_status, Reaped};

/// How often the `--limit` cgroup's member list is read when events are refused.
pub const CGROUP_POLL: Duration = Duration::from_millis(20);
/// How long after a polled process is first seen its name is read again: long
/// enough for a fork to reach its exec, short enough to cost nothing later.
const RENAME_WINDOW_NS: u64 = 1_000_000_000;
/// How long the kernel gets to accept a subscription.
const SUBSCRIBE_ANSWER: Duration = Duration::from_millis(500);
/// Set (to anything) to leave the kernel's process events unused, as a user without
/// the events get: how the tests exercise the fallbacks where events work.
pub const NO_PROC_EVENTS_ENV: &str = "MEMTRIAGE_NO_PROC_EVENTS";
/// A sample and an event of one process may disagree by this much about when it
/// lived (a sample's time is its tick's start); a reused pid is farther apart.
const SAME_LIFE_SLACK: f64 = 1.0;
/// Shown for a process whose name could not be read before it ended.
const UNKNOWN_COMM: &str = "?";

/// One process seen by events or polling. Times are CLOCK_MONOTONIC nanoseconds
/// (the clock of the kernel's event timestamps and of `Instant`).
#[derive(Debug, Clone)]
struct Seen {
    pid: i32,
    ppid: i32,
    /// Index of the parent's record; `None` for memtriage's own children.
    parent: Option<usize>,
    comm: Option<String>,
    /// Fork and exit times: only events know them.
    forked_ns: Option<u64>,
    exited_ns: Option<u64>,
    first_seen_ns: u64,
    last_seen_ns: u64,
    outcome: Option<Outcome>,
}

#[derive(Debug, Default)]
struct Tracked {
    seen: Vec<Seen>,
    /// The kernel dropped events, or polling could not read the member list.
    lost: bool,
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec.max(0) as u64) * 1_000_000_000 + ts.tv_nsec.max(0) as u64
}

/// The kernel's process events name the host's pids: their files are the host's,
/// whatever root the rest of the run reads.
fn read_comm(pid: i32) -> Option<String> {
    crate::probe::procdir::comm(&Root::host(), pid)
}

/// Follows memtriage's descendants until stopped.
pub struct DescendantWatch {
    method: TrackingMethod,
    events_unavailable: Option<String>,
    stop: Arc<AtomicBool>,
    /// Written once at the stop: the events thread wakes at once, not at its next
    /// receive timeout (which every run's end waited for).
    wake: Option<OwnedFd>,
    thread: Option<JoinHandle<Tracked>>,
}

impl DescendantWatch {
    /// Starts following before the job exists. `cgroup_procs` is the `--limit`
    /// cgroup's member list, polled when the kernel's events are refused.
    /// `on_exec` is told of each exec in the job's tree as it happens (where the
    /// kernel's process events are followed), so the new program can be read at once.
    pub fn start(cgroup_procs: Option<PathBuf>, on_exec: Box<dyn Fn(i32) + Send>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let subscribed = if std::env::var_os(NO_PROC_EVENTS_ENV).is_some() {
            Err(format!("turned off by {NO_PROC_EVENTS_ENV}"))
        } else {
            ProcEventSocket::subscribe(SUBSCRIBE_ANSWER).map_err(|e| e.to_string())
        };
        let mut wake = None;
        let (method, events_unavailable, thread) = match (subscribed, cgroup_procs) {
            (Ok(socket), _) => {
                let stop = stop.clone();
                let woken = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).ok();
                let (woken, waker) = match woken {
                    Some((read, write)) => (Some(read), Some(write)),
                    None => (None, None),
                };
                wake = waker;
                let thread = std::thread::Builder::new()
                    .name("memtriage-proc-events".into())
                    .spawn(move || follow_events(&socket, &stop, woken.as_ref(), &*on_exec));
                (TrackingMethod::ProcEvents, None, thread.ok())
            }
            (Err(why), Some(procs)) => {
                let stop = stop.clone();
                let thread = std::thread::Builder::new()
                    .name("memtriage-cgroup-procs".into())
                    .spawn(move || poll_cgroup(&procs, &stop));
                (TrackingMethod::CgroupProcs, Some(why), thread.ok())
            }
            (Err(why), None) => (TrackingMethod::DescendantWalk, Some(why), None),
        };
        let method = match (&thread, method) {
            // A thread that could not start watches nothing: say what is left.
            (None, _) => TrackingMethod::DescendantWalk,
            (Some(_), m) => m,
        };
        DescendantWatch {
            method,
            events_unavailable,
            stop,
            wake,
            thread,
        }
    }

    /// Stops following and keeps the processes of the job whose main process is
    /// `job`; times become seconds since `epoch` (when the job started).
    pub fn finish(mut self, job: i32, epoch: Instant, sample_interval: Duration) -> Descendants {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(wake) = &self.wake {
            let _ = rustix::io::write(wake, &[1]);
        }
        let tracked = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let epoch_ns = monotonic_ns().saturating_sub(epoch.elapsed().as_nanos() as u64);
        let seconds = |ns: u64| ns.saturating_sub(epoch_ns) as f64 / 1e9;
        let kept = match self.method {
            TrackingMethod::ProcEvents => tree_of(&tracked.seen, job),
            _ => (0..tracked.seen.len()).collect(),
        };
        let found_job = kept.iter().any(|&i| tracked.seen[i].pid == job);
        let processes = kept
            .into_iter()
            .map(|i| {
                let s = &tracked.seen[i];
                SeenProcess {
                    pid: s.pid,
                    ppid: s.ppid,
                    comm: s.comm.clone(),
                    started_seconds: s.forked_ns.map(seconds),
                    ended_seconds: s.exited_ns.map(seconds),
                    first_seen_seconds: seconds(s.first_seen_ns),
                    last_seen_seconds: seconds(s.last_seen_ns),
                    outcome: s.outcome,
                }
            })
            .collect();
        let poll_ms = match self.method {
            TrackingMethod::ProcEvents => None,
            TrackingMethod::CgroupProcs => Some(CGROUP_POLL.as_millis() as u64),
            TrackingMethod::DescendantWalk => Some(sample_interval.as_millis() as u64),
        };
        Descendants {
            processes,
            tracking: ProcessTracking {
                method: self.method,
                poll_ms,
                events_unavailable: self.events_unavailable.take(),
                // Events that never showed the job's own fork missed something.
                events_lost: tracked.lost
                    || (self.method == TrackingMethod::ProcEvents && !found_job),
            },
        }
    }
}

impl Drop for DescendantWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Indices of `job`'s record and its descendants' (by the parent each had when it
/// was forked, so a reused pid never drags in a stranger), in fork order.
fn tree_of(seen: &[Seen], job: i32) -> Vec<usize> {
    let Some(root) = seen
        .iter()
        .rposition(|s| s.pid == job && s.parent.is_none())
    else {
        return Vec::new();
    };
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, s) in seen.iter().enumerate() {
        if let Some(p) = s.parent {
            children.entry(p).or_default().push(i);
        }
    }
    let mut kept = vec![root];
    let mut queue = vec![root];
    while let Some(i) = queue.pop() {
        for &c in children.get(&i).map(Vec::as_slice).unwrap_or_default() {
            kept.push(c);
            queue.push(c);
        }
    }
    kept.sort_unstable();
    kept
}

/// What the event thread keeps while it runs: every record, and which live pid
/// is which record. Only forks whose parent is memtriage or a live record are
/// followed, so the rest of the machine costs one lookup per event.
struct EventFollower {
    me: i32,
    tracked: Tracked,
    live: HashMap<i32, usize>,
}

impl EventFollower {
    fn new(me: i32) -> Self {
        EventFollower {
            me,
            tracked: Tracked::default(),
            live: HashMap::new(),
        }
    }

    fn on(&mut self, event: ProcEvent, read_comm: impl Fn(i32) -> Option<String>) {
        match event {
            ProcEvent::Fork {
                at_ns,
                parent_tgid,
                child_pid,
                child_tgid,
            } if child_pid == child_tgid => {
                let parent = if parent_tgid == self.me {
                    None
                } else if let Some(&p) = self.live.get(&parent_tgid) {
                    Some(p)
                } else {
                    return;
                };
                let inherited = parent.and_then(|p| self.tracked.seen[p].comm.clone());
                self.live.insert(child_pid, self.tracked.seen.len());
                self.tracked.seen.push(Seen {
                    pid: child_pid,
                    ppid: parent_tgid,
                    parent,
                    comm: read_comm(child_pid).or(inherited),
                    forked_ns: Some(at_ns),
                    exited_ns: None,
                    first_seen_ns: at_ns,
                    last_seen_ns: at_ns,
                    outcome: None,
                });
            }
            ProcEvent::Exec { at_ns, pid, tgid } if pid == tgid => {
                if let Some(&i) = self.live.get(&pid) {
                    let s = &mut self.tracked.seen[i];
                    // The old name would be wrong: unknown is better.
                    s.comm = read_comm(pid);
                    s.last_seen_ns = at_ns;
                }
            }
            ProcEvent::Comm {
                at_ns,
                pid,
                tgid,
                comm,
            } if pid == tgid => {
                if let Some(&i) = self.live.get(&pid) {
                    let s = &mut self.tracked.seen[i];
                    s.comm = Some(comm);
                    s.last_seen_ns = at_ns;
                }
            }
            ProcEvent::Exit {
                at_ns,
                pid,
                tgid,
                exit_code,
            } if pid == tgid => {
                if let Some(i) = self.live.remove(&pid) {
                    let s = &mut self.tracked.seen[i];
                    // Until its parent reaps it, a zombie still has its name.
                    if s.comm.is_none() {
                        s.comm = read_comm(pid);
                    }
                    s.exited_ns = Some(at_ns);
                    s.last_seen_ns = at_ns;
                    s.outcome = Some(outcome_from_status(exit_code as i32));
                }
            }
            _ => {}
        }
    }
}

fn follow_events(
    socket: &ProcEventSocket,
    stop: &AtomicBool,
    woken: Option<&OwnedFd>,
    on_exec: &dyn Fn(i32),
) -> Tracked {
    let mut follower = EventFollower::new(std::process::id() as i32);
    let mut buffer = vec![0u8; DATAGRAM_MAX];
    // Once told to stop, everything queued is still read: the job's last events
    // arrive just before, and a reader that fell behind (a loaded machine) may have
    // many left. Reading ends at an empty queue or at the first event stamped after
    // the stop, so a machine that forks faster than this reads cannot hold it.
    let mut stopped_at_ns: Option<u64> = None;
    loop {
        let received = match (stopped_at_ns, woken) {
            (Some(_), _) => socket.receive_queued(&mut buffer),
            (None, Some(woken)) => socket.receive_or_woken(&mut buffer, woken),
            (None, None) => socket.receive(&mut buffer),
        };
        match received {
            Ok(Received::Datagram(d)) => {
                follower.tracked.lost |= d.lost;
                let mut caught_up = false;
                for event in d.events {
                    caught_up |= matches!(
                        (event.at_ns(), stopped_at_ns),
                        (Some(at), Some(stop)) if at >= stop
                    );
                    let exec_in_tree = match event {
                        ProcEvent::Exec { pid, tgid, .. } if pid == tgid => {
                            follower.live.contains_key(&pid).then_some(pid)
                        }
                        _ => None,
                    };
                    follower.on(event, read_comm);
                    if let Some(pid) = exec_in_tree {
                        on_exec(pid);
                    }
                }
                if caught_up {
                    break;
                }
            }
            Ok(Received::Nothing) if stopped_at_ns.is_some() => break,
            Ok(Received::Nothing) => {}
            Err(_) => {
                follower.tracked.lost = true;
                break;
            }
        }
        if stopped_at_ns.is_none() && stop.load(Ordering::Relaxed) {
            stopped_at_ns = Some(monotonic_ns());
        }
    }
    follower.tracked
}

/// Reads the cgroup's members every [`CGROUP_POLL`]; each new pid's parent and
/// name from its `stat`, while it is there to read.
fn poll_cgroup(procs: &std::path::Path, stop: &AtomicBool) -> Tracked {
    let mut tracked = Tracked::default();
    let mut live: HashMap<i32, usize> = HashMap::new();
    loop {
        let now = monotonic_ns();
        match std::fs::read_to_string(procs) {
            Ok(text) => {
                let members: HashSet<i32> = text
                    .split_ascii_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect();
                live.retain(|pid, _| members.contains(pid));
                for &pid in &members {
                    if let Some(&i) = live.get(&pid) {
                        let s = &mut tracked.seen[i];
                        s.last_seen_ns = now;
                        // First seen between fork and exec, it had its parent's name.
                        if now.saturating_sub(s.first_seen_ns) < RENAME_WINDOW_NS {
                            if let Some(comm) = read_comm(pid) {
                                s.comm = Some(comm);
                            }
                        }
                        continue;
                    }
                    let st = crate::probe::procdir::stat(&Root::host(), pid);
                    live.insert(pid, tracked.seen.len());
                    tracked.seen.push(Seen {
                        pid,
                        ppid: st.as_ref().map_or(0, |s| s.ppid),
                        parent: None,
                        comm: st.map(|s| s.comm),
                        forked_ns: None,
                        exited_ns: None,
                        first_seen_ns: now,
                        last_seen_ns: now,
                        outcome: None,
                    });
                }
            }
            // Removed at the end of the run: nothing more to see.
            Err(e) if stop.load(Ordering::Relaxed) || e.kind() == std::io::ErrorKind::NotFound => {
                break
            }
            Err(_) => tracked.lost = true,
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(CGROUP_POLL);
    }
    tracked
}

/// A process of the job as events or polling saw it; times in seconds since the
/// job started.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenProcess {
    pub pid: i32,
    pub ppid: i32,
    /// `None` when it exec'd and ended before its new name could be read.
    pub comm: Option<String>,
    pub started_seconds: Option<f64>,
    pub ended_seconds: Option<f64>,
    pub first_seen_seconds: f64,
    pub last_seen_seconds: f64,
    pub outcome: Option<Outcome>,
}

/// The job's processes as the watch saw them, and how.
#[derive(Debug, Clone)]
pub struct Descendants {
    pub processes: Vec<SeenProcess>,
    pub tracking: ProcessTracking,
}

impl Descendants {
    /// Joins what was seen to the sampled `processes`: a process never sampled
    /// gets a summary of its own (memory unknown), a sampled one its exact lifetime
    /// and exit; processes memtriage reaped that nothing else saw are added too.
    /// Ordered by when each started. Says in `notes` when processes may be missing.
    pub fn merge_into(
        self,
        processes: &mut Vec<ProcessSummary>,
        reaped: &[Reaped],
        notes: &mut Vec<String>,
    ) -> ProcessTracking {
        let sampled = processes.len();
        let mut matched = vec![false; sampled];
        for seen in self.processes {
            let lived_until = seen.ended_seconds.unwrap_or(f64::INFINITY);
            let same = (0..sampled).find(|&i| {
                let p = &processes[i];
                !matched[i]
                    && p.pid == seen.pid
                    && p.first_seen_seconds <= lived_until + SAME_LIFE_SLACK
                    && p.last_seen_seconds + SAME_LIFE_SLACK >= seen.first_seen_seconds
            });
            match same {
                Some(i) => {
                    matched[i] = true;
                    let p = &mut processes[i];
                    p.started_seconds = seen.started_seconds;
                    p.ended_seconds = seen.ended_seconds;
                    p.first_seen_seconds = p.first_seen_seconds.min(seen.first_seen_seconds);
                    p.last_seen_seconds = p.last_seen_seconds.max(seen.last_seen_seconds);
                    p.outcome = p.outcome.or(seen.outcome);
                    // Events saw its last exec or rename; a sample may predate them.
                    if let Some(comm) = seen.comm {
                        p.comm = comm;
                    } else if p.comm.is_empty() {
                        p.comm = UNKNOWN_COMM.into();
                    }
                }
                None => {
                    let mut p = ProcessSummary::new(seen.pid, seen.first_seen_seconds);
                    p.ppid = seen.ppid;
                    p.comm = seen.comm.unwrap_or_else(|| UNKNOWN_COMM.into());
                    p.started_seconds = seen.started_seconds;
                    p.ended_seconds = seen.ended_seconds;
                    p.last_seen_seconds = seen.last_seen_seconds;
                    p.outcome = seen.outcome;
                    processes.push(p);
                }
            }
        }
        let me = std::process::id() as i32;
        for r in reaped {
            if !processes.iter().any(|p| p.pid == r.pid) {
                let mut p = ProcessSummary::new(r.pid, 0.0);
                // Reaped by memtriage: its child, or an orphan it adopted.
                p.ppid = me;
                p.comm = UNKNOWN_COMM.into();
                p.outcome = Some(r.outcome);
                processes.push(p);
            }
        }
        processes.sort_by(|a, b| {
            let at = |p: &ProcessSummary| p.started_seconds.unwrap_or(p.first_seen_seconds);
            at(a).total_cmp(&at(b))
        });
        if let Some(note) = missed_note(&self.tracking) {
            notes.push(note);
        }
        self.tracking
    }
}

/// One line for the summary when the count of processes may be short, and why.
pub fn missed_note(t: &ProcessTracking) -> Option<String> {
    let every = |ms: Option<u64>| ms.map_or(String::new(), |ms| format!(" every {ms} ms"));
    let why = t.events_unavailable.as_deref().map_or(String::new(), |w| {
        format!(" (the kernel's process events: {w})")
    });
    match t.method {
        TrackingMethod::ProcEvents if t.events_lost => Some(
            "the kernel dropped process events: processes that lived between two samples may be missing"
                .into(),
        ),
        TrackingMethod::ProcEvents => None,
        TrackingMethod::CgroupProcs => Some(format!(
            "processes were found by reading the job's cgroup.procs{}{why}: ones that lived less than that may be missing",
            every(t.poll_ms)
        )),
        TrackingMethod::DescendantWalk => Some(format!(
            "processes were found by walking the job's tree at each sample{}{why}: ones that lived between two samples may be missing (under a memory limit the job's own cgroup is polled, more often)",
            every(t.poll_ms)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fork(at_ns: u64, parent: i32, child: i32) -> ProcEvent {
        ProcEvent::Fork {
            at_ns,
            parent_tgid: parent,
            child_pid: child,
            child_tgid: child,
        }
    }

    fn exit(at_ns: u64, pid: i32, status: u32) -> ProcEvent {
        ProcEvent::Exit {
            at_ns,
            pid,
            tgid: pid,
            exit_code: status,
        }
    }

    fn follow(events: Vec<ProcEvent>) -> Vec<Seen> {
        let mut f = EventFollower::new(10);
        for e in events {
            f.on(e, |pid| Some(format!("p{pid}")));
        }
        f.tracked.seen
    }

    #[test]
    fn only_descendants_of_memtriage_are_followed_and_threads_are_not_processes() {
        let seen = follow(vec![
            fork(1, 10, 20),
            fork(2, 99, 98), // a stranger
            fork(3, 20, 21),
            ProcEvent::Fork {
                at_ns: 4,
                parent_tgid: 21,
                child_pid: 22,
                child_tgid: 21,
            },
            ProcEvent::Exec {
                at_ns: 5,
                pid: 21,
                tgid: 21,
            },
            exit(6, 21, 3 << 8),
            exit(7, 20, 9),
        ]);
        let pids: Vec<i32> = seen.iter().map(|s| s.pid).collect();
        assert_eq!(pids, vec![20, 21]);
        assert_eq!(seen[1].parent, Some(0));
        assert_eq!(seen[1].ppid, 20);
        assert_eq!(seen[1].comm.as_deref(), Some("p21"));
        assert_eq!((seen[1].forked_ns, seen[1].exited_ns), (Some(3), Some(6)));
        assert_eq!(seen[1].outcome.and_then(|o| o.exit_code), Some(3));
        assert_eq!(seen[0].outcome.and_then(|o| o.signal), Some(9));
    }

    #[test]
    fn a_name_unread_after_exec_is_unknown_not_the_parents() {
        let mut f = EventFollower::new(10);
        f.on(fork(1, 10, 20), |_| Some("sh".into()));
        f.on(
            ProcEvent::Exec {
                at_ns: 2,
                pid: 20,
                tgid: 20,
            },
            |_| None,
        );
        assert_eq!(f.tracked.seen[0].comm, None);
    }

    #[test]
    fn a_reused_pid_is_a_new_process_and_strangers_under_it_are_not_the_jobs() {
        let seen = follow(vec![
            fork(1, 10, 20), // the job
            fork(2, 20, 30),
            exit(3, 30, 0),
            fork(4, 10, 40), // another child of memtriage, not the job
            fork(5, 20, 30), // pid 30 again, the job's again
            exit(6, 30, 0),
            fork(7, 40, 50),
        ]);
        let kept: Vec<i32> = tree_of(&seen, 20).iter().map(|&i| seen[i].pid).collect();
        assert_eq!(kept, vec![20, 30, 30]);
        assert!(tree_of(&seen, 77).is_empty());
    }

    fn tracking(method: TrackingMethod) -> ProcessTracking {
        ProcessTracking {
            method,
            poll_ms: None,
            events_unavailable: None,
            events_lost: false,
        }
    }

    #[test]
    fn unsampled_processes_join_the_list_with_unknown_memory_and_sampled_ones_get_their_exit() {
        let mut sampled = ProcessSummary::new(20, 0.1);
        sampled.comm = "sh".into();
        sampled.peak_rss = Some(crate::model::run::Peak {
            bytes: 4096,
            at_seconds: 0.1,
        });
        let mut processes = vec![sampled];
        let seen = |pid, start: f64, end: f64, code| SeenProcess {
            pid,
            ppid: 20,
            comm: Some("true".into()),
            started_seconds: Some(start),
            ended_seconds: Some(end),
            first_seen_seconds: start,
            last_seen_seconds: end,
            outcome: Some(Outcome {
                exit_code: Some(code),
                signal: None,
                core_dumped: false,
            }),
        };
        let mut job = seen(20, 0.0, 0.5, 0);
        job.comm = Some("sh".into());
        let descendants = Descendants {
            processes: vec![job, seen(21, 0.2, 0.21, 1), seen(22, 0.3, 0.31, 2)],
            tracking: tracking(TrackingMethod::ProcEvents),
        };
        let mut notes = Vec::new();
        let t = descendants.merge_into(&mut processes, &[], &mut notes);
        assert!(t.complete());
        assert!(notes.is_empty());
        let pids: Vec<i32> = processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![20, 21, 22]);
        assert_eq!(processes[0].peak_rss.map(|p| p.bytes), Some(4096));
        assert_eq!(processes[0].ended_seconds, Some(0.5));
        assert_eq!(processes[1].peak_rss, None);
        assert_eq!(processes[1].comm, "true");
        assert_eq!(processes[2].outcome.and_then(|o| o.exit_code), Some(2));
    }

    #[test]
    fn reaped_processes_nothing_else_saw_are_counted_and_polling_says_it_may_miss() {
        let mut processes = Vec::new();
        let mut notes = Vec::new();
        let mut t = tracking(TrackingMethod::DescendantWalk);
        t.poll_ms = Some(500);
        t.events_unavailable = Some("permission denied".into());
        Descendants {
            processes: Vec::new(),
            tracking: t,
        }
        .merge_into(&mut processes, &[Reaped::unseen(33)], &mut notes);
        assert_eq!(processes.len(), 1);
        assert_eq!(processes[0].peak_rss, None);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("every 500 ms"), "{}", notes[0]);
        assert!(notes[0].contains("permission denied"), "{}", notes[0]);
        assert!(notes[0].contains("may be missing"), "{}", notes[0]);
    }
}
