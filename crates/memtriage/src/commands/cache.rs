//! `memtriage cache`, `warm` and `evict`: the page cache and the files in it.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use memtriage_core::pagecache::report::{self, FileReport, CACHE_SCHEMA};
use memtriage_core::pagecache::residency::Meter;
use memtriage_core::pagecache::warm::{evict_file, warm_file, WarmOptions};
use memtriage_core::pagecache::{files, lock, mappers};
use memtriage_core::probe::damon;

use super::Context;
use crate::cli::{CacheArgs, EvictArgs, WarmArgs};
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;
use crate::reports::{EvictOutput, EvictedFile, WarmOutput, WarmedFile, EVICT_SCHEMA, WARM_SCHEMA};

/// Characters of the residency bar.
const BAR: usize = 24;

#[derive(Serialize)]
struct CacheOutput<'a> {
    schema: &'static str,
    files: &'a [FileReport],
}

pub fn cache(ctx: &Context, args: &CacheArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let paths = files::expand(&args.paths)?;
    let reports = paths
        .iter()
        .map(|path| report::inspect(&ctx.root, path, BAR, !args.no_mappers))
        .collect::<Result<Vec<_>, _>>()?;
    if args.json {
        serde_json::to_writer_pretty(
            &mut p.out,
            &CacheOutput {
                schema: CACHE_SCHEMA,
                files: &reports,
            },
        )?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::cache::write_cache(&mut p.out, &style, &reports, args.tensors)?;
    }
    // A .safetensors file whose header is broken is bad input, whatever else was shown.
    let bad: Vec<&String> = reports
        .iter()
        .filter_map(|r| r.tensors_error.as_ref())
        .collect();
    for e in &bad {
        p.error(e)?;
    }
    Ok(if bad.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::BadInput
    })
}

pub fn warm(ctx: &Context, args: &WarmArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    if args.threads == 0 || args.threads > 64 {
        anyhow::bail!("--threads: choose between 1 and 64");
    }
    let paths = files::expand(&args.paths)?;
    let opts = WarmOptions {
        threads: args.threads,
        offset: args.offset.map_or(0, |o| o.0),
        length: args.length.map(|l| l.0),
    };
    let max = args.max.map(|m| m.0);
    let sizes: Vec<u64> = paths
        .iter()
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|m| m.len())
        .collect();
    if args.lock {
        // Refuse before reading anything: a lock that cannot be granted should not
        // first push the machine's page cache around.
        lock::check(&ctx.root, sizes.iter().sum(), max)
            .map_err(|e| anyhow::anyhow!("--lock refused: {e}"))?;
    }
    let total: u64 = sizes
        .iter()
        .map(|&len| {
            let start = opts.offset.min(len);
            opts.length.map_or(len - start, |l| l.min(len - start))
        })
        .sum();
    let bar = (!args.json && p.err.is_terminal())
        .then(|| render::progress::bytes(total))
        .flatten();
    let began = std::time::Instant::now();
    let mut warmed = Vec::new();
    for path in &paths {
        let stats = warm_file(path, opts, &|n| {
            if let Some(b) = &bar {
                b.inc(n);
            }
        })?;
        let meter = Meter::open(path)?;
        warmed.push(WarmedFile {
            path: path.display().to_string(),
            stats,
            cached_after: meter.whole().cached,
            size: meter.size(),
        });
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let seconds = began.elapsed().as_secs_f64();
    let bytes_read: u64 = warmed.iter().map(|w| w.stats.read).sum();
    let locked = if args.lock {
        // Blocked before anyone can be told the lock is held, so a SIGTERM sent the
        // moment they read it is waited for, not fatal.
        block_termination();
        Some(lock::lock(&paths, args.hugepages)?)
    } else {
        None
    };
    let output = WarmOutput {
        schema: WARM_SCHEMA,
        bytes_read,
        seconds,
        locked: locked.as_ref().map(|l| l.bytes),
        files: warmed,
        proactive_reclaim: damon::read(&ctx.root).ok(),
    };
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &output)?;
        writeln!(p.out)?;
    } else {
        render::cache::write_warm(&mut p.out, &output)?;
    }
    p.out.flush()?;
    if let Some(l) = locked {
        render::cache::write_locked(&mut p.err, l.bytes, l.files())?;
        wait_for_termination();
        drop(l);
        render::cache::write_released(&mut p.err)?;
    }
    Ok(ExitStatus::Success)
}

fn termination_set() -> libc::sigset_t {
    // SAFETY: initialises and fills a local signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        set
    }
}

fn block_termination() {
    let set = termination_set();
    // SAFETY: changes this thread's signal mask only.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Waits for SIGINT or SIGTERM (blocked earlier), so the caller can unlock cleanly.
fn wait_for_termination() {
    let set = termination_set();
    let mut sig = 0;
    // SAFETY: waits on a set of signals this thread has blocked.
    unsafe {
        libc::sigwait(&set, &mut sig);
    }
}

pub fn evict(ctx: &Context, args: &EvictArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let paths: Vec<PathBuf> = files::expand(&args.paths)?;
    let mut done = Vec::new();
    for path in &paths {
        let before = Meter::open(path)?.whole();
        evict_file(path)?;
        let after = Meter::open(path)?.whole();
        let mapped_by = if after.cached > 0 {
            mappers::find(&ctx.root, path)
        } else {
            Vec::new()
        };
        done.push(EvictedFile {
            path: path.display().to_string(),
            size: before.bytes,
            cached_before: before.cached,
            cached_after: after.cached,
            dirty_after: after.dirty,
            mapped_by,
        });
    }
    let output = EvictOutput {
        schema: EVICT_SCHEMA,
        files: done,
    };
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &output)?;
        writeln!(p.out)?;
    } else {
        render::cache::write_evict(&mut p.out, &output)?;
    }
    Ok(ExitStatus::Success)
}
