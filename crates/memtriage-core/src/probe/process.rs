//! One process snapshot, read cheaply: `stat` and `status` for the fast fields,
//! `smaps_rollup` once for PSS/USS (it walks the page tables under the mmap lock, so
//! it is read only when asked), never the full `smaps` (that is [`super::maps`]).

use crate::error::{Error, Result};
use crate::model::process::{Faults, Oom, ProcessSnapshot, Rollup, Unreadable};
use crate::parse::text::{escape_bytes, split_cmdline};
use crate::parse::{kv, stat, status};
use crate::probe::cgroup::CgroupReader;
use crate::probe::procdir::{ProcDir, ReadError};
use crate::probe::root::Root;
use crate::probe::users::Users;

/// `PF_KTHREAD` in `/proc/PID/stat` flags.
const PF_KTHREAD: u32 = 0x0020_0000;

/// Which files to read. Each costs kernel time per process (measured on a 2-vCPU VM,
/// kernel 6.18, for a small process: `smaps_rollup` 44 us, `status` 17 us, `stat`
/// 13 us, `cgroup` 10 us, `oom_score` 7 us), so a listing of every process reads
/// only what it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    /// RSS split, peaks, threads, uid from `status`; without it the uid is the owner
    /// of `/proc/PID` and `memory` is `None`.
    pub status: bool,
    /// PSS/USS/huge pages from `smaps_rollup` (walks the page tables).
    pub rollup: bool,
    pub oom: bool,
    pub cgroup: bool,
}

impl Detail {
    /// Everything a snapshot of one process holds.
    pub fn full() -> Self {
        Detail {
            status: true,
            rollup: true,
            oom: true,
            cgroup: true,
        }
    }

