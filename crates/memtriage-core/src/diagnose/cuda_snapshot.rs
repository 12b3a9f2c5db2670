//! A CUDA out-of-memory explained from the caching allocator's own snapshot: what
//! was asked for, what tensors held, what was reserved but free and in pieces of
//! what size, and so whether the memory was there but not in one piece
//! (fragmentation: `expandable_segments`) or simply not there (real demand).

use std::collections::BTreeMap;

use crate::model::cuda_snapshot::{
    AllocationSite, BlockState, CudaSnapshot, DeviceAllocatorState, Frame, OomEvent, PoolState,
    SnapshotReport, CUDA_SNAPSHOT_SCHEMA,
};
use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::units::{counted, iec};

/// Requests above this are served from large segments (PyTorch's kSmallSize).
const SMALL_REQUEST: u64 = 1 << 20;
/// Allocation sites listed per device.
const SITES: usize = 5;

/// `oom`: the failed request as the caller knows it (the exception's "Tried to
/// allocate"), where the snapshot's history has none.
pub fn analyse(snap: &CudaSnapshot, oom: Option<(u32, OomEvent)>, source: &str) -> SnapshotReport {
    let mut devices: Vec<u32> = snap.segments.iter().map(|s| s.device).collect();
    devices.extend(
        (0..snap.traces.len() as u32)
            .filter(|d| snap.traces[*d as usize].iter().any(|e| e.action == "oom")),
    );
    if let Some((d, _)) = oom {
        devices.push(d);
    }
    devices.sort_unstable();
    devices.dedup();
    let states: Vec<DeviceAllocatorState> = devices
        .into_iter()
        .map(|d| {
            let given = oom.filter(|(od, _)| *od == d).map(|(_, o)| o);
            device_state(snap, d, given)
        })
        .collect();
    let history_recorded = snap
        .segments
        .iter()
        .flat_map(|s| &s.blocks)
        .any(|b| !b.frames.is_empty());
    let mut findings: Vec<Finding> = states
        .iter()
        .filter_map(|s| verdict(s, history_recorded))
        .collect();
    if findings.is_empty() {
        findings.extend(states.iter().map(|s| state_finding(s, history_recorded)));
    }
    SnapshotReport {
        schema: CUDA_SNAPSHOT_SCHEMA.into(),
        source: source.into(),
        devices: states,
        history_recorded,
        findings,
    }
}

fn device_state(snap: &CudaSnapshot, device: u32, given: Option<OomEvent>) -> DeviceAllocatorState {
    let mut pools: BTreeMap<((i64, i64), bool), PoolState> = BTreeMap::new();
    let (mut reserved, mut allocated, mut pending, mut free) = (0u64, 0u64, 0u64, 0u64);
    let mut sites: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut segments = 0;
    let mut expandable = snap.expandable_segments.unwrap_or(false);
    for s in snap.segments.iter().filter(|s| s.device == device) {
        segments += 1;
        reserved = reserved.saturating_add(s.total_size);
        expandable |= s.expandable;
        let pool = pools.entry((s.pool, s.large)).or_insert_with(|| PoolState {
            name: pool_name(s.pool, s.large),
            segments: 0,
            reserved: 0,
            free: 0,
            largest_free_block: 0,
        });
        pool.segments += 1;
        pool.reserved = pool.reserved.saturating_add(s.total_size);
        for b in &s.blocks {
            match b.state {
                BlockState::Allocated => {
                    allocated = allocated.saturating_add(b.size);
                    if let Some(site) = site(&b.frames) {
                        let e = sites.entry(site).or_default();
                        e.0 = e.0.saturating_add(b.size);
                        e.1 += 1;
                    }
                }
                BlockState::PendingFree => pending = pending.saturating_add(b.size),
                BlockState::Inactive => {
                    free = free.saturating_add(b.size);
                    pool.free = pool.free.saturating_add(b.size);
                    pool.largest_free_block = pool.largest_free_block.max(b.size);
                }
            }
        }
    }
    let recorded = snap
        .traces
        .get(device as usize)
        .and_then(|t| t.iter().rev().find(|e| e.action == "oom"))
        .map(|e| OomEvent {
            requested: e.size,
            device_free: e.device_free,
        });
    let mut top_sites: Vec<AllocationSite> = sites
        .into_iter()
        .map(|(site, (bytes, blocks))| AllocationSite {
            site,
            bytes,
            blocks,
        })
        .collect();
    top_sites.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.site.cmp(&b.site)));
    top_sites.truncate(SITES);
    DeviceAllocatorState {
        device,
        segments,
        reserved,
        allocated,
        pending_free: pending,
        reserved_free: free,
        pools: pools.into_values().collect(),
        expandable_segments: expandable,
        // The allocator's own record is the request; the caller's figure (the
        // exception, the observer) is the size rounded to what it asked CUDA for.
        oom: recorded.or(given),
        top_sites,
    }
}

