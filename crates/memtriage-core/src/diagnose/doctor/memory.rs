//! Memory available, memory pressure (PSI) and swap.

use crate::model::finding::{Evidence, Finding, Quantity, Severity};
use crate::model::ids;
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{
    ev, finding, machine, opt_num, percent, sysctl_fix, unreadable, vm_path, Profile, GIB,
};

use crate::model::system::MEMINFO;
const SWAPS: &str = "/proc/swaps";
use crate::model::system::PRESSURE as PSI;

pub(super) fn memory(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let m = sys.memory.as_ref();
    let (Some(total), Some(avail)) = (m.and_then(|m| m.total), m.and_then(|m| m.available)) else {
        return vec![unreadable(
            sys,
            ids::MEMORY_UNREADABLE,
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
        Evidence::bytes("MemTotal", total, MEMINFO),
        ev(
            "MemAvailable",
            format!("{} ({pct:.0}% of RAM)", iec(avail)),
            MEMINFO,
        )
        .with_quantity(Quantity::Bytes(avail)),
    ];
    let why = "When MemAvailable nears zero the kernel reclaims page cache (model files are \
               re-read from disk), then swaps, then OOM-kills the largest process: usually the job.";
    let fix = "Find what holds the memory: the processes ranked by PSS (memtriage inspect, or memtriage.snapshots() in Python); stop stale \
               notebooks and workers, or lower batch size / num_workers of the job.";
    let (id, severity) = if pct < 3.0 {
        (ids::MEMORY_AVAILABLE_LOW, Severity::Error)
    } else if pct < 10.0 {
        (ids::MEMORY_AVAILABLE_LOW, Severity::Warn)
    } else {
        return vec![finding(
            ids::MEMORY_OK,
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

pub(super) fn pressure(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let why = "Memory pressure is time tasks spend stalled waiting for memory (reclaim, swap-in, \
               refaults of evicted model pages): a job slows down long before it is OOM-killed.";
    let Some(p) = &sys.pressure else {
        let reason = sys.unreadable_reason("pressure").unwrap_or("not read");
        return vec![finding(
            ids::PRESSURE_UNAVAILABLE,
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
            ids::PRESSURE_OK,
            Severity::Ok,
            format!("memory pressure low (some {some60:.2}%, full {full60:.2}% over 60-300 s)"),
            evidence,
            why,
            String::new(),
        )];
    }
    vec![finding(
        ids::PRESSURE_MEMORY_STALLS,
        severity,
        format!("tasks stall on memory: some {some60:.1}%, full {full60:.1}% of the time"),
        evidence,
        why,
        "Find what holds and grows memory (the processes ranked by PSS: memtriage inspect, or memtriage.snapshots() in Python); \
         lower the job's working set, stop competing jobs, or give the job a cgroup limit with headroom."
            .into(),
    )]
}

pub(super) fn swap(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let m = sys.memory.as_ref();
    let swap_total = m
        .and_then(|m| m.swap_total)
        .or_else(|| sys.swaps.as_ref().map(|s| s.iter().map(|d| d.size).sum()));
    let Some(swap_total) = swap_total else {
        return vec![unreadable(
            sys,
            ids::SWAP_UNREADABLE,
            "swap",
            &[("memory", MEMINFO), ("swaps", SWAPS)],
        )];
    };
    let used = m
        .and_then(|m| m.swap_used())
        .or_else(|| sys.swaps.as_ref().map(|s| s.iter().map(|d| d.used).sum()));
    let swappiness = sys.vm.swappiness;
    let mut evidence = vec![
        Evidence::bytes("SwapTotal", swap_total, MEMINFO),
        Evidence::bytes_or_unreadable("swap used", used, MEMINFO),
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
            ids::SWAP_HEAVILY_USED,
            Severity::Warn,
            format!("{} of {} swap in use", iec(u), iec(swap_total)),
            evidence.clone(),
            "Swapped-out pages come back one fault at a time: a job touching them runs at disk speed.",
            "Find who is swapped: the processes ranked by swap (memtriage inspect, or memtriage.snapshots() in Python); give the machine RAM headroom, \
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
                ids::SWAP_ENABLED,
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
            ids::SWAP_DISABLED,
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
            ids::SWAPPINESS_HIGH,
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
                ids::SWAP_OK,
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
