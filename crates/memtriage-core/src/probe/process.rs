//! One process snapshot, read cheaply: `stat` and `status` for the fast fields,
//! `smaps_rollup` once for PSS/USS (it walks the page tables under the mmap lock, so
//! it is read only when asked), never the full `smaps` (that is [`super::maps`]).

use crate::error::{Error, Result};
use crate::model::process::{CgroupMemory, Faults, Oom, ProcessSnapshot, Rollup, Unreadable};
use crate::parse::text::{escape_bytes, split_cmdline};
use crate::parse::{smaps_rollup, stat, status};
use crate::probe::cgroup::CgroupReader;
use crate::probe::procdir::{ProcDir, ReadError};
use crate::probe::root::Root;
use crate::probe::users::Users;

/// `PF_KTHREAD` in `/proc/PID/stat` flags.
const PF_KTHREAD: u32 = 0x0020_0000;

/// Which files to read. Each costs kernel time per process (measured on a 2-vCPU VM,
/// kernel 6.18, for a small process: `smaps_rollup` 44 us, `status` 17 us, `stat`
/// 13 us, `cgroup` 10 us, `oom_score` 7 us), so a listing of every process reads
/// only what it shows. Who the process is (name, state, parent) comes from `status`
/// where it is read, else from `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    /// RSS split, peaks, threads, uid from `status`; without it the uid is the owner
    /// of `/proc/PID` and `memory` is `None`.
    pub status: bool,
    /// PSS/USS/huge pages from `smaps_rollup` (walks the page tables).
    pub rollup: bool,
    pub oom: bool,
    pub cgroup: bool,
    /// The arguments (`cmdline`).
    pub cmdline: bool,
    /// The executable's path (the `exe` link).
    pub exe: bool,
    /// Page-fault counts, which only `stat` has (read anyway without `status`).
    pub faults: bool,
}

impl Detail {
    /// Everything a snapshot of one process holds.
    pub fn full() -> Self {
        Detail {
            status: true,
            rollup: true,
            oom: true,
            cgroup: true,
            cmdline: true,
            exe: true,
            faults: true,
        }
    }

    /// What a table of every process shows: `stat`, `cmdline` and `smaps_rollup`.
    pub fn listing() -> Self {
        Detail {
            status: false,
            rollup: true,
            oom: false,
            cgroup: false,
            cmdline: true,
            exe: false,
            faults: true,
        }
    }

    /// Nothing beyond who the process is.
    pub fn none() -> Self {
        Detail {
            status: false,
            rollup: false,
            oom: false,
            cgroup: false,
            cmdline: false,
            exe: false,
            faults: false,
        }
    }
}

impl Default for Detail {
    fn default() -> Self {
        Self::full()
    }
}

/// Reads many processes, sharing what they share (cgroups, user names).
pub struct ProcessReader {
    root: Root,
    detail: Detail,
    cgroups: Option<CgroupReader>,
    users: Users,
    /// Every file is read into this one buffer and parsed from it: no allocation
    /// per file, which over hundreds of small processes costs more than the data.
    buf: Vec<u8>,
}

impl ProcessReader {
    pub fn new(root: &Root, detail: Detail) -> Self {
        ProcessReader {
            root: root.clone(),
            detail,
            cgroups: detail.cgroup.then(|| CgroupReader::discover(root)),
            users: Users::new(root),
            buf: vec![0; 4096],
        }
    }

    /// Another reader with the same setup (cgroup hierarchies, user names, and what
    /// was read of cgroups so far), without finding them again: each thread of
    /// [`read_many`] gets one.
    fn sibling(&self) -> Self {
        self.with_detail(self.detail)
    }