fn pool_name(pool: (i64, i64), large: bool) -> String {
    let size = if large { "large" } else { "small" };
    if pool == (0, 0) {
        size.to_string()
    } else {
        format!("private ({}, {}) {size}", pool.0, pool.1)
    }
}

/// The innermost Python frame outside torch: the user's line that allocated.
fn site(frames: &[Frame]) -> Option<String> {
    let python = |f: &&Frame| f.filename.ends_with(".py");
    let ours = |f: &&Frame| {
        !f.filename.contains("/torch/") && !f.filename.contains("<frozen") && python(f)
    };
    let f = frames
        .iter()
        .find(ours)
        .or_else(|| frames.iter().find(python))?;
    let file = f.filename.rsplit('/').next().unwrap_or(&f.filename);
    Some(format!("{file}:{} in {}", f.line, f.name))
}

fn site_evidence(site: &AllocationSite) -> Evidence {
    Evidence::text(
        "allocated at",
        format!(
            "{} ({} in {})",
            site.site,
            iec(site.bytes),
            counted(site.blocks, "block", "blocks")
        ),
        "allocation history",
    )
    .with_quantity(Quantity::Bytes(site.bytes))
}

/// The default pool of the size class a request is served from.
fn pool_for(s: &DeviceAllocatorState, requested: u64) -> Option<&PoolState> {
    let name = if requested > SMALL_REQUEST {
        "large"
    } else {
        "small"
    };
    s.pools.iter().find(|p| p.name == name)
}

/// What an out-of-memory's finding shows, whichever it is: the request, the
/// allocator's state, its pool's free pieces, the device's free memory, the top sites.
fn oom_evidence(
    s: &DeviceAllocatorState,
    oom: &OomEvent,
    pool_free: u64,
    largest: u64,
) -> Vec<Evidence> {
    let r = oom.requested;
    let mut evidence = vec![
        Evidence::bytes("asked for", r, "oom"),
        Evidence::bytes("allocated (held by tensors)", s.allocated, "blocks"),
        Evidence::bytes("reserved by the allocator", s.reserved, "segments"),
        Evidence::text(
            "reserved but free",
            format!(
                "{} ({} in the {} pool, largest free block {})",
                iec(s.reserved_free),
                iec(pool_free),
                if r > SMALL_REQUEST { "large" } else { "small" },
                iec(largest)
            ),
            "blocks",
        )
        .with_quantity(Quantity::Bytes(s.reserved_free)),
        Evidence::count("segments", s.segments as u64, "segments"),
        Evidence::bytes_or_unreadable(
            "free on the device beyond the allocator",
            oom.device_free,
            "oom",
        ),
    ];
    if s.pending_free > 0 {
        evidence.push(Evidence::bytes(
            "freed, waiting for another stream",
            s.pending_free,
            "blocks",
        ));
    }
    evidence.extend(s.top_sites.iter().map(site_evidence));
    evidence
}

