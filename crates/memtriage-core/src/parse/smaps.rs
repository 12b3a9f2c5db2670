//! `/proc/PID/smaps`: one header line per mapping, then `Key: N kB` lines.
//!
//! Written over bytes rather than with procfs's maps parser because file names are
//! bytes: a path that is not UTF-8 must be shown, not make the whole read fail.

use crate::model::maps::{Region, RegionKind, RegionSizes};

use super::text::escape_bytes;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmapsError {
    pub line: usize,
    pub detail: String,
}

const DELETED: &[u8] = b" (deleted)";

/// Parses every region; classifies each by what it maps. `Code` is decided per file:
/// every region of a file that has an executable region counts as code (a library's
/// read-only data belongs with the library).
pub fn parse(text: &[u8]) -> Result<Vec<Region>, SmapsError> {
    let mut regions: Vec<Region> = Vec::new();
    let mut hugetlb_flag = Vec::new();
    for (index, line) in text.split(|b| *b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        if line[0].is_ascii_hexdigit() && !line[0].is_ascii_uppercase() {
            regions.push(parse_header(line).map_err(|detail| SmapsError {
                line: index + 1,
                detail,
            })?);
            hugetlb_flag.push(false);
            continue;
        }
        let Some(region) = regions.last_mut() else {
            return Err(SmapsError {
                line: index + 1,
                detail: "attribute line before any mapping header".into(),
            });
        };
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        if key == "VmFlags" {
            if rest.split_ascii_whitespace().any(|f| f == "ht") {
                if let Some(flag) = hugetlb_flag.last_mut() {
                    *flag = true;
                }
            }
            continue;
        }
        let mut parts = rest.split_ascii_whitespace();
        let Some(Ok(kb)) = parts.next().map(str::parse::<u64>) else {
            continue;
        };
        let bytes = kb.saturating_mul(1024);
        let s = &mut region.sizes;
        match key {
            "Rss" => s.rss = bytes,
            "Pss" => s.pss = bytes,
            "Shared_Clean" | "Shared_Dirty" => s.shared = s.shared.saturating_add(bytes),
            "Private_Clean" | "Private_Dirty" => s.private = s.private.saturating_add(bytes),
            "Swap" => s.swap = bytes,
            "AnonHugePages" => s.anon_huge = bytes,
            "FilePmdMapped" => s.file_pmd_mapped = bytes,
            "Shared_Hugetlb" | "Private_Hugetlb" => s.hugetlb = s.hugetlb.saturating_add(bytes),
            "Locked" => s.locked = bytes,
            _ => {}
        }
    }
    for (region, hugetlb) in regions.iter_mut().zip(hugetlb_flag) {
        if hugetlb {
            region.kind = RegionKind::HugePages;
        }
    }
    mark_code(&mut regions);
    Ok(regions)
}

fn mark_code(regions: &mut [Region]) {
    let executable: std::collections::HashSet<(String, u64)> = regions
        .iter()
        .filter(|r| r.kind == RegionKind::FileMmap && r.perms.as_bytes().get(2) == Some(&b'x'))
        .map(|r| (r.path.clone(), r.inode))
        .collect();
    if executable.is_empty() {
        return;
    }
    for r in regions.iter_mut() {
        if r.kind == RegionKind::FileMmap && executable.contains(&(r.path.clone(), r.inode)) {
            r.kind = RegionKind::Code;
        }
    }
}

fn parse_header(line: &[u8]) -> Result<Region, String> {
    let mut rest = line;
    let mut field = || -> Result<&[u8], String> {
        let start = rest.iter().position(|b| *b != b' ').unwrap_or(rest.len());
        rest = &rest[start..];
        let end = rest.iter().position(|b| *b == b' ').unwrap_or(rest.len());
        let (f, tail) = rest.split_at(end);
        rest = tail;
        if f.is_empty() {
            Err("truncated mapping header".to_string())
        } else {
            Ok(f)
        }
    };
    let range = ascii(field()?)?;
    let perms = ascii(field()?)?.to_string();
    let offset = ascii(field()?)?;
    let _dev = field()?;
    let inode = ascii(field()?)?;
    let (start, end) = range
        .split_once('-')
        .ok_or_else(|| format!("bad address range {range:?}"))?;
    let hex = |s: &str| u64::from_str_radix(s, 16).map_err(|_| format!("bad hex number {s:?}"));
    let (start, end, offset) = (hex(start)?, hex(end)?, hex(offset)?);
    if end < start {
        return Err(format!("mapping ends before it starts: {range}"));
    }
    let inode = inode
        .parse::<u64>()
        .map_err(|_| format!("bad inode {inode:?}"))?;
    if perms.len() != 4 {
        return Err(format!("bad permissions {perms:?}"));
    }
    // The path starts after the padding that follows the inode; it may itself
    // contain spaces, so it is everything up to the end of the line.
    let path_start = rest.iter().position(|b| *b != b' ').unwrap_or(rest.len());
    let mut path = &rest[path_start..];
    let deleted = path.starts_with(b"/") && path.ends_with(DELETED);
    if deleted {
        path = &path[..path.len() - DELETED.len()];
    }
    let shared = perms.as_bytes()[3] == b's';
    Ok(Region {
        start,
        end,
        kind: classify(path, shared),
        perms,
        offset,
        inode,
        path: escape_bytes(path),
        deleted,
        sizes: RegionSizes {
            size: end - start,
            ..RegionSizes::default()
        },
    })
}

