//! `bench load`: loading a checkpoint each way people do, cold and hot, against the
//! machine's own ceilings measured in the same run (sequential disk read for cold,
//! memory copy for hot). Faults per GiB show the folio size the kernel used.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

use super::mapping::Mapping;
use super::warm::{evict_file, warm_file, WarmOptions};
use crate::error::{Error, Result};
use crate::model::bench::{LoadBench, Measurement, Method, BENCH_SCHEMA};
use crate::model::units::iec;

const PAGE: usize = 4096;

fn faults() -> (u64, u64) {
    // SAFETY: getrusage fills a local struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    (u.ru_minflt.max(0) as u64, u.ru_majflt.max(0) as u64)
}

/// The synthetic checkpoint's embedding table alone (32000 x 4096 bf16): the least it
/// can be with a 7B model's shapes.
pub const MIN_SYNTHETIC: u64 = 32000 * 4096 * 2;

/// Whether a synthetic checkpoint of `size` bytes can be written into `dir` and
/// measure what it is meant to: a disk, not memory.
pub fn check_synthetic(dir: &Path, size: u64) -> Result<()> {
    if size < MIN_SYNTHETIC {
        return Err(Error::bad_input(
            format!("checkpoint size {}", iec(size)),
            format!(
                "the synthetic checkpoint has a 7B model's shapes, and its embedding table alone \
                 is {}: give a size of 256M or more, or a checkpoint of your own",
                iec(MIN_SYNTHETIC)
            ),
        ));
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::bad_input(dir.display().to_string(), "a NUL byte in the path"))?;
    // SAFETY: statfs fills a local struct from a NUL-terminated path.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut fs) } != 0 {
        return Err(Error::io(dir, std::io::Error::last_os_error()));
    }
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    if [TMPFS_MAGIC, RAMFS_MAGIC].contains(&(fs.f_type as i64)) {
        return Err(Error::bad_input(
            dir.display().to_string(),
            "on tmpfs, which is memory: a load from it measures memory, not the disk; give a \
             directory on the disk the checkpoints load from (the default is /var/tmp)",
        ));
    }
    Ok(())
}

/// Writes a synthetic checkpoint of about `size` bytes: transformer layers of bf16
/// tensors with the shapes of a 7B-class model (hidden 4096, MLP 11008).
pub fn generate(path: &Path, size: u64) -> Result<u64> {
    let (h, m) = (4096u64, 11008u64);
    let layer: [(&str, [u64; 2]); 7] = [
        ("self_attn.q_proj.weight", [h, h]),
        ("self_attn.k_proj.weight", [h, h]),
        ("self_attn.v_proj.weight", [h, h]),
        ("self_attn.o_proj.weight", [h, h]),
        ("mlp.gate_proj.weight", [m, h]),
        ("mlp.up_proj.weight", [m, h]),
        ("mlp.down_proj.weight", [h, m]),
    ];
    let mut entries = Vec::new();
    let mut offset = 0u64;
    let push = |name: String, shape: Vec<u64>, entries: &mut Vec<String>, offset: &mut u64| {
        let bytes = shape.iter().product::<u64>() * 2;
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"BF16\",\"shape\":{shape:?},\"data_offsets\":[{},{}]}}",
            *offset,
            *offset + bytes
        ));
        *offset += bytes;
    };
    push(
        "model.embed_tokens.weight".into(),
        vec![32000, h],
        &mut entries,
        &mut offset,
    );
    let mut i = 0;
    while offset < size {
        for (name, shape) in layer {
            if offset >= size {
                break;
            }
            push(
                format!("model.layers.{i}.{name}"),
                shape.to_vec(),
                &mut entries,
                &mut offset,
            );
        }
        i += 1;
    }
    let mut header = format!(
        "{{\"__metadata__\":{{\"format\":\"pt\",\"generator\":\"memtriage bench load\"}},{}}}",
        entries.join(",")
    );
    while (8 + header.len()) % 8 != 0 {
        header.push(' ');
    }
    let mut f = File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(|e| Error::io(path, e))?;
    f.write_all(header.as_bytes())
        .map_err(|e| Error::io(path, e))?;
    // Not zeros: a filesystem may store zero runs sparsely, and that is no checkpoint.
    let block: Vec<u8> = (0..(4usize << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let mut left = offset;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        f.write_all(&block[..n]).map_err(|e| Error::io(path, e))?;
        left -= n as u64;
    }
    f.sync_all().map_err(|e| Error::io(path, e))?;
    Ok(8 + header.len() as u64 + offset)
}

