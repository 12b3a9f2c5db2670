//! `memtriage inspect`: collect snapshots from the engine, then render them.

use std::io::Write;

use anyhow::Context as _;
use memtriage_core::model::maps::MAPS_SCHEMA;
use memtriage_core::model::process::{ProcessSnapshot, PROCESS_SCHEMA};
use memtriage_core::model::tree::TREE_SCHEMA;
use memtriage_core::probe::process::{all_pids, default_threads, pids_matching, read_many, Detail};
use memtriage_core::probe::{maps, tree};
use memtriage_core::Error;

use super::Context;
use crate::cli::{InspectArgs, SortKey};
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;
use crate::reports::{Collected, PidError, INSPECT_SCHEMA};

pub fn run(ctx: &Context, args: &InspectArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let targets = targets(ctx, args)?;
    let collected = collect(ctx, args, &targets);
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &collected)?;
        writeln!(p.out)?;
    } else {
        let style = p.out.style();
        render::inspect::write(&mut p.out, &style, args.all, &collected)?;
    }
    for e in &collected.errors {
        p.error(&e.error)?;
    }
    let all_failed = !targets.pids.is_empty() && collected.errors.len() == targets.pids.len();
    Ok(
        if collected.errors.is_empty() || (args.all && !all_failed) {
            ExitStatus::Success
        } else {
            ExitStatus::BadInput
        },
    )
}

struct Targets {
    pids: Vec<i32>,
    /// `--all`: processes that vanish or are kernel threads are skipped, not errors.
    listing: bool,
}

fn targets(ctx: &Context, args: &InspectArgs) -> anyhow::Result<Targets> {
    if args.all {
        return Ok(Targets {
            pids: all_pids(&ctx.root).context("listing processes")?,
            listing: true,
        });
    }
    let mut pids = args.pids.clone();
    if let Some(pattern) = &args.name {
        let found = pids_matching(&ctx.root, pattern).context("listing processes")?;
        if found.is_empty() && pids.is_empty() {
            anyhow::bail!("no process matches {pattern:?} (by name or command line)");
        }
        pids.extend(found);
    }
    if pids.is_empty() {
        anyhow::bail!(
            "name what to inspect: PID…, --name PATTERN, or --all (see `memtriage inspect --help`)"
        );
    }
    if let Some(bad) = pids.iter().find(|p| **p <= 0) {
        anyhow::bail!("pid {bad}: not a valid process id (ids are positive)");
    }
    pids.dedup();
    Ok(Targets {
        pids,
        listing: false,
    })
}

fn collect(ctx: &Context, args: &InspectArgs, targets: &Targets) -> Collected {
    let mut c = Collected {
        schema: INSPECT_SCHEMA,
        process_schema: PROCESS_SCHEMA,
        ..Collected::default()
    };
    let fail = |pid: i32, e: Error| PidError {
        pid,
        error: e.to_string(),
    };
    if args.tree {
        for &pid in &targets.pids {
            match tree::read(&ctx.root, Detail::full(), pid) {
                Ok(t) => c.trees.push(t),
                Err(e) => c.errors.push(fail(pid, e)),
            }
        }
        c.tree_schema = (!c.trees.is_empty()).then_some(TREE_SCHEMA);
        return c;
    }
    let detail = if targets.listing {
        Detail::listing()
    } else {
        Detail::full()
    };
    let results = read_many(&ctx.root, detail, &targets.pids, default_threads());
    for (&pid, result) in targets.pids.iter().zip(results) {
        match result {
            Ok(p) if targets.listing && (p.kernel_thread || p.state == 'Z') => {}
            Ok(p) => c.processes.push(p),
            Err(Error::NoSuchProcess { .. }) if targets.listing => {}
            Err(e) => c.errors.push(fail(pid, e)),
        }
    }
    if args.maps {
        for p in &c.processes {
            match maps::read(&ctx.root, p.pid) {
                Ok(m) => c.maps.push(m),
                Err(e) => c.errors.push(fail(p.pid, e)),
            }
        }
        c.maps_schema = (!c.maps.is_empty()).then_some(MAPS_SCHEMA);
    }
    sort(&mut c.processes, args.sort);
    c
}

/// Largest first; unreadable values last; `pid` ascending.
pub fn sort(processes: &mut [ProcessSnapshot], key: SortKey) {
    let value = |p: &ProcessSnapshot| -> Option<u64> {
        match key {
            SortKey::Pid => None,
            SortKey::Rss => p.rss(),
            SortKey::Pss => p.pss(),
            SortKey::Uss => p.uss(),
            SortKey::Swap => p.swap(),
            SortKey::Faults => Some(p.faults.minor + p.faults.major),
        }
    };
    if key == SortKey::Pid {
        processes.sort_by_key(|p| p.pid);
    } else {
        processes.sort_by(|a, b| value(b).cmp(&value(a)).then(a.pid.cmp(&b.pid)));
    }
}
