//! `inspect`: snapshots of the processes a caller names (pids, a name pattern, all of
//! them), optionally as trees or with their mappings.

use std::collections::HashMap;

use serde::Serialize;

use crate::diagnose::{cow, gpu};
use crate::error::{Error, Result};
use crate::model::gpu::GpuReport;
use crate::model::killers::KillerReach;
use crate::model::maps::{MapsReport, MAPS_SCHEMA};
use crate::model::process::{ProcessSnapshot, Unreadable, PROCESS_SCHEMA};
use crate::model::tree::{TreeNode, TreeSnapshot, TREE_SCHEMA};
use crate::parse::stat::MemoryLayout;
use crate::probe::procdir::ProcDir;
use crate::probe::process::Link;
use crate::probe::process::{all_pids, pids_matching};
use crate::probe::root::Root;
use crate::probe::{self, fork, maps, tree};

pub use crate::probe::process::{default_threads, read_many, Detail, ProcessReader};

pub const INSPECT_SCHEMA: &str = "memtriage.inspect/v1";

/// What a caller may ask a snapshot for (see [`Detail`]), each one file or two read
/// per process; who the process is (name, state, parent) is always read.
pub const FIELDS: [&str; 6] = ["status", "rollup", "oom", "cgroup", "cmdline", "faults"];

/// Which processes to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Targets {
    /// These pids, plus every process whose name or command line contains `name`.
    Named {
        pids: Vec<i32>,
        name: Option<String>,
    },
    /// Every process; those that vanish, kernel threads and zombies are skipped.
    All,
}

/// How `processes` is ordered: largest first, unreadable values last, then by pid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKey {
    #[default]
    Pid,
    Rss,
    Pss,
    Uss,
    Swap,
    Faults,
}

impl SortKey {
    /// Every key, in the order help texts list them.
    pub const ALL: [SortKey; 6] = [
        SortKey::Pid,
        SortKey::Rss,
        SortKey::Pss,
        SortKey::Uss,
        SortKey::Swap,
        SortKey::Faults,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Pid => "pid",
            SortKey::Rss => "rss",
            SortKey::Pss => "pss",
            SortKey::Uss => "uss",
            SortKey::Swap => "swap",
            SortKey::Faults => "faults",
        }
    }
}

impl std::str::FromStr for SortKey {
    type Err = String;

