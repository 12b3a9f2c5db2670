//! Memory cgroups: where the hierarchies are mounted, the v1 and v2 names of the
//! controller's files, the one reader of a cgroup's usage, peak, OOM kills, limits and
//! `memory.stat`, and the one (bounded) walk of a cgroup tree. A process's cgroup is v2
//! where its memory controller is enabled, else the v1 memory hierarchy (hybrid hosts
//! mount both; the controller lives in only one). The limit that applies is the
//! lowest on the way up to the hierarchy's root.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::process::{CgroupMemory, CgroupVersion};
use crate::parse::cgroup::{parse_membership, parse_v1_limit, parse_v2_limit, Membership};
use crate::parse::kv::{counter, counters};
use crate::parse::mountinfo::Mount;
use crate::probe::mounts;
use crate::probe::root::Root;

/// A mounted hierarchy that has the memory controller.
#[derive(Debug, Clone)]
pub struct Hierarchy {
    pub mount: Mount,
    pub version: CgroupVersion,
}

/// The memory controller's hierarchies: v2 where its memory controller is enabled,
/// and the v1 memory hierarchy (hybrid hosts mount both; the controller lives in
/// only one).
#[derive(Debug, Clone, Default)]
pub struct Hierarchies {
    pub v2: Option<Hierarchy>,
    pub v1_memory: Option<Hierarchy>,
}

impl Hierarchies {
    pub fn discover(root: &Root) -> Result<Self> {
        let mounts = mounts::read(root)?;
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
        Ok(Hierarchies { v2, v1_memory })
    }

    /// The hierarchy new cgroups go in: v2 where it has the memory controller.
    pub fn preferred(&self) -> Option<&Hierarchy> {
        self.v2.as_ref().or(self.v1_memory.as_ref())
    }
}

/// Finds the hierarchies once, then reads each cgroup once however many processes
/// live in it.
#[derive(Debug, Clone)]
pub struct CgroupReader {
    root: Root,
    hierarchies: Hierarchies,
    /// `None`: the cgroup is not visible from here.
    cache: HashMap<(CgroupVersion, String), Option<CgroupMemory>>,
}

impl CgroupReader {
    /// Without a readable mountinfo no hierarchy is found, and every process is then
    /// in no memory cgroup this reader can see.
    pub fn discover(root: &Root) -> Self {
        CgroupReader {
            root: root.clone(),
            hierarchies: Hierarchies::discover(root).unwrap_or_default(),
            cache: HashMap::new(),
        }
    }

    /// Whether any memory controller was found.
    #[cfg(test)]
    pub fn available(&self) -> bool {
        self.hierarchies.preferred().is_some()
    }

    /// Reads every cgroup again from now on (their usage has moved on).
    pub fn forget(&mut self) {
        self.cache.clear();
    }

    /// `Ok(None)`: the process is in no memory cgroup this reader can see.
    /// An error: it is, but the cgroup's files could not be read.
    pub fn for_pid(&mut self, pid: i32) -> Result<Option<CgroupMemory>> {
        self.for_membership(&membership(&self.root, pid)?)
    }

    pub fn for_membership(&mut self, m: &Membership) -> Result<Option<CgroupMemory>> {
        let h = &self.hierarchies;
        let (hierarchy, path) = match (&h.v2, &m.v2, &h.v1_memory, &m.v1_memory) {
            (Some(h), Some(p), _, _) => (h.clone(), p.clone()),
            (_, _, Some(h), Some(p)) => (h.clone(), p.clone()),
            _ => return Ok(None),
        };
        let key = (hierarchy.version, path.clone());
        let found = match self.cache.get(&key) {
            Some(hit) => hit.clone(),
            None => {
                let read = read_cgroup(&self.root, &hierarchy, &path);
                self.cache.insert(key, read.clone());
                read
            }
        };
        found.map(Some).ok_or_else(|| {
            let dir = cgroup_dir(&self.root, &hierarchy.mount, &path);
            Error::not_found(
                format!("cgroup {path}"),
                format!(
                    "not visible at {} (another cgroup namespace?)",
                    dir.display()
                ),
            )
        })
    }
}

