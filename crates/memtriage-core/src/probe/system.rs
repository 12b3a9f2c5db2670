//! Reads the machine's memory settings and state into a [`SystemSnapshot`]. Each part
//! is read on its own: one that cannot be read is recorded in `unreadable` and the
//! rest still are.

use crate::error::{Error, Result};
use crate::model::process::Unreadable;
use crate::model::system::{
    HugePagePool, Limits, MemInfo, MemoryPressure, ShmMount, SystemSnapshot, Thp, VmSettings,
    SHM_NOT_MOUNTED,
};
use crate::parse::cgroup::parse_membership;
use crate::parse::kv::counter;
use crate::parse::{kmsg, limits, meminfo, mountinfo, pressure, swaps, thp, uptime};
use crate::probe::cgroup::CgroupReader;
use crate::probe::kmsg::read_kmsg;
use crate::probe::mounts;
use crate::probe::root::Root;

pub const UPTIME: &str = "/proc/uptime";
pub use crate::model::system::{MEMINFO, PRESSURE, VMSTAT};
pub const SHM_DIR: &str = "/dev/shm";

/// The transparent huge page settings, one choice per file.
pub const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
pub const THP_DEFRAG: &str = "/sys/kernel/mm/transparent_hugepage/defrag";
pub const THP_SHMEM_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
use crate::model::system::HUGEPAGES as HUGEPAGES_DIR;

/// Never fails as a whole.
pub fn read(root: &Root) -> SystemSnapshot {
    let mut r = Reader {
        root,
        snap: SystemSnapshot::empty(),
    };
    let s = &mut r;

    s.snap.kernel_release = s
        .optional_text("kernel_release", "/proc/sys/kernel/osrelease")
        .map(|t| t.trim().to_string());
    s.snap.uptime_seconds = s.reading("uptime_seconds", uptime_seconds(root));
    s.snap.memory = s.reading("memory", read_meminfo(root));
    if let Some(m) = &s.snap.memory {
        for (field, v) in [("memory.total", m.total), ("memory.available", m.available)] {
            if v.is_none() {
                s.unreadable(field, "/proc/meminfo lacks the line");
            }
        }
    }
    s.snap.swaps = s.text("swaps", "/proc/swaps").map(|t| swaps::parse(&t));
    s.snap.pressure = match read_pressure(root) {
        Ok(Some(p)) => Some(p),
        Ok(None) => {
            let path = root.path(PRESSURE);
            s.unreadable(
                "pressure",
                &format!("{}: absent on this kernel", path.display()),
            );
            None
        }
        Err(e) => {
            s.unreadable("pressure", &e.to_string());
            None
        }
    };
    s.snap.thp = Thp {
        enabled: s.thp("thp.enabled", THP_ENABLED),
        defrag: s.thp("thp.defrag", THP_DEFRAG),
        shmem_enabled: s.thp("thp.shmem_enabled", THP_SHMEM_ENABLED),
    };
    s.snap.hugepages = s.hugepage_pools();
    let own = root.is_host().then(|| std::process::id() as i32);
    s.snap.oom_killers = Some(super::killers::find(root, own));
    s.snap.proactive_reclaim = match super::damon::read(root) {
        Ok(found) => found,
        Err(why) => {
            s.unreadable("proactive_reclaim", &why.to_string());
            Vec::new()
        }
    };
    s.snap.vm = VmSettings {
        overcommit_memory: s.vm("overcommit_memory"),
        overcommit_ratio: s.vm("overcommit_ratio"),
        overcommit_bytes: s
            .vm::<u64>("overcommit_kbytes")
            .and_then(|k| k.checked_mul(1024)),
        swappiness: s.vm("swappiness"),
        dirty_ratio: s.vm("dirty_ratio"),
        dirty_background_ratio: s.vm("dirty_background_ratio"),
        dirty_bytes: s.vm("dirty_bytes"),
        dirty_background_bytes: s.vm("dirty_background_bytes"),
        max_map_count: s.vm("max_map_count"),
        zone_reclaim_mode: s.vm("zone_reclaim_mode"),
        min_free_bytes: s
            .vm::<u64>("min_free_kbytes")
            .and_then(|k| k.checked_mul(1024)),
        panic_on_oom: s.vm("panic_on_oom"),
    };
    s.snap.numa_balancing = s.number("numa_balancing", "/proc/sys/kernel/numa_balancing");
    s.snap.numa_nodes = s.numa_nodes();
    s.snap.shm = s.shm();
    s.snap.limits = s.limits();
    s.snap.cgroup = s.cgroup();
    s.snap.oom_kill_count = s
        .reading("oom_kill_count", read_vmstat(root))
        .and_then(|vm| {
            let n = vm
                .counter("oom_kill")
                .ok_or_else(|| "no oom_kill line (kernel before 4.13)".to_string());
            s.parsed("oom_kill_count", VMSTAT, n)
        });
    match read_kmsg(root) {
        Ok(lines) => {
            s.snap.oom_kills = Some(kmsg::oom_kills(lines.iter().map(String::as_str)));
            s.snap.xids = Some(kmsg::xid_events(lines.iter().map(String::as_str)));
        }
        Err(e) => {
            s.unreadable("oom_kills", &e.to_string());
            s.unreadable("xids", &e.to_string());
        }
    }
    s.snap.previous_boot_logs = match super::crashes::previous_boot_logs(root) {
        Ok(logs) => Some(logs),
        Err(why) => {
            s.unreadable("previous_boot_logs", &why);
            None
        }
    };
    // A captured tree has no GPU of its own; NVML would read this machine's.
    s.snap.gpu = root.is_host().then(|| super::gpu::report(root));
    r.snap
}

