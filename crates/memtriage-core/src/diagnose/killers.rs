//! Each OOM killer's own arithmetic: how much more a job may grow before it acts (its
//! threshold on what it watches, from the machine's figures now), what it then does
//! and to whom; after a job was signalled, which killer stood at its threshold then,
//! and the fix in that killer's terms. Pure: the probes read, this judges.

use crate::model::finding::{Assessment, CauseKind, Certainty, Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::killers::{KillerKind, KillerReach, LoggedKill, OomKiller, Trigger};
use crate::model::run::{signal_name, RunReport, SignalSent};
use crate::model::system::MemInfo;
use crate::model::units::iec;

/// Bytes a job may still add before `killer` acts, as the machine stands (`mem`) and
/// with `cgroup_headroom` left under a cgroup's limit. `None` where the killer does not
/// act on size (systemd-oomd acts on pressure), is not running, or a figure it needs
/// could not be read.
pub fn room(killer: &OomKiller, mem: &MemInfo, cgroup_headroom: Option<u64>) -> Option<u64> {
    if !killer.running {
        return None;
    }
    match killer.trigger.as_ref()? {
        Trigger::AvailableFloor {
            term_bytes,
            swap_term_percent,
            ..
        } => {
            let memory = mem.available?.saturating_sub(*term_bytes);
            // With swap, both must be low: the kernel fills swap first.
            let swap = match swap_term_percent {
                Some(p) => {
                    let floor = (mem.swap_total? as f64 * p / 100.0) as u64;
                    mem.swap_free?.saturating_sub(floor)
                }
                None => 0,
            };
            Some(memory + swap)
        }
        Trigger::NodeAvailable { bytes } => {
            let node_available = mem.free? + mem.inactive_file?;
            Some(node_available.saturating_sub(*bytes))
        }
        Trigger::UsedShare { share, mem_total } => {
            let allowed_free = (*mem_total as f64 * (1.0 - share)) as u64;
            Some(mem.available?.saturating_sub(allowed_free))
        }
        Trigger::Pressure { .. } => None,
        Trigger::Limit { bytes: Some(_), .. } => cgroup_headroom,
        Trigger::Limit { bytes: None, .. } => Some(mem.available? + mem.swap_free.unwrap_or(0)),
    }
}

/// Every killer's reach as the machine stands (`mem`, and `cgroup_headroom` under
/// the job's cgroup limit), the first to act first; those that do not act on size,
/// or are not running, last.
pub fn reaches(
    killers: Vec<OomKiller>,
    mem: &MemInfo,
    cgroup_headroom: Option<u64>,
) -> Vec<KillerReach> {
    let mut reach: Vec<KillerReach> = killers
        .into_iter()
        .map(|k| KillerReach {
            room: room(&k, mem, cgroup_headroom),
            threshold: threshold(&k),
            killer: k,
        })
        .collect();
    reach.sort_by_key(|r| (r.room.is_none(), r.room));
    reach
}

/// What it watches crossing what: `MemAvailable falls under 72% of 24.0 GiB (17.3
/// GiB)`.
pub fn threshold(killer: &OomKiller) -> String {
    let Some(trigger) = killer.trigger.as_ref() else {
        return "its threshold (its settings could not be read)".into();
    };
    match trigger {
        Trigger::AvailableFloor {
            term_bytes,
            swap_term_percent,
            mem_total,
            ..
        } => {
            let share = *term_bytes as f64 * 100.0 / (*mem_total).max(1) as f64;
            let swap = match swap_term_percent {
                Some(p) => format!(" and free swap under {p:.0}%"),
                None => String::new(),
            };
            format!(
                "MemAvailable falls under {} ({share:.0}% of {}){swap}",
                iec(*term_bytes),
                iec(*mem_total)
            )
        }
        Trigger::NodeAvailable { bytes } => format!(
            "the node's memory.available (free memory and inactive page cache) falls under {}",
            iec(*bytes)
        ),
        Trigger::UsedShare { share, mem_total } => format!(
            "memory in use reaches {:.0}% of {}",
            share * 100.0,
            iec(*mem_total)
        ),
        Trigger::Pressure {
            percent,
            seconds,
            swap_used_percent,
            ..
        } => format!(
            "a watched cgroup's memory pressure stays over {percent:.0}% for {seconds:.0} s, or swap use passes {swap_used_percent:.0}%"
        ),
        Trigger::Limit {
            bytes: Some(b),
            cgroup,
            ..
        } => format!(
            "the {} limit of cgroup {} is reached",
            iec(*b),
            cgroup.as_deref().unwrap_or("?")
        ),
        Trigger::Limit { bytes: None, .. } => "the machine's memory and swap run out".into(),
    }
}

/// What it does when it acts, to whom it then picks: `send SIGTERM to`, `evict`.
pub fn action_phrase(killer: &OomKiller) -> &'static str {
    match killer.kind {
        KillerKind::Earlyoom | KillerKind::Nohang => "send SIGTERM to",
        KillerKind::Kubelet => "evict the pod of",
        KillerKind::SystemdOomd | KillerKind::Ray | KillerKind::Kernel | KillerKind::Slurm => {
            "kill"
        }
    }
}