    fn from_str(name: &str) -> std::result::Result<Self, Self::Err> {
        SortKey::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| {
                format!("unknown sort key {name:?}: use pid, rss, pss, uss, swap or faults")
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectRequest {
    pub targets: Targets,
    /// Each target as the root of a tree of its descendants.
    pub tree: bool,
    /// Also each process's mappings grouped by kind and file.
    pub maps: bool,
    pub sort: SortKey,
}

/// Everything one `inspect` collected (`memtriage.inspect/v1`).
#[derive(Debug, Serialize)]
pub struct InspectReport {
    pub schema: &'static str,
    pub process_schema: &'static str,
    pub processes: Vec<ProcessSnapshot>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trees: Vec<TreeSnapshot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_schema: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub maps: Vec<MapsReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maps_schema: Option<&'static str>,
    /// The machine's NVIDIA GPUs and who holds their memory, or why they could not be
    /// read (`available: false` and a `reason`); `None` only for a captured tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuReport>,
    /// Pids that could not be read, with why.
    pub errors: Vec<PidError>,
    /// How many pids were asked for (a listing: how many existed).
    #[serde(skip)]
    pub requested: usize,
    /// Whether every process was asked for, where a failing one is no failure.
    #[serde(skip)]
    pub listing: bool,
}

#[derive(Debug, Serialize)]
pub struct PidError {
    pub pid: i32,
    /// Shown as its message; kept typed for callers that raise it.
    #[serde(serialize_with = "super::message")]
    pub error: Error,
}

impl InspectReport {
    /// Whether the caller's request failed: a pid they named could not be read, or
    /// not one process of a listing could.
    pub fn failed(&self) -> bool {
        if self.listing {
            self.requested > 0 && self.errors.len() == self.requested
        } else {
            !self.errors.is_empty()
        }
    }
}

/// The largest pid any kernel hands out (PID_MAX_LIMIT on 64-bit).
const PID_MAX_LIMIT: i64 = 1 << 22;

/// A process id from a caller: positive and within the kernel's range.
pub fn pid(value: i64) -> Result<i32> {
    let why = if value <= 0 {
        "not a valid process id (ids are positive)".to_string()
    } else if value > PID_MAX_LIMIT {
        format!("not a valid process id (no kernel hands out ids above {PID_MAX_LIMIT})")
    } else {
        return Ok(value as i32);
    };
    Err(Error::bad_input(format!("pid {value}"), why))
}

/// The [`Detail`] that reads `fields` (names from [`FIELDS`]); `None` reads all.
pub fn detail(fields: Option<&[String]>) -> Result<Detail> {
    let Some(fields) = fields else {
        return Ok(Detail::full());
    };
    let mut d = Detail::none();
    for f in fields {
        match f.as_str() {
            "status" => d.status = true,
            "rollup" => d.rollup = true,
            "oom" => d.oom = true,
            "cgroup" => d.cgroup = true,
            "cmdline" => (d.cmdline, d.exe) = (true, true),
            "faults" => d.faults = true,
            other => {
                return Err(Error::bad_input(
                    format!("field {other:?}"),
                    format!("unknown field: fields are any of {}", FIELDS.join(", ")),
                ))
            }
        }
    }
    Ok(d)
}

/// One process and its descendants (`memtriage.tree/v1`), with totals and findings;
/// GPU memory per process when `gpu` is given.
pub fn tree(
    root: &Root,
    detail: Detail,
    pid: i32,
    gpu: Option<&GpuReport>,
) -> Result<TreeSnapshot> {
    // Whether each process was forked from its parent without exec, told from their
    // layouts before any is read: a forked child's smaps is read whole for what it
    // copied, and its rollup summed from it, never read twice.
    let mut forked: HashMap<i32, Option<bool>> = HashMap::new();
    let mut snapshot = tree::read(root, detail, pid, |members| {
        forked = forked_children(members);
        forked
            .iter()
            .filter(|(_, f)| **f == Some(true))
            .map(|(pid, _)| *pid)
            .collect()
    })?;
    let copies = read_copies(root, &mut snapshot.nodes, &forked);
    snapshot.totals = tree::totals(&snapshot.nodes);
    snapshot.findings = cow::findings(&cow_processes(&snapshot.nodes, &forked, &copies));
    snapshot.killers = killers_of(root, pid);
    if let Some(report) = gpu {
        snapshot.totals.gpu = gpu::attribute(report, &mut snapshot.nodes);
        snapshot
            .findings
            .extend(gpu::worker_contexts(&snapshot.nodes));
    }
    Ok(snapshot)
}

/// The OOM killers that may end `pid`'s tree, the first to act first: each one's room
/// from the machine's memory now and the headroom of the tree's cgroup.
fn killers_of(root: &Root, pid: i32) -> Vec<KillerReach> {
    let Ok(mem) = probe::system::read_meminfo(root) else {
        return Vec::new();
    };
    let headroom = probe::cgroup::CgroupReader::discover(root)
        .for_pid(pid)
        .ok()
        .flatten()
        .and_then(|cg| cg.headroom);
    crate::diagnose::killers::reaches(probe::killers::find(root, Some(pid)), &mem, headroom)
}

/// NVML's report where the root is this machine (a captured tree has no GPU).
fn gpu_report(root: &Root) -> Option<GpuReport> {
    root.is_host().then(|| probe::gpu::report(root))
}

/// For each process of a tree, whether it was forked from its parent without exec
/// (its layout is its parent's); `None` where either layout is unknown.
fn forked_children(members: &[Link]) -> HashMap<i32, Option<bool>> {
    let layouts: HashMap<i32, Option<MemoryLayout>> =
        members.iter().map(|l| (l.pid, l.layout)).collect();
    members
        .iter()
        .map(|l| {
            let forked = layouts
                .get(&l.ppid)
                .filter(|_| l.ppid != l.pid)
                .and_then(|parent| fork::forked_without_exec(l.layout.as_ref(), parent.as_ref()));
            (l.pid, forked)
        })
        .collect()
}

/// What each forked child copied of its parent, from its whole smaps against the
/// parent's maps; its rollup is summed from the same smaps and set on its node.
fn read_copies(
    root: &Root,
    nodes: &mut [TreeNode],
    forked: &HashMap<i32, Option<bool>>,
) -> HashMap<i32, cow::Copied> {
    let mut copies = HashMap::new();
    for n in nodes.iter_mut() {
        let p = &mut n.process;
        if forked.get(&p.pid) != Some(&Some(true)) {
            continue;
        }
        let Some(reading) = read_fork(root, p.pid, p.ppid) else {
            // Its smaps_rollup was left to this read: say why PSS is missing.
            if p.rollup.is_none() && !p.kernel_thread {
                p.unreadable.push(Unreadable {
                    field: "smaps".into(),
                    reason: "its smaps or its parent's maps could not be read (it or its \
                             parent ended, or it is another user's without CAP_SYS_PTRACE)"
                        .into(),
                });
            }
            continue;
        };
        copies.insert(
            p.pid,
            cow::Copied {
                bytes: reading.copied,
                rss: reading.rollup.rss,
            },
        );
        if p.rollup.is_none() && !p.kernel_thread {
            p.rollup = Some(reading.rollup);
        }
    }
    copies
}

/// The tree's processes as the copy-on-write rule takes them (as `run`'s sampler
/// gives them).
fn cow_processes(
    nodes: &[TreeNode],
    forked: &HashMap<i32, Option<bool>>,
    copies: &HashMap<i32, cow::Copied>,
) -> Vec<cow::Process> {
    nodes
        .iter()
        .map(|n| {
            let p = &n.process;
            cow::Process {
                pid: p.pid,
                ppid: p.ppid,
                comm: p.comm.clone(),
                rank: None,
                kernel_thread: p.kernel_thread,
                forked_without_exec: forked.get(&p.pid).copied().flatten(),
                rss: p.rss(),
                private: p.rollup.as_ref().map(|r| r.uss()),
                copied: copies.get(&p.pid).copied(),
            }
        })
        .collect()
}

fn read_fork(root: &Root, pid: i32, ppid: i32) -> Option<fork::ForkReading> {
    let child = ProcDir::open(root, pid).ok()?;
    let parent = ProcDir::open(root, ppid).ok()?;
    fork::read(&child, &parent)
}

/// Reads what `request` names. An error is returned for a request that names nothing
/// readable (no pid, a pattern nothing matches, a pid that is not one); a process that
/// cannot be read is listed in the report's `errors` instead.
pub fn inspect(root: &Root, request: &InspectRequest) -> Result<InspectReport> {
    let pids = resolve(root, &request.targets)?;
    // NVML starts and answers on its own thread while /proc is read: on a machine
    // with GPUs its start-up would otherwise add to every listing.
    std::thread::scope(|scope| {
        let gpu = scope.spawn(|| gpu_report(root));
        let gpu = move || {
            gpu.join()
                .unwrap_or_else(|_| Some(GpuReport::absent("reading the GPUs failed (a bug)")))
        };
        Ok(read_targets(root, request, pids, gpu))
    })
}

fn read_targets(
    root: &Root,
    request: &InspectRequest,
    pids: Vec<i32>,
    gpu: impl FnOnce() -> Option<GpuReport>,
) -> InspectReport {
    let listing = request.targets == Targets::All;
    let mut report = InspectReport {
        schema: INSPECT_SCHEMA,
        process_schema: PROCESS_SCHEMA,
        processes: Vec::new(),
        trees: Vec::new(),
        tree_schema: None,
        maps: Vec::new(),
        maps_schema: None,
        gpu: None,
        errors: Vec::new(),
        requested: pids.len(),
        listing,
    };
    if request.tree {
        let gpu = gpu();
        for &pid in &pids {
            match self::tree(root, Detail::full(), pid, gpu.as_ref()) {
                Ok(t) => report.trees.push(t),
                Err(error) => report.errors.push(PidError { pid, error }),
            }
        }
        report.tree_schema = (!report.trees.is_empty()).then_some(TREE_SCHEMA);
        report.gpu = gpu;
        return report;
    }
    let detail = if listing {
        Detail::listing()
    } else {
        Detail::full()
    };
    let results = read_many(root, detail, &pids, default_threads());
    for (&pid, result) in pids.iter().zip(results) {
        match result {
            Ok(p) if listing && (p.kernel_thread || p.state == 'Z') => {}
            Ok(p) => report.processes.push(p),
            Err(Error::NoSuchProcess { .. }) if listing => {}
            Err(error) => report.errors.push(PidError { pid, error }),
        }
    }
    if request.maps {
        for p in &report.processes {
            match maps::read(root, p.pid) {
                Ok(m) => report.maps.push(m),
                Err(error) => report.errors.push(PidError { pid: p.pid, error }),
            }
        }
        report.maps_schema = (!report.maps.is_empty()).then_some(MAPS_SCHEMA);
    }
    let gpu = gpu();
    if let Some(g) = &gpu {
        for p in &mut report.processes {
            p.gpu = g.memory_of(p.pid);
        }
    }
    report.gpu = gpu;
    sort(&mut report.processes, request.sort);
    report
}

fn resolve(root: &Root, targets: &Targets) -> Result<Vec<i32>> {
    let (named, name) = match targets {
        Targets::All => return all_pids(root),
        Targets::Named { pids, name } => (pids, name),
    };
    let mut pids = named.clone();
    if name.as_ref().is_some_and(|p| p.is_empty()) {
        return Err(Error::bad_input(
            "name pattern",
            "empty: it would match every process (for every process, ask for all of them)",
        ));
    }
    if let Some(pattern) = name {
        let found = pids_matching(root, pattern)?;
        if found.is_empty() && pids.is_empty() {
            return Err(Error::NoMatchingProcess {
                pattern: pattern.clone(),
            });
        }
        pids.extend(found);
    }
    if pids.is_empty() {
        return Err(Error::bad_input(
            "inspect",
            "nothing to inspect: name pids, a name pattern, or all processes",
        ));
    }
    if let Some(bad) = pids.iter().find(|p| **p <= 0) {
        return Err(Error::bad_input(
            format!("pid {bad}"),
            "not a valid process id (ids are positive)",
        ));
    }
    pids.dedup();
    Ok(pids)
}

/// Largest first; unreadable values last; `pid` ascending.
pub fn sort(processes: &mut [ProcessSnapshot], key: SortKey) {
    let value = |p: &ProcessSnapshot| -> Option<u64> {
        match key {
            SortKey::Pid => None,
            SortKey::Rss => p.rss(),
            SortKey::Pss => p.pss(),
            SortKey::Uss => p.uss(),
            SortKey::Swap => p.swap(),
            SortKey::Faults => p.faults.map(|f| f.minor + f.major),
        }
    };
    if key == SortKey::Pid {
        processes.sort_by_key(|p| p.pid);
    } else {
        processes.sort_by(|a, b| value(b).cmp(&value(a)).then(a.pid.cmp(&b.pid)));
    }
}

/// The machine's memory as `doctor` reads it: meminfo, pressure, huge pages, limits,
/// the kernel's OOM kills. Each figure that cannot be read is `None`, never 0.
pub fn system(root: &Root) -> crate::model::system::SystemSnapshot {
    probe::system::read(root)
}

/// The machine's NVIDIA GPUs and who holds their memory, or why they cannot be read.
pub fn gpus(root: &Root) -> GpuReport {
    probe::gpu::report(root)
}