/// Where the finding's fix says how to see which lines hold the memory.
fn sites_hint(history: bool) -> &'static str {
    if history {
        ""
    } else {
        "\nTo see which lines hold the memory, record the history: \
         torch.cuda.memory._record_memory_history(max_entries=100000) before the step \
         (memtriage run records it for you)."
    }
}

fn verdict(s: &DeviceAllocatorState, history: bool) -> Option<Finding> {
    let oom = s.oom?;
    let r = oom.requested;
    let (pool_free, largest) = pool_for(s, r).map_or((0, 0), |p| (p.free, p.largest_free_block));
    let beyond = oom.device_free.unwrap_or(0);
    let evidence = oom_evidence(s, &oom, pool_free, largest);
    let sites_hint = sites_hint(history);
    let device = s.device;
    let finding = if oom.device_free.is_some_and(|free| free >= r) && largest < r {
        // CUDA had room for the request, yet the allocator refused: its cap.
        Finding {
            assessment: Some(Assessment {
                certainty: Certainty::Likely,
                cause: CauseKind::Configuration,
                confirm: "Look for torch.cuda.set_per_process_memory_fraction (or a framework's \
                          memory fraction setting) in the job."
                    .into(),
            }),
            id: ids::CUDA_SNAPSHOT_MEMORY_CAP.into(),
            severity: Severity::Error,
            title: format!(
                "CUDA device {device}: the process's memory cap was reached: CUDA still had {} free for the {} asked for",
                iec(beyond),
                iec(r)
            ),
            evidence,
            why: "The allocator stops reserving at the fraction of the device the process was given \
                  (torch.cuda.set_per_process_memory_fraction), whatever the device has free."
                .into(),
            fix: format!(
                "Raise the fraction, or remove the cap where the device is not shared; otherwise lower \
                 the peak (smaller batch, activation checkpointing).{sites_hint}"
            ),
        }
    } else if largest >= r {
        Finding {
            assessment: Some(Assessment {
                certainty: Certainty::Possible,
                cause: CauseKind::Capacity,
                confirm: "Take the snapshot in the out-of-memory handler itself (memtriage run does).".into(),
            }),
            id: ids::CUDA_SNAPSHOT_STATE.into(),
            severity: Severity::Info,
            title: format!(
                "CUDA device {device}: a free block of {} would fit the {} asked for, but the allocator could not use it",
                iec(largest),
                iec(r)
            ),
            evidence,
            why: "The allocator reuses a cached block only for a request on the same CUDA stream and \
                  pool, and with max_split_size_mb it keeps large blocks for large requests; a \
                  snapshot taken after the failure also shows memory freed since."
                .into(),
            fix: format!(
                "Look for work on several streams (FSDP, side streams) or a max_split_size_mb setting; \
                 take the snapshot at the failure itself (memtriage run does).{sites_hint}"
            ),
        }
    } else if pool_free.saturating_add(beyond) >= r {
        Finding {
            assessment: Some(Assessment {
                certainty: Certainty::Confirmed,
                cause: CauseKind::Configuration,
                confirm: String::new(),
            }),
            id: ids::CUDA_SNAPSHOT_FRAGMENTATION.into(),
            severity: Severity::Error,
            title: format!(
                "CUDA device {device}: fragmentation: {} free in the allocator's segments in pieces of at most {}{}: \
                 enough for the {} asked for, but not in one piece",
                iec(pool_free),
                iec(largest),
                oom.device_free
                    .map(|b| format!(", {} free on the device", iec(b)))
                    .unwrap_or_default(),
                iec(r)
            ),
            evidence,
            why: "The allocator keeps freed blocks in the segments it reserved and splits them for \
                  later requests; a request larger than every free piece fails though the total \
                  free is enough. Varying tensor sizes (dynamic shapes, growing sequences) leave such \
                  holes."
                .into(),
            fix: if s.expandable_segments {
                format!(
                    "Segments are already expandable: the free pieces are held apart by tensors kept \
                     alive between them (cached activations, tensors kept across steps) or belong to \
                     another stream; free what is kept between phases, and pad varying shapes to a \
                     few fixed sizes.{sites_hint}"
                )
            } else {
                format!(
                    "Let segments grow in place instead of splitting: \
                     PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py\n\
                     Or pad varying shapes to a few fixed sizes (bucketing).{sites_hint}"
                )
            },
        }
    } else {
        let short = r - pool_free.saturating_add(beyond);
        // Without CUDA's own free figure the device may have held the rest.
        let (certainty, confirm, counting) = match oom.device_free {
            Some(_) => (
                Certainty::Confirmed,
                String::new(),
                "even counting every free byte",
            ),
            None => (
                Certainty::Likely,
                "nvidia-smi at the failure, or a snapshot taken in the out-of-memory handler, \
                 says what CUDA had free beyond the allocator."
                    .to_string(),
                "counting the allocator's free memory (what the device had beyond it is unknown)",
            ),
        };
        Finding {
            assessment: Some(Assessment {
                certainty,
                cause: CauseKind::Capacity,
                confirm,
            }),
            id: ids::CUDA_SNAPSHOT_REAL_DEMAND.into(),
            severity: Severity::Error,
            title: format!(
                "CUDA device {device}: real demand: {} asked for, {} short {counting}",
                iec(r),
                iec(short)
            ),
            evidence,
            why: "The free pieces inside the allocator and the device's free memory together were \
                  less than the request: the memory was held, by this process's tensors (allocated) \
                  or outside the allocator (other processes, the CUDA context, NCCL and cuBLAS \
                  workspaces), so no allocator setting would have helped."
                .into(),
            fix: format!(
                "Lower the peak: a smaller batch (gradient accumulation keeps the effective batch), \
                 activation checkpointing (torch.utils.checkpoint), bf16 autocast, an optimizer with \
                 less state (or sharded: FSDP/ZeRO); look at the lines that hold the most memory.{sites_hint}"
            ),
        }
    };
    Some(finding)
}