/// Whether a process ended by `signal` is what `killer` sends.
fn sends(killer: &OomKiller, signal: i32) -> bool {
    match killer.kind {
        // SIGTERM first, SIGKILL below the second floor or when the victim lingers.
        KillerKind::Earlyoom | KillerKind::Nohang | KillerKind::Kubelet => {
            signal == libc::SIGTERM || signal == libc::SIGKILL
        }
        _ => signal == libc::SIGKILL,
    }
}

/// How the machine stood at the job's lowest point during the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LowPoint {
    /// Lowest `MemAvailable` sampled, and when (seconds since the job started).
    pub available: u64,
    pub at_seconds: f64,
    /// `MemFree + Inactive(file)` then, where read (the kubelet's measure).
    pub node_available: Option<u64>,
    /// Bytes the job's tree grew per second then: how far past the sample the
    /// machine could have gone before the signal.
    pub bytes_per_second: f64,
    /// Seconds between samples.
    pub interval: f64,
}

impl LowPoint {
    /// How much lower memory may have gone after the sample, before the signal.
    fn slack(&self) -> u64 {
        const FLOOR: u64 = 64 << 20;
        ((self.bytes_per_second.max(0.0) * self.interval * 2.0) as u64).max(FLOOR)
    }
}

/// The killer that stood at its threshold when a process was ended by `signal`,
/// among those running, with the figures that show it; the one with the highest
/// floor (the first to act) when several did.
pub fn at_threshold<'k>(
    killers: &'k [OomKiller],
    low: &LowPoint,
    signal: i32,
) -> Option<(&'k OomKiller, String)> {
    killers
        .iter()
        .filter(|k| k.running && sends(k, signal))
        .filter_map(|k| {
            let (floor, measured, _) = watched(k, low)?;
            (measured <= floor.saturating_add(low.slack())).then(|| (k, floor, standing(k, low)))
        })
        .max_by_key(|(_, floor, _)| *floor)
        .map(|(k, _, line)| (k, line.unwrap_or_default()))
}

/// The killer's floor, the figure it compares with it at the low point, and its name.
fn watched(k: &OomKiller, low: &LowPoint) -> Option<(u64, u64, &'static str)> {
    Some(match k.trigger.as_ref()? {
        Trigger::AvailableFloor { term_bytes, .. } => (*term_bytes, low.available, "MemAvailable"),
        Trigger::NodeAvailable { bytes } => (*bytes, low.node_available?, "memory.available"),
        Trigger::UsedShare { share, mem_total } => (
            (*mem_total as f64 * (1.0 - share)) as u64,
            low.available,
            "MemAvailable",
        ),
        _ => return None,
    })
}

/// `MemAvailable 17.1 GiB at 25.0 s; earlyoom acts under 17.3 GiB`.
pub fn standing(k: &OomKiller, low: &LowPoint) -> Option<String> {
    standing_when(k, low, &format!("at {:.1} s", low.at_seconds))
}

/// How the machine stood against `k`'s floor, `when` saying when it was read (`at 25.0
/// s`, `2 s before the kill`).
pub fn standing_when(k: &OomKiller, low: &LowPoint, when: &str) -> Option<String> {
    let (floor, measured, what) = watched(k, low)?;
    Some(format!(
        "{what} {} {when}; {} acts under {}",
        iec(measured),
        k.kind.name(),
        iec(floor)
    ))
}

/// The killer's own log line as evidence.
pub fn own_words(killer: &OomKiller, words: &LoggedKill) -> Evidence {
    Evidence::text(
        format!("{}'s own words", killer.kind.name()),
        words.line.clone(),
        words.source.clone(),
    )
}

