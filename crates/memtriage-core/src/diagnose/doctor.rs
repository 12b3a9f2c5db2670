//! `doctor`: audits a [`SystemSnapshot`] against what ML jobs need, for the machine's
//! purpose ([`Profile`]). A pure function of the snapshot: it never reads the machine
//! and never changes it. Every check yields a finding, an `ok` one when it passes,
//! so the user sees what was checked and the values behind it.
//!
//! Ids are stable: `<area>.<problem>` for a problem and `<area>.ok` when the check
//! passes (`<area>.unreadable` when its inputs could not be read).

use serde::{Deserialize, Serialize};

use crate::diagnose::cow::iec;
use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::system::{OomConstraint, OomKill, Rlimit, SystemSnapshot, SHM_NOT_MOUNTED};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// A dedicated training machine: one big job owns the memory.
    Training,
    /// A serving machine: latency matters, weights must stay resident.
    Inference,
    /// A machine shared by many users' jobs.
    Shared,
}

impl Profile {
    /// Every profile, in the order help texts list them.
    pub const ALL: [Profile; 3] = [Profile::Training, Profile::Inference, Profile::Shared];
}

/// The profile's name as `as_str` writes it, for every front end that reads one.
impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| {
                format!("unknown profile {name:?}: use \"training\", \"inference\" or \"shared\"")
            })
    }
}

/// "a training machine", "an inference machine", "a shared machine".
fn machine(profile: Profile) -> &'static str {
    match profile {
        Profile::Training => "a training machine",
        Profile::Inference => "an inference machine",
        Profile::Shared => "a shared machine",
    }
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Training => "training",
            Profile::Inference => "inference",
            Profile::Shared => "shared",
        }
    }
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// Below this /dev/shm breaks DataLoader workers for any real batch ("Bus error").
pub const SHM_MIN: u64 = GIB;
/// What a training box should give /dev/shm at most ask for: a quarter of RAM, 1 to 16 GiB.
pub fn shm_recommended(mem_total: Option<u64>) -> u64 {
    let quarter = mem_total.map_or(16 * GIB, |t| t / 4 / GIB * GIB);
    quarter.clamp(GIB, 16 * GIB)
}
/// Distros that raised it (Fedora 39, Ubuntu 23.10, Arch) use this or more.
pub const MAX_MAP_COUNT_RECOMMENDED: u64 = 1_048_576;
/// Below this a loader that maps many shards runs out of mappings.
pub const MAX_MAP_COUNT_MIN: u64 = 262_144;
pub const NOFILE_RECOMMENDED: u64 = 65_536;
/// Below this (1024 is the usual soft default) many DataLoader workers run out of descriptors.
pub const NOFILE_MIN: u64 = 4096;
/// Pinning less than this for RDMA/NCCL or mlock is a misconfiguration on a GPU box.
pub const MEMLOCK_MIN_TRAINING: u64 = GIB;
/// Share of the commit limit that must stay free under strict overcommit.
pub const COMMIT_HEADROOM_MIN_PERCENT: u64 = 5;
/// Kills at most this long before now make `oom.recent-kills` an error.
pub const OOM_RECENT_SECONDS: f64 = 3600.0;
pub const SYSCTL_FILE: &str = "/etc/sysctl.d/90-memtriage.conf";

const MEMINFO: &str = "/proc/meminfo";
const SWAPS: &str = "/proc/swaps";
const PSI: &str = "/proc/pressure/memory";
const THP: &str = "/sys/kernel/mm/transparent_hugepage";
const HUGEPAGES: &str = "/sys/kernel/mm/hugepages";
const LIMITS: &str = "/proc/self/limits";
const MOUNTINFO: &str = "/proc/self/mountinfo";
const VMSTAT: &str = "/proc/vmstat";
const KMSG: &str = "/dev/kmsg";

type Rule = fn(&SystemSnapshot, Profile) -> Vec<Finding>;