    /// What a table of every process shows: `stat`, `cmdline` and `smaps_rollup`.
    pub fn listing() -> Self {
        Detail {
            status: false,
            rollup: true,
            oom: false,
            cgroup: false,
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

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// `Err(NoSuchProcess)` when the pid does not exist or exits before its `stat`
    /// and `status` are read; later fields that fail are listed as unreadable.
    pub fn read(&mut self, pid: i32) -> Result<ProcessSnapshot> {
        let dir = ProcDir::open(&self.root, pid)?;
        let stat_path = || self.root.path(&format!("/proc/{pid}/stat"));
        let buf = &mut self.buf;
        let len = dir
            .read_into("stat", buf, true)
            .map_err(|e| hard_error(pid, "stat", e))?;
        let stat = stat::parse(&buf[..len]).map_err(|e| Error::malformed(stat_path(), e))?;
        let kernel_thread = stat.flags & PF_KTHREAD != 0;
        let zombie = stat.state == 'Z';

        let mut unreadable = Vec::new();
        let mut note = |field: &str, reason: String| {
            unreadable.push(Unreadable {
                field: field.to_string(),
                reason,
            })
        };

        let threads_from_stat = stat.num_threads.max(0) as u64;
        let (uid, threads, memory, status_read) = if self.detail.status {
            let len = dir
                .read_into("status", buf, true)
                .map_err(|e| hard_error(pid, "status", e))?;
            let f = status::parse(&buf[..len]);
            (
                f.uid,
                f.threads.unwrap_or(threads_from_stat),
                f.memory,
                true,
            )
        } else {
            (dir.owner_uid(), threads_from_stat, None, false)
        };
        if memory.is_none() && status_read && !kernel_thread {
            note(
                "memory",
                if zombie {
                    "zombie: exited, its memory already released, waiting for its parent to reap it"
                        .into()
                } else {
                    "no address space (the process is exiting)".into()
                },
            );
        }

        let cmdline = if kernel_thread {
            Vec::new()
        } else {
            match dir.read_into("cmdline", buf, true) {
                Ok(len) => split_cmdline(&buf[..len]),
                Err(ReadError::Gone) if process_gone(&dir) => {
                    return Err(Error::NoSuchProcess { pid })
                }
                Err(e) => {
                    note("cmdline", e.reason());
                    Vec::new()
                }
            }
        };

        let has_memory = memory.is_some() || (!self.detail.status && !kernel_thread && !zombie);
        let rollup = if self.detail.rollup && !kernel_thread && !zombie && has_memory {
            // Before Linux 4.14 there is no smaps_rollup: the same sums from every
            // region of smaps, as the kernel would add them up.
            let read = match dir.read_into("smaps_rollup", buf, true) {
                Err(ReadError::Gone) if !process_gone(&dir) => dir.read_into("smaps", buf, false),
                read => read,
            };
            match read {
                Ok(len) => match parse_rollup(&buf[..len]) {
                    Some(r) => Some(r),
                    None => {
                        note(
                            "smaps_rollup",
                            "empty: the process has no address space now".into(),
                        );
                        None
                    }
                },
                Err(ReadError::Gone) if process_gone(&dir) => {
                    return Err(Error::NoSuchProcess { pid })
                }
                Err(e) => {
                    note("smaps_rollup", e.reason());
                    None
                }
            }
        } else {
            None
        };

        let oom = if !self.detail.oom {
            None
        } else {
            match (read_i64(&dir, "oom_score"), read_i64(&dir, "oom_score_adj")) {
                (Ok(score), Ok(score_adj)) => Some(Oom { score, score_adj }),
                (Err(ReadError::Gone), _) | (_, Err(ReadError::Gone)) if process_gone(&dir) => {
                    return Err(Error::NoSuchProcess { pid })
                }
                (Err(e), _) | (_, Err(e)) => {
                    note("oom", e.reason());
                    None
                }
            }
        };

        let cgroup = match self.cgroups.as_mut().filter(|_| !kernel_thread) {
            None => None,
            Some(reader) => match dir.read("cgroup") {
                Ok(b) => {
                    let membership =
                        crate::parse::cgroup::parse_membership(&String::from_utf8_lossy(&b));
                    match reader.for_membership(&membership) {
                        Ok(c) => c,
                        Err(reason) => {
                            note("cgroup", reason);
                            None
                        }
                    }
                }
                Err(ReadError::Gone) if process_gone(&dir) => {
                    return Err(Error::NoSuchProcess { pid })
                }
                Err(e) => {
                    note("cgroup", e.reason());
                    None
                }
            },
        };

        let exe = if self.detail.status && !kernel_thread {
            dir.read_link("exe").ok().map(|b| escape_bytes(&b))
        } else {
            None
        };
        let user = uid.and_then(|u| self.users.name(u));
        Ok(ProcessSnapshot {
            pid,
            ppid: stat.ppid,
            comm: stat.comm,
            cmdline,
            exe,
            state: stat.state,
            uid,
            user,
            threads,
            kernel_thread,
            memory,
            rollup,
            faults: Faults {
                minor: stat.minflt,
                major: stat.majflt,
                children_minor: stat.cminflt,
                children_major: stat.cmajflt,
            },
            oom,
            cgroup,
            unreadable,
        })
    }
}

/// Reads `pids` on up to `threads` threads (each with its own caches), in the order
/// given. The kernel work of a read is per process, so it spreads across cores.
pub fn read_many(
    root: &Root,
    detail: Detail,
    pids: &[i32],
    threads: usize,
) -> Vec<Result<ProcessSnapshot>> {
    /// A thread costs ~50 us; one smaps_rollup of a big process costs milliseconds, so
    /// even a handful of processes is worth spreading.
    const PER_THREAD_MIN: usize = 2;
    let threads = threads.clamp(1, pids.len().div_ceil(PER_THREAD_MIN).max(1));
    if threads == 1 {
        let mut reader = ProcessReader::new(root, detail);
        return pids.iter().map(|&pid| reader.read(pid)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Result<ProcessSnapshot>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut reader = ProcessReader::new(root, detail);
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&pid) = pids.get(i) else { break };
                        mine.push((i, reader.read(pid)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    results.sort_unstable_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Threads worth using for reading many processes.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
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

fn read_i64(dir: &ProcDir, name: &str) -> Result<i64, ReadError> {
    let b = dir.read(name)?;
    std::str::from_utf8(&b)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| ReadError::Other(std::io::Error::other(format!("malformed {name}"))))
}

/// `None` for an empty rollup (no address space) or one without its core fields.
/// Sums every record, so it takes the whole of `smaps` as well as `smaps_rollup`.
pub fn parse_rollup(text: &[u8]) -> Option<Rollup> {
    let mut r = Rollup::default();
    let (mut has_rss, mut has_pss) = (false, false);
    let add = |total: &mut Option<u64>, bytes: u64| *total = Some(total.unwrap_or(0) + bytes);
    for (key, bytes) in kv::sizes(text) {
        match key {
            "Rss" => (r.rss, has_rss) = (r.rss + bytes, true),
            "Pss" => (r.pss, has_pss) = (r.pss + bytes, true),
            "Pss_Anon" => add(&mut r.pss_anon, bytes),
            "Pss_File" => add(&mut r.pss_file, bytes),
            "Pss_Shmem" => add(&mut r.pss_shmem, bytes),
            "Shared_Clean" => r.shared_clean += bytes,
            "Shared_Dirty" => r.shared_dirty += bytes,
            "Private_Clean" => r.private_clean += bytes,
            "Private_Dirty" => r.private_dirty += bytes,
            "Referenced" => r.referenced += bytes,
            "Anonymous" => r.anonymous += bytes,
            "AnonHugePages" => r.anon_huge_pages += bytes,
            "ShmemPmdMapped" => r.shmem_pmd_mapped += bytes,
            "FilePmdMapped" => r.file_pmd_mapped += bytes,
            "Shared_Hugetlb" => r.shared_hugetlb += bytes,
            "Private_Hugetlb" => r.private_hugetlb += bytes,
            "Swap" => r.swap += bytes,
            "SwapPss" => r.swap_pss += bytes,
            "Locked" => r.locked += bytes,
            _ => {}
        }
    }
    (has_rss && has_pss).then_some(r)
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
        let comm = dir.read("comm").unwrap_or_default();
        let cmdline = dir.read("cmdline").unwrap_or_default();
        let command = split_cmdline(&cmdline).join(" ");
        if escape_bytes(comm.trim_ascii_end()).contains(pattern) || command.contains(pattern) {
            found.push(pid);
        }
    }
    Ok(found)
}

/// `(pid, ppid)` of every process, read from the cheap `stat` files.
pub fn parent_links(root: &Root) -> Result<Vec<(i32, i32)>> {
    let mut links = Vec::new();
    for pid in all_pids(root)? {
        let Ok(dir) = ProcDir::open(root, pid) else {
            continue;
        };
        let Ok(bytes) = dir.read("stat") else {
            continue;
        };
        if let Ok(stat) = stat::parse(&bytes) {
            links.push((pid, stat.ppid));
        }
    }
    Ok(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_rollup_is_none_not_zero() {
        assert_eq!(parse_rollup(b""), None);
        assert_eq!(
            parse_rollup(b"00400000-7fff ---p 00000000 00:00 0 [rollup]\n"),
            None
        );
    }

    #[test]
    fn rollup_uss_is_private_clean_plus_dirty() {
        let r = parse_rollup(
            b"Rss: 300 kB\nPss: 200 kB\nPrivate_Clean: 10 kB\nPrivate_Dirty: 90 kB\nAnonymous: 100 kB\nAnonHugePages: 50 kB\n",
        )
        .unwrap();
        assert_eq!(r.uss(), 100 * 1024);
        assert_eq!(r.anon_huge_coverage(), Some(0.5));
        assert_eq!(
            r.pss_anon, None,
            "a kernel before 5.14 has no Pss_Anon: unknown, not 0"
        );
    }

    /// On a live process the regions of smaps add up to what smaps_rollup reports
    /// (PSS within rounding: smaps rounds each region down to a kB).
    #[test]
    fn smaps_summed_matches_smaps_rollup_on_a_live_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let dir = format!("/proc/{}", child.id());
        // Read once the child is quiet: exec done, libraries loaded, asleep (smaps
        // the same before and after the rollup was read).
        let (all, rollup) = loop {
            let before = std::fs::read(format!("{dir}/smaps")).unwrap();
            let rollup = std::fs::read(format!("{dir}/smaps_rollup")).unwrap();
            let after = std::fs::read(format!("{dir}/smaps")).unwrap();
            if before == after && String::from_utf8_lossy(&after).contains("sleep") {
                break (after, rollup);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        child.kill().unwrap();
        child.wait().unwrap();
        let (summed, rolled) = (parse_rollup(&all).unwrap(), parse_rollup(&rollup).unwrap());
        let regions = all
            .split(|b| *b == b'\n')
            .filter(|l| l.starts_with(b"Rss:"))
            .count() as u64;
        assert!(regions > 5);
        assert_eq!(summed.rss, rolled.rss);
        assert_eq!(summed.uss(), rolled.uss());
        assert_eq!(summed.anonymous, rolled.anonymous);
        assert!(summed.pss <= rolled.pss && rolled.pss - summed.pss <= regions * 1024);
    }
}
