//! OOM kills since boot, and whether an OOM panics the machine.

use crate::diagnose::oom;
use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::system::{OomConstraint, SystemSnapshot};

use super::{ev, finding, opt_num, sysctl_fix, unreadable, vm_path, Profile};

/// Kills at most this long before now make `oom.recent-kills` an error.
pub const OOM_RECENT_SECONDS: f64 = 3600.0;

use crate::model::system::VMSTAT;
const KMSG: &str = "/dev/kmsg";

pub(super) fn oom(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let why = "An OOM kill ends a job with `Killed` / exit 137 and no Python traceback; the \
               kernel log is the only place that says how big it was and which limit it hit.";
    let count_ev =
        Evidence::count_or_unreadable("OOM kills since boot", sys.oom_kill_count, VMSTAT);
    // Kills under `memtriage run --limit` were asked for: they are the user's test,
    // not the machine's problem, and are taken out of the count.
    let (own, kills): (Vec<_>, Vec<_>) = sys
        .oom_kills
        .iter()
        .flatten()
        .cloned()
        .partition(|k| k.in_run_limit_cgroup());
    let own_ev = (!own.is_empty()).then(|| {
        ev(
            "OOM kills under `run`'s memory limits (not counted)",
            own.len().to_string(),
            KMSG,
        )
    });
    let log = sys.oom_kills.as_ref().map(|_| &kills);
    let count = sys
        .oom_kill_count
        .map(|n| n.saturating_sub(own.len() as u64));
    let with_own = |mut evidence: Vec<Evidence>| {
        evidence.extend(own_ev.clone());
        evidence
    };
    match (log, count) {
        (Some(kills), _) if !kills.is_empty() => {
            let latest_age = kills
                .iter()
                .filter_map(|k| oom::age(k.timestamp?, sys.uptime_seconds?))
                .reduce(f64::min);
            let recent = latest_age.is_some_and(|a| a <= OOM_RECENT_SECONDS);
            let mut evidence = vec![
                count_ev,
                Evidence::count("OOM kills in the kernel log", kills.len() as u64, KMSG),
            ];
            let cgroup_kills = kills
                .iter()
                .filter(|k| k.constraint == OomConstraint::Cgroup)
                .count();
            for k in kills.iter().rev().take(5) {
                evidence.push(ev(
                    &format!("killed {}", oom::pid_label(k)),
                    oom::summary(k, sys.uptime_seconds),
                    KMSG,
                ));
            }
            let fix = oom::fix(if cgroup_kills > 0 {
                oom::Limit::Cgroup
            } else {
                oom::Limit::Machine
            });
            vec![finding(
                ids::OOM_RECENT_KILLS,
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
                    latest_age.map_or(String::new(), |a| format!(", the last {} ago", oom::ago(a)))
                ),
                with_own(evidence),
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
                ids::OOM_KILLS_SINCE_BOOT,
                Severity::Warn,
                format!("{n} OOM kill{} since boot", if n == 1 { "" } else { "s" }),
                with_own(vec![count_ev, ev("kernel log", log_state, KMSG)]),
                why,
                "See who was killed: `sudo memtriage doctor`, or `sudo dmesg -T | grep -iE 'killed process|oom-kill'` \
                 or `journalctl -k | grep -i 'killed process'`."
                    .into(),
            )]
        }
        (None, None) => vec![unreadable(
            sys,
            ids::OOM_UNREADABLE,
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
                ids::OOM_OK,
                Severity::Ok,
                match own.len() {
                    0 => format!(
                        "no OOM kills since boot ({} per /proc/vmstat)",
                        opt_num(count)
                    ),
                    n => format!(
                        "no OOM kills since boot outside `run`'s memory limits ({n} inside them)"
                    ),
                },
                with_own(vec![count_ev, ev("kernel log", log_state, KMSG)]),
                why,
                String::new(),
            )]
        }
    }
}

pub(super) fn panic_on_oom(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let Some(v) = sys.vm.panic_on_oom else {
        return vec![unreadable(
            sys,
            ids::PANIC_ON_OOM_UNREADABLE,
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
            ids::PANIC_ON_OOM_OK,
            Severity::Ok,
            "vm.panic_on_oom is 0: an OOM kills a process, not the machine".into(),
            evidence,
            why,
            String::new(),
        )];
    }
    vec![finding(
        ids::PANIC_ON_OOM_ENABLED,
        Severity::Warn,
        format!("vm.panic_on_oom is {v}: running out of memory panics the kernel"),
        evidence,
        why,
        sysctl_fix(&[("vm.panic_on_oom", "0".into())]),
    )]
}