/// All findings, most severe first; within a severity, in the order of the rules.
pub fn audit(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    const RULES: [Rule; 16] = [
        memory,
        oom,
        cgroup,
        pressure,
        shm,
        overcommit,
        swap,
        thp,
        hugepages,
        max_map_count,
        memlock,
        nofile,
        dirty,
        numa,
        panic_on_oom,
        proactive_reclaim,
    ];
    let mut out: Vec<Finding> = RULES.iter().flat_map(|rule| rule(sys, profile)).collect();
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

fn finding(
    id: &str,
    severity: Severity,
    title: String,
    evidence: Vec<Evidence>,
    why: &str,
    fix: String,
) -> Finding {
    Finding {
        id: id.to_string(),
        severity,
        title,
        evidence,
        why: why.to_string(),
        fix,
    }
}

fn ev(label: &str, value: impl Into<String>, source: &str) -> Evidence {
    Evidence::new(label, value, source)
}

fn vm_path(key: &str) -> String {
    format!("/proc/sys/vm/{key}")
}

/// `sysctl -w` for now, and a line in a sysctl.d file for after the next boot.
/// `>>` so that applying several fixes does not overwrite the earlier ones.
fn sysctl_fix(settings: &[(&str, String)]) -> String {
    let mut lines: Vec<String> = settings
        .iter()
        .map(|(k, v)| format!("sysctl -w {k}={v}"))
        .collect();
    lines.extend(
        settings
            .iter()
            .map(|(k, v)| format!("echo '{k} = {v}' >> {SYSCTL_FILE}")),
    );
    lines.join("\n")
}

/// A check whose inputs could not be read: says what and why, at `info`, so a user
/// knows the check was not made.
fn unreadable(sys: &SystemSnapshot, area: &str, what: &str, fields: &[(&str, &str)]) -> Finding {
    let evidence = fields
        .iter()
        .map(|(field, source)| {
            let reason = sys.unreadable_reason(field).unwrap_or("not read");
            ev(field, format!("unreadable: {reason}"), source)
        })
        .collect();
    finding(
        &format!("{area}.unreadable"),
        Severity::Info,
        format!("{what}: could not be read, not checked"),
        evidence,
        "A check that cannot see its values cannot vouch for them.",
        "Run memtriage doctor as root on the host (not inside a container) to read everything."
            .into(),
    )
}

fn opt_num(v: Option<impl ToString>) -> String {
    v.map_or_else(|| "unreadable".to_string(), |v| v.to_string())
}

fn opt_iec(v: Option<u64>) -> String {
    v.map_or_else(|| "unreadable".to_string(), iec)
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn memory(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let m = sys.memory.as_ref();
    let (Some(total), Some(avail)) = (m.and_then(|m| m.total), m.and_then(|m| m.available)) else {
        return vec![unreadable(
            sys,
            "memory",
            "MemTotal / MemAvailable",
            &[
                ("memory", MEMINFO),
                ("memory.total", MEMINFO),
                ("memory.available", MEMINFO),
            ],
        )];
    };
    let pct = percent(avail, total);
    let evidence = vec![
        ev("MemTotal", iec(total), MEMINFO),
        ev(
            "MemAvailable",
            format!("{} ({pct:.0}% of RAM)", iec(avail)),
            MEMINFO,
        ),
    ];
    let why = "When MemAvailable nears zero the kernel reclaims page cache (model files are \
               re-read from disk), then swaps, then OOM-kills the largest process: usually the job.";
    let fix = "Find what holds the memory: `memtriage inspect --all --sort pss`; stop stale \
               notebooks and workers, or lower batch size / num_workers of the job.";
    let (id, severity) = if pct < 3.0 {
        ("memory.available-low", Severity::Error)
    } else if pct < 10.0 {
        ("memory.available-low", Severity::Warn)
    } else {
        return vec![finding(
            "memory.ok",
            Severity::Ok,
            format!(
                "memory: {} of {} available ({pct:.0}%)",
                iec(avail),
                iec(total)
            ),
            evidence,
            why,
            String::new(),
        )];
    };
    vec![finding(
        id,
        severity,
        format!(
            "only {} of {} RAM available ({pct:.1}%)",
            iec(avail),
            iec(total)
        ),
        evidence,
        why,
        fix.into(),
    )]
}

fn describe_kill(k: &OomKill, uptime: Option<f64>) -> (String, String) {
    let label = format!("killed pid {} ({})", k.pid, k.comm);
    let mut parts = Vec::new();
    if let Some(a) = k.anon_rss {
        parts.push(format!("anon-rss {}", iec(a)));
    }
    if let Some(f) = k.file_rss {
        parts.push(format!("file-rss {}", iec(f)));
    }
    if let Some(s) = k.shmem_rss {
        parts.push(format!("shmem-rss {}", iec(s)));
    }
    parts.push(match (&k.constraint, &k.oom_memcg, &k.memcg) {
        (OomConstraint::Cgroup, Some(limit), _) => format!("cgroup limit of {limit}"),
        (OomConstraint::Cgroup, None, Some(cg)) => format!("cgroup limit, in {cg}"),
        (c, _, _) => format!("{} out of memory", c.as_str()),
    });
    match (k.timestamp, uptime) {
        (Some(t), Some(up)) if up >= t => {
            parts.push(format!("{:.0} s after boot, {} ago", t, ago(up - t)))
        }
        (Some(t), _) => parts.push(format!("{t:.0} s after boot")),
        (None, _) => {
            if let Some(w) = &k.wall_time {
                parts.push(w.clone());
            }
        }
    }
    (label, parts.join(", "))
}

fn ago(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..120 => format!("{s} s"),
        120..7200 => format!("{} min", s / 60),
        7200..172_800 => format!("{} h", s / 3600),
        _ => format!("{} days", s / 86_400),
    }
}

fn oom(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let why = "An OOM kill ends a job with `Killed` / exit 137 and no Python traceback; the \
               kernel log is the only place that says how big it was and which limit it hit.";
    let count_ev = ev("OOM kills since boot", opt_num(sys.oom_kill_count), VMSTAT);
    match (&sys.oom_kills, sys.oom_kill_count) {
        (Some(kills), _) if !kills.is_empty() => {
            let latest_age = kills
                .iter()
                .filter_map(|k| Some(sys.uptime_seconds? - k.timestamp?))
                .filter(|age| *age >= 0.0)
                .reduce(f64::min);
            let recent = latest_age.is_some_and(|a| a <= OOM_RECENT_SECONDS);
            let mut evidence = vec![
                count_ev,
                ev("OOM kills in the kernel log", kills.len().to_string(), KMSG),
            ];
            let cgroup_kills = kills
                .iter()
                .filter(|k| k.constraint == OomConstraint::Cgroup)
                .count();
            for k in kills.iter().rev().take(5) {
                let (label, value) = describe_kill(k, sys.uptime_seconds);
                evidence.push(ev(&label, value, KMSG));
            }
            let fix = if cgroup_kills > 0 {
                "The job hit its container/cgroup limit: raise it (docker run --memory=…, Kubernetes \
                 resources.limits.memory, Slurm --mem) or lower the job's peak (batch size, num_workers, \
                 dataset held as numpy/Arrow instead of Python objects). Run the job under \
                 `memtriage run -- CMD` to see its peak and what grew."
            } else {
                "The machine ran out of RAM: lower the job's peak (batch size, num_workers, \
                 dataset held as numpy/Arrow instead of Python objects), stop other memory users, \
                 or add RAM. Run the job under `memtriage run -- CMD` to see its peak and what grew."
            };
            vec![finding(
                "oom.recent-kills",
                if recent {
                    Severity::Error
                } else {
                    Severity::Warn
                },
                format!(
                    "{} process{} OOM-killed since boot ({} by a cgroup limit){}",
                    kills.len(),
                    if kills.len() == 1 { "" } else { "es" },
                    cgroup_kills,
                    latest_age.map_or(String::new(), |a| format!(", the last {} ago", ago(a)))
                ),
                evidence,
                why,
                fix.into(),
            )]
        }
        (log, Some(n)) if n > 0 => {
            let log_state = match log {
                Some(_) => "no OOM lines left (the ring buffer has rotated past them)".to_string(),
                None => format!(
                    "unreadable: {}",
                    sys.unreadable_reason("oom_kills").unwrap_or("not read")
                ),
            };
            vec![finding(
                "oom.kills-since-boot",
                Severity::Warn,
                format!("{n} OOM kill{} since boot", if n == 1 { "" } else { "s" }),
                vec![count_ev, ev("kernel log", log_state, KMSG)],
                why,
                "See who was killed: `sudo memtriage doctor`, or `sudo dmesg -T | grep -iE 'killed process|oom-kill'` \
                 or `journalctl -k | grep -i 'killed process'`."
                    .into(),
            )]
        }
        (None, None) => vec![unreadable(
            sys,
            "oom",
            "OOM kill history",
            &[("oom_kill_count", VMSTAT), ("oom_kills", KMSG)],
        )],
        (log, count) => {
            let log_state = match log {
                Some(_) => "no OOM kills".to_string(),
                None => format!(
                    "unreadable: {}",
                    sys.unreadable_reason("oom_kills").unwrap_or("not read")
                ),
            };
            vec![finding(
                "oom.ok",
                Severity::Ok,
                format!(
                    "no OOM kills since boot ({} per /proc/vmstat)",
                    opt_num(count)
                ),
                vec![count_ev, ev("kernel log", log_state, KMSG)],
                why,
                String::new(),
            )]
        }
    }
}

fn cgroup(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let why = "A container or systemd slice limit OOM-kills the job at the limit even when the \
               machine has RAM free; `free` and `nvidia-smi` do not show it.";
    let Some(cg) = &sys.cgroup else {
        if sys.unreadable_reason("cgroup").is_some() {
            return vec![unreadable(
                sys,
                "cgroup",
                "the memory cgroup of this shell",
                &[("cgroup", "/proc/self/cgroup")],
            )];
        }
        return vec![finding(
            "cgroup.ok",
            Severity::Ok,
            "no memory cgroup limits this shell".into(),
            vec![ev(
                "memory cgroup",
                "none with the memory controller",
                "/proc/self/cgroup",
            )],
            why,
            String::new(),
        )];
    };
    let source = format!("{} (cgroup {})", cg.dir, version_name(cg));
    let mut evidence = vec![
        ev("cgroup", cg.path.clone(), "/proc/self/cgroup"),
        ev("usage", opt_iec(cg.usage), &source),
        ev(
            "limit",
            match (cg.limit, &cg.limit_set_by) {
                (Some(l), Some(by)) => format!("{} (set by {by})", iec(l)),
                (Some(l), None) => iec(l),
                (None, _) => "none".into(),
            },
            &source,
        ),
    ];
    if let Some(h) = cg.high {
        evidence.push(ev("memory.high (throttling starts)", iec(h), &source));
    }
    if let Some(total) = sys.memory.as_ref().and_then(|m| m.total) {
        evidence.push(ev("MemTotal", iec(total), MEMINFO));
    }
    let mut out = Vec::new();
    if let Some(n) = cg.oom_kills.filter(|n| *n > 0) {
        let mut e = evidence.clone();
        e.push(ev("oom_kill", n.to_string(), &source));
        out.push(finding(
            "cgroup.oom-kills",
            Severity::Warn,
            format!("{n} OOM kill{} inside this cgroup ({})", if n == 1 { "" } else { "s" }, cg.path),
            e,
            why,
            "Raise the limit (docker run --memory=…, Kubernetes resources.limits.memory, \
             systemd MemoryMax=, Slurm --mem) or lower the job's peak; `memtriage run -- CMD` shows it."
                .into(),
        ));
    }
    match (cg.limit, cg.usage) {
        (Some(limit), Some(usage)) => {
            let pct = percent(usage, limit);
            let severity = if pct >= 95.0 {
                Severity::Error
            } else if pct >= 85.0 {
                Severity::Warn
            } else {
                Severity::Ok
            };
            if severity == Severity::Ok {
                out.push(finding(
                    "cgroup.ok",
                    Severity::Ok,
                    format!(
                        "cgroup limit {}: {} used ({pct:.0}%)",
                        iec(limit),
                        iec(usage)
                    ),
                    evidence,
                    why,
                    String::new(),
                ));
            } else {
                out.push(finding(
                    "cgroup.limit-near",
                    severity,
                    format!(
                        "cgroup {} uses {} of its {} limit ({pct:.0}%)",
                        cg.path,
                        iec(usage),
                        iec(limit)
                    ),
                    evidence,
                    "The next allocation over the limit is reclaimed from page cache first, then \
                     OOM-kills a process in the cgroup, usually the job.",
                    "Raise the limit where it is set (docker run --memory=…, Kubernetes \
                     resources.limits.memory, systemd MemoryMax=, Slurm --mem), or lower the job's peak."
                        .into(),
                ));
            }
        }
        (Some(limit), None) => out.push(finding(
            "cgroup.ok",
            Severity::Ok,
            format!("cgroup limit {} (usage unreadable)", iec(limit)),
            evidence,
            why,
            String::new(),
        )),
        (None, _) => out.push(finding(
            "cgroup.ok",
            Severity::Ok,
            format!("cgroup {} has no memory limit", cg.path),
            evidence,
            why,
            String::new(),
        )),
    }
    out
}

fn version_name(cg: &crate::model::process::CgroupMemory) -> &'static str {
    match cg.version {
        crate::model::process::CgroupVersion::V1 => "v1",
        crate::model::process::CgroupVersion::V2 => "v2",
    }
}

