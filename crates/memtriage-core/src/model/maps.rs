//! Memory regions of one process (`/proc/PID/smaps`), and the same grouped by kind
//! and by mapped file.

use serde::{Deserialize, Serialize};

pub const MAPS_SCHEMA: &str = "memtriage.maps/v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    Heap,
    Stack,
    /// Private anonymous mappings (malloc arenas, numpy/torch CPU tensors).
    AnonMmap,
    /// Regular files mapped without execute permission (checkpoints, datasets).
    FileMmap,
    /// The executable and shared libraries.
    Code,
    /// Shared memory: /dev/shm, memfd, SysV, shared anonymous (DataLoader batches).
    Shm,
    /// hugetlbfs pages.
    HugePages,
    /// `[vdso]`, `[vvar]`, `[vsyscall]` and other kernel-provided regions.
    Kernel,
}

impl RegionKind {
    pub fn label(self) -> &'static str {
        match self {
            RegionKind::Heap => "heap",
            RegionKind::Stack => "stack",
            RegionKind::AnonMmap => "anon mmap",
            RegionKind::FileMmap => "file mmap",
            RegionKind::Code => "code & libraries",
            RegionKind::Shm => "shm/memfd",
            RegionKind::HugePages => "huge pages",
            RegionKind::Kernel => "kernel",
        }
    }
}

/// Sizes of one region or a group of regions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionSizes {
    /// Virtual size mapped.
    pub size: u64,
    pub rss: u64,
    pub pss: u64,
    pub private: u64,
    pub shared: u64,
    pub swap: u64,
    pub anon_huge: u64,
    pub file_pmd_mapped: u64,
    pub hugetlb: u64,
    pub locked: u64,
}

impl RegionSizes {
    pub fn add(&mut self, o: &RegionSizes) {
        self.size += o.size;
        self.rss += o.rss;
        self.pss += o.pss;
        self.private += o.private;
        self.shared += o.shared;
        self.swap += o.swap;
        self.anon_huge += o.anon_huge;
        self.file_pmd_mapped += o.file_pmd_mapped;
        self.hugetlb += o.hugetlb;
        self.locked += o.locked;
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    /// `rwxp` / `rw-s` as the kernel prints it.
    pub perms: String,
    pub offset: u64,
    pub inode: u64,
    /// The path as the kernel shows it (its `\012` escapes kept), non-UTF-8 bytes as `\xNN`,
    /// ` (deleted)` removed (see `deleted`). `[heap]`-style names for special regions;
    /// empty for anonymous memory.
    pub path: String,
    pub deleted: bool,
    pub kind: RegionKind,
    pub sizes: RegionSizes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindGroup {
    pub kind: RegionKind,
    pub regions: usize,
    pub sizes: RegionSizes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileGroup {
    pub path: String,
    pub deleted: bool,
    pub kind: RegionKind,
    pub regions: usize,
    pub sizes: RegionSizes,
}

/// Regions of one process, grouped; each list ranked by resident size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapsReport {
    pub pid: i32,
    pub by_kind: Vec<KindGroup>,
    pub by_file: Vec<FileGroup>,
    pub regions: Vec<Region>,
}

impl RegionSizes {
    /// Resident memory including hugetlb pages (which smaps keeps out of `Rss`).
    pub fn resident(&self) -> u64 {
        self.rss + self.hugetlb
    }
}

impl MapsReport {
    /// Groups regions by kind and by mapped file; both ranked by resident size.
    pub fn from_regions(pid: i32, regions: Vec<Region>) -> Self {
        let mut by_kind: std::collections::BTreeMap<RegionKind, KindGroup> = Default::default();
        let mut by_file: std::collections::HashMap<(&str, bool), FileGroup> = Default::default();
        for r in &regions {
            let g = by_kind.entry(r.kind).or_insert(KindGroup {
                kind: r.kind,
                regions: 0,
                sizes: RegionSizes::default(),
            });
            g.regions += 1;
            g.sizes.add(&r.sizes);
            if r.path.starts_with('/') {
                let f = by_file
                    .entry((&r.path, r.deleted))
                    .or_insert_with(|| FileGroup {
                        path: r.path.clone(),
                        deleted: r.deleted,
                        kind: r.kind,
                        regions: 0,
                        sizes: RegionSizes::default(),
                    });
                f.regions += 1;
                f.sizes.add(&r.sizes);
            }
        }
        let mut by_kind: Vec<KindGroup> = by_kind.into_values().collect();
        by_kind.sort_by(|a, b| {
            b.sizes
                .resident()
                .cmp(&a.sizes.resident())
                .then(a.kind.cmp(&b.kind))
        });
        let mut by_file: Vec<FileGroup> = by_file.into_values().collect();
        by_file.sort_by(|a, b| {
            b.sizes
                .resident()
                .cmp(&a.sizes.resident())
                .then(b.sizes.size.cmp(&a.sizes.size))
                .then_with(|| a.path.cmp(&b.path))
        });
        MapsReport {
            pid,
            by_kind,
            by_file,
            regions,
        }
    }
}