struct Reader<'a> {
    root: &'a Root,
    snap: SystemSnapshot,
}

impl Reader<'_> {
    fn unreadable(&mut self, field: &str, reason: &str) {
        self.snap.unreadable.push(Unreadable {
            field: field.to_string(),
            reason: reason.to_string(),
        });
    }

    /// What a reader of one file returned; its error is the reason recorded.
    fn reading<T>(&mut self, field: &str, value: Result<T>) -> Option<T> {
        match value {
            Ok(v) => Some(v),
            Err(e) => {
                self.unreadable(field, &e.to_string());
                None
            }
        }
    }

    /// A file that must exist on any kernel that matters here.
    fn text(&mut self, field: &str, rel: &str) -> Option<String> {
        match self.root.read_string(rel) {
            Ok(t) => Some(t),
            Err(e) => {
                self.unreadable(field, &e.to_string());
                None
            }
        }
    }

    /// A file that some kernels or configurations lack; its absence is recorded too,
    /// so a user sees why the value is missing.
    fn optional_text(&mut self, field: &str, rel: &str) -> Option<String> {
        let read = self.root.read_optional(rel);
        self.present(field, rel, read)
    }

    /// The value of a read that finds nothing where the kernel lacks the file;
    /// either way of missing it is recorded under `field`.
    fn present<T>(&mut self, field: &str, rel: &str, read: Result<Option<T>>) -> Option<T> {
        match read {
            Ok(Some(v)) => Some(v),
            Ok(None) => {
                let path = self.root.path(rel);
                self.unreadable(field, &format!("{}: absent on this kernel", path.display()));
                None
            }
            Err(e) => {
                self.unreadable(field, &e.to_string());
                None
            }
        }
    }

    fn parsed<T>(&mut self, field: &str, rel: &str, value: Result<T, String>) -> Option<T> {
        match value {
            Ok(v) => Some(v),
            Err(why) => {
                let path = self.root.path(rel);
                self.unreadable(field, &format!("{}: malformed: {why}", path.display()));
                None
            }
        }
    }

    fn number<T: std::str::FromStr>(&mut self, field: &str, rel: &str) -> Option<T> {
        let text = self.optional_text(field, rel)?;
        let trimmed = text.trim();
        let value = trimmed
            .parse::<T>()
            .map_err(|_| format!("not a number: {trimmed:?}"));
        self.parsed(field, rel, value)
    }

    /// A `vm.` sysctl, named in `unreadable` as `vm.KEY`.
    fn vm<T: std::str::FromStr>(&mut self, key: &str) -> Option<T> {
        self.number(&format!("vm.{key}"), &format!("/proc/sys/vm/{key}"))
    }

    fn thp(&mut self, field: &str, rel: &str) -> Option<String> {
        let read = read_thp_setting(self.root, rel);
        self.present(field, rel, read)
    }

    fn hugepage_pools(&mut self) -> Option<Vec<HugePagePool>> {
        let dir = self.root.path(HUGEPAGES_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.unreadable(
                    "hugepages",
                    &format!("{}: absent (kernel without hugetlbfs)", dir.display()),
                );
                return None;
            }
            Err(e) => {
                self.unreadable("hugepages", &format!("{}: {e}", dir.display()));
                return None;
            }
        };
        let mut pools = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(page_size) = name
                .strip_prefix("hugepages-")
                .and_then(|n| n.strip_suffix("kB"))
                .and_then(|n| n.parse::<u64>().ok())
                .and_then(|kb| kb.checked_mul(1024))
            else {
                continue;
            };
            let base = format!("{HUGEPAGES_DIR}/{name}");
            let field = format!("hugepages.{name}");
            let total = self.number::<u64>(&field, &format!("{base}/nr_hugepages"));
            let free = self.number::<u64>(&field, &format!("{base}/free_hugepages"));
            let reserved = self
                .root
                .read_trimmed(&format!("{base}/resv_hugepages"))
                .ok()
                .and_then(|t| t.parse().ok());
            if let (Some(total), Some(free)) = (total, free) {
                pools.push(HugePagePool {
                    page_size,
                    total,
                    free,
                    reserved,
                });
            }
        }
        pools.sort_by_key(|p| p.page_size);
        Some(pools)
    }

    fn numa_nodes(&mut self) -> Option<u32> {
        let dir = self.root.path("/sys/devices/system/node");
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                let n = entries
                    .flatten()
                    .filter(|e| {
                        e.file_name()
                            .to_str()
                            .and_then(|n| n.strip_prefix("node"))
                            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                    })
                    .count();
                u32::try_from(n).ok()
            }
            Err(e) => {
                self.unreadable("numa_nodes", &format!("{}: {e}", dir.display()));
                None
            }
        }
    }

    fn shm(&mut self) -> Option<ShmMount> {
        let mounts = self.reading("shm", mounts::read(self.root))?;
        // Mounts stack: the last one listed at /dev/shm is the one in view.
        let Some(mount) = mounts.into_iter().rev().find(|m| m.mount_point == SHM_DIR) else {
            self.unreadable("shm", SHM_NOT_MOUNTED);
            return None;
        };
        let size_option = mount
            .super_options
            .iter()
            .find_map(|o| o.strip_prefix("size="))
            .and_then(mountinfo::tmpfs_size);
        // Under a captured root the directory is not the tmpfs that mountinfo
        // describes, so there only the mount option is known.
        let (total, used) = if !self.root.is_host() {
            self.unreadable(
                "shm.used",
                "not measured under a captured root (statvfs needs the live mount)",
            );
            (None, None)
        } else {
            match shm_usage(self.root) {
                Ok(usage) => (usage.total, usage.used),
                Err(e) => {
                    self.unreadable("shm.used", &format!("statvfs /dev/shm: {e}"));
                    (None, None)
                }
            }
        };
        Some(ShmMount {
            fs_type: mount.fs_type,
            size_option,
            total,
            used,
        })
    }

    fn limits(&mut self) -> Limits {
        let Some(text) = self.text("limits", "/proc/self/limits") else {
            return Limits::default();
        };
        let memlock = limits::limit(&text, "Max locked memory");
        let nofile = limits::limit(&text, "Max open files");
        for (field, v) in [("limits.memlock", memlock), ("limits.nofile", nofile)] {
            if v.is_none() {
                self.unreadable(field, "/proc/self/limits: line missing or malformed");
            }
        }
        Limits { memlock, nofile }
    }

    fn cgroup(&mut self) -> Option<crate::model::process::CgroupMemory> {
        let text = self.text("cgroup", "/proc/self/cgroup")?;
        let mut reader = CgroupReader::discover(self.root);
        match reader.for_membership(&parse_membership(&text)) {
            Ok(c) => c,
            Err(reason) => {
                self.unreadable("cgroup", &reason.to_string());
                None
            }
        }
    }
}