/// The finding for a process of the job ended by `signal` while `killer` stood at its
/// threshold: `Confirmed` where `evidence` holds what confirms it (the killer's own
/// line, the kernel's record of the sender), `Likely` without.
pub fn killed_by(
    killer: &OomKiller,
    at: Option<Evidence>,
    signal: i32,
    subject: &str,
    confirmed: bool,
    mut evidence: Vec<Evidence>,
) -> Finding {
    evidence.push(Evidence::text(
        format!("{} settings", killer.kind.name()),
        format!("{} ({})", killer.settings, threshold(killer)),
        killer.settings_from.clone(),
    ));
    evidence.extend(at);
    let certainty = match confirmed {
        true => Certainty::Confirmed,
        false => Certainty::Likely,
    };
    Finding {
        id: ids::RUN_USERSPACE_OOM_KILL.into(),
        severity: Severity::Error,
        title: format!(
            "ended by {} from {}: memory ran low before the kernel's OOM killer would act ({subject})",
            signal_name(signal),
            killer.label()
        ),
        evidence,
        why: why(killer),
        fix: fix(killer),
        assessment: Some(Assessment {
            certainty,
            cause: CauseKind::Capacity,
            confirm: match certainty {
                Certainty::Confirmed => String::new(),
                _ => confirm(killer),
            },
        }),
    }
}

fn why(killer: &OomKiller) -> String {
    let rule = killer.victim.describe();
    match killer.kind {
        KillerKind::Earlyoom | KillerKind::Nohang => format!(
            "{} acts before the kernel does: when {}, it sends SIGTERM to {rule}, SIGKILL \
             if memory keeps falling. The job gets no Python traceback, only the signal.",
            killer.kind.name(),
            threshold(killer)
        ),
        KillerKind::Kubelet => format!(
            "The kubelet evicts pods when {}; it counts active page cache as used, so a \
             job that reads much data is evicted with memory to spare.",
            threshold(killer)
        ),
        KillerKind::Ray => format!(
            "Ray's memory monitor kills {rule} when {}, polling every {} ms.",
            threshold(killer),
            killer.poll_seconds.map_or(250.0, |s| s * 1000.0)
        ),
        KillerKind::SystemdOomd => format!("systemd-oomd kills {rule} when {}.", threshold(killer)),
        KillerKind::Kernel | KillerKind::Slurm => {
            format!("The kernel kills {rule} when {}.", threshold(killer))
        }
    }
}

fn fix(killer: &OomKiller) -> String {
    let smaller = "Make the job need less (a smaller batch, fewer DataLoader workers, \
                   memory-mapped datasets instead of copies)";
    match killer.kind {
        KillerKind::Earlyoom => format!(
            "{smaller}, or let earlyoom wait longer on this machine: a lower floor in \
             EARLYOOM_ARGS (/etc/default/earlyoom, e.g. \"-m 3\"; then `systemctl restart \
             earlyoom`). To keep the job out of its choice: `--avoid '^(python|torchrun)$'`, \
             or start it with a lower score: `memtriage run --oom-score-adj -500 -- …` (root)."
        ),
        KillerKind::Nohang => {
            format!("{smaller}, or lower soft_threshold_min_mem in nohang's config and restart it.")
        }
        KillerKind::Kubelet => format!(
            "{smaller}; give the pod requests equal to its limits (Guaranteed QoS, evicted \
             last), or lower the kubelet's evictionHard memory.available on this node."
        ),
        KillerKind::Ray => format!(
            "{smaller}; schedule fewer tasks at once (ask for `memory=` in @ray.remote), \
             or raise RAY_memory_usage_threshold (or RAY_memory_monitor_refresh_ms=0 to turn \
             the monitor off) where the cluster is started."
        ),
        KillerKind::SystemdOomd => format!(
            "{smaller}; raise ManagedOOMMemoryPressureLimit= on the slice it runs in, or \
             run it in a unit with ManagedOOMPreference=avoid."
        ),
        KillerKind::Kernel | KillerKind::Slurm => format!("{smaller}, or raise the limit."),
    }
}

fn confirm(killer: &OomKiller) -> String {
    match killer.kind {
        KillerKind::Earlyoom => {
            "`journalctl -u earlyoom` (or earlyoom's own output) at that time shows \
             `sending SIGTERM to process PID`."
                .into()
        }
        KillerKind::Nohang => "`journalctl -u nohang` at that time.".into(),
        KillerKind::Kubelet => "`kubectl describe pod` shows `Evicted` and \
                                `The node was low on resource: memory`."
            .into(),
        KillerKind::Ray => "the driver's `ray.exceptions.OutOfMemoryError`, or \
                            `ray logs raylet.out`."
            .into(),
        KillerKind::SystemdOomd => "`journalctl -u systemd-oomd` at that time.".into(),
        KillerKind::Kernel | KillerKind::Slurm => "`dmesg` at that time.".into(),
    }
}