/// Which cgroup `pid` is in, in each hierarchy (`/proc/PID/cgroup`), as this
/// machine's mounts show the paths.
pub fn membership(root: &Root, pid: i32) -> Result<Membership> {
    Ok(parse_membership(
        &root.read_string(&format!("/proc/{pid}/cgroup"))?,
    ))
}

/// Which cgroup this process is in (`/proc/self/cgroup`).
pub fn own_membership(root: &Root) -> Result<Membership> {
    Ok(parse_membership(&root.read_string("/proc/self/cgroup")?))
}

impl Hierarchy {
    /// Whether the mount shows the hierarchy from its true root: its root is `/`, or
    /// only `..` steps (the host's hierarchy bind-mounted into a container whose
    /// cgroup namespace is below it).
    pub fn mounts_true_root(&self) -> bool {
        self.mount
            .root
            .split('/')
            .all(|c| c.is_empty() || c == "..")
    }

    /// The directory of the cgroup the kernel log names `absolute` (its path from the
    /// hierarchy's true root); `None` where this mount does not show it.
    pub fn dir_of_absolute(&self, root: &Root, absolute: &str) -> Option<PathBuf> {
        let inner = if self.mounts_true_root() {
            absolute
        } else {
            let rest = absolute.strip_prefix(self.mount.root.as_str())?;
            if !(rest.is_empty() || rest.starts_with('/')) {
                return None;
            }
            rest
        };
        let mut dir = root.path(&self.mount.mount_point);
        for part in inner.split('/').filter(|p| !p.is_empty()) {
            if part == ".." {
                return None;
            }
            dir.push(part);
        }
        Some(dir)
    }

    /// The cgroup the kernel log names `absolute`, to read its files; `None` where
    /// this mount does not show it.
    pub fn cgroup(&self, root: &Root, absolute: &str) -> Option<CgroupDir> {
        Some(CgroupDir {
            version: self.version,
            dir: self.dir_of_absolute(root, absolute)?,
        })
    }

    /// Walks the hierarchy from its mount point: each cgroup down to `max_depth`
    /// levels below it, in one bounded walk (see [`WALK_MAX_DIRS`]). `visit` is given
    /// each cgroup and its depth. Returns `false` where the walk stopped at the cap.
    pub fn walk(
        &self,
        root: &Root,
        max_depth: usize,
        visit: &mut dyn FnMut(&CgroupDir, usize),
    ) -> bool {
        let top = root.path(&self.mount.mount_point);
        walk_tree(&top, max_depth, &mut |dir, depth| {
            visit(
                &CgroupDir {
                    version: self.version,
                    dir: dir.to_path_buf(),
                },
                depth,
            )
        })
    }

