//! The OOM killers of a machine, as read from it: the kernel's, and the userspace ones
//! that act before it (earlyoom, nohang, systemd-oomd, the kubelet, Ray's memory
//! monitor, Slurm's step limit), each with what it watches, the threshold it acts at
//! and whom it picks. Each killer has its own arithmetic; a job's warning and verdict
//! name the one that acts first, not the kernel by default.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KillerKind {
    /// The kernel's OOM killer: a memory cgroup's limit, or the machine's memory.
    Kernel,
    Earlyoom,
    Nohang,
    SystemdOomd,
    /// The kubelet's node-pressure eviction.
    Kubelet,
    /// Ray's memory monitor (in the raylet).
    Ray,
    /// A Slurm step's memory limit: its cgroup, which the kernel enforces, or Slurm's
    /// own polling (`OverMemoryKill`).
    Slurm,
}

impl KillerKind {
    /// The name users know it by.
    pub fn name(self) -> &'static str {
        match self {
            KillerKind::Kernel => "the kernel's OOM killer",
            KillerKind::Earlyoom => "earlyoom",
            KillerKind::Nohang => "nohang",
            KillerKind::SystemdOomd => "systemd-oomd",
            KillerKind::Kubelet => "the kubelet",
            KillerKind::Ray => "Ray's memory monitor",
            KillerKind::Slurm => "Slurm",
        }
    }
}

/// One killer on the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OomKiller {
    pub kind: KillerKind,
    /// The daemon's pid where it runs as one (the kernel's has none).
    pub pid: Option<i32>,
    /// False for a killer that is installed or configured but not running: it acts on
    /// nothing, and says so rather than being left out.
    pub running: bool,
    /// Where its settings were read (`/proc/812/cmdline`, `/etc/systemd/oomd.conf`,
    /// `RAY_memory_usage_threshold in the raylet's environment`).
    pub settings_from: String,
    /// Its settings as a user writes them (`-m 10,5 -s 100`), or `defaults`.
    pub settings: String,
    /// When it acts; `None` where its settings could not be read.
    pub trigger: Option<Trigger>,
    pub victim: VictimRule,
    /// How often it looks, where known.
    pub poll_seconds: Option<f64>,
}

impl OomKiller {
    /// `earlyoom (pid 812, -m 10)`, `the kernel's OOM killer`.
    pub fn label(&self) -> String {
        match (self.pid, self.settings.as_str()) {
            (Some(pid), "" | "defaults") => format!("{} (pid {pid})", self.kind.name()),
            (Some(pid), s) => format!("{} (pid {pid}, {s})", self.kind.name()),
            (None, _) => self.kind.name().to_string(),
        }
    }
}

/// What a killer watches and when it acts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "watches", rename_all = "kebab-case")]
pub enum Trigger {
    /// `MemAvailable` at or under `term_bytes` (and free swap at or under its share,
    /// where the machine has swap): SIGTERM; at or under `kill_bytes`: SIGKILL.
    /// earlyoom and nohang.
    AvailableFloor {
        term_bytes: u64,
        kill_bytes: u64,
        /// Percent of swap that must be free at most as well; `None` when the machine
        /// has no swap (then memory alone decides).
        swap_term_percent: Option<f64>,
        swap_kill_percent: Option<f64>,
        /// Of how much memory, for the wording (`10% of 24.0 GiB`).
        mem_total: u64,
    },
    /// The node's `memory.available` (its capacity less the working set: active page
    /// cache counts as used) at or under `bytes`: the kubelet evicts a pod.
    NodeAvailable { bytes: u64 },
    /// Memory used (total less available) at or over `share` of the node's: Ray kills
    /// a worker.
    UsedShare { share: f64, mem_total: u64 },
    /// Memory pressure (PSI) of a watched cgroup over `percent` for `seconds`, or swap
    /// used over `swap_used_percent`: systemd-oomd kills a whole cgroup. Not a size: it
    /// is not reached at a rate of growth.
    Pressure {
        percent: f64,
        seconds: f64,
        swap_used_percent: f64,
        /// The cgroups it watches, where readable (`ManagedOOMMemoryPressure=kill`).
        cgroups: Vec<String>,
    },
    /// A memory limit: a cgroup's (`cgroup` named), or the machine's memory and swap.
    Limit {
        bytes: Option<u64>,
        cgroup: Option<String>,
        /// `memory.oom.group`: one kill ends every process of the cgroup.
        group_kill: bool,
    },
}

