//! NVIDIA GPUs: persistence mode, ECC errors, retired and remapped memory (a pending
//! remap needs a reset), Xids in the kernel log since boot, GPU memory held for
//! processes that are gone or stopped, and the MIG layout.

use std::collections::BTreeMap;

use crate::diagnose::xid;
use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::gpu::{GpuDevice, GpuReport, KernelXid, PidJoin};
use crate::model::ids;
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{ev, finding, Profile};

const NVML: &str = "NVML";

pub(super) fn gpu(sys: &SystemSnapshot, _profile: Profile) -> Vec<Finding> {
    let Some(report) = &sys.gpu else {
        return Vec::new();
    };
    if !report.available {
        return vec![absent(report)];
    }
    let mut out = Vec::new();
    out.extend(persistence(report));
    out.extend(ecc(report));
    out.extend(remaps(report));
    out.extend(orphans(report));
    out.extend(mig(report));
    if let Some(PidJoin::Impossible { reason }) = &report.pids {
        out.push(finding(
            ids::GPU_PIDS_UNJOINABLE,
            Severity::Info,
            "GPU memory cannot be attributed to processes from inside this container".into(),
            vec![ev("NVML pids", "the host's", "/proc/self/ns/pid")],
            "NVML reports the host's process ids; a container's /proc numbers its processes \
             differently, so matching them would name the wrong process.",
            reason.clone(),
        ));
    }
    if out.iter().all(|f| f.severity <= Severity::Info) {
        out.push(ok(report));
    }
    out.extend(xids(sys, report));
    out
}

fn absent(report: &GpuReport) -> Finding {
    let reason = report.reason.clone().unwrap_or_default();
    let refused = !reason.starts_with("no NVIDIA GPU found");
    finding(
        if refused {
            ids::GPU_NVML_FAILED
        } else {
            ids::GPU_ABSENT
        },
        if refused {
            Severity::Warn
        } else {
            Severity::Info
        },
        if refused {
            format!("NVIDIA GPUs could not be read: {reason}")
        } else {
            reason.clone()
        },
        vec![ev("NVML", reason, "libnvidia-ml.so.1")],
        "memtriage reads GPU memory, ECC and Xid state through NVML, the NVIDIA driver's \
         management library; without it, GPU checks are skipped.",
        if refused {
            "Fix the cause above, then rerun memtriage doctor.".into()
        } else {
            String::new()
        },
    )
}

fn ok(report: &GpuReport) -> Finding {
    let evidence = report
        .devices
        .iter()
        .map(|d| {
            let memory = d.memory.map_or("memory unreadable".to_string(), |m| {
                format!("{} of {} used", iec(m.used), iec(m.total))
            });
            ev(&d.label(), memory, NVML)
        })
        .chain(report.driver_version.iter().map(|v| {
            let cuda = report.cuda_version.as_deref().unwrap_or("unknown");
            ev("driver", format!("{v} (CUDA {cuda})"), NVML)
        }))
        .collect();
    // Only what every device could say is claimed; the rest is named as unknown.
    let all = |f: fn(&GpuDevice) -> bool| report.devices.iter().all(f);
    let mut checked = Vec::new();
    let mut unknown = Vec::new();
    for (known, what) in [
        (all(|d| d.persistence_mode.is_some()), "persistence on"),
        (all(|d| d.ecc.is_some()), "no uncorrectable ECC errors"),
        (
            all(|d| d.remapped_rows.is_some() || d.retired_pages.is_some()),
            "no pending remaps",
        ),
    ] {
        if known {
            checked.push(what);
        } else {
            unknown.push(what.trim_start_matches("no ").trim_end_matches(" on"));
        }
    }
    let mut title = format!(
        "{}: {}",
        count(report.devices.len(), "NVIDIA GPU", "NVIDIA GPUs"),
        if checked.is_empty() {
            "memory read".to_string()
        } else {
            checked.join(", ")
        }
    );
    if !unknown.is_empty() {
        title.push_str(&format!(
            " ({} not reported by the board)",
            unknown.join(", ")
        ));
    }
    finding(
        ids::GPU_OK,
        Severity::Ok,
        title,
        evidence,
        "",
        String::new(),
    )
}

fn count(n: usize, one: &str, many: &str) -> String {
    crate::model::units::counted(n as u64, one, many)
}

