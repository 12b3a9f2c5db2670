//! GPU memory as evidence: workers that hold a CUDA context of their own, and what
//! else held a device's memory when a job ran out of it.

use std::collections::HashMap;

use crate::diagnose::xid;
use crate::model::finding::{Assessment, Certainty, Evidence, Finding, Quantity, Severity};
use crate::model::gpu::{GpuReport, GpuTick};
use crate::model::ids;
use crate::model::run::RunGpu;
use crate::model::tree::TreeNode;
use crate::model::units::iec;

/// A child that holds memory on a GPU its parent also uses: a DataLoader worker (or
/// any subprocess) that touched CUDA and made a context of its own.
pub fn worker_contexts(nodes: &[TreeNode]) -> Vec<Finding> {
    let by_pid: HashMap<i32, &TreeNode> = nodes.iter().map(|n| (n.process.pid, n)).collect();
    let mut out = Vec::new();
    for n in nodes {
        let p = &n.process;
        let Some(mine) = &p.gpu else { continue };
        let Some(parent) = by_pid.get(&p.ppid).filter(|_| p.ppid != p.pid) else {
            continue;
        };
        let Some(theirs) = &parent.process.gpu else {
            continue;
        };
        for d in &mine.devices {
            if !theirs.devices.iter().any(|t| t.index == d.index) {
                continue;
            }
            let held = d.used.map_or("an unknown amount".to_string(), iec);
            out.push(Finding {
                assessment: None,
                id: ids::GPU_WORKER_CONTEXT.into(),
                severity: Severity::Warn,
                title: format!(
                    "pid {} ({}), a child of pid {} ({}), holds {held} on GPU {} of its own",
                    p.pid, p.comm, parent.process.pid, parent.process.comm, d.index
                ),
                evidence: vec![
                    Evidence::bytes_or_unreadable(
                        format!("GPU {} memory of pid {}", d.index, p.pid),
                        d.used,
                        "NVML",
                    ),
                    Evidence::text(
                        format!("GPU {} also used by", d.index),
                        format!("pid {} ({})", parent.process.pid, parent.process.comm),
                        "NVML",
                    ),
                ],
                why: "Every process that touches CUDA creates its own context on the GPU, \
                      several hundred MiB before any tensor: a DataLoader worker that moves data \
                      to the GPU (a .cuda() in the Dataset or collate_fn, a CUDA tensor handed \
                      to it) costs that much per worker, per epoch's new workers."
                    .into(),
                fix:
                    "Keep workers on the CPU: return CPU tensors from the Dataset and collate_fn, \
                      and move each batch in the main process (batch.to('cuda', non_blocking=True) \
                      with pin_memory=True in the DataLoader).\nWhere workers must use CUDA, start \
                      them with multiprocessing_context='spawn' and persistent_workers=True so \
                      the contexts are made once."
                        .into(),
            });
        }
    }
    out
}

/// Fills each node's GPU memory and the tree's total from NVML's report; left
/// unknown where NVML is absent or its pids cannot be joined.
pub fn attribute(report: &GpuReport, nodes: &mut [TreeNode]) -> Option<u64> {
    let mut total = Some(0u64);
    for n in nodes.iter_mut() {
        n.process.gpu = report.memory_of(n.process.pid);
        total = match (&n.process.gpu, total) {
            (Some(g), Some(t)) => g.total.map(|b| b + t),
            _ => None,
        };
    }
    total
}

/// Whether one of the job's processes held memory on this device at this tick.
fn used_by(device: &GpuTick, job: impl Fn(i32) -> bool) -> bool {
    device.processes.iter().any(|p| p.pid.is_some_and(&job))
}

/// What else held memory on the devices a job used, at a tick: the processes outside
/// the job, largest first. `job` says whether a pid is one of the job's.
pub fn other_holders(ticks: &[GpuTick], job: impl Fn(i32) -> bool) -> Vec<Evidence> {
    let any_used = ticks.iter().any(|t| used_by(t, &job));
    let mut others: Vec<(u32, &crate::model::gpu::GpuProcess)> = ticks
        .iter()
        .filter(|t| !any_used || used_by(t, &job))
        .flat_map(|t| t.processes.iter().map(move |p| (t.index, p)))
        .filter(|(_, p)| !p.pid.is_some_and(&job))
        .collect();
    others.sort_by_key(|(_, p)| std::cmp::Reverse(p.used));
    others
        .into_iter()
        .map(|(index, p)| {
            let who = match (p.pid, &p.comm) {
                (Some(pid), Some(comm)) => format!("pid {pid} ({comm}), another job,"),
                (Some(pid), None) => format!("pid {pid}, no longer running,"),
                (None, _) => format!("host pid {}, outside this container,", p.host_pid),
            };
            let held = p.used.map_or("an unknown amount".to_string(), iec);
            Evidence::text(
                format!("GPU {index}, other process"),
                format!("{who} held {held}"),
                "NVML",
            )
            .with_optional_quantity(p.used.map(Quantity::Bytes))
        })
        .collect()
}