/// Loads the file one way; returns the minor and major faults the load itself took.
/// For `warm` then mmap, those of the mapping alone: warm's populate faults its own
/// windows in, and those say nothing of the folios a user's mapping meets.
fn load(path: &Path, method: Method, buffer: &mut Vec<u8>) -> Result<(u64, u64)> {
    let io = |e| Error::io(path, e);
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len() as usize;
    let mut sink = 0u64;
    let mut before = faults();
    match method {
        Method::Read => {
            // A fresh buffer each time: a loader's tensors land in new memory.
            *buffer = Vec::with_capacity(len);
            let spare = buffer.spare_capacity_mut();
            // SAFETY: u8 has no invalid values; every byte is written by read_at below
            // before the length is set to what was read.
            let slice =
                unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<u8>(), len) };
            let mut at = 0;
            while at < len {
                let n = file
                    .read_at(&mut slice[at..(at + (16 << 20)).min(len)], at as u64)
                    .map_err(io)?;
                if n == 0 {
                    break;
                }
                at += n;
            }
            // SAFETY: the first `at` bytes were written.
            unsafe { buffer.set_len(at) };
            sink = sink.wrapping_add(buffer.get(len / 2).copied().unwrap_or(0) as u64);
        }
        Method::MapPopulate => {
            let m = Mapping::new(&file, len, libc::MAP_POPULATE).map_err(io)?;
            sink = m.touch(PAGE);
        }
        Method::MadvPopulateRead => {
            let m = Mapping::new(&file, len, 0).map_err(io)?;
            m.populate().map_err(io)?;
            sink = m.touch(PAGE);
        }
        Method::MmapLazy | Method::MmapWillneed | Method::MmapHugepage | Method::WarmThenMmap => {
            if method == Method::WarmThenMmap {
                warm_file(path, WarmOptions::default(), &|_| {})?;
                before = faults();
            }
            let m = Mapping::new(&file, len, 0).map_err(io)?;
            match method {
                Method::MmapWillneed => m.advise(libc::MADV_WILLNEED).map_err(io)?,
                Method::MmapHugepage => m.advise(libc::MADV_HUGEPAGE).map_err(io)?,
                _ => {}
            }
            sink = m.touch(PAGE);
        }
    }
    std::hint::black_box(sink);
    let after = faults();
    Ok((
        after.0.saturating_sub(before.0),
        after.1.saturating_sub(before.1),
    ))
}

/// Readers of the disk ceiling: one O_DIRECT request in flight leaves a virtual disk
/// idle between requests; four keep its queue full.
const DISK_READERS: u64 = 4;

/// Sequential read speed of the disk under `path`: O_DIRECT (no page cache), 16 MiB
/// requests, one contiguous segment per reader.
fn disk_ceiling(path: &Path, len: u64) -> Result<f64> {
    let chunk = 16usize << 20;
    let segment = len.div_ceil(DISK_READERS).next_multiple_of(chunk as u64);
    let began = Instant::now();
    let read: Result<u64> = std::thread::scope(|scope| {
        let readers: Vec<_> = (0..DISK_READERS)
            .map(|i| {
                scope.spawn(move || {
                    read_direct(path, i * segment, ((i + 1) * segment).min(len), chunk)
                })
            })
            .collect();
        readers
            .into_iter()
            .map(|r| {
                r.join()
                    .unwrap_or_else(|_| Err(Error::internal("a disk reader failed")))
            })
            .sum()
    });
    let read = read?;
    Ok(read as f64 / began.elapsed().as_secs_f64().max(1e-9))
}