fn pressure(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let why = "Memory pressure is time tasks spend stalled waiting for memory (reclaim, swap-in, \
               refaults of evicted model pages): a job slows down long before it is OOM-killed.";
    let Some(p) = &sys.pressure else {
        let reason = sys.unreadable_reason("pressure").unwrap_or("not read");
        return vec![finding(
            "pressure.unavailable",
            Severity::Info,
            "memory pressure (PSI) is not available".into(),
            vec![ev("pressure", format!("unreadable: {reason}"), PSI)],
            why,
            "Boot a kernel with CONFIG_PSI=y and the `psi=1` kernel parameter (e.g. add psi=1 to \
             GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub and reboot)."
                .into(),
        )];
    };
    let line = |l: &Option<crate::model::system::PressureLine>| {
        l.as_ref().map_or("absent".to_string(), |l| {
            format!(
                "avg10 {:.2}%, avg60 {:.2}%, avg300 {:.2}%",
                l.avg10, l.avg60, l.avg300
            )
        })
    };
    let evidence = vec![
        ev("some", line(&p.some), PSI),
        ev("full", line(&p.full), PSI),
    ];
    let some60 = p.some.as_ref().map_or(0.0, |l| l.avg60.max(l.avg300));
    let full60 = p.full.as_ref().map_or(0.0, |l| l.avg60.max(l.avg300));
    let severity = if full60 >= 10.0 {
        Severity::Error
    } else if full60 >= 1.0 || some60 >= 10.0 {
        Severity::Warn
    } else {
        Severity::Ok
    };
    if severity == Severity::Ok {
        return vec![finding(
            "pressure.ok",
            Severity::Ok,
            format!("memory pressure low (some {some60:.2}%, full {full60:.2}% over 60-300 s)"),
            evidence,
            why,
            String::new(),
        )];
    }
    vec![finding(
        "pressure.memory-stalls",
        severity,
        format!("tasks stall on memory: some {some60:.1}%, full {full60:.1}% of the time"),
        evidence,
        why,
        "Find what holds and grows memory (`memtriage inspect --all --sort pss`, `memtriage top`); \
         lower the job's working set, stop competing jobs, or give the job a cgroup limit with headroom."
            .into(),
    )]
}

fn shm_fix(size: u64) -> String {
    let g = (size / GIB).max(1);
    format!(
        "mount -o remount,size={g}G /dev/shm\n\
         echo 'tmpfs /dev/shm tmpfs defaults,size={g}G 0 0' >> /etc/fstab   # keeps it after reboot\n\
         Docker: docker run --shm-size={g}g … (or --ipc=host)\n\
         Kubernetes: mount an emptyDir with medium: Memory and sizeLimit: {g}Gi at /dev/shm"
    )
}