    /// The kernel's name, from the true root, of the cgroup whose directory is `dir`.
    pub fn path_of(&self, root: &Root, dir: &Path) -> Option<String> {
        let rel = dir.strip_prefix(root.path(&self.mount.mount_point)).ok()?;
        let inner = format!("/{}", rel.display());
        let inner = inner.trim_end_matches('/');
        Some(match (self.mounts_true_root(), inner.is_empty()) {
            (true, true) => "/".into(),
            (true, false) => inner.to_string(),
            (false, _) => format!("{}{}", self.mount.root.trim_end_matches('/'), inner),
        })
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

/// `None` when the cgroup's directory is not visible from here.
fn read_cgroup(root: &Root, h: &Hierarchy, path: &str) -> Option<CgroupMemory> {
    let dir = cgroup_dir(root, &h.mount, path);
    let top = root.path(&h.mount.mount_point);
    if !dir.is_dir() {
        return None;
    }
    let cgroup = |d: &Path| CgroupDir {
        version: h.version,
        dir: d.to_path_buf(),
    };
    let own = cgroup(&dir);

    let mut limit: Option<(u64, PathBuf)> = None;
    let mut current = Some(dir.clone());
    while let Some(d) = current {
        if let Some(Some(l)) = cgroup(&d).limit() {
            if limit.as_ref().is_none_or(|(best, _)| l < *best) {
                limit = Some((l, d.clone()));
            }
        }
        current = (d != top)
            .then(|| d.parent().map(Path::to_path_buf))
            .flatten();
    }

    let usage = own.usage();
    let headroom = limit.as_ref().and_then(|(l, d)| {
        let used = if *d == dir { usage } else { cgroup(d).usage() };
        used.map(|u| l.saturating_sub(u))
    });
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
    Some(CgroupMemory {
        version: h.version,
        path: path.to_string(),
        dir: dir.display().to_string(),
        usage,
        peak: own.peak(),
        limit: limit.as_ref().map(|(l, _)| *l),
        limit_set_by: limit.as_ref().map(|(_, d)| display(d)),
        headroom,
        high: own.high().flatten(),
        swap_limit: own.swap_limit().flatten(),
        oom_kills: own.oom_kills(),
    })
}

/// Levels below its start that a walk of a cgroup tree goes down at most.
pub const WALK_MAX_DEPTH: usize = 32;
/// Directories one walk of a cgroup tree meets at most: a machine with more (tens of
/// thousands of containers) is walked in part, and the walk says so.
pub const WALK_MAX_DIRS: usize = 50_000;

/// The one walk of a cgroup tree: `top` and each directory below it, each before the
/// ones below it, down to `max_depth` levels below `top` (at most
/// [`WALK_MAX_DEPTH`]) and [`WALK_MAX_DIRS`] directories in all. `visit` is given
/// each directory and its depth (0 for `top`). Returns whether the walk met every
/// directory in reach: `false` where it stopped at the cap.
fn walk_tree(top: &Path, max_depth: usize, visit: &mut dyn FnMut(&Path, usize)) -> bool {
    fn go(
        dir: &Path,
        depth: usize,
        max_depth: usize,
        met: &mut usize,
        visit: &mut dyn FnMut(&Path, usize),
    ) -> bool {
        if *met >= WALK_MAX_DIRS {
            return false;
        }
        *met += 1;
        visit(dir, depth);
        if depth >= max_depth {
            return true;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return true;
        };
        let mut complete = true;
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                complete &= go(&entry.path(), depth + 1, max_depth, met, visit);
            }
        }
        complete
    }
    go(top, 0, max_depth.min(WALK_MAX_DEPTH), &mut 0, visit)
}

/// `cgroup.procs` of `dir` and of every cgroup below it (v1 and v2 both have it), in
/// one bounded walk ([`WALK_MAX_DIRS`]).
pub fn procs_below(dir: &Path, pids: &mut Vec<i32>) {
    walk_tree(dir, WALK_MAX_DEPTH, &mut |d, _| {
        if let Ok(text) = std::fs::read_to_string(d.join("cgroup.procs")) {
            pids.extend(
                text.split_ascii_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    });
}

/// The memory controller's files, which v1 and v2 name differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupFiles {
    /// The hard limit (v2 `max` or v1's huge number when there is none).
    pub limit: &'static str,
    /// Bytes charged now.
    pub usage: &'static str,
    /// Highest usage seen (v2 `memory.peak` needs kernel ≥ 5.19).
    pub peak: &'static str,
    /// The file with the `oom_kill` counter.
    pub events: &'static str,
    /// The cap on swap (v2) or on memory plus swap (v1, with swap accounting on).
    pub swap_limit: &'static str,
    /// The throttling limit; v1 has none.
    pub high: Option<&'static str>,
}

impl CgroupFiles {
    pub fn for_version(v: CgroupVersion) -> Self {
        match v {
            CgroupVersion::V2 => CgroupFiles {
                limit: "memory.max",
                usage: "memory.current",
                peak: "memory.peak",
                events: "memory.events",
                swap_limit: "memory.swap.max",
                high: Some("memory.high"),
            },
            CgroupVersion::V1 => CgroupFiles {
                limit: "memory.limit_in_bytes",
                usage: "memory.usage_in_bytes",
                peak: "memory.max_usage_in_bytes",
                events: "memory.oom_control",
                swap_limit: "memory.memsw.limit_in_bytes",
                high: None,
            },
        }
    }
}

/// One memory cgroup's directory, read whenever its counters are wanted (a job's
/// own cgroup is read every sampling tick). Each reading is `None` where the file
/// is missing or unreadable: unknown, not 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupDir {
    pub version: CgroupVersion,
    pub dir: PathBuf,
}