fn read_direct(path: &Path, start: u64, end: u64, chunk: usize) -> Result<u64> {
    if start >= end {
        return Ok(0);
    }
    let io = |e| Error::io(path, e);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(io)?;
    let layout = std::alloc::Layout::from_size_align(chunk, 4096)
        .map_err(|e| Error::internal(format!("the disk read buffer's layout: {e}")))?;
    // SAFETY: an aligned buffer for O_DIRECT, freed below.
    let ptr = unsafe { std::alloc::alloc(layout) };
    if ptr.is_null() {
        return Err(Error::refused(
            "the disk read buffer",
            "out of memory",
            "free memory and run the benchmark again",
        ));
    }
    // SAFETY: `ptr` is `chunk` bytes we own.
    let buf = unsafe { std::slice::from_raw_parts_mut(ptr, chunk) };
    let mut at = start;
    let mut result = Ok(());
    while at < end {
        match file.read_at(buf, at) {
            Ok(0) => break,
            Ok(n) => at += n as u64,
            Err(e) => {
                result = Err(io(e));
                break;
            }
        }
    }
    // SAFETY: freeing what we allocated with the same layout.
    unsafe { std::alloc::dealloc(ptr, layout) };
    result.map(|()| at - start)
}

/// Memory copy speed: 256 MiB copied between two warmed buffers, best of 3.
fn memory_ceiling() -> f64 {
    let n = 256usize << 20;
    let src = vec![1u8; n];
    let mut dst = vec![0u8; n];
    let mut best = f64::MAX;
    for _ in 0..3 {
        let began = Instant::now();
        dst.copy_from_slice(&src);
        std::hint::black_box(&dst);
        best = best.min(began.elapsed().as_secs_f64());
    }
    n as f64 / best.max(1e-9)
}

const HOT_RUNS: usize = 5;
const HOT_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs every method cold (evicted first) and hot (the fastest of up to five runs). `progress` gets a line per step.
pub fn run(path: &Path, generated: bool, progress: &mut dyn FnMut(&str)) -> Result<LoadBench> {
    let bytes = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    if bytes == 0 {
        return Err(Error::bad_input(
            path.display().to_string(),
            "empty file, nothing to load",
        ));
    }
    progress("measuring the disk's sequential read speed");
    evict_file(path)?;
    let disk = disk_ceiling(path, bytes)?;
    progress("measuring memory copy speed");
    let memory = memory_ceiling();
    let mut results = Vec::new();
    let mut buffer = Vec::new();
    for method in Method::ALL {
        for cold in [true, false] {
            progress(&format!(
                "{} ({})",
                method.label(),
                if cold { "cold" } else { "hot" }
            ));
            if cold {
                evict_file(path)?;
            } else {
                // Hot: the file is in the page cache; read it once the plain way.
                warm_file(path, WarmOptions::default(), &|_| {})?;
            }
            // A cold load runs once (each costs a disk read); a hot one is a few tens of
            // milliseconds that a neighbour on a shared host can double, so it runs until
            // HOT_BUDGET is spent (at most HOT_RUNS times) and the fastest run counts.
            let mut best: Option<(f64, u64, u64)> = None;
            let started = Instant::now();
            for _ in 0..if cold { 1 } else { HOT_RUNS } {
                let began = Instant::now();
                let (minor, major) = load(path, method, &mut buffer)?;
                let seconds = began.elapsed().as_secs_f64();
                buffer = Vec::new();
                if best.is_none_or(|(s, _, _)| seconds < s) {
                    best = Some((seconds, minor, major));
                }
                if started.elapsed() > HOT_BUDGET {
                    break;
                }
            }
            let (seconds, minor_faults, major_faults) = best.unwrap_or_default();
            let rate = bytes as f64 / seconds.max(1e-9);
            results.push(Measurement {
                method,
                cold,
                seconds,
                bytes_per_second: rate,
                minor_faults,
                major_faults,
                of_ceiling: rate / if cold { disk } else { memory },
            });
        }
    }
    Ok(LoadBench {
        schema: BENCH_SCHEMA.into(),
        file: path.display().to_string(),
        bytes,
        generated,
        disk_read_bytes_per_second: disk,
        memory_copy_bytes_per_second: memory,
        results,
    })
}