/// Seconds since boot.
pub fn uptime_seconds(root: &Root) -> Result<f64> {
    let text = root.read_string(UPTIME)?;
    uptime::parse(&text).map_err(|e| Error::malformed(root.path(UPTIME), e.detail))
}

pub fn read_meminfo(root: &Root) -> Result<MemInfo> {
    Ok(meminfo::parse(&root.read_string(MEMINFO)?))
}

/// The choice in force in one of the `THP_*` files (`always`, `madvise`, `never`,
/// ...); `Ok(None)` on a kernel without transparent huge pages.
pub fn read_thp_setting(root: &Root, rel: &str) -> Result<Option<String>> {
    let Some(text) = root.read_optional(rel)? else {
        return Ok(None);
    };
    thp::selected(&text).map(Some).ok_or_else(|| {
        Error::malformed(
            root.path(rel),
            format!("no [selected] value in {:?}", text.trim()),
        )
    })
}

/// The hugetlbfs pools, one per page size, smallest first; empty where the kernel
/// has none or they are unreadable (the snapshot's reader, whose reasons a caller
/// that wants them finds in [`read`]'s `unreadable`).
pub fn hugetlb_pools(root: &Root) -> Vec<HugePagePool> {
    Reader {
        root,
        snap: SystemSnapshot::empty(),
    }
    .hugepage_pools()
    .unwrap_or_default()
}

/// `Ok(None)` on a kernel without PSI (before 4.20, or booted with `psi=0`).
pub fn read_pressure(root: &Root) -> Result<Option<MemoryPressure>> {
    let Some(text) = root.read_optional(PRESSURE)? else {
        return Ok(None);
    };
    pressure::parse(&text)
        .map(Some)
        .map_err(|e| Error::malformed(root.path(PRESSURE), e.detail))
}

