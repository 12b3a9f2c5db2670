//! The OOM killers of the machine: which run, how each is set, and what the setting
//! means for what the machine is for (a floor that wastes a training box's memory,
//! systemd-oomd killing whole cgroups on pressure, `memory.oom.group` ending every
//! DataLoader worker with one).

use crate::diagnose::killers::threshold;
use crate::model::finding::{Finding, Severity};
use crate::model::ids;
use crate::model::killers::{KillerKind, OomKiller, Trigger};
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{ev, finding, machine, Profile};

/// An earlyoom or nohang floor above this share of memory idles a dedicated machine.
const GENEROUS_FLOOR_PERCENT: f64 = 15.0;

pub(super) fn killers(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(killers) = &sys.oom_killers else {
        return Vec::new();
    };
    let mut out: Vec<Finding> = killers
        .iter()
        .filter(|k| !matches!(k.kind, KillerKind::Kernel | KillerKind::Slurm))
        .map(|k| userspace(k, profile))
        .collect();
    out.extend(killers.iter().filter_map(group_kill));
    if !killers
        .iter()
        .any(|k| k.running && !matches!(k.kind, KillerKind::Kernel | KillerKind::Slurm))
    {
        out.push(kernel_only(profile));
    }
    out
}

fn settings_evidence(k: &OomKiller) -> Vec<crate::model::finding::Evidence> {
    let mut evidence = vec![ev(
        "settings",
        format!("{} ({})", k.settings, threshold(k)),
        &k.settings_from,
    )];
    evidence.push(ev("picks", k.victim.describe(), &k.settings_from));
    if let Some(Trigger::Pressure { cgroups, .. }) = &k.trigger {
        if !cgroups.is_empty() {
            evidence.push(ev("watches", cgroups.join(", "), "oomctl"));
        }
    }
    if let Some(pid) = k.pid {
        evidence.push(ev("process", format!("pid {pid}"), "/proc"));
    }
    evidence
}

fn userspace(k: &OomKiller, profile: Profile) -> Finding {
    let name = k.kind.name();
    if !k.running {
        return finding(
            ids::KILLERS_USERSPACE,
            Severity::Info,
            format!("{name} is installed but not running: it acts on nothing"),
            settings_evidence(k),
            "A killer that is not running neither protects the machine nor ends jobs early.",
            format!(
                "To have it act: `systemctl enable --now {}`.",
                service(k.kind)
            ),
        );
    }
    let (severity, why, fix) = advice(k, profile);
    finding(
        ids::KILLERS_USERSPACE,
        severity,
        format!("{} acts before the kernel's OOM killer", k.label()),
        settings_evidence(k),
        &why,
        fix,
    )
}

fn service(kind: KillerKind) -> &'static str {
    match kind {
        KillerKind::SystemdOomd => "systemd-oomd",
        KillerKind::Nohang => "nohang",
        _ => "earlyoom",
    }
}

/// How much a floor of MemAvailable leaves unused, as a share of memory.
fn floor_percent(k: &OomKiller) -> Option<(f64, u64)> {
    match k.trigger.as_ref()? {
        Trigger::AvailableFloor {
            term_bytes,
            mem_total,
            ..
        } if *mem_total > 0 => Some((*term_bytes as f64 * 100.0 / *mem_total as f64, *term_bytes)),
        _ => None,
    }
}

fn advice(k: &OomKiller, profile: Profile) -> (Severity, String, String) {
    let dedicated = profile != Profile::Shared;
    match k.kind {
        KillerKind::Earlyoom | KillerKind::Nohang => {
            let (percent, bytes) = floor_percent(k).unwrap_or((0.0, 0));
            let generous = dedicated && percent > GENEROUS_FLOOR_PERCENT;
            let why = format!(
                "It sends SIGTERM to the process with the highest oom_score when MemAvailable \
                 falls under {} ({percent:.0}% of memory): a job there ends with exit 143 and \
                 no traceback, before the kernel would have acted. On {} that memory is {}.",
                iec(bytes),
                machine(profile),
                match generous {
                    true => "never used by jobs",
                    false => "its safety margin",
                }
            );
            let fix = match (k.kind, generous) {
                (KillerKind::Earlyoom, true) => "Lower its floor: EARLYOOM_ARGS=\"-m 5\" in \
                     /etc/default/earlyoom, then `systemctl restart earlyoom`; keep sshd out of \
                     its choice with --avoid '(^|/)(sshd|systemd)$'."
                    .to_string(),
                (KillerKind::Earlyoom, false) => "Keep it; `memtriage run` names it in the \
                     warning and the verdict. Offer the jobs before interactive tools: \
                     --prefer '^(python|torchrun)' in EARLYOOM_ARGS."
                    .to_string(),
                _ => "Lower soft_threshold_min_mem in nohang's config on a dedicated machine."
                    .to_string(),
            };
            let severity = match generous {
                true => Severity::Warn,
                false => Severity::Info,
            };
            (severity, why, fix)
        }
        KillerKind::SystemdOomd => (
            match profile {
                Profile::Training => Severity::Warn,
                _ => Severity::Info,
            },
            format!(
                "It kills a whole cgroup (every process of a user's session or a service, not \
                 one job) when {}. Training that reads a dataset through the page cache can \
                 stall on reclaim long enough to cross it with memory to spare.",
                threshold(k)
            ),
            "Check what it watches: `oomctl`. For a training user: `systemctl edit \
             user@.service` with ManagedOOMMemoryPressure=auto, or run jobs in a scope of their \
             own: `systemd-run --user --scope -p ManagedOOMPreference=avoid python train.py`."
                .into(),
        ),
        KillerKind::Kubelet => (
            Severity::Info,
            format!(
                "It evicts pods when {}; active page cache counts as used, so a pod that reads \
                 much data is evicted with memory to spare (kubernetes#43916).",
                threshold(k)
            ),
            "Give training pods requests equal to their limits (Guaranteed QoS, evicted last); \
             size evictionHard memory.available for the node."
                .into(),
        ),
        KillerKind::Ray => (
            Severity::Info,
            format!(
                "Ray's memory monitor kills the newest retriable task's worker when {}.",
                threshold(k)
            ),
            "Ask for `memory=` in @ray.remote so fewer tasks share a node; \
             RAY_memory_usage_threshold where the cluster is started."
                .into(),
        ),
        KillerKind::Kernel | KillerKind::Slurm => (Severity::Info, String::new(), String::new()),
    }
}

