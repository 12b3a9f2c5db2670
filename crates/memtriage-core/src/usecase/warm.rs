//! `warm`: read files into the page cache at the disk's speed, and optionally lock
//! them there. Planned first, so that everything refusable (a bad argument, a special
//! file, a lock that would not be allowed) is refused before anything is read.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::lock::LockOptions;
use crate::error::{Error, Result};
use crate::model::system::ProactiveReclaim;
use crate::pagecache::files::{self, Skipped, Walk};
use crate::pagecache::lock::{self, Locked};
use crate::pagecache::residency::Meter;
use crate::pagecache::warm::warm_file;
use crate::probe::damon;
use crate::probe::root::Root;

pub use crate::pagecache::warm::{WarmMethod, WarmOptions, WarmStats};

pub const WARM_SCHEMA: &str = "memtriage.warm/v1";

/// Reader threads a caller may ask for.
pub const MAX_THREADS: usize = 64;

#[derive(Debug, Clone)]
pub struct WarmRequest {
    pub paths: Vec<PathBuf>,
    pub options: WarmOptions,
    /// Lock the files in memory once warm.
    pub lock: Option<LockOptions>,
}

/// What warming did (`memtriage.warm/v1`).
#[derive(Debug, Serialize)]
pub struct WarmReport {
    pub schema: &'static str,
    pub files: Vec<WarmedFile>,
    pub bytes_read: u64,
    pub seconds: f64,
    /// Bytes locked; `None` when not asked to lock.
    pub locked: Option<u64>,
    /// Agents that will page the files out again once they sit idle (unless locked);
    /// `None` where they cannot be read (DAMON's files are root's).
    pub proactive_reclaim: Option<Vec<ProactiveReclaim>>,
    /// Files and directories a walk found but could not warm (deleted meanwhile, or
    /// refused), with the reason.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WarmedFile {
    pub path: String,
    #[serde(flatten)]
    pub stats: WarmStats,
    /// Cached bytes of the file afterwards; `None` where the kernel hides them from
    /// this caller (see `unknown`).
    pub cached_after: Option<u64>,
    pub size: u64,
    /// Why the cached figures are unknown: every byte was then read, cached or not.
    pub unknown: Option<String>,
}

impl WarmReport {
    /// The reclaim agents that reach the page cache, which the warmed files will not
    /// survive once idle; `None` where they could not be read.
    pub fn page_cache_reclaim(&self) -> Option<Vec<&ProactiveReclaim>> {
        self.proactive_reclaim.as_deref().map(reaching_page_cache)
    }
}

/// The agents among `all` that page out the page cache (schemes over physical
/// memory), not only what some process maps.
pub fn reaching_page_cache(all: &[ProactiveReclaim]) -> Vec<&ProactiveReclaim> {
    all.iter().filter(|r| r.reaches_page_cache()).collect()
}

/// A warm that passed every check: the files to read and how.
#[derive(Debug)]
pub struct WarmPlan {
    walk: Walk,
    options: WarmOptions,
    lock: Option<LockOptions>,
    bytes: u64,
}

/// Checks `request`: the thread count, the paths (regular files; directories are
/// walked) and, when a lock is asked for, whether it would be allowed.
pub fn plan(root: &Root, request: &WarmRequest) -> Result<WarmPlan> {
    let threads = request.options.threads;
    if threads == 0 || threads > MAX_THREADS {
        return Err(Error::bad_input(
            format!("threads {threads}"),
            format!("choose between 1 and {MAX_THREADS} reader threads"),
        ));
    }
    let walk = files::walk(&request.paths)?;
    let offset = request.options.offset;
    if offset > 0 {
        // A range that starts past the end of a file the caller named would read
        // nothing and say nothing; in a walked directory, smaller files are expected.
        for t in walk.targets.iter().filter(|t| !t.walked) {
            let len = t.size;
            if offset >= len {
                return Err(Error::bad_input(
                    t.path.display().to_string(),
                    format!(
                        "the offset {} is at or past the end of the file ({} long): nothing to warm",
                        crate::model::units::iec(offset),
                        crate::model::units::iec(len)
                    ),
                ));
            }
        }
    }
    if let Some(l) = request.lock {
        // Refused before reading anything: a lock that cannot be granted should not
        // first push the machine's page cache around.
        lock::check(root, walk.size(), l.max)?;
    }
    let opts = request.options;
    let bytes = walk
        .targets
        .iter()
        .map(|t| {
            let start = opts.offset.min(t.size);
            opts.length
                .map_or(t.size - start, |l| l.min(t.size - start))
        })
        .sum();
    Ok(WarmPlan {
        walk,
        options: opts,
        lock: request.lock,
        bytes,
    })
}

impl WarmPlan {
    /// Bytes in the ranges to warm, as the files were found (for a progress bar).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Reads the files in; `progress` is told of each batch of bytes read.
    pub fn warm(&self, root: &Root, progress: &(dyn Fn(u64) + Sync)) -> Result<WarmReport> {
        let began = Instant::now();
        let (files, skipped) = self.walk.each(|p| {
            let stats = warm_file(p, self.options, progress)?;
            let meter = Meter::open(p)?;
            let unknown = meter
                .unknown_reason()
                .map(|(why, fix)| format!("{why}: {fix}"));
            Ok(WarmedFile {
                path: p.display().to_string(),
                stats,
                cached_after: unknown.is_none().then(|| meter.whole().cached),
                size: meter.size(),
                unknown,
            })
        })?;
        Ok(WarmReport {
            schema: WARM_SCHEMA,
            bytes_read: files.iter().map(|w| w.stats.read).sum(),
            seconds: began.elapsed().as_secs_f64(),
            files,
            locked: None,
            proactive_reclaim: damon::read(root).ok(),
            skipped,
        })
    }

    /// Locks the warmed files when the request asked for it, recording the bytes in
    /// `report`; they stay locked until the returned value is dropped.
    pub fn lock(&self, report: &mut WarmReport) -> Result<Option<Locked>> {
        let Some(options) = self.lock else {
            return Ok(None);
        };
        // What was warmed: a walked file that vanished meanwhile is not locked.
        let warmed: Vec<PathBuf> = report
            .files
            .iter()
            .map(|f| PathBuf::from(&f.path))
            .collect();
        let held = lock::lock(&warmed, options.hugepages)?;
        report.locked = Some(held.bytes);
        Ok(Some(held))
    }
}

/// Proactive reclaim running on the machine (DAMON schemes that page out memory idle
/// for a set time): a warmed file that then waits is read from disk again.
pub fn proactive_reclaim(root: &Root) -> Result<Vec<ProactiveReclaim>> {
    damon::read(root)
}