/// `/proc/vmstat`, whose counters are read by name.
pub struct Vmstat {
    text: String,
}

impl Vmstat {
    /// `None` where this kernel has no such counter.
    pub fn counter(&self, key: &str) -> Option<u64> {
        counter(&self.text, key)
    }
}

pub fn read_vmstat(root: &Root) -> Result<Vmstat> {
    Ok(Vmstat {
        text: root.read_string(VMSTAT)?,
    })
}

/// Size and use of `/dev/shm` (where DataLoader workers hand over batches), from
/// statvfs(2). Each is `None` where the filesystem reports no blocks or the bytes
/// would overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmUsage {
    pub total: Option<u64>,
    pub used: Option<u64>,
}

/// Needs the live mount: under a captured root the directory is not the tmpfs
/// that its mountinfo describes.
pub fn shm_usage(root: &Root) -> std::io::Result<ShmUsage> {
    let st = rustix::fs::statvfs(root.path(SHM_DIR))?;
    if st.f_blocks == 0 {
        return Ok(ShmUsage {
            total: None,
            used: None,
        });
    }
    let unit = if st.f_frsize > 0 {
        st.f_frsize
    } else {
        st.f_bsize
    };
    Ok(ShmUsage {
        total: st.f_blocks.checked_mul(unit),
        used: st.f_blocks.saturating_sub(st.f_bfree).checked_mul(unit),
    })
}

/// CAP_SYS_PTRACE (capabilities(7)): reading other users' `smaps_rollup`.
pub const CAP_SYS_PTRACE: u32 = 19;

/// Whether this process may read every user's `smaps_rollup` (PSS, swap): the kernel
/// asks for CAP_SYS_PTRACE for another user's process, whatever this one's uid.
pub fn reads_every_users_pss(root: &Root) -> bool {
    has_capability(root, CAP_SYS_PTRACE)
}

/// Whether this process holds capability number `cap` (see capabilities(7)) in its
/// effective set; `false` when that cannot be read.
pub fn has_capability(root: &Root, cap: u32) -> bool {
    crate::probe::procdir::own_status(root)
        .and_then(|s| s.cap_eff)
        .is_some_and(|caps| caps & (1 << cap) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let path = dir.path().join(rel.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = Root::at(dir.path());
        (dir, root)
    }

    #[test]
    fn a_malformed_file_is_named_with_what_is_wrong() {
        let (_dir, root) = root_with(&[(UPTIME, "soon\n"), (PRESSURE, "some avg10=x\n")]);
        let err = uptime_seconds(&root).unwrap_err().to_string();
        assert!(
            err.ends_with("proc/uptime: malformed: not seconds: \"soon\""),
            "{err}"
        );
        let err = read_pressure(&root).unwrap_err().to_string();
        assert!(
            err.contains("proc/pressure/memory: malformed: no some/full"),
            "{err}"
        );
    }

    #[test]
    fn a_kernel_without_psi_has_no_pressure_and_that_is_not_an_error() {
        let (_dir, root) = root_with(&[(UPTIME, "12.5 3.0\n")]);
        assert_eq!(read_pressure(&root).unwrap(), None);
        assert_eq!(uptime_seconds(&root).unwrap(), 12.5);
        assert!(
            read_meminfo(&root).is_err(),
            "a missing meminfo is an error"
        );
    }

    #[test]
    fn vmstat_counters_by_name_and_unknown_ones_are_none() {
        let (_dir, root) = root_with(&[(VMSTAT, "pswpin 7\npswpout 9\noom_kill 0\n")]);
        let vm = read_vmstat(&root).unwrap();
        assert_eq!(vm.counter("pswpout"), Some(9));
        assert_eq!(vm.counter("oom_kill"), Some(0));
        assert_eq!(vm.counter("pgsteal"), None);
    }

    /// The live tmpfs, compared with what df(1)'s source, statvfs, says through std.
    #[test]
    fn shm_usage_of_the_live_dev_shm() {
        let root = Root::host();
        if !std::path::Path::new(SHM_DIR).is_dir() {
            crate::tests::support::skip("no /dev/shm");
            return;
        }
        let usage = shm_usage(&root).unwrap();
        let (Some(total), Some(used)) = (usage.total, usage.used) else {
            panic!("a mounted /dev/shm has a size: {usage:?}");
        };
        assert!(used <= total, "{usage:?}");
        let st = rustix::fs::statvfs(SHM_DIR).unwrap();
        assert_eq!(total, st.f_blocks * st.f_frsize);
        // A file written there shows up in the used bytes.
        let path = format!("{SHM_DIR}/memtriage-shm-test-{}", std::process::id());
        std::fs::write(&path, vec![1u8; 8 << 20]).unwrap();
        let after = shm_usage(&root).unwrap().used.unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(after >= used + (4 << 20), "{used} then {after}");
    }
}
