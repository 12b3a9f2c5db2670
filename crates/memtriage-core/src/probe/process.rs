//! One process snapshot, read cheaply: `stat` and `status` for the fast fields,
//! `smaps_rollup` once for PSS/USS (it walks the page tables under the mmap lock, so
//! it is read only when asked), never the full `smaps` (that is [`super::maps`]).

use procfs_core::process::{Stat, Status};
use procfs_core::{FromBufRead, FromRead};

use crate::error::{Error, Result};
use crate::model::process::{Faults, Oom, ProcessSnapshot, Rollup, StatusMemory, Unreadable};
use crate::parse::kv;
use crate::parse::text::{escape_bytes, split_cmdline};
use crate::probe::cgroup::CgroupReader;
use crate::probe::procdir::{ProcDir, ReadError};
use crate::probe::root::Root;
use crate::probe::users::Users;

/// `PF_KTHREAD` in `/proc/PID/stat` flags.
const PF_KTHREAD: u32 = 0x0020_0000;

/// What to read beyond the cheap fields.
#[derive(Debug, Clone, Copy)]
pub struct Detail {
    /// PSS/USS/huge pages from `smaps_rollup` (costs kernel time per resident page).
    pub rollup: bool,
    pub cgroup: bool,
}

impl Default for Detail {
    fn default() -> Self {
        Detail {
            rollup: true,
            cgroup: true,
        }
    }
}

/// Reads many processes, sharing what they share (cgroups, user names).
pub struct ProcessReader {
    root: Root,
    detail: Detail,
    cgroups: Option<CgroupReader>,
    users: Users,
}

impl ProcessReader {
    pub fn new(root: &Root, detail: Detail) -> Self {
        ProcessReader {
            root: root.clone(),
            detail,
            cgroups: detail.cgroup.then(|| CgroupReader::discover(root)),
            users: Users::new(root),
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
        let stat_bytes = dir.read("stat").map_err(|e| hard_error(pid, "stat", e))?;
        let stat = Stat::from_read(&stat_bytes[..])
            .map_err(|e| Error::malformed(stat_path(), e.to_string()))?;
        let kernel_thread = stat.flags & PF_KTHREAD != 0;
        let zombie = stat.state == 'Z';

        let mut unreadable = Vec::new();
        let mut note = |field: &str, reason: String| {
            unreadable.push(Unreadable {
                field: field.to_string(),
                reason,
            })
        };

        let status_bytes = dir
            .read("status")
            .map_err(|e| hard_error(pid, "status", e))?;
        let status = Status::from_buf_read(&status_bytes[..]);
        let (uid, threads, memory) = match &status {
            Ok(s) => (Some(s.ruid), s.threads, status_memory(s)),
            Err(e) => {
                note("status", format!("malformed: {e}"));
                (None, stat.num_threads.max(0) as u64, None)
            }
        };
        if memory.is_none() && status.is_ok() && !kernel_thread {
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
            match dir.read("cmdline") {
                Ok(b) => split_cmdline(&b),
                Err(ReadError::Gone) => return Err(Error::NoSuchProcess { pid }),
                Err(e) => {
                    note("cmdline", e.reason());
                    Vec::new()
                }
            }
        };

        let rollup = if self.detail.rollup && !kernel_thread && !zombie && memory.is_some() {
            match dir.read("smaps_rollup") {
                Ok(b) => match parse_rollup(&b) {
                    Some(r) => Some(r),
                    None => {
                        note(
                            "smaps_rollup",
                            "empty: the process has no address space now".into(),
                        );
                        None
                    }
                },
                Err(ReadError::Gone) => return Err(Error::NoSuchProcess { pid }),
                Err(e) => {
                    note("smaps_rollup", e.reason());
                    None
                }
            }
        } else {
            None
        };

        let oom = match (read_i64(&dir, "oom_score"), read_i64(&dir, "oom_score_adj")) {
            (Ok(score), Ok(score_adj)) => Some(Oom { score, score_adj }),
            (Err(ReadError::Gone), _) | (_, Err(ReadError::Gone)) => {
                return Err(Error::NoSuchProcess { pid })
            }
            (Err(e), _) | (_, Err(e)) => {
                note("oom", e.reason());
                None
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
                Err(ReadError::Gone) => return Err(Error::NoSuchProcess { pid }),
                Err(e) => {
                    note("cgroup", e.reason());
                    None
                }
            },
        };

        let user = uid.and_then(|u| self.users.name(u));
        Ok(ProcessSnapshot {
            pid,
            ppid: stat.ppid,
            comm: escape_bytes(stat.comm.as_bytes()),
            cmdline,
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

/// `None` when the status has no memory lines: kernel threads, zombies, exiting.
fn status_memory(s: &Status) -> Option<StatusMemory> {
    let kib = |v: Option<u64>| v.map(|k| k * 1024);
    s.vmrss?;
    Some(StatusMemory {
        rss: kib(s.vmrss),
        rss_anon: kib(s.rssanon),
        rss_file: kib(s.rssfile),
        rss_shmem: kib(s.rssshmem),
        vm_peak: kib(s.vmpeak),
        vm_size: kib(s.vmsize),
        vm_hwm: kib(s.vmhwm),
        swap: kib(s.vmswap),
        locked: kib(s.vmlck),
        page_tables: kib(s.vmpte),
        hugetlb: kib(s.hugetlbpages),
    })
}

/// `None` for an empty rollup (no address space) or one without its core fields.
pub fn parse_rollup(text: &[u8]) -> Option<Rollup> {
    let m = kv::size_map(text);
    let get = |k: &str| m.get(k).copied().unwrap_or(0);
    Some(Rollup {
        rss: *m.get("Rss")?,
        pss: *m.get("Pss")?,
        pss_anon: m.get("Pss_Anon").copied(),
        pss_file: m.get("Pss_File").copied(),
        pss_shmem: m.get("Pss_Shmem").copied(),
        shared_clean: get("Shared_Clean"),
        shared_dirty: get("Shared_Dirty"),
        private_clean: get("Private_Clean"),
        private_dirty: get("Private_Dirty"),
        referenced: get("Referenced"),
        anonymous: get("Anonymous"),
        anon_huge_pages: get("AnonHugePages"),
        shmem_pmd_mapped: get("ShmemPmdMapped"),
        file_pmd_mapped: get("FilePmdMapped"),
        shared_hugetlb: get("Shared_Hugetlb"),
        private_hugetlb: get("Private_Hugetlb"),
        swap: get("Swap"),
        swap_pss: get("SwapPss"),
        locked: get("Locked"),
    })
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
        if let Ok(stat) = Stat::from_read(&bytes[..]) {
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
}
