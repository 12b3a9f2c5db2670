//! PyTorch's CUDA caching allocator at one moment, as `torch.cuda.memory._snapshot()`
//! returns it (and `_dump_snapshot` pickles it): segments reserved with cudaMalloc,
//! the blocks each is split into, and, when history was recorded, the allocator's
//! recent actions. Sizes are bytes.

use serde::{Deserialize, Serialize};

use super::finding::Finding;

pub const CUDA_SNAPSHOT_SCHEMA: &str = "memtriage.cuda-snapshot/v1";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CudaSnapshot {
    pub segments: Vec<Segment>,
    /// One list per device, oldest first (bounded by `max_entries`).
    pub traces: Vec<Vec<TraceEntry>>,
    /// `allocator_settings.expandable_segments`, in snapshots that record it.
    pub expandable_segments: Option<bool>,
}

/// Memory one cudaMalloc (or one expandable mapping) reserved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Segment {
    pub device: u32,
    pub address: u64,
    pub total_size: u64,
    pub stream: u64,
    /// Requests of at most 1 MiB are served from `small` segments, larger ones from
    /// `large` ones: a free small block never serves a large request.
    pub large: bool,
    /// A private pool (CUDA graphs, `torch.cuda.MemPool`), `(0, 0)` for the default.
    pub pool: (i64, i64),
    pub expandable: bool,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    pub address: u64,
    pub size: u64,
    pub requested_size: Option<u64>,
    pub state: BlockState,
    /// Where it was allocated, innermost first; empty unless history was recorded.
    pub frames: Vec<Frame>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BlockState {
    /// Held by a tensor.
    #[default]
    Allocated,
    /// Freed, waiting for another stream to finish with it.
    PendingFree,
    /// Cached: free for reuse.
    Inactive,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    pub filename: String,
    pub line: u64,
    pub name: String,
}

/// One action of the allocator (history recorded with `_record_memory_history`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceEntry {
    /// `alloc`, `free_requested`, `free_completed`, `segment_alloc`, `segment_free`,
    /// `oom`, `snapshot`…
    pub action: String,
    pub addr: Option<u64>,
    pub size: u64,
    pub stream: u64,
    /// For `oom`: what CUDA still reported free on the device.
    pub device_free: Option<u64>,
    pub frames: Vec<Frame>,
}

/// What `explain-snapshot` and `memtriage.torch.explain_oom()` report
/// (`memtriage.cuda-snapshot/v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotReport {
    pub schema: String,
    /// The file read, or `torch.cuda.memory_snapshot()`.
    pub source: String,
    pub devices: Vec<DeviceAllocatorState>,
    /// Whether blocks carry allocation stacks (history was recorded).
    pub history_recorded: bool,
    pub findings: Vec<Finding>,
}

/// One device's allocator, summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceAllocatorState {
    pub device: u32,
    pub segments: usize,
    /// Reserved from CUDA: the sum of the segments.
    pub reserved: u64,
    /// Held by tensors.
    pub allocated: u64,
    /// Freed but waiting for another stream.
    pub pending_free: u64,
    /// Reserved but free: cached blocks the allocator can reuse.
    pub reserved_free: u64,
    pub pools: Vec<PoolState>,
    pub expandable_segments: bool,
    /// The out-of-memory the snapshot records (or the caller reported).
    pub oom: Option<OomEvent>,
    /// Where the allocated memory was allocated, largest first (with history only).
    pub top_sites: Vec<AllocationSite>,
}

/// Segments of one kind (large or small) in one pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolState {
    /// `large`, `small`, or `private (1, 2) large` for a private pool.
    pub name: String,
    pub segments: usize,
    pub reserved: u64,
    pub free: u64,
    /// The largest free block: the largest request the pool can serve without CUDA.
    pub largest_free_block: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OomEvent {
    /// Bytes the failed allocation asked for.
    pub requested: u64,
    /// What CUDA still had free on the device (outside the allocator's segments).
    pub device_free: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationSite {
    /// `train.py:42 in forward`: the innermost frame outside torch.
    pub site: String,
    pub bytes: u64,
    pub blocks: u64,
}

/// The failed request as the caller knows it (the error's "Tried to allocate"), for a
/// snapshot whose history does not record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownOom {
    pub device: u32,
    pub requested: u64,
    pub device_free: Option<u64>,
}

impl KnownOom {
    pub fn event(self) -> (u32, OomEvent) {
        (
            self.device,
            OomEvent {
                requested: self.requested,
                device_free: self.device_free,
            },
        )
    }
}