fn shm(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let why = "PyTorch DataLoader workers hand batches to the main process through /dev/shm, and \
               NCCL uses it between GPUs of one node; when it fills, workers die with \"Bus error\" \
               (Docker's default is 64 MiB).";
    let total = sys.memory.as_ref().and_then(|m| m.total);
    let Some(shm) = &sys.shm else {
        if sys.unreadable_reason("shm") == Some(SHM_NOT_MOUNTED) {
            let want = shm_recommended(total);
            return vec![finding(
                "shm.not-mounted",
                Severity::Warn,
                "no tmpfs is mounted at /dev/shm".into(),
                vec![ev("/dev/shm", "not a mount point", MOUNTINFO)],
                why,
                format!(
                    "mount -t tmpfs -o size={}G tmpfs /dev/shm\n{}",
                    want / GIB,
                    shm_fix(want)
                ),
            )];
        }
        return vec![unreadable(sys, "shm", "/dev/shm", &[("shm", MOUNTINFO)])];
    };
    let mut evidence = vec![
        ev("filesystem", shm.fs_type.clone(), MOUNTINFO),
        ev("size= option", opt_iec(shm.size_option), MOUNTINFO),
    ];
    if let Some(t) = shm.total {
        evidence.push(ev("size", iec(t), "statvfs /dev/shm"));
    }
    if let Some(u) = shm.used {
        evidence.push(ev("used", iec(u), "statvfs /dev/shm"));
    }
    if let Some(t) = total {
        evidence.push(ev("MemTotal", iec(t), MEMINFO));
    }
    let mut out = Vec::new();
    if shm.fs_type != "tmpfs" {
        out.push(finding(
            "shm.not-tmpfs",
            Severity::Warn,
            format!("/dev/shm is {}, not tmpfs", shm.fs_type),
            evidence.clone(),
            why,
            shm_fix(shm_recommended(total)),
        ));
    }
    let Some(size) = shm.size() else {
        out.push(finding(
            "shm.ok",
            Severity::Info,
            "/dev/shm is mounted; its size could not be read".into(),
            evidence,
            why,
            String::new(),
        ));
        return out;
    };
    let want = shm_recommended(total);
    if size < SHM_MIN {
        out.push(finding(
            "shm.too-small",
            Severity::Error,
            format!(
                "/dev/shm is only {}: DataLoader workers will die with \"Bus error\"",
                iec(size)
            ),
            evidence.clone(),
            why,
            shm_fix(want),
        ));
    } else if profile == Profile::Training && size < want {
        out.push(finding(
            "shm.too-small",
            Severity::Warn,
            format!(
                "/dev/shm is {}; a training box should give it {}",
                iec(size),
                iec(want)
            ),
            evidence.clone(),
            why,
            shm_fix(want),
        ));
    }
    if let Some(used) = shm.used {
        let pct = percent(used, size);
        if pct >= 80.0 {
            out.push(finding(
                "shm.mostly-full",
                Severity::Warn,
                format!("/dev/shm is {pct:.0}% full ({} of {})", iec(used), iec(size)),
                evidence.clone(),
                "Segments left behind by killed workers (torch_*, psm_*, nccl-*) hold RAM until \
                 deleted, and the next DataLoader worker dies with \"Bus error\" when it cannot allocate.",
                "ls -lt /dev/shm   # then remove segments no running process uses, e.g.\n\
                 find /dev/shm -maxdepth 1 -name 'torch_*' -mmin +60 -delete"
                    .into(),
            ));
        }
    }
    if let Some(t) = total.filter(|t| size > *t) {
        out.push(finding(
            "shm.larger-than-ram",
            Severity::Info,
            format!(
                "/dev/shm may grow to {}, more than the {} of RAM",
                iec(size),
                iec(t)
            ),
            evidence.clone(),
            "tmpfs pages live in RAM (or swap); filling /dev/shm past RAM OOM-kills processes \
             instead of failing the write.",
            shm_fix(t / 2),
        ));
    }
    if out.is_empty() {
        let used = shm
            .used
            .map_or(String::new(), |u| format!(", {} used", iec(u)));
        out.push(finding(
            "shm.ok",
            Severity::Ok,
            format!("/dev/shm is {}{used}", iec(size)),
            evidence,
            why,
            String::new(),
        ));
    }
    out
}

fn overcommit(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(mode) = sys.vm.overcommit_memory else {
        return vec![unreadable(
            sys,
            "overcommit",
            "vm.overcommit_memory",
            &[("vm.overcommit_memory", "/proc/sys/vm/overcommit_memory")],
        )];
    };
    let m = sys.memory.clone().unwrap_or_default();
    let headroom = m.commit_headroom();
    let mut evidence = vec![
        ev(
            "vm.overcommit_memory",
            mode.to_string(),
            &vm_path("overcommit_memory"),
        ),
        ev(
            "vm.overcommit_ratio",
            opt_num(sys.vm.overcommit_ratio),
            &vm_path("overcommit_ratio"),
        ),
        ev("CommitLimit", opt_iec(m.commit_limit), MEMINFO),
        ev("Committed_AS", opt_iec(m.committed_as), MEMINFO),
        ev(
            "commit headroom (CommitLimit - Committed_AS)",
            match headroom {
                Some(h) if h < 0 => format!("-{}", iec(h.unsigned_abs() as u64)),
                Some(h) => iec(h as u64),
                None => "unreadable".into(),
            },
            MEMINFO,
        ),
    ];
    if let Some(k) = sys.vm.overcommit_bytes.filter(|k| *k > 0) {
        evidence.push(ev(
            "vm.overcommit_kbytes",
            iec(k),
            &vm_path("overcommit_kbytes"),
        ));
    }
    let why_strict = "Under strict accounting (mode 2) every writable private mapping counts \
                      against CommitLimit: fork() of a large Python process for DataLoader workers, \
                      and the big virtual reservations of PyTorch and CUDA fail with \
                      \"Cannot allocate memory\" long before RAM is used.";
    let why_loose = "Overcommit decides whether large reservations succeed up front; mode 1 lets \
                     fork() of a large process and sparse reservations succeed and leaves real \
                     shortage to the OOM killer.";
    let why_shared = "On a shared host, overcommit lets one user's job promise memory the machine \
                      lacks, and the OOM killer then picks the largest process, which may be \
                      another user's; strict accounting (mode 2) fails the allocation of the job \
                      that asked instead.";
    let mut out = Vec::new();
    if mode == 2 {
        if let (Some(limit), Some(h)) = (m.commit_limit, headroom) {
            let min = limit / 100 * COMMIT_HEADROOM_MIN_PERCENT;
            if h < i128::from(min) {
                out.push(finding(
                    "overcommit.no-headroom",
                    Severity::Error,
                    format!(
                        "strict overcommit with {} of commit headroom left: the next large allocation or fork fails",
                        if h < 0 { "none".to_string() } else { iec(h as u64) }
                    ),
                    evidence.clone(),
                    why_strict,
                    format!(
                        "{}\n# or, on a dedicated box, stop strict accounting:\n{}",
                        sysctl_fix(&[("vm.overcommit_ratio", "95".into())]),
                        sysctl_fix(&[("vm.overcommit_memory", "1".into())])
                    ),
                ));
            }
        }
        if let (Some(limit), Some(total)) = (m.commit_limit, m.total) {
            let unset_kbytes = sys.vm.overcommit_bytes.is_none_or(|k| k == 0);
            if unset_kbytes && limit < total / 4 * 3 {
                out.push(finding(
                    "overcommit.ratio-low",
                    Severity::Warn,
                    format!(
                        "strict overcommit lets only {} of {} RAM be committed (overcommit_ratio {})",
                        iec(limit),
                        iec(total),
                        opt_num(sys.vm.overcommit_ratio)
                    ),
                    evidence.clone(),
                    "Under mode 2 CommitLimit is swap + RAM × overcommit_ratio%; the default 50 \
                     leaves half the RAM unusable by jobs.",
                    sysctl_fix(&[("vm.overcommit_ratio", "95".into())]),
                ));
            }
        }
        if profile == Profile::Training {
            out.push(finding(
                "overcommit.never",
                Severity::Warn,
                "strict overcommit (vm.overcommit_memory=2) on a training machine".into(),
                evidence.clone(),
                why_strict,
                sysctl_fix(&[("vm.overcommit_memory", "1".into())]),
            ));
        }
    } else if profile == Profile::Shared && mode == 1 {
        out.push(finding(
            "overcommit.always",
            Severity::Warn,
            "overcommit always (vm.overcommit_memory=1) on a shared machine".into(),
            evidence.clone(),
            why_shared,
            sysctl_fix(&[
                ("vm.overcommit_memory", "2".into()),
                ("vm.overcommit_ratio", "95".into()),
            ]),
        ));
    } else if profile == Profile::Shared && mode == 0 {
        out.push(finding(
            "overcommit.heuristic",
            Severity::Info,
            "heuristic overcommit (vm.overcommit_memory=0) on a shared machine".into(),
            evidence.clone(),
            why_shared,
            sysctl_fix(&[
                ("vm.overcommit_memory", "2".into()),
                ("vm.overcommit_ratio", "95".into()),
            ]),
        ));
    } else if profile == Profile::Training && mode == 0 {
        out.push(finding(
            "overcommit.heuristic",
            Severity::Info,
            "heuristic overcommit (vm.overcommit_memory=0) on a training machine".into(),
            evidence.clone(),
            "Mode 0 refuses single allocations larger than RAM + swap (a huge anonymous \
             reservation, a fork of a process bigger than free memory); a dedicated box is \
             better served by mode 1.",
            sysctl_fix(&[("vm.overcommit_memory", "1".into())]),
        ));
    }
    if out.is_empty() {
        let name = match mode {
            0 => "heuristic",
            1 => "always",
            2 => "strict",
            _ => "unknown",
        };
        out.push(finding(
            "overcommit.ok",
            Severity::Ok,
            format!(
                "overcommit {name} (vm.overcommit_memory={mode}) suits {}",
                machine(profile)
            ),
            evidence,
            if mode == 2 { why_strict } else { why_loose },
            String::new(),
        ));
    }
    out
}

