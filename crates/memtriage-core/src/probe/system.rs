//! Reads the machine's memory settings and state into a [`SystemSnapshot`]. Each part
//! is read on its own: one that cannot be read is recorded in `unreadable` and the
//! rest still are.

use crate::model::process::Unreadable;
use crate::model::system::{
    HugePagePool, Limits, MemInfo, MemoryPressure, PressureLine, Rlimit, ShmMount, SwapDevice,
    SystemSnapshot, Thp, VmSettings, SHM_NOT_MOUNTED,
};
use crate::parse::cgroup::parse_membership;
use crate::parse::kv::{counter, size_map};
use crate::parse::mountinfo::{self, unescape_octal};
use crate::probe::cgroup::CgroupReader;
use crate::probe::kmsg;
use crate::probe::root::Root;

const THP_DIR: &str = "/sys/kernel/mm/transparent_hugepage";
const HUGEPAGES_DIR: &str = "/sys/kernel/mm/hugepages";

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
    s.snap.uptime_seconds = s
        .text("uptime_seconds", "/proc/uptime")
        .and_then(|t| s.parsed("uptime_seconds", "/proc/uptime", parse_uptime(&t)));
    s.snap.memory = s.text("memory", "/proc/meminfo").map(|t| parse_meminfo(&t));
    if let Some(m) = &s.snap.memory {
        for (field, v) in [("memory.total", m.total), ("memory.available", m.available)] {
            if v.is_none() {
                s.unreadable(field, "/proc/meminfo lacks the line");
            }
        }
    }
    s.snap.swaps = s.text("swaps", "/proc/swaps").map(|t| parse_swaps(&t));
    s.snap.pressure = s
        .optional_text("pressure", "/proc/pressure/memory")
        .and_then(|t| {
            let p = parse_pressure(&t);
            s.parsed("pressure", "/proc/pressure/memory", p)
        });
    s.snap.thp = Thp {
        enabled: s.selected("thp.enabled", &format!("{THP_DIR}/enabled")),
        defrag: s.selected("thp.defrag", &format!("{THP_DIR}/defrag")),
        shmem_enabled: s.selected("thp.shmem_enabled", &format!("{THP_DIR}/shmem_enabled")),
    };
    s.snap.hugepages = s.hugepage_pools();
    s.snap.proactive_reclaim = match super::damon::read(root) {
        Ok(found) => found,
        Err(why) => {
            s.unreadable("proactive_reclaim", &why);
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
    s.snap.oom_kill_count = s.text("oom_kill_count", "/proc/vmstat").and_then(|t| {
        let n = counter(&t, "oom_kill")
            .ok_or_else(|| "no oom_kill line (kernel before 4.13)".to_string());
        s.parsed("oom_kill_count", "/proc/vmstat", n)
    });
    s.snap.oom_kills = match kmsg::read_kmsg(root) {
        Ok(lines) => Some(kmsg::oom_kills(lines.iter().map(String::as_str))),
        Err(reason) => {
            s.unreadable("oom_kills", &reason);
            None
        }
    };
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
        match self.root.read_optional(rel) {
            Ok(Some(t)) => Some(t),
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

    fn selected(&mut self, field: &str, rel: &str) -> Option<String> {
        let text = self.optional_text(field, rel)?;
        let value = parse_selected(&text)
            .ok_or_else(|| format!("no [selected] value in {:?}", text.trim()));
        self.parsed(field, rel, value)
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
        let text = self.text("shm", "/proc/self/mountinfo")?;
        // Mounts stack: the last one listed at /dev/shm is the one in view.
        let Some(mount) = mountinfo::parse(&text)
            .into_iter()
            .rev()
            .find(|m| m.mount_point == "/dev/shm")
        else {
            self.unreadable("shm", SHM_NOT_MOUNTED);
            return None;
        };
        let size_option = mount
            .super_options
            .iter()
            .find_map(|o| o.strip_prefix("size="))
            .and_then(parse_tmpfs_size);
        // Under a captured root the directory is not the tmpfs that mountinfo
        // describes, so there only the mount option is known.
        let (total, used) = if !self.root.is_host() {
            self.unreadable(
                "shm.used",
                "not measured under a captured root (statvfs needs the live mount)",
            );
            (None, None)
        } else {
            match rustix::fs::statvfs(self.root.path("/dev/shm")) {
                Ok(st) if st.f_blocks > 0 => {
                    let unit = if st.f_frsize > 0 {
                        st.f_frsize
                    } else {
                        st.f_bsize
                    };
                    (
                        st.f_blocks.checked_mul(unit),
                        st.f_blocks.saturating_sub(st.f_bfree).checked_mul(unit),
                    )
                }
                Ok(_) => (None, None),
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
        let memlock = parse_limit(&text, "Max locked memory");
        let nofile = parse_limit(&text, "Max open files");
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
                self.unreadable("cgroup", &reason);
                None
            }
        }
    }
}

/// Lenient: fields that are missing stay `None`.
pub fn parse_meminfo(text: &str) -> MemInfo {
    let m = size_map(text.as_bytes());
    let get = |k: &str| m.get(k).copied();
    MemInfo {
        total: get("MemTotal"),
        available: get("MemAvailable"),
        free: get("MemFree"),
        swap_total: get("SwapTotal"),
        swap_free: get("SwapFree"),
        shmem: get("Shmem"),
        commit_limit: get("CommitLimit"),
        committed_as: get("Committed_AS"),
        hugepage_size: get("Hugepagesize"),
    }
}

/// `/proc/swaps`: a header, then `Filename Type Size Used Priority` with sizes in kB.
pub fn parse_swaps(text: &str) -> Vec<SwapDevice> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            let filename = unescape_octal(f.next()?);
            let kind = f.next()?.to_string();
            let size = f.next()?.parse::<u64>().ok()?.checked_mul(1024)?;
            let used = f.next()?.parse::<u64>().ok()?.checked_mul(1024)?;
            let priority = f.next()?.parse().ok()?;
            Some(SwapDevice {
                filename,
                kind,
                size,
                used,
                priority,
            })
        })
        .collect()
}