impl CgroupDir {
    /// The directory a reading of [`CgroupReader`] came from.
    pub fn of(cgroup: &CgroupMemory) -> Self {
        CgroupDir {
            version: cgroup.version,
            dir: PathBuf::from(&cgroup.dir),
        }
    }

    pub fn files(&self) -> CgroupFiles {
        CgroupFiles::for_version(self.version)
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    fn number(&self, name: &str) -> Option<u64> {
        self.read(name)?.trim().parse().ok()
    }

    /// A limit file: `Some(None)` where it says there is no limit.
    fn limit_file(&self, name: &str) -> Option<Option<u64>> {
        let text = self.read(name)?;
        match self.version {
            CgroupVersion::V2 => parse_v2_limit(&text),
            CgroupVersion::V1 => parse_v1_limit(&text),
        }
    }

    /// Bytes charged to the cgroup now.
    pub fn usage(&self) -> Option<u64> {
        self.number(self.files().usage)
    }

    /// The highest usage since the cgroup was made (or since a v1 reset).
    pub fn peak(&self) -> Option<u64> {
        self.number(self.files().peak)
    }

    /// Processes the OOM killer killed in this cgroup (v1 from kernel 4.13).
    pub fn oom_kills(&self) -> Option<u64> {
        counter(&self.read(self.files().events)?, "oom_kill")
    }

    /// The memory events counted in the cgroup and below it (`oom`, `oom_kill`,
    /// `oom_group_kill`, …; v1 has only `oom_kill`, from kernel 4.13).
    pub fn events(&self) -> Option<Vec<(String, u64)>> {
        let text = self.read(self.files().events)?;
        Some(
            text.lines()
                .filter_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    // v1's oom_control mixes settings and states with its one counter.
                    if matches!(k, "oom_kill_disable" | "under_oom") {
                        return None;
                    }
                    Some((k.to_string(), v.trim().parse().ok()?))
                })
                .collect(),
        )
    }

    /// OOM kills of processes in this cgroup itself, not below it: v2's
    /// `memory.events.local` (kernel ≥ 5.2); `None` where there is no such file.
    pub fn local_oom_kills(&self) -> Option<u64> {
        match self.version {
            CgroupVersion::V2 => counter(&self.read("memory.events.local")?, "oom_kill"),
            CgroupVersion::V1 => None,
        }
    }

    /// `memory.stat`: the cgroup's memory by kind, and its reclaim and fault counters
    /// (v1 adds `total_*`, the same below it). `None` where the file is missing or
    /// unreadable (the cgroup removed).
    pub fn stat(&self) -> Option<Vec<(String, u64)>> {
        let text = self.read("memory.stat")?;
        Some(counters(&text).map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// This cgroup's own hard limit; its ancestors' may be lower.
    pub fn limit(&self) -> Option<Option<u64>> {
        self.limit_file(self.files().limit)
    }

    /// The throttling limit (v2 `memory.high`); `None` on v1, which has none.
    pub fn high(&self) -> Option<Option<u64>> {
        self.limit_file(self.files().high?)
    }

    pub fn swap_limit(&self) -> Option<Option<u64>> {
        self.limit_file(self.files().swap_limit)
    }
}
