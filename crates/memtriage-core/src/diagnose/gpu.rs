//! GPU memory as evidence: workers that hold a CUDA context of their own, and what
//! else held a device's memory when a job ran out of it.

use std::collections::HashMap;

use crate::diagnose::ids;
use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::gpu::{GpuReport, GpuTick};
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

/// What else held memory on the devices a job used, at a tick: the processes outside
/// the job, largest first. `job` says whether a pid is one of the job's.
pub fn other_holders(ticks: &[GpuTick], job: impl Fn(i32) -> bool) -> Vec<Evidence> {
    let used_by_job: Vec<u32> = ticks
        .iter()
        .filter(|t| t.processes.iter().any(|p| p.pid.is_some_and(&job)))
        .map(|t| t.index)
        .collect();
    let mut others: Vec<(u32, &crate::model::gpu::GpuProcess)> = ticks
        .iter()
        .filter(|t| used_by_job.is_empty() || used_by_job.contains(&t.index))
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
            .with_optional_quantity(p.used.map(crate::model::finding::Quantity::Bytes))
        })
        .collect()
}