fn ascii(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|_| "non-ASCII bytes in mapping header".to_string())
}

fn classify(path: &[u8], shared: bool) -> RegionKind {
    match path {
        b"" if shared => RegionKind::Shm,
        b"" => RegionKind::AnonMmap,
        b"[heap]" => RegionKind::Heap,
        p if p.starts_with(b"[stack") => RegionKind::Stack,
        p if p.starts_with(b"[anon_shmem:") => RegionKind::Shm,
        p if p.starts_with(b"[anon:") => RegionKind::AnonMmap,
        p if p.starts_with(b"[") => RegionKind::Kernel,
        p if p.starts_with(b"/anon_hugepage") => RegionKind::HugePages,
        p if p.starts_with(b"/dev/shm/")
            || p.starts_with(b"/memfd:")
            || p.starts_with(b"/SYSV")
            || p == b"/dev/zero" =>
        {
            RegionKind::Shm
        }
        _ => RegionKind::FileMmap,
    }
}

/// One mapping's address range and the bytes of it that only this process holds
/// written (`Private_Dirty`: copy-on-write copies land here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappingDirty {
    pub start: u64,
    pub end: u64,
    /// 0 when read from `maps`, which has no attribute lines.
    pub private_dirty: u64,
    pub rss: u64,
}

/// Each mapping of `smaps` (or of `maps`) with its private dirty bytes; cheaper than
/// [`parse`] (no names, no classes), for reading a whole worker's smaps on a budget.
/// A header that cannot be read ends the list there rather than failing it: what was
/// read before it is still right.
pub fn private_dirty_by_mapping(text: &[u8]) -> Vec<MappingDirty> {
    let mut out: Vec<MappingDirty> = Vec::new();
    for line in text.split(|b| *b == b'\n') {
        let Some(&first) = line.first() else {
            continue;
        };
        if first.is_ascii_hexdigit() && !first.is_ascii_uppercase() {
            let range = line.split(|b| *b == b' ').next().unwrap_or_default();
            let Some((start, end)) = std::str::from_utf8(range)
                .ok()
                .and_then(|r| r.split_once('-'))
                .and_then(|(a, b)| {
                    Some((
                        u64::from_str_radix(a, 16).ok()?,
                        u64::from_str_radix(b, 16).ok()?,
                    ))
                })
                .filter(|(a, b)| a <= b)
            else {
                break;
            };
            out.push(MappingDirty {
                start,
                end,
                private_dirty: 0,
                rss: 0,
            });
            continue;
        }
        let Some(m) = out.last_mut() else {
            continue;
        };
        let field = if line.starts_with(b"Private_Dirty:") {
            &mut m.private_dirty
        } else if line.starts_with(b"Rss:") {
            &mut m.rss
        } else {
            continue;
        };
        if let Some((_, bytes)) = super::kv::sizes(line).next() {
            *field = bytes;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_dirty_by_mapping_reads_each_range_and_its_dirty_bytes() {
        let m = private_dirty_by_mapping(SAMPLE);
        assert_eq!(m.len(), 9);
        assert_eq!(
            m[2],
            MappingDirty {
                start: 0x5581c3000000,
                end: 0x5581c3100000,
                private_dirty: 900 << 10,
                rss: 900 << 10,
            }
        );
        assert_eq!((m[1].private_dirty, m[1].rss), (0, 12 << 10));
        assert_eq!(m[8].start, 0x7ffd2c1f8000);
    }

    #[test]
    fn private_dirty_by_mapping_reads_maps_and_stops_at_a_bad_header() {
        let maps = b"00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/dbus\n\
0060000-zz rw-p 00000000 00:00 0\n\
7f00-7f10 rw-p 00000000 00:00 0\n";
        let m = private_dirty_by_mapping(maps);
        assert_eq!(
            m,
            vec![MappingDirty {
                start: 0x400000,
                end: 0x452000,
                private_dirty: 0,
                rss: 0
            }]
        );
        assert!(private_dirty_by_mapping(b"Private_Dirty: 4 kB\n").is_empty());
    }

    const SAMPLE: &[u8] = b"\
5581c2a00000-5581c2a02000 r--p 00000000 fd:01 1835101                    /usr/bin/python3.11
Size:                  8 kB
Rss:                   8 kB
Pss:                   4 kB
Shared_Clean:          8 kB
VmFlags: rd mr mw me dw sd
5581c2a02000-5581c2a05000 r-xp 00002000 fd:01 1835101                    /usr/bin/python3.11
Size:                 12 kB
Rss:                  12 kB
Private_Clean:        12 kB
5581c3000000-5581c3100000 rw-p 00000000 00:00 0                          [heap]
Size:               1024 kB
Rss:                 900 kB
Pss:                 900 kB
Private_Dirty:       900 kB
7f0000000000-7f0040000000 r--s 00000000 fd:01 42                         /models/llama 7b/model.safetensors (deleted)
Size:            1048576 kB
Rss:              524288 kB
Pss:              262144 kB
Shared_Clean:     524288 kB
FilePmdMapped:    262144 kB
7f0040000000-7f0040200000 rw-s 00000000 00:05 99                         /memfd:torch_shm (deleted)
Size:               2048 kB
Rss:                2048 kB
7f0050000000-7f0050400000 rw-p 00000000 00:10 7                          /anon_hugepage (deleted)
Size:               4096 kB
Private_Hugetlb:    4096 kB
VmFlags: rd wr mr mw me ac ht
7f0060000000-7f0060001000 r--p 00000000 fd:01 77                         /data/caf\xe9\\012x.bin
Size:                  4 kB
7ffd2c1d4000-7ffd2c1f5000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
7ffd2c1f8000-7ffd2c1fa000 r-xp 00000000 00:00 0                          [vdso]
Size:                  8 kB
";

    #[test]
    fn regions_are_classified_by_what_they_map() {
        let regions = parse(SAMPLE).unwrap();
        let kinds: Vec<_> = regions.iter().map(|r| r.kind).collect();
        use RegionKind::*;
        assert_eq!(
            kinds,
            vec![Code, Code, Heap, FileMmap, Shm, HugePages, FileMmap, Stack, Kernel]
        );
    }

    #[test]
    fn paths_with_spaces_and_deleted_files_are_kept_whole() {
        let regions = parse(SAMPLE).unwrap();
        assert_eq!(regions[3].path, "/models/llama 7b/model.safetensors");
        assert!(regions[3].deleted);
        assert_eq!(regions[3].sizes.rss, 512 << 20);
        assert_eq!(regions[3].sizes.size, 1 << 30);
        assert_eq!(regions[3].sizes.file_pmd_mapped, 256 << 20);
        assert_eq!(regions[4].path, "/memfd:torch_shm");
    }

    #[test]
    fn non_utf8_path_bytes_are_escaped_faithfully() {
        let regions = parse(SAMPLE).unwrap();
        assert_eq!(regions[6].path, "/data/caf\\xe9\\012x.bin");
    }

    #[test]
    fn hugetlb_sizes_are_counted_apart_from_rss() {
        let regions = parse(SAMPLE).unwrap();
        assert_eq!(regions[5].sizes.hugetlb, 4 << 20);
        assert_eq!(regions[5].sizes.rss, 0);
    }

    #[test]
    fn private_and_shared_sum_clean_and_dirty() {
        let regions = parse(SAMPLE).unwrap();
        assert_eq!(regions[0].sizes.shared, 8 << 10);
        assert_eq!(regions[2].sizes.private, 900 << 10);
    }

    #[test]
    fn truncated_header_is_an_error_with_its_line() {
        let err = parse(b"5581c2a00000-5581c2a02000 r--p 00000000\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.detail.contains("truncated"), "{}", err.detail);
    }

    #[test]
    fn attribute_before_header_is_an_error() {
        assert!(parse(b"Rss: 4 kB\n").is_err());
    }

    #[test]
    fn empty_input_has_no_regions() {
        assert!(parse(b"").unwrap().is_empty());
    }
}