/// `some avg10=0.00 avg60=0.00 avg300=0.00 total=0` and the same for `full`
/// (`full` appeared in 5.x for memory; older kernels print only `some`).
pub fn parse_pressure(text: &str) -> Result<MemoryPressure, String> {
    let mut p = MemoryPressure {
        some: None,
        full: None,
    };
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let kind = words.next();
        let mut values = [None, None, None];
        let mut total = None;
        for w in words {
            let Some((k, v)) = w.split_once('=') else {
                continue;
            };
            match k {
                "avg10" => values[0] = v.parse::<f64>().ok(),
                "avg60" => values[1] = v.parse::<f64>().ok(),
                "avg300" => values[2] = v.parse::<f64>().ok(),
                "total" => total = v.parse::<u64>().ok(),
                _ => {}
            }
        }
        let line = match (values, total) {
            ([Some(avg10), Some(avg60), Some(avg300)], Some(total_us)) => Some(PressureLine {
                avg10,
                avg60,
                avg300,
                total_us,
            }),
            _ => None,
        };
        match kind {
            Some("some") => p.some = line,
            Some("full") => p.full = line,
            _ => {}
        }
    }
    if p.some.is_none() && p.full.is_none() {
        return Err("no some/full line with avg10, avg60, avg300 and total".into());
    }
    Ok(p)
}

/// `always [madvise] never` → `madvise`.
pub fn parse_selected(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = start + text[start..].find(']')?;
    let v = text[start + 1..end].trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// tmpfs `size=` as mountinfo shows it (`65536k`), or as written in fstab
/// (`16G`, `512m`, bytes). A percentage of RAM is left to statvfs.
pub fn parse_tmpfs_size(s: &str) -> Option<u64> {
    let (digits, scale) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        (i, 't' | 'T') => (&s[..i], 1 << 40),
        (_, c) if c.is_ascii_digit() => (s, 1),
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// One line of `/proc/PID/limits`, e.g. `Max locked memory  8388608  8388608  bytes`.
/// The columns are fixed-width but their widths are not an ABI; the name is matched
/// and the two values after it taken.
pub fn parse_limit(text: &str, name: &str) -> Option<Rlimit> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut values = line[name.len()..].split_ascii_whitespace();
    let value = |v: Option<&str>| -> Option<Option<u64>> {
        match v? {
            "unlimited" => Some(None),
            n => n.parse().ok().map(Some),
        }
    };
    Some(Rlimit {
        soft: value(values.next())?,
        hard: value(values.next())?,
    })
}

/// `/proc/uptime`: seconds since boot, then idle seconds.
pub fn parse_uptime(text: &str) -> Result<f64, String> {
    text.split_ascii_whitespace()
        .next()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("not seconds: {:?}", text.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_values() {
        assert_eq!(
            parse_selected("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_selected("always defer [defer+madvise] madvise never").as_deref(),
            Some("defer+madvise")
        );
        assert_eq!(parse_selected("always madvise never"), None);
        assert_eq!(parse_selected("[]"), None);
        assert_eq!(parse_selected("]["), None);
    }

    #[test]
    fn tmpfs_sizes() {
        assert_eq!(parse_tmpfs_size("65536k"), Some(64 << 20));
        assert_eq!(parse_tmpfs_size("16G"), Some(16 << 30));
        assert_eq!(parse_tmpfs_size("4096"), Some(4096));
        assert_eq!(parse_tmpfs_size("50%"), None);
        assert_eq!(parse_tmpfs_size(""), None);
        assert_eq!(parse_tmpfs_size("99999999999999999999k"), None);
    }

    #[test]
    fn limits_lines() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max open files            1024                 1048576              files     \n\
                    Max locked memory         unlimited            unlimited            bytes     \n";
        assert_eq!(
            parse_limit(text, "Max open files"),
            Some(Rlimit {
                soft: Some(1024),
                hard: Some(1048576)
            })
        );
        assert_eq!(
            parse_limit(text, "Max locked memory"),
            Some(Rlimit {
                soft: None,
                hard: None
            })
        );
        assert_eq!(parse_limit("Max open files  12\n", "Max open files"), None);
        assert_eq!(
            parse_limit("Max open files x y files\n", "Max open files"),
            None
        );
    }

    #[test]
    fn pressure_lines() {
        let p = parse_pressure("some avg10=1.50 avg60=0.20 avg300=0.00 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n").unwrap();
        assert_eq!(p.some.as_ref().map(|s| s.avg10), Some(1.5));
        assert_eq!(p.full.as_ref().map(|s| s.total_us), Some(7));
        let p = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap();
        assert!(p.full.is_none());
        assert!(parse_pressure("garbage").is_err());
    }

    #[test]
    fn swaps_with_escaped_path() {
        let s = parse_swaps(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/swap\\040file\tfile\t\t1048572\t\t512\t\t-2\n",
        );
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].filename, "/swap file");
        assert_eq!(s[0].size, 1048572 * 1024);
        assert_eq!(s[0].used, 512 * 1024);
        assert_eq!(s[0].priority, -2);
    }
}
