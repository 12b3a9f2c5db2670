//! Page-cache residency, warming and eviction for people.

use super::printable::printable;
use std::io::{self, Write};

use memtriage_core::model::system::ProactiveReclaim;
use memtriage_core::usecase::cache::{FileReport, Skipped};
use memtriage_core::usecase::warm::WarmedFile;

use super::style::Style;
use super::table;
use super::units::percent;
use memtriage_core::model::units::iec;
use memtriage_core::usecase::evict::{EvictReport, EvictedFile};
use memtriage_core::usecase::warm::WarmReport;

/// A compact bar: one character per segment of the file, darker where more is cached.
pub fn bar(segments: &[f64]) -> String {
    segments
        .iter()
        .map(|f| match f {
            x if *x >= 0.95 => '█',
            x if *x >= 0.5 => '▓',
            x if *x >= 0.1 => '▒',
            x if *x > 0.0 => '░',
            _ => '·',
        })
        .collect()
}

fn rate(bytes: u64, seconds: f64) -> String {
    if seconds <= 0.0 {
        return "-".into();
    }
    format!("{}/s", iec((bytes as f64 / seconds) as u64))
}

pub fn write_cache(
    out: &mut dyn Write,
    style: &Style,
    files: &[FileReport],
    tensors: bool,
) -> io::Result<()> {
    let mut t = table::new(&["CACHED", "OF", "%", "RESIDENCY", "FILE"], 0);
    for f in files {
        t.add_row(vec![
            iec(f.cached),
            iec(f.size),
            percent(f.cached, f.size),
            bar(&f.segments),
            printable(&f.path).into_owned(),
        ]);
    }
    for i in [3, 4] {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(comfy_table::CellAlignment::Left);
        }
    }
    writeln!(out, "{}", table::to_string(&t))?;
    for f in files {
        for m in &f.mapped_by {
            writeln!(
                out,
                "  {}: mapped by pid {} ({}): {} resident of {} mapped",
                printable(&f.path),
                m.pid,
                printable(&m.comm),
                m.resident.map(iec).unwrap_or_else(|| "unreadable".into()),
                iec(m.mapped)
            )?;
        }
        if let Some(ts) = &f.tensors {
            let full = ts
                .iter()
                .filter(|t| t.bytes > 0 && t.cached >= t.bytes)
                .count();
            let cold = ts.iter().filter(|t| t.cached == 0 && t.bytes > 0).count();
            writeln!(
                out,
                "  {}: {} tensors, {} fully in the page cache, {} partly, {} cold",
                printable(&f.path),
                ts.len(),
                full,
                ts.len() - full - cold,
                cold
            )?;
            if tensors {
                let mut tt = table::new(&["CACHED", "OF", "%", "DTYPE", "SHAPE", "TENSOR"], 0);
                for t in ts {
                    tt.add_row(vec![
                        iec(t.cached),
                        iec(t.bytes),
                        percent(t.cached, t.bytes),
                        t.dtype.clone(),
                        format!("{:?}", t.shape),
                        t.name.clone(),
                    ]);
                }
                for i in [3, 4, 5] {
                    if let Some(c) = tt.column_mut(i) {
                        c.set_cell_alignment(comfy_table::CellAlignment::Left);
                    }
                }
                writeln!(out, "{}", table::to_string(&tt))?;
            }
        }
    }
    if files.len() > 1 {
        let size: u64 = files.iter().map(|f| f.size).sum();
        let cached: u64 = files.iter().map(|f| f.cached).sum();
        writeln!(
            out,
            "{} {} files, {} of {} in the page cache ({})",
            style.bold("total"),
            files.len(),
            iec(cached),
            iec(size),
            percent(cached, size)
        )?;
    }
    Ok(())
}

fn write_warmed(out: &mut dyn Write, path: &str, f: &WarmedFile) -> io::Result<()> {
    let (s, size) = (f.stats, f.size);
    let Some(cached_after) = f.cached_after else {
        // Every byte was read, cached or not: the rate is no disk's.
        return writeln!(
            out,
            "warmed {path}: went through {} in {:.2} s, cached before and after unknown ({}); \
             the pages are in the page cache now unless memory is short",
            iec(s.read),
            s.seconds,
            f.unknown.as_deref().unwrap_or("the kernel would not say")
        );
    };
    if s.read == 0 && s.bytes > 0 && s.already_cached >= s.bytes {
        // Nothing read: a rate of 0 B/s would read as a disk that failed.
        return writeln!(
            out,
            "warmed {path}: nothing to read, {} already in the page cache ({} of the file)",
            iec(s.already_cached),
            percent(cached_after, size)
        );
    }
    write!(
        out,
        "warmed {path}: read {} in {:.2} s ({}), {} now in the page cache",
        iec(s.read),
        s.seconds,
        rate(s.read, s.seconds),
        percent(cached_after, size)
    )?;
    if s.already_cached > 0 {
        write!(out, "; {} was already cached", iec(s.already_cached))?;
    }
    if s.read + s.already_cached < s.bytes {
        write!(
            out,
            " (the file shrank while it was read: {} of {})",
            iec(s.read),
            iec(s.bytes)
        )?;
    }
    writeln!(out)
}