/// `memory.oom.group` on the cgroup memtriage runs in: one OOM kill ends them all.
fn group_kill(k: &OomKiller) -> Option<Finding> {
    let Some(Trigger::Limit {
        bytes,
        cgroup: Some(cgroup),
        group_kill: true,
    }) = &k.trigger
    else {
        return None;
    };
    Some(finding(
        ids::KILLERS_GROUP_KILL,
        Severity::Warn,
        format!("memory.oom.group is set on {cgroup}: one OOM kill ends every process in it"),
        vec![
            ev(
                "memory.oom.group",
                "1",
                &format!("{cgroup}/memory.oom.group"),
            ),
            ev(
                "limit",
                bytes.map_or("none".into(), iec),
                &format!("{cgroup}/memory.max"),
            ),
        ],
        "When one DataLoader worker or one rank passes the limit, the kernel kills every \
         process of the cgroup, the training process with it, instead of the one that grew. \
         Kubernetes 1.28 and later set it on every container (cgroup v2).",
        "Kubernetes 1.32+: `singleProcessOOMKill: true` in the KubeletConfiguration; else \
         `echo 0 > <cgroup>/memory.oom.group` where you own the cgroup."
            .into(),
    ))
}

fn kernel_only(profile: Profile) -> Finding {
    finding(
        ids::KILLERS_KERNEL_ONLY,
        match profile {
            Profile::Shared => Severity::Info,
            _ => Severity::Ok,
        },
        "the kernel's OOM killer is the only one running".into(),
        vec![ev(
            "userspace killers",
            "none running (earlyoom, nohang, systemd-oomd, kubelet, raylet)",
            "/proc",
        )],
        "Jobs get all the memory there is; when it runs out the kernel kills the process with \
         the highest oom_score, after the machine may have stalled in reclaim.",
        match profile {
            Profile::Shared => "On a shared machine a userspace killer keeps it responsive: \
                 `apt install earlyoom` (SIGTERM at 10% available by default)."
                .into(),
            _ => String::new(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::killers::earlyoom_for_tests;

    fn snapshot(killers: Vec<OomKiller>) -> SystemSnapshot {
        SystemSnapshot {
            oom_killers: Some(killers),
            ..SystemSnapshot::empty()
        }
    }

    #[test]
    fn a_generous_earlyoom_floor_warns_on_a_training_machine_only() {
        // -m 72 on 24 GiB: 17 GiB never used by jobs.
        let sys = snapshot(vec![earlyoom_for_tests(17 << 30)]);
        let f = &killers(&sys, Profile::Training)[0];
        assert_eq!(
            (f.id.as_str(), f.severity),
            (ids::KILLERS_USERSPACE, Severity::Warn)
        );
        assert!(f.fix.contains("-m 5"), "{}", f.fix);
        let f = &killers(&sys, Profile::Shared)[0];
        assert_eq!(f.severity, Severity::Info);
        let modest = snapshot(vec![earlyoom_for_tests(2 << 30)]);
        assert_eq!(
            killers(&modest, Profile::Training)[0].severity,
            Severity::Info
        );
    }

    #[test]
    fn no_userspace_killer_is_said_and_an_idle_one_is_named() {
        let f = killers(&snapshot(vec![]), Profile::Training);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].id.as_str(), f[0].severity),
            (ids::KILLERS_KERNEL_ONLY, Severity::Ok)
        );
        let idle = OomKiller {
            running: false,
            pid: None,
            ..earlyoom_for_tests(2 << 30)
        };
        let f = killers(&snapshot(vec![idle]), Profile::Training);
        assert!(
            f[0].title.contains("installed but not running"),
            "{}",
            f[0].title
        );
        assert!(f.iter().any(|f| f.id == ids::KILLERS_KERNEL_ONLY));
    }

    #[test]
    fn memory_oom_group_is_a_warning() {
        let kernel = OomKiller {
            kind: KillerKind::Kernel,
            pid: None,
            trigger: Some(Trigger::Limit {
                bytes: Some(8 << 30),
                cgroup: Some("/kubepods.slice/pod1/cri-containerd-abc.scope".into()),
                group_kill: true,
            }),
            ..earlyoom_for_tests(0)
        };
        let f = killers(&snapshot(vec![kernel]), Profile::Training);
        let g = f.iter().find(|f| f.id == ids::KILLERS_GROUP_KILL).unwrap();
        assert_eq!(g.severity, Severity::Warn);
        assert!(g.fix.contains("singleProcessOOMKill"), "{}", g.fix);
    }
}