/// Who sent `signal` to `pid`, where the kernel's tracepoint said (`--trace-signals`):
/// the last such signal.
pub fn sender(r: &RunReport, pid: i32, signal: i32) -> Option<&SignalSent> {
    r.signals_sent
        .iter()
        .rev()
        .find(|s| s.target_pid == pid && s.signal == signal)
}

pub fn sender_evidence(s: &SignalSent) -> Evidence {
    let who = match s.by_kernel {
        true => format!(
            "the kernel (while {} pid {} ran)",
            s.sender_comm, s.sender_pid
        ),
        false => format!("{} (pid {})", s.sender_comm, s.sender_pid),
    };
    Evidence::text("sent by", who, "the kernel's signal_generate tracepoint")
}

/// A SIGTERM or SIGKILL that a userspace OOM killer sent: its own log names the
/// process, or the kernel names the killer as the sender (confirmed), or it stood at
/// its threshold when the process ended (likely).
pub fn userspace_kill(
    r: &RunReport,
    logged: &[LoggedKill],
    pid: i32,
    signal: i32,
    sent_by: Option<&SignalSent>,
    subject: &str,
    mut evidence: Vec<Evidence>,
) -> Option<Finding> {
    if signal != libc::SIGTERM && signal != libc::SIGKILL {
        return None;
    }
    let low = r.lowest_available.map(|l| LowPoint {
        available: l.bytes,
        at_seconds: l.at_seconds,
        node_available: l.node_available,
        bytes_per_second: r
            .growth
            .as_ref()
            .and_then(|g| g.episode.map(|e| e.bytes_per_second))
            .unwrap_or(0.0),
        interval: r.sampling.interval_ms as f64 / 1000.0,
    });
    // earlyoom and nohang name the process; systemd-oomd the cgroup it killed whole,
    // the job's own or one above it.
    let job_cgroup = r.enclosing_cgroup.as_ref().map(|c| c.dir.as_str());
    let under = |killed: &str| {
        job_cgroup.is_some_and(|dir| dir.ends_with(killed) || dir.contains(&format!("{killed}/")))
    };
    let words = logged.iter().find(|l| l.pid == Some(pid)).or_else(|| {
        logged
            .iter()
            .find(|l| l.pid.is_none() && l.cgroup.as_deref().is_some_and(under))
    });
    let by_sender = sent_by.and_then(|s| {
        r.killers
            .iter()
            .find(|k| k.running && k.pid == Some(s.sender_pid))
    });
    let (killer, at) = match (words, by_sender) {
        (Some(w), _) => {
            let k = r.killers.iter().find(|k| k.kind == w.kind)?;
            evidence.push(own_words(k, w));
            (k, low.as_ref().and_then(|l| standing(k, l)))
        }
        // The sender's evidence is already in `evidence`: the kernel's word confirms.
        (None, Some(k)) => (k, low.as_ref().and_then(|l| standing(k, l))),
        (None, None) => {
            let (k, at) = at_threshold(&r.killers, low.as_ref()?, signal)?;
            (k, Some(at))
        }
    };
    let at = at.map(|at| {
        Evidence::text(
            "the machine at its lowest during the run",
            at,
            "/proc/meminfo, sampled",
        )
    });
    let confirmed = words.is_some() || by_sender.is_some();
    let others: Vec<String> = logged
        .iter()
        .filter(|l| l.kind == killer.kind && l.pid != Some(pid))
        .filter_map(|l| Some(format!("{} (pid {})", l.comm.as_deref()?, l.pid?)))
        .collect();
    if !others.is_empty() {
        evidence.push(Evidence::text(
            format!("also signalled by {}", killer.kind.name()),
            others.join(", "),
            words.map_or("its log", |w| w.source.as_str()),
        ));
    }
    Some(killed_by(killer, at, signal, subject, confirmed, evidence))
}

