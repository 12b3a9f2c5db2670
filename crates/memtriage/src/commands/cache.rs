//! `memtriage cache`, `warm` and `evict`: the page cache and the files in it.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use memtriage_core::model::system::ProactiveReclaim;
use memtriage_core::pagecache::report::{self, FileReport, CACHE_SCHEMA};
use memtriage_core::pagecache::residency::Meter;
use memtriage_core::pagecache::warm::{evict_file, warm_file, WarmOptions, WarmStats};
use memtriage_core::pagecache::{files, lock};
use memtriage_core::parse::size::parse_size;
use memtriage_core::probe::damon;

use super::Context;
use crate::cli::{CacheArgs, EvictArgs, WarmArgs};
use crate::render::cache as view;

/// Characters of the residency bar.
const BAR: usize = 24;

#[derive(Serialize)]
struct CacheOutput<'a> {
    schema: &'static str,
    files: &'a [FileReport],
}

pub fn cache(ctx: &Context, args: &CacheArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let paths = files::expand(&args.paths)?;
    let reports = paths
        .iter()
        .map(|p| report::inspect(&ctx.root, p, BAR, !args.no_mappers))
        .collect::<Result<Vec<_>, _>>()?;
    if args.json {
        serde_json::to_writer_pretty(
            &mut *out,
            &CacheOutput {
                schema: CACHE_SCHEMA,
                files: &reports,
            },
        )?;
        writeln!(out)?;
    } else {
        view::write_cache(out, &ctx.style, &reports, args.tensors)?;
    }
    // A .safetensors file whose header is broken is bad input, whatever else was shown.
    let bad: Vec<&String> = reports
        .iter()
        .filter_map(|r| r.tensors_error.as_ref())
        .collect();
    for e in &bad {
        eprintln!("memtriage: {e}");
    }
    Ok(if bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_USAGE)
    })
}

#[derive(Serialize)]
struct WarmedFile {
    path: String,
    #[serde(flatten)]
    stats: WarmStats,
    /// Cached share of the file afterwards.
    cached_after: u64,
    size: u64,
}

#[derive(Serialize)]
struct WarmOutput {
    schema: &'static str,
    files: Vec<WarmedFile>,
    bytes_read: u64,
    seconds: f64,
    locked: Option<u64>,
    /// Agents that will page the files out again once they sit idle (unless locked);
    /// `None` where they cannot be read (DAMON's files are root's).
    proactive_reclaim: Option<Vec<ProactiveReclaim>>,
}

fn size_arg(name: &str, v: &Option<String>) -> anyhow::Result<Option<u64>> {
    v.as_deref()
        .map(|s| parse_size(s).map_err(|e| anyhow::anyhow!("--{name}: {e}")))
        .transpose()
}

pub fn warm(ctx: &Context, args: &WarmArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if args.threads == 0 || args.threads > 64 {
        anyhow::bail!("--threads: choose between 1 and 64");
    }
    let paths = files::expand(&args.paths)?;
    let opts = WarmOptions {
        threads: args.threads,
        offset: size_arg("offset", &args.offset)?.unwrap_or(0),
        length: size_arg("length", &args.length)?,
    };
    let max = size_arg("max", &args.max)?;
    let sizes: Vec<u64> = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
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
    let bar = progress_bar(total, args.json);
    let began = std::time::Instant::now();
    let mut warmed = Vec::new();
    for p in &paths {
        let stats = warm_file(p, opts, &|n| {
            if let Some(b) = &bar {
                b.inc(n);
            }
        })?;
        let meter = Meter::open(p)?;
        warmed.push(WarmedFile {
            path: p.display().to_string(),
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
        schema: "memtriage.warm/v1",
        bytes_read,
        seconds,
        locked: locked.as_ref().map(|l| l.bytes),
        files: warmed,
        proactive_reclaim: damon::read(&ctx.root).ok(),
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &output)?;
        writeln!(out)?;
    } else {
        for w in &output.files {
            view::write_warmed(out, &w.path, w.stats, w.cached_after, w.size)?;
        }
        if output.files.len() > 1 {
            writeln!(
                out,
                "{} files: {} read in {:.2} s ({})",
                output.files.len(),
                view::iec(bytes_read),
                seconds,
                view::rate(bytes_read, seconds)
            )?;
        }
        if let (None, Some(reclaim)) = (output.locked, &output.proactive_reclaim) {
            view::write_reclaim_note(out, reclaim)?;
        }
    }
    out.flush()?;
    if let Some(l) = locked {
        eprintln!(
            "memtriage: locked {} in {} file(s) in memory; holding until SIGINT or SIGTERM",
            view::iec(l.bytes),
            l.files()
        );
        wait_for_termination();
        drop(l);
        eprintln!("memtriage: released the lock");
    }
    Ok(ExitCode::SUCCESS)
}

fn progress_bar(total: u64, json: bool) -> Option<indicatif::ProgressBar> {
    if json || !std::io::stderr().is_terminal() || total == 0 {
        return None;
    }
    let b = indicatif::ProgressBar::new(total);
    let style = indicatif::ProgressStyle::with_template(
        "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    b.set_style(style);
    Some(b)
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

#[derive(Serialize)]
struct EvictedFile {
    path: String,
    size: u64,
    cached_before: u64,
    cached_after: u64,
    dirty_after: Option<u64>,
    /// Processes that map the file: their pages cannot be dropped.
    mapped_by: Vec<memtriage_core::pagecache::mappers::Mapper>,
}

pub fn evict(ctx: &Context, args: &EvictArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let paths: Vec<PathBuf> = files::expand(&args.paths)?;
    let mut done = Vec::new();
    for p in &paths {
        let before = Meter::open(p)?.whole();
        evict_file(p)?;
        let after = Meter::open(p)?.whole();
        let mapped_by = if after.cached > 0 {
            memtriage_core::pagecache::mappers::find(&ctx.root, p)
        } else {
            Vec::new()
        };
        done.push(EvictedFile {
            path: p.display().to_string(),
            size: before.bytes,
            cached_before: before.cached,
            cached_after: after.cached,
            dirty_after: after.dirty,
            mapped_by,
        });
    }
    if args.json {
        #[derive(Serialize)]
        struct EvictOutput<'a> {
            schema: &'static str,
            files: &'a [EvictedFile],
        }
        serde_json::to_writer_pretty(
            &mut *out,
            &EvictOutput {
                schema: "memtriage.evict/v1",
                files: &done,
            },
        )?;
        writeln!(out)?;
    } else {
        for e in &done {
            write!(
                out,
                "evicted {}: {} cached before, {} after",
                e.path,
                view::iec(e.cached_before),
                view::iec(e.cached_after)
            )?;
            if e.cached_after > 0 {
                let mut why = Vec::new();
                if let Some(d) = e.dirty_after.filter(|d| *d > 0) {
                    why.push(format!(
                        "{} dirty (not yet written back; run sync first)",
                        view::iec(d)
                    ));
                }
                for m in &e.mapped_by {
                    why.push(format!("mapped by pid {} ({})", m.pid, m.comm));
                }
                if !why.is_empty() {
                    write!(out, " — kept: {}", why.join(", "))?;
                }
            }
            writeln!(out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
