//! `report`: a run's recording, or a window of the machine's history, as the timeline
//! a page draws (memory of the largest processes, the machine's swap and /dev/shm,
//! fault rates, OOM kills and fatal faults as events) and, for a run, its final report.

use std::path::Path;

use crate::error::Result;
use crate::history::store::Store;
use crate::model::run::Timeline;

pub use crate::watch::intervals::now_ms;

/// The recording `run --record` wrote, from its text (JSON lines), whole or cut
/// short; the error says where and why it is not one.
pub fn parse_timeline(text: &str) -> std::result::Result<Timeline, String> {
    crate::parse::timeline::parse(text).map_err(|e| e.detail)
}

/// The first and last interval of the history at `db` (ms since the epoch); `None`
/// where it is empty.
pub fn history_span(db: &Path) -> Result<Option<(i64, i64)>> {
    Store::open_read(db)?.span()
}

/// The history at `db` between `from_ms` and `to_ms`, of `job` alone where given;
/// times in the timeline are seconds since `from_ms`.
pub fn history_window(db: &Path, from_ms: i64, to_ms: i64, job: Option<&str>) -> Result<Timeline> {
    crate::history::window::timeline_between(&Store::open_read(db)?, from_ms, to_ms, job)
}