/// No out-of-memory recorded: the allocator's state, and whether it is fragmented.
fn state_finding(s: &DeviceAllocatorState, history: bool) -> Finding {
    let fragmented = s.reserved_free > (1 << 30) && s.reserved_free.saturating_mul(3) > s.reserved;
    let mut evidence = vec![
        Evidence::bytes("allocated (held by tensors)", s.allocated, "blocks"),
        Evidence::bytes("reserved by the allocator", s.reserved, "segments"),
        Evidence::bytes("reserved but free", s.reserved_free, "blocks"),
        Evidence::count("segments", s.segments as u64, "segments"),
    ];
    for p in &s.pools {
        evidence.push(Evidence::text(
            format!("{} pool", p.name),
            format!(
                "{} free of {} in {} segments, largest free block {}",
                iec(p.free),
                iec(p.reserved),
                p.segments,
                iec(p.largest_free_block)
            ),
            "segments",
        ));
    }
    evidence.extend(s.top_sites.iter().map(site_evidence));
    Finding {
        assessment: None,
        id: ids::CUDA_SNAPSHOT_STATE.into(),
        severity: if fragmented {
            Severity::Warn
        } else {
            Severity::Info
        },
        title: format!(
            "CUDA device {}: {} allocated, {} reserved ({} of it free{}); no out-of-memory recorded",
            s.device,
            iec(s.allocated),
            iec(s.reserved),
            iec(s.reserved_free),
            if fragmented { ", fragmented" } else { "" }
        ),
        evidence,
        why: "The snapshot holds no failed allocation: this is the allocator's state when it was taken.".into(),
        fix: if fragmented && !s.expandable_segments {
            "A third or more of the reserved memory is free but cached in pieces: \
             PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True keeps it usable."
                .into()
        } else if !history {
            "Record the history to see what allocated it: torch.cuda.memory._record_memory_history(max_entries=100000)."
                .into()
        } else {
            String::new()
        },
    }
}