/// earlyoom (pid 812, `-m 72`) sending SIGTERM at `term` bytes of a 24 GiB machine's
/// MemAvailable, for the tests of every layer that judges killers.
#[cfg(test)]
pub(crate) fn earlyoom_for_tests(term: u64) -> OomKiller {
    OomKiller {
        kind: KillerKind::Earlyoom,
        pid: Some(812),
        running: true,
        settings_from: "/proc/812/cmdline".into(),
        settings: "-m 72".into(),
        trigger: Some(Trigger::AvailableFloor {
            term_bytes: term,
            kill_bytes: term / 2,
            swap_term_percent: None,
            swap_kill_percent: None,
            mem_total: 24 << 30,
        }),
        victim: crate::model::killers::VictimRule::HighestOomScore {
            prefer: None,
            avoid: None,
            by_rss: false,
        },
        poll_seconds: Some(1.0),
    }
}

/// A 24 GiB machine without swap with `available` of MemAvailable, half of it free.
#[cfg(test)]
pub(crate) fn meminfo_for_tests(available: u64) -> MemInfo {
    const GIB: u64 = 1 << 30;
    MemInfo {
        total: Some(24 * GIB),
        available: Some(available),
        free: Some(available / 2),
        inactive_file: Some(GIB),
        swap_total: Some(0),
        swap_free: Some(0),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn earlyoom(term: u64) -> OomKiller {
        earlyoom_for_tests(term)
    }

    const GIB: u64 = 1 << 30;

    fn mem(available: u64) -> MemInfo {
        meminfo_for_tests(available)
    }

    #[test]
    fn earlyooms_room_is_memavailable_above_its_floor_and_swap_must_drain_first() {
        let k = earlyoom(17 * GIB);
        assert_eq!(room(&k, &mem(21 * GIB), None), Some(4 * GIB));
        let mut swapped = k.clone();
        if let Some(Trigger::AvailableFloor {
            swap_term_percent, ..
        }) = swapped.trigger.as_mut()
        {
            *swap_term_percent = Some(10.0);
        }
        let mut m = mem(21 * GIB);
        m.swap_total = Some(10 * GIB);
        m.swap_free = Some(10 * GIB);
        assert_eq!(room(&swapped, &m, None), Some(4 * GIB + 9 * GIB));
        let idle = OomKiller {
            running: false,
            ..k
        };
        assert_eq!(room(&idle, &mem(21 * GIB), None), None);
    }

    #[test]
    fn the_kubelet_counts_active_page_cache_as_used() {
        let k = OomKiller {
            kind: KillerKind::Kubelet,
            trigger: Some(Trigger::NodeAvailable { bytes: 100 << 20 }),
            ..earlyoom(0)
        };
        // free 10 GiB + inactive 1 GiB, not MemAvailable's 20 GiB.
        assert_eq!(room(&k, &mem(20 * GIB), None), Some(11 * GIB - (100 << 20)));
    }

    #[test]
    fn ray_acts_at_its_share_of_the_nodes_memory_in_use() {
        let k = OomKiller {
            kind: KillerKind::Ray,
            trigger: Some(Trigger::UsedShare {
                share: 0.75,
                mem_total: 24 * GIB,
            }),
            ..earlyoom(0)
        };
        assert_eq!(room(&k, &mem(20 * GIB), None), Some(14 * GIB));
    }

    #[test]
    fn a_sigterm_at_earlyooms_floor_is_earlyooms_and_far_above_it_is_nobodys() {
        let killers = [earlyoom(17 * GIB)];
        let low = LowPoint {
            available: 17 * GIB + (100 << 20),
            at_seconds: 25.0,
            node_available: None,
            bytes_per_second: GIB as f64,
            interval: 0.5,
        };
        let (k, at) = at_threshold(&killers, &low, libc::SIGTERM).unwrap();
        assert_eq!(k.kind, KillerKind::Earlyoom);
        assert!(at.starts_with("MemAvailable 17.1 GiB at 25.0 s"), "{at}");
        let far = LowPoint {
            available: 20 * GIB,
            ..low
        };
        assert!(at_threshold(&killers, &far, libc::SIGTERM).is_none());
        assert!(at_threshold(&killers, &low, libc::SIGSEGV).is_none());
        let f = killed_by(
            &killers[0],
            Some(Evidence::text("at", at, "test")),
            libc::SIGTERM,
            "the job, pid 7",
            false,
            vec![],
        );
        assert_eq!(f.id, ids::RUN_USERSPACE_OOM_KILL);
        assert!(f.title.contains("earlyoom (pid 812, -m 72)"), "{}", f.title);
        assert_eq!(f.assessment.unwrap().certainty, Certainty::Likely);
    }
}