fn swap(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let m = sys.memory.as_ref();
    let swap_total = m
        .and_then(|m| m.swap_total)
        .or_else(|| sys.swaps.as_ref().map(|s| s.iter().map(|d| d.size).sum()));
    let Some(swap_total) = swap_total else {
        return vec![unreadable(
            sys,
            "swap",
            "swap",
            &[("memory", MEMINFO), ("swaps", SWAPS)],
        )];
    };
    let used = m
        .and_then(|m| m.swap_used())
        .or_else(|| sys.swaps.as_ref().map(|s| s.iter().map(|d| d.used).sum()));
    let swappiness = sys.vm.swappiness;
    let mut evidence = vec![
        ev("SwapTotal", iec(swap_total), MEMINFO),
        ev("swap used", opt_iec(used), MEMINFO),
        ev("vm.swappiness", opt_num(swappiness), &vm_path("swappiness")),
    ];
    for d in sys.swaps.iter().flatten() {
        evidence.push(ev(
            &format!("{} {}", d.kind, d.filename),
            format!(
                "{}, {} used, priority {}",
                iec(d.size),
                iec(d.used),
                d.priority
            ),
            SWAPS,
        ));
    }
    let swapoff_fix = "swapoff -a\n\
                       sed -i.bak '/\\sswap\\s/s/^/#/' /etc/fstab   # keeps it off after reboot (systemd: also `systemctl mask swap.target`)";
    let mut out = Vec::new();
    if let Some(u) = used.filter(|u| swap_total > 0 && *u >= GIB && percent(*u, swap_total) >= 50.0)
    {
        out.push(finding(
            "swap.heavily-used",
            Severity::Warn,
            format!("{} of {} swap in use", iec(u), iec(swap_total)),
            evidence.clone(),
            "Swapped-out pages come back one fault at a time: a job touching them runs at disk speed.",
            "Find who is swapped: `memtriage inspect --all --sort swap`; give the machine RAM headroom, \
             then `swapoff -a && swapon -a` to bring pages back in one go."
                .into(),
        ));
    }
    match profile {
        Profile::Training | Profile::Inference if swap_total > 0 => {
            let why = if profile == Profile::Training {
                "On a dedicated training box swap turns a clean OOM kill into hours of thrashing: \
                 tensors and optimizer state swapped out make every step run at disk speed."
            } else {
                "A model server with swap pages weights and KV cache out when memory is tight, and \
                 the next request pays disk latency for each page."
            };
            out.push(finding(
                "swap.enabled",
                Severity::Warn,
                format!("swap is on ({}) on {}", iec(swap_total), machine(profile)),
                evidence,
                why,
                format!(
                    "{swapoff_fix}\n# or, to keep swap as a last resort only:\n{}",
                    sysctl_fix(&[("vm.swappiness", "1".into())])
                ),
            ));
        }
        Profile::Shared if swap_total == 0 => out.push(finding(
            "swap.disabled",
            Severity::Info,
            "no swap on a shared machine".into(),
            evidence,
            "With a little swap the kernel can move idle sessions (forgotten notebooks, idle \
             kernels) out of RAM instead of OOM-killing a running job.",
            format!(
                "fallocate -l 8G /swapfile && chmod 600 /swapfile && mkswap /swapfile && swapon /swapfile\n\
                 echo '/swapfile none swap sw 0 0' >> /etc/fstab\n{}",
                sysctl_fix(&[("vm.swappiness", "10".into())])
            ),
        )),
        Profile::Shared if swappiness.is_some_and(|s| s > 60) => out.push(finding(
            "swappiness.high",
            Severity::Info,
            format!("vm.swappiness is {} on a shared machine", opt_num(swappiness)),
            evidence,
            "A high swappiness swaps out running jobs' memory to keep page cache.",
            sysctl_fix(&[("vm.swappiness", "10".into())]),
        )),
        _ => {
            let title = if swap_total == 0 {
                format!("swap is off, as {} wants", machine(profile))
            } else {
                format!(
                    "swap {} with swappiness {}",
                    iec(swap_total),
                    opt_num(swappiness)
                )
            };
            out.push(finding(
                "swap.ok",
                Severity::Ok,
                title,
                evidence,
                "Swap trades OOM kills for slowness; which is right depends on the machine's purpose.",
                String::new(),
            ));
        }
    }
    out
}

