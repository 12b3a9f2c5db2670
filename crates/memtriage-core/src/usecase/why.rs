//! `why`: the verdict on a death nobody supervised, from the machine's history (what
//! [`super::record`] kept): the latest OOM kill or fatal fault (of one pid, or since a
//! time), with the growth before it, what else held memory, and the fix.

use std::path::Path;

use crate::error::{Error, Result};
use crate::history::store::Store;
use crate::history::why::record_notes;

pub use crate::history::why::WhyRequest;
pub use crate::model::why::{Death, Growth, WhyReport, WHY_SCHEMA};
pub use crate::watch::intervals::now_ms;

/// What the history holds about the death asked for.
#[derive(Debug)]
pub struct WhyAnswer {
    /// The death and its explanation; `None` where none was recorded.
    pub report: Option<WhyReport>,
    /// The first and last interval recorded (ms since the epoch); `None`: empty.
    pub span: Option<(i64, i64)>,
    /// What the history could not see (another user's processes, a paused recorder).
    pub notes: Vec<String>,
}

/// Reads the history at `db` (never writes it) for the death `request` names.
pub fn why(db: &Path, request: &WhyRequest) -> Result<WhyAnswer> {
    if let Some(bad) = request.pid.filter(|p| *p <= 0) {
        return Err(Error::bad_input(
            format!("pid {bad}"),
            "not a valid process id (ids are positive)",
        ));
    }
    let store = Store::open_read(db)?;
    Ok(WhyAnswer {
        report: crate::history::why::why(&store, request)?,
        span: store.span()?,
        notes: record_notes(&store)?,
    })
}