/// After an unlocked warm on a machine that reclaims idle memory: the files will not
/// stay, and what keeps them.
fn write_reclaim_note(out: &mut dyn Write, reclaim: &[&ProactiveReclaim]) -> io::Result<()> {
    let Some(shortest) = reclaim.iter().min_by(|a, b| {
        let idle = |r: &ProactiveReclaim| r.min_idle_seconds.unwrap_or(f64::INFINITY);
        idle(a).total_cmp(&idle(b))
    }) else {
        return Ok(());
    };
    let idle = shortest
        .min_idle_seconds
        .map_or("a while".to_string(), |s| format!("{s:.0} s"));
    writeln!(
        out,
        "note: this machine pages out memory idle for {idle} (DAMON pageout, {}): the files \
         leave the page cache again once unused that long; `--lock` pins them (memtriage doctor \
         explains)",
        shortest.operations
    )
}

/// `warm`'s text: a line per file, a total for several, and the reclaim note where
/// the files will not stay.
pub fn write_warm(out: &mut dyn Write, w: &WarmReport) -> io::Result<()> {
    for f in &w.files {
        write_warmed(out, &printable(&f.path), f)?;
    }
    if w.files.len() > 1 {
        writeln!(
            out,
            "{} files: {} read in {:.2} s ({})",
            w.files.len(),
            iec(w.bytes_read),
            w.seconds,
            rate(w.bytes_read, w.seconds)
        )?;
    }
    write_skipped(out, &w.skipped)?;
    if let (None, Some(reclaim)) = (w.locked, w.page_cache_reclaim()) {
        write_reclaim_note(out, &reclaim)?;
    }
    Ok(())
}

/// `warm --lock` holds the files until a signal; this says so (on stderr).
pub fn write_locked(err: &mut dyn Write, bytes: u64, files: usize) -> io::Result<()> {
    writeln!(
        err,
        "memtriage: locked {} in {} in memory; holding until SIGINT or SIGTERM",
        iec(bytes),
        memtriage_core::model::units::counted(files as u64, "file", "files")
    )
}

pub fn write_released(err: &mut dyn Write) -> io::Result<()> {
    writeln!(err, "memtriage: released the lock")
}

/// `evict`'s text: a line per file, and why pages stayed.
pub fn write_evict(out: &mut dyn Write, output: &EvictReport) -> io::Result<()> {
    for e in &output.files {
        let (Some(before), Some(after)) = (e.cached_before, e.cached_after) else {
            writeln!(
                out,
                "evicted {}: cached before and after unknown ({})",
                printable(&e.path),
                e.unknown.as_deref().unwrap_or("the kernel would not say")
            )?;
            continue;
        };
        write!(
            out,
            "evicted {}: {} cached before, {} after",
            printable(&e.path),
            iec(before),
            iec(after)
        )?;
        if after > 0 {
            write!(out, " — kept: {}", why_kept(e).join(", "))?;
        }
        writeln!(out)?;
    }
    write_skipped(out, &output.skipped)
}

/// What held the pages `evict` left, as far as the kernel tells.
fn why_kept(e: &EvictedFile) -> Vec<String> {
    let mut why = Vec::new();
    let dirty = e.dirty_after.unwrap_or(0);
    let writeback = e.writeback_after.unwrap_or(0);
    if dirty + writeback > 0 {
        let parts: Vec<String> = [(dirty, "dirty"), (writeback, "being written back")]
            .iter()
            .filter(|(b, _)| *b > 0)
            .map(|(b, what)| format!("{} {what}", iec(*b)))
            .collect();
        let fix = if e.synced {
            "written again meanwhile"
        } else {
            "not yet on disk; `evict --sync` writes them back first, or run sync"
        };
        why.push(format!("{} ({fix})", parts.join(" and ")));
    }
    for m in &e.mapped_by {
        why.push(format!("mapped by pid {} ({})", m.pid, m.comm));
    }
    if why.is_empty() {
        why.push(match (e.dirty_after, e.synced) {
            (None, false) => "this kernel does not tell dirty pages (no cachestat); \
                              `evict --sync` writes them back first"
                .to_string(),
            _ => "nothing the kernel shows (no dirty page, no process maps it); \
                  pages read back meanwhile stay"
                .to_string(),
        });
    }
    why
}

/// The files a walk found but could not work on, after the ones it did.
pub fn write_skipped(out: &mut dyn Write, skipped: &[Skipped]) -> io::Result<()> {
    if skipped.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "skipped {} file{} found by the walk:",
        skipped.len(),
        if skipped.len() == 1 { "" } else { "s" }
    )?;
    for s in skipped {
        writeln!(out, "  {} ({})", printable(&s.path), s.reason)?;
    }
    Ok(())
}