fn thp(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let t = &sys.thp;
    let Some(enabled) = t.enabled.as_deref() else {
        return vec![unreadable(
            sys,
            "thp",
            "transparent huge page settings",
            &[("thp.enabled", "/sys/kernel/mm/transparent_hugepage/enabled")],
        )];
    };
    let defrag = t.defrag.as_deref();
    let evidence = vec![
        ev("enabled", enabled, &format!("{THP}/enabled")),
        ev(
            "defrag",
            defrag.unwrap_or("unreadable"),
            &format!("{THP}/defrag"),
        ),
        ev(
            "shmem_enabled",
            t.shmem_enabled.as_deref().unwrap_or("unreadable"),
            &format!("{THP}/shmem_enabled"),
        ),
    ];
    let write = |file: &str, value: &str| {
        format!(
            "echo {value} > {THP}/{file}\n\
             echo 'w {THP}/{file} - - - - {value}' >> /etc/tmpfiles.d/90-memtriage.conf   # keeps it after reboot"
        )
    };
    let mut out = Vec::new();
    if enabled == "never" && profile != Profile::Shared {
        out.push(finding(
            "thp.disabled",
            Severity::Info,
            "transparent huge pages are off".into(),
            evidence.clone(),
            "Large tensors in 4 KiB pages need 512 times the TLB entries of 2 MiB pages; \
             CPU-side data loading and optimizer steps on CPU slow down.",
            write("enabled", "madvise"),
        ));
    }
    if enabled == "always" && profile == Profile::Shared {
        out.push(finding(
            "thp.enabled-always",
            Severity::Info,
            "transparent huge pages always on, on a shared machine".into(),
            evidence.clone(),
            "With THP always every sparse allocation can take a whole 2 MiB page; many users' \
             processes together waste RAM that madvise mode would leave to them.",
            write("enabled", "madvise"),
        ));
    }
    if enabled != "never" {
        match (defrag, profile) {
            (Some("always"), Profile::Training) => out.push(finding(
                "thp.defrag-always",
                Severity::Info,
                "THP defrag is `always`: page faults may stall in compaction".into(),
                evidence.clone(),
                "With defrag=always a page fault that finds no free 2 MiB page compacts memory \
                 synchronously; steps that allocate take random pauses.",
                write("defrag", "defer+madvise"),
            )),
            (Some("always"), _) => out.push(finding(
                "thp.defrag-always",
                Severity::Warn,
                "THP defrag is `always`: page faults stall in direct compaction".into(),
                evidence.clone(),
                "With defrag=always any page fault that finds no free 2 MiB page compacts memory \
                 synchronously: tail latency spikes of tens of milliseconds under memory pressure.",
                write("defrag", "defer+madvise"),
            )),
            (Some("madvise"), Profile::Inference) => out.push(finding(
                "thp.defrag-madvise",
                Severity::Info,
                "THP defrag is `madvise`; latency-sensitive serving prefers `defer+madvise`".into(),
                evidence.clone(),
                "With defrag=madvise, regions that ask for huge pages (PyTorch, jemalloc) compact \
                 synchronously on fault; defer+madvise compacts in the background for everyone else.",
                write("defrag", "defer+madvise"),
            )),
            _ => {}
        }
    }
    if out.is_empty() {
        out.push(finding(
            "thp.ok",
            Severity::Ok,
            format!(
                "transparent huge pages: enabled={enabled}, defrag={}",
                defrag.unwrap_or("unreadable")
            ),
            evidence,
            "Huge pages cut TLB misses for large tensors; synchronous compaction costs latency.",
            String::new(),
        ));
    }
    out
}

fn hugepages(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let Some(pools) = &sys.hugepages else {
        return vec![unreadable(
            sys,
            "hugepages",
            "huge page pools",
            &[("hugepages", HUGEPAGES)],
        )];
    };
    let total_ram = sys.memory.as_ref().and_then(|m| m.total);
    let mut evidence: Vec<Evidence> = pools
        .iter()
        .map(|p| {
            ev(
                &format!("{} pages", iec(p.page_size)),
                format!(
                    "{} total ({}), {} free{}",
                    p.total,
                    iec(p.bytes()),
                    p.free,
                    p.reserved
                        .map_or(String::new(), |r| format!(", {r} reserved"))
                ),
                &format!("{HUGEPAGES}/hugepages-{}kB/", p.page_size / 1024),
            )
        })
        .collect();
    if evidence.is_empty() {
        evidence.push(ev("huge page pools", "none", HUGEPAGES));
    }
    let mut out = Vec::new();
    for p in pools {
        if p.total == 0 || p.free < p.total || p.reserved.is_some_and(|r| r > 0) {
            continue;
        }
        let big = total_ram.is_some_and(|t| p.bytes() > t / 10);
        let fix = if sys.memory.as_ref().and_then(|m| m.hugepage_size) == Some(p.page_size) {
            sysctl_fix(&[("vm.nr_hugepages", "0".into())])
        } else {
            format!(
                "echo 0 > {HUGEPAGES}/hugepages-{}kB/nr_hugepages\n# and drop hugepages= / hugepagesz= from the kernel command line",
                p.page_size / 1024
            )
        };
        out.push(finding(
            "hugepages.pool-unused",
            if big { Severity::Warn } else { Severity::Info },
            format!(
                "{} of RAM reserved as {} huge pages that nothing uses",
                iec(p.bytes()),
                iec(p.page_size)
            ),
            evidence.clone(),
            "A huge page pool takes its RAM away from every other use when it is sized; unless a \
             program maps hugetlbfs (DPDK, some inference servers), it is RAM the jobs cannot have.",
            fix,
        ));
    }
    if out.is_empty() {
        let reserved: u64 = pools.iter().map(|p| p.bytes()).sum();
        out.push(finding(
            "hugepages.ok",
            Severity::Ok,
            if reserved == 0 {
                "no persistent huge page pool reserves RAM".into()
            } else {
                format!("huge page pools of {} in use", iec(reserved))
            },
            evidence,
            "Persistent huge page pools hold RAM whether or not anything uses them.",
            String::new(),
        ));
    }
    out
}

fn max_map_count(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(n) = sys.vm.max_map_count else {
        return vec![unreadable(
            sys,
            "max-map-count",
            "vm.max_map_count",
            &[("vm.max_map_count", "/proc/sys/vm/max_map_count")],
        )];
    };
    let evidence = vec![ev(
        "vm.max_map_count",
        n.to_string(),
        &vm_path("max_map_count"),
    )];
    let why = "Each mmapped shard, safetensors file and allocator arena is one or more mappings; \
               at the limit mmap fails with ENOMEM and loaders die with \"Cannot allocate memory\" \
               though RAM is free (65530, the old default, is low for many mmapped shards).";
    if n >= MAX_MAP_COUNT_MIN {
        return vec![finding(
            "max-map-count.ok",
            Severity::Ok,
            format!("vm.max_map_count is {n}"),
            evidence,
            why,
            String::new(),
        )];
    }
    vec![finding(
        "max-map-count.low",
        if profile == Profile::Shared {
            Severity::Info
        } else {
            Severity::Warn
        },
        format!("vm.max_map_count is {n}; mmap-heavy data loaders need more"),
        evidence,
        why,
        sysctl_fix(&[("vm.max_map_count", MAX_MAP_COUNT_RECOMMENDED.to_string())]),
    )]
}