/// Whom a killer picks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "kebab-case")]
pub enum VictimRule {
    /// The process with the highest `oom_score` (the kernel, earlyoom), its score raised
    /// by `prefer` and lowered by `avoid` where they match its name (earlyoom's
    /// regexes), or by resident memory alone with `by_rss`.
    HighestOomScore {
        prefer: Option<String>,
        avoid: Option<String>,
        by_rss: bool,
    },
    /// Every process of a cgroup at once (systemd-oomd; a cgroup with
    /// `memory.oom.group`).
    WholeCgroup,
    /// A pod, by its QoS class and how far its use exceeds its requests.
    PodByUseOverRequest,
    /// The worker of the task scheduled last that can be retried.
    NewestRetriableTask,
}

impl VictimRule {
    pub fn describe(&self) -> String {
        match self {
            VictimRule::HighestOomScore { by_rss: true, .. } => {
                "the process with the most resident memory".into()
            }
            VictimRule::HighestOomScore {
                prefer: None,
                avoid: None,
                ..
            } => "the process with the highest oom_score".into(),
            VictimRule::HighestOomScore { prefer, avoid, .. } => {
                let mut s = String::from("the process with the highest oom_score");
                if let Some(p) = prefer {
                    s.push_str(&format!(", +300 for names matching {p:?}"));
                }
                if let Some(a) = avoid {
                    s.push_str(&format!(", -300 for names matching {a:?}"));
                }
                s
            }
            VictimRule::WholeCgroup => "every process of the cgroup at once".into(),
            VictimRule::PodByUseOverRequest => {
                "the pod furthest over its memory request (BestEffort first)".into()
            }
            VictimRule::NewestRetriableTask => {
                "the worker of the most recently scheduled retriable task".into()
            }
        }
    }
}

/// A killer and how much more the tree may take before it acts, as the machine
/// stands now (`None`: it does not act on size, is not running, or a figure is
/// unreadable). `inspect --tree` lists them first to act first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KillerReach {
    pub killer: OomKiller,
    pub room: Option<u64>,
    /// What it watches crossing what: `MemAvailable falls under 18.8 GiB (80% of 23.5 GiB)`.
    pub threshold: String,
}

/// A process a killer would pick, predicted from the scores of the moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictedVictim {
    pub pid: i32,
    pub comm: String,
    /// Whether it is a process of the job being watched.
    pub in_job: bool,
}

/// A kill a userspace killer logged, in its own words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedKill {
    pub kind: KillerKind,
    /// The process it signalled (earlyoom, nohang).
    pub pid: Option<i32>,
    pub comm: Option<String>,
    /// The cgroup it killed (systemd-oomd).
    pub cgroup: Option<String>,
    pub line: String,
    /// Where it was read: `/proc/812/fd/2 (/var/log/earlyoom.log)`, `journalctl -t earlyoom`.
    pub source: String,
}

impl LoggedKill {
    /// The name the killer gave its victim, as the process was titled when it died:
    /// Ray names the task (`grow`) of a worker that titles itself `ray::grow`, which the
    /// job's sampler may have last seen as `ray::IDLE`, before the task reached it.
    pub fn process_name(&self) -> Option<String> {
        let comm = self.comm.as_deref().filter(|c| !c.is_empty())?;
        Some(match self.kind {
            KillerKind::Ray => format!("ray::{comm}"),
            _ => comm.to_string(),
        })
    }
}