/// For a CUDA out-of-memory error: each device's peak against its size, the job's
/// share, and what else held memory on it when the job held the most.
pub fn oom_evidence(g: &RunGpu, job: impl Fn(i32) -> bool) -> Vec<Evidence> {
    if !g.available {
        let why = g.reason.as_deref().unwrap_or("NVML unavailable");
        return vec![Evidence::text(
            "GPU memory during the run",
            format!("not read: {why}"),
            "NVML",
        )];
    }
    let mut out = Vec::new();
    for d in &g.devices {
        let (Some(job_peak), Some(total)) = (d.peak_job, d.total) else {
            continue;
        };
        if job_peak.bytes == 0 {
            continue;
        }
        let device_peak = d
            .peak_used
            .map_or("unreadable".to_string(), |p| iec(p.bytes));
        out.push(
            Evidence::text(
                format!("GPU {} peak during the run", d.index),
                format!(
                    "the job {} (at {:.1} s), all processes {device_peak}, of {}",
                    iec(job_peak.bytes),
                    job_peak.at_seconds,
                    iec(total)
                ),
                "NVML",
            )
            .with_quantity(Quantity::Bytes(job_peak.bytes)),
        );
    }
    if let Some(peak) = &g.at_job_peak {
        out.extend(other_holders(&peak.devices, job));
    }
    out
}

/// Xid and ECC events NVML delivered while the job ran, one finding per Xid and device.
pub fn run_events(g: &RunGpu) -> Vec<Finding> {
    // One group per Xid number, device and kind, with the times it came.
    type Key<'a> = (Option<u64>, Option<u32>, &'a str);
    let mut groups: Vec<(Key<'_>, Vec<f64>)> = Vec::new();
    for e in &g.events {
        let key = (e.xid, e.index, e.kind.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, times)) => times.push(e.at_seconds),
            None => groups.push((key, vec![e.at_seconds])),
        }
    }
    groups
        .into_iter()
        .map(|((number, index, kind), times)| {
            let gpu = index.map_or("a GPU".to_string(), |i| format!("GPU {i}"));
            let entry = number.and_then(|n| u32::try_from(n).ok()).and_then(xid::lookup);
            let (severity, title, fix) = match (kind, number, entry) {
                ("xid", Some(n), Some(x)) => (
                    x.severity,
                    format!("Xid {n} on {gpu} while the job ran: {}", x.meaning),
                    x.fix(),
                ),
                ("xid", n, None) => (
                    Severity::Warn,
                    format!(
                        "Xid {} on {gpu} while the job ran",
                        n.map_or("?".to_string(), |n| n.to_string())
                    ),
                    "Look the Xid up in NVIDIA's Xid catalog: https://docs.nvidia.com/deploy/xid-errors/".into(),
                ),
                ("ecc-double-bit", ..) => (
                    Severity::Error,
                    format!("an uncorrectable (double-bit) ECC error on {gpu} while the job ran"),
                    "Drain the node, reset the GPU (nvidia-smi -r -i GPU), then run dcgmi diag -r 2.".into(),
                ),
                _ => (
                    Severity::Info,
                    format!("corrected (single-bit) ECC errors on {gpu} while the job ran"),
                    "Watch the rate: nvidia-smi -q -d ECC; a rising rate means the memory is wearing out.".into(),
                ),
            };
            let at: Vec<String> = times.iter().take(5).map(|t| format!("{t:.1} s")).collect();
            let mut evidence = vec![Evidence::text(
                "reported by the driver at",
                format!("{} ({} in all)", at.join(", "), times.len()),
                "NVML events",
            )];
            if let Some(x) = entry {
                evidence.push(Evidence::text(
                    "NVIDIA's name",
                    format!("{} (likely cause: {})", x.name, x.cause_kind().as_str()),
                    x.source.clone(),
                ));
            }
            Finding {
                assessment: entry.map(|x| Assessment {
                    certainty: Certainty::Confirmed,
                    cause: x.cause_kind(),
                    confirm: String::new(),
                }),
                id: ids::GPU_XID.into(),
                severity,
                title,
                evidence,
                why: "The NVIDIA driver reported a GPU fault while the job ran: some Xids are the \
                      application's own bugs (an illegal address in a kernel), others failing \
                      hardware that needs a reset or service."
                    .into(),
                fix,
            }
        })
        .collect()
}

/// The device where other processes held the largest share of memory at the job's
/// GPU peak: its index, their bytes and the device's size, when over a tenth of it.
pub fn crowded_device(g: &RunGpu, job: impl Fn(i32) -> bool) -> Option<(u32, u64, u64)> {
    let peak = g.at_job_peak.as_ref()?;
    peak.devices
        .iter()
        .filter(|d| used_by(d, &job))
        .filter_map(|d| {
            let others: u64 = d
                .processes
                .iter()
                .filter(|p| !p.pid.is_some_and(&job))
                .filter_map(|p| p.used)
                .sum();
            let total = d.total?;
            (others * 10 > total).then_some((d.index, others, total))
        })
        .max_by_key(|(_, others, _)| *others)
}