fn list(devices: &[&GpuDevice]) -> String {
    devices
        .iter()
        .map(|d| d.index.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn persistence(report: &GpuReport) -> Option<Finding> {
    let off: Vec<&GpuDevice> = report
        .devices
        .iter()
        .filter(|d| d.persistence_mode == Some(false))
        .collect();
    if off.is_empty() {
        return None;
    }
    Some(finding(
        ids::GPU_PERSISTENCE_OFF,
        Severity::Warn,
        format!("persistence mode is off on GPU {}", list(&off)),
        off.iter()
            .map(|d| ev(&d.label(), "persistence mode off", NVML))
            .collect(),
        "Without persistence the driver tears the GPU down whenever no process holds it: \
         every job start waits for it to be initialised again (seconds on large boards), and \
         the error state (ECC, pending remaps) is re-read each time.",
        "Run NVIDIA's persistence daemon: systemctl enable --now nvidia-persistenced\n\
         (or, until the next reboot: nvidia-smi -pm 1)"
            .into(),
    ))
}

fn ecc(report: &GpuReport) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in &report.devices {
        let Some(e) = d.ecc else { continue };
        let volatile = e.volatile_uncorrected.unwrap_or(0);
        let aggregate = e.aggregate_uncorrected.unwrap_or(0);
        if volatile == 0 && aggregate == 0 {
            continue;
        }
        let severity = if volatile > 0 {
            Severity::Error
        } else {
            Severity::Warn
        };
        let since = if volatile > 0 {
            format!("{volatile} since the driver loaded")
        } else {
            format!("{aggregate} over the board's life, none since the driver loaded")
        };
        out.push(finding(
            ids::GPU_ECC_UNCORRECTED,
            severity,
            format!("{} has uncorrectable ECC errors: {since}", d.label()),
            vec![
                Evidence::count_or_unreadable(
                    "uncorrected ECC errors (volatile)",
                    e.volatile_uncorrected,
                    NVML,
                ),
                Evidence::count_or_unreadable(
                    "uncorrected ECC errors (aggregate)",
                    e.aggregate_uncorrected,
                    NVML,
                ),
                Evidence::count_or_unreadable(
                    "corrected ECC errors (volatile)",
                    e.volatile_corrected,
                    NVML,
                ),
            ],
            "An uncorrectable ECC error means GPU memory returned wrong data: the job that read \
             it died, and the row is remapped (or the page retired) at the next reset.",
            format!(
                "Drain the node, then reset the GPU: nvidia-smi -r -i {i}\n\
                 Check the remap state: nvidia-smi -q -i {i} -d ECC,ROW_REMAPPER,PAGE_RETIREMENT\n\
                 Run NVIDIA's diagnostic before returning it to service: dcgmi diag -r 2",
                i = d.index
            ),
        ));
    }
    out
}

fn remaps(report: &GpuReport) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in &report.devices {
        let rows = d.remapped_rows;
        let pages = d.retired_pages;
        if rows.is_some_and(|r| r.failure) {
            out.push(finding(
                ids::GPU_REMAP_FAILED,
                Severity::Error,
                format!("{}: a row remap failed; the GPU needs service", d.label()),
                vec![ev("Remapping Failure Occurred", "Yes", NVML)],
                "The GPU ran out of spare rows (or could not use them) to replace failing memory: \
                 the bad memory stays in use and errors will recur.",
                format!(
                    "Drain the node and take GPU {} out of service; run dcgmi diag -r 3 and open a \
                     return (RMA) with the vendor.",
                    d.index
                ),
            ));
        }
        let pending_rows = rows.is_some_and(|r| r.pending);
        let pending_pages = pages.and_then(|p| p.pending) == Some(true);
        if pending_rows || pending_pages {
            let mut evidence = Vec::new();
            if let Some(r) = rows {
                evidence.push(Evidence::count(
                    "rows remapped (uncorrectable)",
                    r.uncorrectable,
                    NVML,
                ));
                evidence.push(Evidence::count(
                    "rows remapped (correctable)",
                    r.correctable,
                    NVML,
                ));
                evidence.push(ev("remap pending", yes_no(r.pending), NVML));
            }
            if let Some(p) = pages {
                evidence.push(Evidence::count(
                    "pages retired (double-bit)",
                    p.double_bit,
                    NVML,
                ));
                evidence.push(Evidence::count(
                    "pages retired (single-bit)",
                    p.single_bit,
                    NVML,
                ));
                evidence.push(ev(
                    "retirement pending",
                    p.pending.map_or("unreadable", yes_no),
                    NVML,
                ));
            }
            out.push(finding(
                ids::GPU_REMAP_PENDING,
                Severity::Error,
                format!(
                    "{}: failing memory is marked for replacement, which needs a GPU reset",
                    d.label()
                ),
                evidence,
                "A remap (or page retirement) takes effect only when the GPU is reset: until then \
                 the failing memory is still in use and the uncorrectable error can recur.",
                format!(
                    "When GPU {i} is idle, drain it and reset it: nvidia-smi -r -i {i} (or reboot); \
                     then check nvidia-smi -q -i {i} -d ROW_REMAPPER shows no pending remap.",
                    i = d.index
                ),
            ));
        }
    }
    out
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "Yes"
    } else {
        "No"
    }
}