    /// A reader of `detail` that shares this one's setup.
    pub fn with_detail(&self, detail: Detail) -> Self {
        let cgroups = match detail.cgroup {
            true => self
                .cgroups
                .clone()
                .or_else(|| Some(CgroupReader::discover(&self.root))),
            false => None,
        };
        ProcessReader {
            root: self.root.clone(),
            detail,
            cgroups,
            users: self.users.clone(),
            buf: vec![0; 4096],
        }
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Forgets what was read of cgroups: a reader kept between reads of different
    /// moments reads each cgroup's usage again rather than the first moment's.
    pub fn forget_cgroups(&mut self) {
        if let Some(cgroups) = &mut self.cgroups {
            cgroups.forget();
        }
    }

    /// `Err(NoSuchProcess)` when the pid does not exist or exits before its `stat`
    /// and `status` are read; later fields that fail are listed as unreadable.
    pub fn read(&mut self, pid: i32) -> Result<ProcessSnapshot> {
        let dir = ProcDir::open(&self.root, pid)?;
        let buf = &mut self.buf;
        let status = match self.detail.status {
            true => {
                let len = dir
                    .read_into("status", buf, true)
                    .map_err(|e| hard_error(pid, "status", e))?;
                Some(status::parse(&buf[..len]))
            }
            false => None,
        };
        let from_status = status
            .as_ref()
            .filter(|_| !self.detail.faults)
            .and_then(|s| Some((s.identity.clone()?, s.threads?)));
        let who = match from_status {
            Some((who, threads)) => Who::from_status(who, threads),
            None => Who::from_stat(&self.root, &dir, pid, buf)?,
        };
        let kernel_thread = who.kernel_thread;
        let zombie = who.state == 'Z';
        let mut unreadable = Vec::new();

        let status_read = status.is_some();
        let (uid, threads, mut memory) = match status {
            Some(f) => (f.uid, f.threads.unwrap_or(who.threads), f.memory),
            None => (dir.owner_uid(), who.threads, None),
        };
        if memory.is_none() && status_read && !kernel_thread {
            note(
                &mut unreadable,
                "memory",
                if zombie {
                    "zombie: exited, its memory already released, waiting for its parent to reap it"
                        .into()
                } else {
                    "no address space (the process is exiting)".into()
                },
            );
        }

        let cmdline = match (self.detail.cmdline, kernel_thread) {
            (false, _) => None,
            (true, true) => Some(Vec::new()),
            (true, false) => match dir.read_into("cmdline", buf, true) {
                Ok(len) => Some(split_cmdline(&buf[..len])),
                Err(e) => {
                    field_failed(&dir, pid, "cmdline", e, &mut unreadable)?;
                    Some(Vec::new())
                }
            },
        };

        let has_memory = memory.is_some() || (!status_read && !kernel_thread && !zombie);
        let rollup = if self.detail.rollup && !kernel_thread && !zombie && has_memory {
            read_rollup(&dir, pid, buf, &mut unreadable)?
        } else {
            None
        };

        // smaps_rollup refused (another user's process): `status` is readable by
        // anyone and still gives RSS by kind and swap, which `-` would hide.
        if rollup.is_none() && memory.is_none() && !status_read && !kernel_thread && !zombie {
            match dir.read_into("status", buf, true) {
                Ok(len) => memory = status::parse(&buf[..len]).memory,
                Err(e) => field_failed(&dir, pid, "memory", e, &mut unreadable)?,
            }
        }

        let oom = if self.detail.oom {
            read_oom(&dir, pid, &mut unreadable)?
        } else {
            None
        };
        let cgroup = match self.cgroups.as_mut().filter(|_| !kernel_thread) {
            None => None,
            Some(reader) => read_cgroup(&dir, pid, reader, zombie, &mut unreadable)?,
        };
        let exe = if self.detail.exe && !kernel_thread {
            dir.read_link("exe").ok().map(|b| escape_bytes(&b))
        } else {
            None
        };
        let user = uid.and_then(|u| self.users.name(u));
        Ok(ProcessSnapshot {
            pid,
            ppid: who.ppid,
            comm: who.comm,
            cmdline,
            exe,
            state: who.state,
            uid,
            user,
            threads,
            kernel_thread,
            memory,
            rollup,
            faults: who.faults,
            oom,
            cgroup,
            gpu: None,
            unreadable,
        })
    }
}

/// Who a process is, from `status` (when it was read and says everything) or `stat`.
struct Who {
    comm: String,
    state: char,
    ppid: i32,
    kernel_thread: bool,
    threads: u64,
    /// Only `stat` has them.
    faults: Option<Faults>,
}

impl Who {
    fn from_status(who: status::Identity, threads: u64) -> Self {
        Who {
            comm: who.name,
            state: who.state,
            ppid: who.ppid,
            kernel_thread: who.kernel_thread,
            threads,
            faults: None,
        }
    }