fn rlimit_text(l: &Rlimit, unit: fn(u64) -> String) -> String {
    let one = |v: Option<u64>| v.map_or("unlimited".to_string(), unit);
    format!("soft {}, hard {}", one(l.soft), one(l.hard))
}

fn memlock(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(l) = sys.limits.memlock else {
        return vec![unreadable(
            sys,
            "memlock",
            "RLIMIT_MEMLOCK",
            &[("limits.memlock", LIMITS)],
        )];
    };
    let evidence = vec![ev(
        "max locked memory (this shell)",
        rlimit_text(&l, iec),
        LIMITS,
    )];
    let why = "NCCL over InfiniBand/RoCE and GPUDirect RDMA register (pin) memory against \
               RLIMIT_MEMLOCK, and a server that mlocks its weights to keep them resident needs \
               their full size; a low limit fails with \"Cannot allocate memory\" or ibv_reg_mr errors.";
    let low = match (l.soft, profile) {
        (None, _) => None,
        (Some(s), Profile::Inference) => Some((s, Severity::Warn)),
        (Some(s), Profile::Training) if s < MEMLOCK_MIN_TRAINING => Some((s, Severity::Warn)),
        (Some(s), Profile::Shared) if s < 64 * MIB => Some((s, Severity::Info)),
        _ => None,
    };
    let Some((soft, severity)) = low else {
        return vec![finding(
            "memlock.ok",
            Severity::Ok,
            format!(
                "max locked memory: {}",
                l.soft.map_or("unlimited".to_string(), iec)
            ),
            evidence,
            why,
            String::new(),
        )];
    };
    vec![finding(
        "memlock.low",
        severity,
        format!(
            "max locked memory is {}; pinned and locked memory will fail",
            iec(soft)
        ),
        evidence,
        why,
        "ulimit -l unlimited   # in the job's shell; needs the hard limit raised first\n\
         echo '* - memlock unlimited' >> /etc/security/limits.d/90-memtriage.conf   # new logins\n\
         systemd service: LimitMEMLOCK=infinity\n\
         Docker: docker run --ulimit memlock=-1:-1 …"
            .into(),
    )]
}

fn proactive_reclaim(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let why = "Proactive reclaim pages out memory that has sat idle, with no memory pressure: \
               the page cache of a model warmed before its first request, or of a dataset read \
               once per epoch, is dropped after the idle time and the next access reads the disk \
               again. Locked (mlocked) pages are exempt.";
    if sys.unreadable_reason("proactive_reclaim").is_some() {
        return vec![unreadable(
            sys,
            "proactive-reclaim",
            "proactive reclaim (DAMON)",
            &[("proactive_reclaim", "/sys/kernel/mm/damon/admin/kdamonds")],
        )];
    }
    if sys.proactive_reclaim.is_empty() {
        return vec![finding(
            "proactive-reclaim.ok",
            Severity::Ok,
            "no proactive reclaim (DAMON pageout) is running".into(),
            vec![ev(
                "DAMON pageout schemes running",
                "none",
                "/sys/kernel/mm/damon/admin/kdamonds, /sys/module/damon_reclaim/parameters",
            )],
            why,
            String::new(),
        )];
    }
    let idle = |r: &crate::model::system::ProactiveReclaim| {
        r.min_idle_seconds
            .map_or("an unknown time".to_string(), |s| format!("{s:.0} s"))
    };
    let evidence = sys
        .proactive_reclaim
        .iter()
        .map(|r| {
            ev(
                "reclaims memory idle for",
                format!("{} ({})", idle(r), r.operations),
                &r.source,
            )
        })
        .collect();
    let shortest = sys
        .proactive_reclaim
        .iter()
        .filter_map(|r| r.min_idle_seconds)
        .min_by(f64::total_cmp);
    let stop: Vec<String> = sys
        .proactive_reclaim
        .iter()
        .map(|r| match r.source.find("/contexts/") {
            Some(i) => format!("echo off > {}/state", &r.source[..i]),
            None => format!("echo N > {}/enabled", r.source),
        })
        .collect();
    let page_cache = sys.proactive_reclaim.iter().any(|r| r.reaches_page_cache());
    let idle = shortest.map_or("a while".to_string(), |s| format!("{s:.0} s"));
    vec![finding(
        "proactive-reclaim.active",
        if profile == Profile::Inference && page_cache {
            Severity::Warn
        } else {
            Severity::Info
        },
        if page_cache {
            format!("proactive reclaim pages out memory idle for {idle}: warmed files do not stay cached")
        } else {
            format!("proactive reclaim pages out the idle memory of the processes it watches ({idle})")
        },
        evidence,
        why,
        format!(
            "memtriage warm --lock MODEL_DIR   # pins the weights: locked pages are not reclaimed\n\
             # or, where the machine's owner allows (it may be how the host takes memory back):\n{}",
            stop.join("\n")
        ),
    )]
}

fn nofile(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(l) = sys.limits.nofile else {
        return vec![unreadable(
            sys,
            "nofile",
            "RLIMIT_NOFILE",
            &[("limits.nofile", LIMITS)],
        )];
    };
    let evidence = vec![ev(
        "max open files (this shell)",
        rlimit_text(&l, |v| v.to_string()),
        LIMITS,
    )];
    let why = "torch.multiprocessing shares each tensor a DataLoader worker sends as a file \
               descriptor; with many workers and prefetching a soft limit of 1024 ends in \
               \"Too many open files\" or \"received 0 items of ancdata\".";
    match l.soft {
        Some(s) if s < NOFILE_MIN => vec![finding(
            "nofile.low",
            if profile == Profile::Training { Severity::Warn } else { Severity::Info },
            format!("max open files is {s}"),
            evidence,
            why,
            format!(
                "ulimit -n {NOFILE_RECOMMENDED}   # in the job's shell, up to the hard limit\n\
                 echo '* - nofile 1048576' >> /etc/security/limits.d/90-memtriage.conf   # new logins\n\
                 systemd service: LimitNOFILE=1048576; Docker: docker run --ulimit nofile=1048576:1048576 …\n\
                 or in the job: torch.multiprocessing.set_sharing_strategy('file_system')"
            ),
        )],
        _ => vec![finding(
            "nofile.ok",
            Severity::Ok,
            format!(
                "max open files: {}",
                l.soft.map_or("unlimited".to_string(), |s| s.to_string())
            ),
            evidence,
            why,
            String::new(),
        )],
    }
}

