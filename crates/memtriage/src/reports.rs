//! What a command collected, as one value: serialised as is for `--json`, and read
//! by `render/` for people. Commands fill these; renderers never see arguments.
//! (They belong with the engine's use cases once those return them.)

use serde::Serialize;

use memtriage_core::model::maps::MapsReport;
use memtriage_core::model::process::ProcessSnapshot;
use memtriage_core::model::system::ProactiveReclaim;
use memtriage_core::model::tree::TreeSnapshot;
use memtriage_core::pagecache::mappers::Mapper;
use memtriage_core::pagecache::warm::WarmStats;

pub const INSPECT_SCHEMA: &str = "memtriage.inspect/v1";
pub const WARM_SCHEMA: &str = "memtriage.warm/v1";
pub const EVICT_SCHEMA: &str = "memtriage.evict/v1";

/// Everything one `inspect` run collected.
#[derive(Debug, Default, Serialize)]
pub struct Collected {
    pub schema: &'static str,
    pub process_schema: &'static str,
    pub processes: Vec<ProcessSnapshot>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trees: Vec<TreeSnapshot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_schema: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub maps: Vec<MapsReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maps_schema: Option<&'static str>,
    /// Pids the user named that could not be read, with why.
    pub errors: Vec<PidError>,
}

#[derive(Debug, Serialize)]
pub struct PidError {
    pub pid: i32,
    pub error: String,
}

#[derive(Debug, Serialize)]
pub struct WarmedFile {
    pub path: String,
    #[serde(flatten)]
    pub stats: WarmStats,
    /// Cached share of the file afterwards.
    pub cached_after: u64,
    pub size: u64,
}

/// `memtriage.warm/v1`.
#[derive(Debug, Serialize)]
pub struct WarmOutput {
    pub schema: &'static str,
    pub files: Vec<WarmedFile>,
    pub bytes_read: u64,
    pub seconds: f64,
    pub locked: Option<u64>,
    /// Agents that will page the files out again once they sit idle (unless locked);
    /// `None` where they cannot be read (DAMON's files are root's).
    pub proactive_reclaim: Option<Vec<ProactiveReclaim>>,
}

#[derive(Debug, Serialize)]
pub struct EvictedFile {
    pub path: String,
    pub size: u64,
    pub cached_before: u64,
    pub cached_after: u64,
    pub dirty_after: Option<u64>,
    /// Processes that map the file: their pages cannot be dropped.
    pub mapped_by: Vec<Mapper>,
}

/// `memtriage.evict/v1`.
#[derive(Debug, Serialize)]
pub struct EvictOutput {
    pub schema: &'static str,
    pub files: Vec<EvictedFile>,
}
