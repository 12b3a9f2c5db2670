//! Which processes have a file mapped, and how much of it each has resident.
//! `/proc/PID/maps` (no page walk) finds them by device and inode; only those have
//! their `smaps` read for the resident size.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::probe::procdir::ProcDir;
use crate::probe::process::all_pids;
use crate::probe::root::Root;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapper {
    pub pid: i32,
    pub comm: String,
    /// Bytes of the file this process maps.
    pub mapped: u64,
    /// Of those, resident in its page tables (`None` when its smaps is not ours to read).
    pub resident: Option<u64>,
}

fn maps_line_matches(line: &str, dev: (u64, u64), ino: u64) -> Option<u64> {
    let mut f = line.split_ascii_whitespace();
    let range = f.next()?;
    let _perms = f.next()?;
    let _off = f.next()?;
    let d = f.next()?;
    let i: u64 = f.next()?.parse().ok()?;
    if i != ino {
        return None;
    }
    let (maj, min) = d.split_once(':')?;
    if (
        u64::from_str_radix(maj, 16).ok()?,
        u64::from_str_radix(min, 16).ok()?,
    ) != dev
    {
        return None;
    }
    let (s, e) = range.split_once('-')?;
    u64::from_str_radix(e, 16)
        .ok()?
        .checked_sub(u64::from_str_radix(s, 16).ok()?)
}

/// Every process (that we may look at) mapping `path`.
pub fn find(root: &Root, path: &Path) -> Vec<Mapper> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let dev = (
        libc::major(meta.dev()) as u64,
        libc::minor(meta.dev()) as u64,
    );
    let ino = meta.ino();
    let mut out = Vec::new();
    for pid in all_pids(root).unwrap_or_default() {
        let Ok(dir) = ProcDir::open(root, pid) else {
            continue;
        };
        let Ok(maps) = dir.read_to_end("maps") else {
            continue;
        };
        let text = String::from_utf8_lossy(&maps);
        let mapped: u64 = text
            .lines()
            .filter_map(|l| maps_line_matches(l, dev, ino))
            .sum();
        if mapped == 0 {
            continue;
        }
        let comm = dir.comm().unwrap_or_default();
        let resident = crate::probe::maps::read(root, pid).ok().map(|report| {
            report
                .regions
                .iter()
                .filter(|r| r.inode == ino)
                .map(|r| r.sizes.resident())
                .sum()
        });
        out.push(Mapper {
            pid,
            comm,
            mapped,
            resident,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::maps_line_matches;

    #[test]
    fn matches_by_device_and_inode() {
        let line = "7f0000000000-7f0040000000 r--s 00000000 fd:01 42    /models/m.safetensors";
        assert_eq!(maps_line_matches(line, (0xfd, 1), 42), Some(1 << 30));
        assert_eq!(maps_line_matches(line, (0xfd, 2), 42), None);
        assert_eq!(maps_line_matches(line, (0xfd, 1), 43), None);
        assert_eq!(maps_line_matches("garbage", (0, 0), 0), None);
    }
}