/// GPU memory held for a process that no longer exists, is a zombie or is stopped.
fn orphans(report: &GpuReport) -> Option<Finding> {
    if !report.pids.as_ref().is_some_and(PidJoin::joinable) {
        return None;
    }
    let mut evidence = Vec::new();
    // Unknown as soon as one amount is (MIG without privileges).
    let mut held = Some(0u64);
    for (d, p) in report.processes() {
        let Some(pid) = p.pid else { continue };
        let what = match p.state {
            None => "no such process",
            Some('Z') => "a zombie (exited, not reaped)",
            Some('T' | 't') => "stopped",
            Some(_) => continue,
        };
        held = held.zip(p.used).map(|(a, b)| a + b);
        let used = p.used.map_or("an unknown amount".to_string(), iec);
        evidence.push(ev(
            &format!("pid {pid} on {}", d.label()),
            format!("{used}, {what}"),
            NVML,
        ));
    }
    if evidence.is_empty() {
        return None;
    }
    Some(finding(
        ids::GPU_ORPHAN_MEMORY,
        Severity::Warn,
        match held {
            Some(b) => format!(
                "GPU memory ({}) is held for processes that are not running",
                iec(b)
            ),
            None => "GPU memory is held for processes that are not running".to_string(),
        },
        evidence,
        "A process that exited but was not reaped, or that is stopped (Ctrl-Z, a debugger), \
         keeps its CUDA context and all of its GPU memory; the next job on the GPU runs out \
         of memory without a cause of its own.",
        "See who holds the devices: fuser -v /dev/nvidia*\n\
         A stopped process: kill -CONT PID, or end it; a zombie: end its parent so it is \
         reaped. If NVML still lists memory for a pid that does not exist, reset the idle GPU: \
         nvidia-smi -r -i GPU."
            .into(),
    ))
}

fn mig(report: &GpuReport) -> Option<Finding> {
    let with_mig: Vec<&GpuDevice> = report
        .devices
        .iter()
        .filter(|d| d.mig.is_some_and(|m| m.current || m.pending))
        .collect();
    if with_mig.is_empty() {
        return None;
    }
    let pending: Vec<&GpuDevice> = with_mig
        .iter()
        .copied()
        .filter(|d| d.mig.is_some_and(|m| m.current != m.pending))
        .collect();
    let evidence = with_mig
        .iter()
        .map(|d| {
            let m = d.mig.unwrap_or(crate::model::gpu::MigMode {
                current: false,
                pending: false,
            });
            let state = match (m.current, m.pending) {
                (true, true) => "MIG enabled",
                (true, false) => "MIG enabled, disabled at the next reset",
                (false, true) => "MIG disabled, enabled at the next reset",
                (false, false) => "MIG disabled",
            };
            ev(&d.label(), state, NVML)
        })
        .collect();
    Some(finding(
        ids::GPU_MIG,
        if pending.is_empty() {
            Severity::Info
        } else {
            Severity::Warn
        },
        if pending.is_empty() {
            format!("MIG is enabled on GPU {}", list(&with_mig))
        } else {
            format!(
                "a MIG mode change on GPU {} waits for a GPU reset",
                list(&pending)
            )
        },
        evidence,
        "With MIG a GPU is split into instances with their own memory: a job sees only its \
         instance's memory, and runs out of it long before the board's total.",
        if pending.is_empty() {
            "List the instances and their memory: nvidia-smi mig -lgi; nvidia-smi -L".into()
        } else {
            format!(
                "Reset the GPU to apply it when idle: nvidia-smi -r -i {}",
                list(&pending)
            )
        },
    ))
}