fn dirty(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let v = &sys.vm;
    let total = sys.memory.as_ref().and_then(|m| m.total);
    let threshold = |bytes: Option<u64>, ratio: Option<u64>| match (bytes, ratio, total) {
        (Some(b), _, _) if b > 0 => Some(b),
        (_, Some(r), Some(t)) => Some(t / 100 * r),
        _ => None,
    };
    let (Some(limit), Some(background)) = (
        threshold(v.dirty_bytes, v.dirty_ratio),
        threshold(v.dirty_background_bytes, v.dirty_background_ratio),
    ) else {
        return vec![unreadable(
            sys,
            "dirty",
            "dirty page thresholds",
            &[
                ("vm.dirty_ratio", "/proc/sys/vm/dirty_ratio"),
                (
                    "vm.dirty_background_ratio",
                    "/proc/sys/vm/dirty_background_ratio",
                ),
                ("memory.total", MEMINFO),
            ],
        )];
    };
    let evidence = vec![
        ev(
            "vm.dirty_ratio",
            opt_num(v.dirty_ratio),
            &vm_path("dirty_ratio"),
        ),
        ev(
            "vm.dirty_bytes",
            opt_num(v.dirty_bytes),
            &vm_path("dirty_bytes"),
        ),
        ev(
            "vm.dirty_background_ratio",
            opt_num(v.dirty_background_ratio),
            &vm_path("dirty_background_ratio"),
        ),
        ev(
            "vm.dirty_background_bytes",
            opt_num(v.dirty_background_bytes),
            &vm_path("dirty_background_bytes"),
        ),
        ev(
            "writers block at about",
            iec(limit),
            "dirty threshold of MemTotal",
        ),
        ev(
            "background writeback starts at about",
            iec(background),
            "dirty threshold of MemTotal",
        ),
    ];
    let why = "A checkpoint save is written to page cache first; with a high threshold tens of \
               GiB pile up dirty, then writers (the training loop, the next save) block while \
               they are flushed at disk speed.";
    if limit > 16 * GIB || background > 4 * GIB {
        return vec![finding(
            "dirty.thresholds-high",
            Severity::Info,
            format!(
                "up to {} may be dirty before writers block; writeback starts at {}",
                iec(limit),
                iec(background)
            ),
            evidence,
            why,
            sysctl_fix(&[
                ("vm.dirty_background_bytes", (GIB).to_string()),
                ("vm.dirty_bytes", (4 * GIB).to_string()),
            ]),
        )];
    }
    vec![finding(
        "dirty.ok",
        Severity::Ok,
        format!(
            "dirty page thresholds: writeback at {}, block at {}",
            iec(background),
            iec(limit)
        ),
        evidence,
        why,
        String::new(),
    )]
}

fn numa(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let evidence = vec![
        ev(
            "NUMA nodes",
            opt_num(sys.numa_nodes),
            "/sys/devices/system/node/",
        ),
        ev(
            "vm.zone_reclaim_mode",
            opt_num(sys.vm.zone_reclaim_mode),
            &vm_path("zone_reclaim_mode"),
        ),
        ev(
            "kernel.numa_balancing",
            opt_num(sys.numa_balancing),
            "/proc/sys/kernel/numa_balancing",
        ),
    ];
    let why = "On a machine with several NUMA nodes, reclaiming or migrating pages to keep memory \
               local costs page faults and stalls that a GPU-bound job does not need.";
    let nodes = sys.numa_nodes.unwrap_or(0);
    let mut out = Vec::new();
    if nodes > 1 {
        if let Some(mode) = sys.vm.zone_reclaim_mode.filter(|m| *m != 0) {
            out.push(finding(
                "numa.zone-reclaim",
                Severity::Warn,
                format!("vm.zone_reclaim_mode is {mode} on {nodes} NUMA nodes"),
                evidence.clone(),
                "zone_reclaim_mode reclaims page cache (model files, dataset) on the local node \
                 rather than allocate on another node with free memory: reads go back to disk.",
                sysctl_fix(&[("vm.zone_reclaim_mode", "0".into())]),
            ));
        }
        if sys.numa_balancing == Some(1) && profile != Profile::Shared {
            out.push(finding(
                "numa.balancing",
                Severity::Info,
                format!("automatic NUMA balancing is on ({nodes} nodes)"),
                evidence.clone(),
                "NUMA balancing unmaps pages periodically to see who touches them; jobs already \
                 pinned to a node (numactl, torchrun with CPU affinity) pay the faults for nothing.",
                sysctl_fix(&[("kernel.numa_balancing", "0".into())]),
            ));
        }
    }
    if out.is_empty() {
        let title = match sys.numa_nodes {
            Some(0 | 1) => {
                "single NUMA node: zone reclaim and NUMA balancing do not apply".to_string()
            }
            Some(n) => format!("{n} NUMA nodes, zone reclaim off"),
            None => "NUMA layout unreadable; zone reclaim and balancing not judged".to_string(),
        };
        out.push(finding(
            "numa.ok",
            if sys.numa_nodes.is_none() {
                Severity::Info
            } else {
                Severity::Ok
            },
            title,
            evidence,
            why,
            String::new(),
        ));
    }
    out
}

fn panic_on_oom(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let Some(v) = sys.vm.panic_on_oom else {
        return vec![unreadable(
            sys,
            "panic-on-oom",
            "vm.panic_on_oom",
            &[("vm.panic_on_oom", "/proc/sys/vm/panic_on_oom")],
        )];
    };
    let evidence = vec![ev(
        "vm.panic_on_oom",
        v.to_string(),
        &vm_path("panic_on_oom"),
    )];
    let why = "With panic_on_oom the kernel panics (and reboots) instead of killing one process: \
               one job's out-of-memory takes down every job on the machine.";
    if v == 0 {
        return vec![finding(
            "panic-on-oom.ok",
            Severity::Ok,
            "vm.panic_on_oom is 0: an OOM kills a process, not the machine".into(),
            evidence,
            why,
            String::new(),
        )];
    }
    vec![finding(
        "panic-on-oom.enabled",
        Severity::Warn,
        format!("vm.panic_on_oom is {v}: running out of memory panics the kernel"),
        evidence,
        why,
        sysctl_fix(&[("vm.panic_on_oom", "0".into())]),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_fix_sets_now_and_persists() {
        assert_eq!(
            sysctl_fix(&[("vm.overcommit_memory", "1".into())]),
            "sysctl -w vm.overcommit_memory=1\necho 'vm.overcommit_memory = 1' >> /etc/sysctl.d/90-memtriage.conf"
        );
    }

    #[test]
    fn empty_snapshot_yields_findings_without_errors() {
        let f = audit(&SystemSnapshot::empty(), Profile::Training);
        assert!(f.iter().all(|f| f.severity <= Severity::Info), "{f:#?}");
        assert!(f.iter().any(|f| f.id == "memory.unreadable"));
    }

    #[test]
    fn shm_recommendation_is_a_quarter_of_ram_within_bounds() {
        assert_eq!(shm_recommended(Some(24 * GIB)), 6 * GIB);
        assert_eq!(shm_recommended(Some(2 * GIB)), GIB);
        assert_eq!(shm_recommended(Some(1024 * GIB)), 16 * GIB);
        assert_eq!(shm_recommended(None), 16 * GIB);
    }
}