    fn from_stat(root: &Root, dir: &ProcDir, pid: i32, buf: &mut Vec<u8>) -> Result<Self> {
        let len = dir
            .read_into("stat", buf, true)
            .map_err(|e| hard_error(pid, "stat", e))?;
        let stat = stat::parse(&buf[..len])
            .map_err(|e| Error::malformed(root.path(&format!("/proc/{pid}/stat")), e.detail))?;
        Ok(Who {
            comm: stat.comm,
            state: stat.state,
            ppid: stat.ppid,
            kernel_thread: stat.flags & PF_KTHREAD != 0,
            threads: stat.num_threads.max(0) as u64,
            faults: Some(Faults {
                minor: stat.minflt,
                major: stat.majflt,
                children_minor: stat.cminflt,
                children_major: stat.cmajflt,
            }),
        })
    }
}

fn note(unreadable: &mut Vec<Unreadable>, field: &str, reason: String) {
    unreadable.push(Unreadable {
        field: field.to_string(),
        reason,
    })
}

/// A file of the process could not be read: the whole snapshot fails when the
/// process is gone; otherwise `field` is listed as unreadable, with why.
fn field_failed(
    dir: &ProcDir,
    pid: i32,
    field: &str,
    e: ReadError,
    unreadable: &mut Vec<Unreadable>,
) -> Result<()> {
    if matches!(e, ReadError::Gone) && process_gone(dir) {
        return Err(Error::NoSuchProcess { pid });
    }
    note(unreadable, field, e.reason());
    Ok(())
}

/// PSS, USS and huge pages from `smaps_rollup`. Before Linux 4.14 there is no
/// smaps_rollup: the same sums from every region of smaps, as the kernel would add
/// them up.
fn read_rollup(
    dir: &ProcDir,
    pid: i32,
    buf: &mut Vec<u8>,
    unreadable: &mut Vec<Unreadable>,
) -> Result<Option<Rollup>> {
    let read = match dir.read_into("smaps_rollup", buf, true) {
        Err(ReadError::Gone) if !process_gone(dir) => dir.read_into("smaps", buf, false),
        read => read,
    };
    match read {
        Ok(len) => {
            let rollup = smaps_rollup::parse(&buf[..len]);
            if rollup.is_none() {
                note(
                    unreadable,
                    "smaps_rollup",
                    "empty: the process has no address space now".into(),
                );
            }
            Ok(rollup)
        }
        Err(e) => {
            field_failed(dir, pid, "smaps_rollup", e, unreadable)?;
            Ok(None)
        }
    }
}

fn read_oom(dir: &ProcDir, pid: i32, unreadable: &mut Vec<Unreadable>) -> Result<Option<Oom>> {
    match (read_i64(dir, "oom_score"), read_i64(dir, "oom_score_adj")) {
        (Ok(score), Ok(score_adj)) => Ok(Some(Oom { score, score_adj })),
        (Err(ReadError::Gone), _) | (_, Err(ReadError::Gone)) if process_gone(dir) => {
            Err(Error::NoSuchProcess { pid })
        }
        (Err(e), _) | (_, Err(e)) => {
            note(unreadable, "oom", e.reason());
            Ok(None)
        }
    }
}

/// The process's memory cgroup, through the reader's cache.
fn read_cgroup(
    dir: &ProcDir,
    pid: i32,
    reader: &mut CgroupReader,
    zombie: bool,
    unreadable: &mut Vec<Unreadable>,
) -> Result<Option<CgroupMemory>> {
    // An exited task's /proc/PID/cgroup reads as the root cgroup: its own is gone,
    // and the root's usage is not the process's.
    if zombie {
        note(
            unreadable,
            "cgroup",
            "unknown: the process has exited (a zombie); the kernel shows the root cgroup for it"
                .to_string(),
        );
        return Ok(None);
    }
    match dir.read("cgroup") {
        Ok(b) => {
            let membership = crate::parse::cgroup::parse_membership(&String::from_utf8_lossy(&b));
            match reader.for_membership(&membership) {
                Ok(c) => Ok(c),
                Err(reason) => {
                    note(unreadable, "cgroup", reason.to_string());
                    Ok(None)
                }
            }
        }
        Err(e) => {
            field_failed(dir, pid, "cgroup", e, unreadable)?;
            Ok(None)
        }
    }
}

/// Reads `pids` on up to `threads` threads, in the order given, with a new reader
/// (see [`ProcessReader::read_many`]).
pub fn read_many(
    root: &Root,
    detail: Detail,
    pids: &[i32],
    threads: usize,
) -> Vec<Result<ProcessSnapshot>> {
    ProcessReader::new(root, detail).read_many(pids, threads)
}

impl ProcessReader {
    /// Reads `pids` on up to `threads` threads (the calling one among them), in the
    /// order given. The kernel work of a read is per process, so it spreads across
    /// cores. The threads share this reader's setup (cgroup hierarchies from
    /// mountinfo, user names from /etc/passwd), found once rather than once per thread.
    pub fn read_many(&mut self, pids: &[i32], threads: usize) -> Vec<Result<ProcessSnapshot>> {
        /// A thread costs ~50 us; one smaps_rollup of a big process costs milliseconds,
        /// so even a handful of processes is worth spreading.
        const PER_THREAD_MIN: usize = 2;
        let threads = threads.clamp(1, pids.len().div_ceil(PER_THREAD_MIN).max(1));
        if threads == 1 {
            return pids.iter().map(|&pid| self.read(pid)).collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = |reader: &mut ProcessReader| {
            let mut mine = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&pid) = pids.get(i) else { break };
                mine.push((i, reader.read(pid)));
            }
            mine
        };
        let mut results: Vec<(usize, Result<ProcessSnapshot>)> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads)
                .map(|_| {
                    let mut reader = self.sibling();
                    scope.spawn(move || work(&mut reader))
                })
                .collect();
            let mut all = work(self);
            for helper in helpers {
                // A helper that panicked took its claimed pids with it; their slots
                // are filled below rather than lost.
                all.extend(helper.join().unwrap_or_default());
            }
            all
        });
        results.sort_unstable_by_key(|(i, _)| *i);
        if results.len() < pids.len() {
            let mut full = Vec::with_capacity(pids.len());
            let mut got = results.into_iter().peekable();
            for (i, &pid) in pids.iter().enumerate() {
                match got.next_if(|(j, _)| *j == i) {
                    Some((_, r)) => full.push(r),
                    None => full.push(self.read(pid)),
                }
            }
            return full;
        }
        results.into_iter().map(|(_, r)| r).collect()
    }
}

