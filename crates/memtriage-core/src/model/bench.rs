//! `bench load`'s report: each way of loading a checkpoint, cold and hot, against the
//! machine's own ceilings (`memtriage.bench-load/v1`).

use serde::{Deserialize, Serialize};

pub const BENCH_SCHEMA: &str = "memtriage.bench-load/v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// read() the whole file into a heap buffer (what torch.load without mmap does).
    Read,
    /// mmap and touch each page as it is used.
    MmapLazy,
    /// mmap, one MADV_WILLNEED over the file, then touch.
    MmapWillneed,
    /// mmap with MAP_POPULATE.
    MapPopulate,
    /// mmap, then MADV_POPULATE_READ.
    MadvPopulateRead,
    /// mmap with MADV_HUGEPAGE, then touch.
    MmapHugepage,
    /// `memtriage warm` (parallel sequential reads), then a lazy mmap.
    WarmThenMmap,
}

impl Method {
    pub const ALL: [Method; 7] = [
        Method::Read,
        Method::MmapLazy,
        Method::MmapWillneed,
        Method::MapPopulate,
        Method::MadvPopulateRead,
        Method::MmapHugepage,
        Method::WarmThenMmap,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Method::Read => "read() into a buffer",
            Method::MmapLazy => "mmap, touch lazily",
            Method::MmapWillneed => "mmap + MADV_WILLNEED",
            Method::MapPopulate => "mmap + MAP_POPULATE",
            Method::MadvPopulateRead => "mmap + MADV_POPULATE_READ",
            Method::MmapHugepage => "mmap + MADV_HUGEPAGE",
            Method::WarmThenMmap => "memtriage warm, then mmap",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub method: Method,
    pub cold: bool,
    pub seconds: f64,
    pub bytes_per_second: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// Share of the ceiling: disk read speed when cold, memory copy speed when hot.
    pub of_ceiling: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadBench {
    pub schema: String,
    pub file: String,
    pub bytes: u64,
    pub generated: bool,
    pub disk_read_bytes_per_second: f64,
    pub memory_copy_bytes_per_second: f64,
    pub results: Vec<Measurement>,
}
