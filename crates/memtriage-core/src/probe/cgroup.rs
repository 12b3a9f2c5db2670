//! The memory cgroup of a process: v2 where its memory controller is enabled, else the
//! v1 memory hierarchy (hybrid hosts mount both; the controller lives in only one).
//! The limit that applies is the lowest on the way up to the hierarchy's root.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::model::process::{CgroupMemory, CgroupVersion};
use crate::parse::cgroup::{parse_membership, parse_v1_limit, parse_v2_limit, Membership};
use crate::parse::kv::counter;
use crate::parse::mountinfo::{self, Mount};
use crate::probe::root::Root;

#[derive(Debug, Clone)]
struct Hierarchy {
    mount: Mount,
    version: CgroupVersion,
}

/// Finds the hierarchies once, then reads each cgroup once however many processes
/// live in it.
#[derive(Debug)]
pub struct CgroupReader {
    root: Root,
    v2: Option<Hierarchy>,
    v1_memory: Option<Hierarchy>,
    cache: HashMap<(CgroupVersion, String), Result<CgroupMemory, String>>,
}

impl CgroupReader {
    pub fn discover(root: &Root) -> Self {
        let mounts = root
            .read_optional("/proc/self/mountinfo")
            .ok()
            .flatten()
            .map(|t| mountinfo::parse(&t))
            .unwrap_or_default();
        let v2 = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup2")
            .filter(|m| {
                let controllers = root.path(&m.mount_point).join("cgroup.controllers");
                std::fs::read_to_string(controllers)
                    .map(|c| c.split_ascii_whitespace().any(|c| c == "memory"))
                    .unwrap_or(false)
            })
            .map(|m| Hierarchy {
                mount: m.clone(),
                version: CgroupVersion::V2,
            });
        let v1_memory = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.iter().any(|o| o == "memory"))
            .map(|m| Hierarchy {
                mount: m.clone(),
                version: CgroupVersion::V1,
            });
        CgroupReader {
            root: root.clone(),
            v2,
            v1_memory,
            cache: HashMap::new(),
        }
    }

    /// Whether any memory controller was found.
    pub fn available(&self) -> bool {
        self.v2.is_some() || self.v1_memory.is_some()
    }

    /// `Ok(None)`: the process is in no memory cgroup this reader can see.
    /// `Err(reason)`: it is, but the cgroup's files could not be read.
    pub fn for_pid(&mut self, pid: i32) -> Result<Option<CgroupMemory>, String> {
        let text = self
            .root
            .read_string(&format!("/proc/{pid}/cgroup"))
            .map_err(|e| e.to_string())?;
        self.for_membership(&parse_membership(&text))
    }

    pub fn for_membership(&mut self, m: &Membership) -> Result<Option<CgroupMemory>, String> {
        let (hierarchy, path) = match (&self.v2, &m.v2, &self.v1_memory, &m.v1_memory) {
            (Some(h), Some(p), _, _) => (h.clone(), p.clone()),
            (_, _, Some(h), Some(p)) => (h.clone(), p.clone()),
            _ => return Ok(None),
        };
        let key = (hierarchy.version, path.clone());
        if let Some(hit) = self.cache.get(&key) {
            return hit.clone().map(Some);
        }
        let result = read_cgroup(&self.root, &hierarchy, &path);
        self.cache.insert(key, result.clone());
        result.map(Some)
    }
}

/// Directory of `path` under the mount: the mount's own root is stripped first, as
/// inside a container whose cgroup namespace shows `/` for its own cgroup.
fn cgroup_dir(root: &Root, mount: &Mount, path: &str) -> PathBuf {
    let inner = path
        .strip_prefix(mount.root.as_str())
        .filter(|_| mount.root != "/")
        .unwrap_or(path);
    let mut dir = root.path(&mount.mount_point);
    for part in inner.split('/').filter(|p| !p.is_empty() && *p != "..") {
        dir.push(part);
    }
    dir
}

fn read_file(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

fn read_cgroup(root: &Root, h: &Hierarchy, path: &str) -> Result<CgroupMemory, String> {
    let dir = cgroup_dir(root, &h.mount, path);
    let top = root.path(&h.mount.mount_point);
    if !dir.is_dir() {
        return Err(format!(
            "cgroup {path} is not visible at {} (another cgroup namespace?)",
            dir.display()
        ));
    }
    let files = CgroupFiles::for_version(h.version);
    let number =
        |d: &Path, name: &str| read_file(d, name).and_then(|t| t.trim().parse::<u64>().ok());
    let limit_of = |d: &Path| -> Option<Option<u64>> {
        let text = read_file(d, files.limit)?;
        match h.version {
            CgroupVersion::V2 => parse_v2_limit(&text),
            CgroupVersion::V1 => parse_v1_limit(&text),
        }
    };

    let mut limit: Option<(u64, PathBuf)> = None;
    let mut current = Some(dir.clone());
    while let Some(d) = current {
        if let Some(Some(l)) = limit_of(&d) {
            if limit.as_ref().is_none_or(|(best, _)| l < *best) {
                limit = Some((l, d.clone()));
            }
        }
        current = (d != top)
            .then(|| d.parent().map(Path::to_path_buf))
            .flatten();
    }

    let usage = number(&dir, files.usage);
    let headroom = limit.as_ref().and_then(|(l, d)| {
        let used = if *d == dir {
            usage
        } else {
            number(d, files.usage)
        };
        used.map(|u| l.saturating_sub(u))
    });
    let oom_kills = read_file(&dir, files.events).and_then(|t| counter(&t, "oom_kill"));
    let (high, swap_limit) = match h.version {
        CgroupVersion::V2 => (
            read_file(&dir, "memory.high")
                .and_then(|t| parse_v2_limit(&t))
                .flatten(),
            read_file(&dir, "memory.swap.max")
                .and_then(|t| parse_v2_limit(&t))
                .flatten(),
        ),
        CgroupVersion::V1 => (
            None,
            read_file(&dir, "memory.memsw.limit_in_bytes")
                .and_then(|t| parse_v1_limit(&t))
                .flatten(),
        ),
    };
    let display = |d: &Path| {
        let rel = d
            .strip_prefix(&top)
            .map(|p| format!("/{}", p.display()))
            .unwrap_or_default();
        if rel == "/" {
            "/".to_string()
        } else {
            rel
        }
    };
    Ok(CgroupMemory {
        version: h.version,
        path: path.to_string(),
        dir: dir.display().to_string(),
        usage,
        peak: number(&dir, files.peak),
        limit: limit.as_ref().map(|(l, _)| *l),
        limit_set_by: limit.as_ref().map(|(_, d)| display(d)),
        headroom,
        high,
        swap_limit,
        oom_kills,
    })
}

struct CgroupFiles {
    limit: &'static str,
    usage: &'static str,
    peak: &'static str,
    events: &'static str,
}

impl CgroupFiles {
    fn for_version(v: CgroupVersion) -> Self {
        match v {
            CgroupVersion::V2 => CgroupFiles {
                limit: "memory.max",
                usage: "memory.current",
                peak: "memory.peak",
                events: "memory.events",
            },
            CgroupVersion::V1 => CgroupFiles {
                limit: "memory.limit_in_bytes",
                usage: "memory.usage_in_bytes",
                peak: "memory.max_usage_in_bytes",
                events: "memory.oom_control",
            },
        }
    }
}