/// One finding per Xid number and GPU, with the catalogue's meaning and next step.
fn xids(sys: &SystemSnapshot, report: &GpuReport) -> Vec<Finding> {
    let Some(all) = &sys.xids else {
        let reason = sys.unreadable_reason("xids").unwrap_or("not read");
        return vec![finding(
            ids::GPU_XIDS_UNREADABLE,
            Severity::Info,
            "the kernel log could not be read: Xid errors since boot not checked".into(),
            vec![ev(
                "kernel log",
                format!("unreadable: {reason}"),
                "/dev/kmsg",
            )],
            "The NVIDIA driver reports GPU faults (Xid errors) only to the kernel log.",
            "Run memtriage doctor as root (or with CAP_SYSLOG) to read /dev/kmsg.".into(),
        )];
    };
    let mut groups: BTreeMap<(u32, &str), Vec<&KernelXid>> = BTreeMap::new();
    for x in all {
        groups.entry((x.xid, x.pci.as_str())).or_default().push(x);
    }
    groups
        .into_iter()
        .map(|((number, pci), events)| xid_finding(number, pci, &events, report))
        .collect()
}

fn xid_finding(number: u32, pci: &str, events: &[&KernelXid], report: &GpuReport) -> Finding {
    let entry = xid::lookup(number);
    let device = report
        .devices
        .iter()
        .find(|d| d.pci_bus_id.as_deref().is_some_and(|id| same_pci(id, pci)));
    let on = device.map_or_else(|| format!("the GPU at {pci}"), GpuDevice::label);
    let meaning = entry.map_or("not in memtriage's Xid catalogue", |x| x.meaning.as_str());
    let mut evidence = vec![Evidence::count(
        "times logged since boot",
        events.len() as u64,
        "/dev/kmsg",
    )];
    if let Some(last) = events.last() {
        let at = last
            .timestamp
            .map(|t| format!("{t:.0} s after boot"))
            .or_else(|| last.wall_time.clone())
            .unwrap_or_else(|| "unknown time".into());
        let who = match (&last.pid, &last.name) {
            (Some(pid), Some(name)) => format!(", pid {pid} ({name})"),
            (Some(pid), None) => format!(", pid {pid}"),
            _ => String::new(),
        };
        evidence.push(ev(
            "last",
            format!("at {at}{who}: {}", last.detail),
            "/dev/kmsg",
        ));
    }
    if let Some(x) = entry {
        evidence.push(ev(
            "NVIDIA's name",
            format!("{} (likely cause: {})", x.name, x.cause_kind().as_str()),
            &x.source,
        ));
    }
    finding(
        ids::GPU_XID,
        entry.map_or(Severity::Warn, |x| x.severity),
        format!("Xid {number} on {on} since boot: {meaning}"),
        evidence,
        "Xid errors are the NVIDIA driver's reports of GPU faults: some are the application's \
         own bugs, others failing hardware that needs a reset or service.",
        entry.map_or_else(
            || format!("Look up Xid {number} in NVIDIA's Xid catalog: https://docs.nvidia.com/deploy/xid-errors/"),
            xid::Xid::fix,
        ),
    )
}

/// NVML's `00000000:3B:00.0` against the driver's `0000:3b:00`.
fn same_pci(nvml: &str, logged: &str) -> bool {
    let norm = |s: &str| {
        let s = s.to_ascii_lowercase();
        let s = s.split('.').next().unwrap_or("").to_string();
        let parts: Vec<&str> = s.split(':').collect();
        match parts.as_slice() {
            [domain, bus, dev] => {
                let domain = domain.trim_start_matches('0');
                format!("{domain}:{bus}:{dev}")
            }
            _ => s.clone(),
        }
    };
    norm(nvml) == norm(logged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_ids_match_across_nvml_and_the_kernel_log() {
        assert!(same_pci("00000000:3B:00.0", "0000:3b:00"));
        assert!(same_pci(
            "00000000:3B:00.0",
            "PCI:0000:3b:00".trim_start_matches("PCI:")
        ));
        assert!(!same_pci("00000000:3B:00.0", "0000:86:00"));
    }
}