/// Threads worth using for reading many processes (or logs): the CPUs this process
/// may use, at most 8. Found once: std reads the cgroup's CPU quota at each call
/// (~40 us, more than reading a small process).
pub fn default_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// A file of a process that is missing means the process exited, unless the
/// process is still there: then this kernel does not provide the file
/// (smaps_rollup before 4.14, say).
fn process_gone(dir: &ProcDir) -> bool {
    matches!(dir.read("stat"), Err(ReadError::Gone))
}

fn hard_error(pid: i32, what: &str, e: ReadError) -> Error {
    match e {
        ReadError::Gone => Error::NoSuchProcess { pid },
        ReadError::Denied => Error::PermissionDenied {
            pid,
            what: format!("/proc/{pid}/{what}"),
        },
        ReadError::Other(source) => Error::io(format!("/proc/{pid}/{what}"), source),
    }
}

pub(crate) fn read_i64(dir: &ProcDir, name: &str) -> Result<i64, ReadError> {
    let b = dir.read(name)?;
    std::str::from_utf8(&b)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| ReadError::Other(std::io::Error::other(format!("malformed {name}"))))
}

/// Every pid in /proc, in ascending order.
pub fn all_pids(root: &Root) -> Result<Vec<i32>> {
    let path = root.path("/proc");
    let entries = std::fs::read_dir(&path).map_err(|e| Error::io(&path, e))?;
    let mut pids: Vec<i32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    Ok(pids)
}

/// Pids whose comm or command line contains `pattern`, except this process.
pub fn pids_matching(root: &Root, pattern: &str) -> Result<Vec<i32>> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    for pid in all_pids(root)? {
        if pid == me && root.is_host() {
            continue;
        }
        let Ok(dir) = ProcDir::open(root, pid) else {
            continue;
        };
        let comm = dir.comm().unwrap_or_default();
        // Joined with spaces, not quoted: a pattern matches what was typed.
        let command = dir.args().unwrap_or_default().join(" ");
        if comm.contains(pattern) || command.contains(pattern) {
            found.push(pid);
        }
    }
    Ok(found)
}

/// A process and its parent, with the layout exec gave its address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub pid: i32,
    pub ppid: i32,
    /// `None` where `stat` did not show it (another user's process).
    pub layout: Option<stat::MemoryLayout>,
}

/// Every process with its parent, read from the cheap `stat` files.
pub fn parent_links(root: &Root) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for pid in all_pids(root)? {
        let Ok(dir) = ProcDir::open(root, pid) else {
            continue;
        };
        let Ok(bytes) = dir.read("stat") else {
            continue;
        };
        if let Ok(stat) = stat::parse(&bytes) {
            links.push(Link {
                pid,
                ppid: stat.ppid,
                layout: stat.layout,
            });
        }
    }
    Ok(links)
}
