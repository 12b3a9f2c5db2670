//! `memtriage cache`, `warm` and `evict`: the engine's page-cache use cases, rendered.

use std::io::Write;

use memtriage_core::usecase::lock::LockOptions;
use memtriage_core::usecase::warm::WarmOptions;
use memtriage_core::usecase::{cache as residency, evict as evicting, warm as warming};
use memtriage_core::ErrorKind;

use super::Context;
use crate::cli::{CacheArgs, EvictArgs, WarmArgs};
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

pub fn cache(ctx: &Context, args: &CacheArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let report = residency::residency(&ctx.root, &args.paths, !args.no_mappers)?;
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::cache::write_cache(&mut p.out, &style, &report.files, args.tensors)?;
        render::cache::write_skipped(&mut p.out, &report.skipped)?;
    }
    // A .safetensors file whose header is broken is bad input, whatever else was shown.
    let mut bad = false;
    for e in report.broken_headers() {
        p.error(e)?;
        bad = true;
    }
    Ok(if bad {
        ExitStatus::BadInput
    } else {
        ExitStatus::Success
    })
}

pub fn warm(ctx: &Context, args: &WarmArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let request = warming::WarmRequest {
        paths: args.paths.clone(),
        options: WarmOptions {
            threads: args.threads.0,
            offset: args.offset.map_or(0, |o| o.0),
            length: args.length.map(|l| l.0),
        },
        lock: args.lock.then_some(LockOptions {
            max: args.max.map(|m| m.0),
            hugepages: args.hugepages,
        }),
    };
    let plan = warming::plan(&ctx.root, &request).map_err(|e| match e.kind() {
        // The engine names no flags; here the user typed them.
        ErrorKind::Refused if args.lock => anyhow::anyhow!("--lock refused: {e}"),
        _ => e.into(),
    })?;
    let bar = (!args.json && p.err.is_terminal())
        .then(|| render::progress::bytes(plan.bytes()))
        .flatten();
    let mut report = plan.warm(&ctx.root, &|n| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if args.lock {
        // Caught before anyone can be told the lock is held, so a SIGTERM sent the
        // moment they read it is waited for, not fatal.
        super::stop::install();
    }
    let locked = plan.lock(&mut report)?;
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        render::cache::write_warm(&mut p.out, &report)?;
    }
    p.out.flush()?;
    if let Some(l) = locked {
        render::cache::write_locked(&mut p.err, l.bytes, l.files())?;
        super::stop::wait();
        drop(l);
        render::cache::write_released(&mut p.err)?;
    }
    Ok(ExitStatus::Success)
}

pub fn evict(ctx: &Context, args: &EvictArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let unwritten = if args.sync {
        evicting::Unwritten::WriteBackFirst
    } else {
        evicting::Unwritten::Keep
    };
    let report = evicting::evict(&ctx.root, &args.paths, unwritten)?;
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &report)?;
        writeln!(p.out)?;
    } else {
        render::cache::write_evict(&mut p.out, &report)?;
    }
    Ok(ExitStatus::Success)
}
