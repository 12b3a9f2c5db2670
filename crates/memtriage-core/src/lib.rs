//! The memtriage engine. Its API is two modules and an error type:
//!
//! - [`usecase`]: what a user asks for, one module each (`inspect`, `doctor`,
//!   `explain`, `run`, `cache`, `warm`, `top`'s live view, the `watch` behind `serve`,
//!   `record`, `why`, …), returning report structs;
//! - [`model`]: the plain serde data those reports are made of, with the units and
//!   kernel version on each field;
//! - [`Error`] (with [`ErrorKind`] and [`Result`]), and [`Root`], where the system is
//!   read from (the host, or a captured tree).
//!
//! It never prints: the `memtriage` binary renders the reports and the Python module
//! converts them. Everything else is the engine's own (`pub(crate)`), layered so that
//! data flows one way, parse → probe → model → diagnose → render:
//!
//! - `parse/`: pure parsers over kernel bytes; `probe/`: one reader per system file,
//!   through [`Root`].
//! - `diagnose/`: rules by family that turn the model into findings, one builder each.
//! - `sampler/`: the one sampler (a thread, a scope, a PSS budget) that `run`,
//!   Python's `track()`, `top` and the watch consume.
//! - `pagecache/`: residency, warm, lock, evict and the load benchmark.
//! - `supervise/`: spawn, pass through, sample and reap a job.
//! - `watch/`: the whole machine followed over time (jobs, cgroups, OOM kills, files,
//!   GPUs, doctor) for front ends that stay up.
//! - `history/`: the machine's history in SQLite (WAL, versioned schema, retention).
//!
//! `.ci/check-layers.py` fails on any path against that flow, and on a front end that
//! names anything but `usecase` and `model`.

pub(crate) mod diagnose;
mod error;
/// The fuzz targets' bodies, for the libFuzzer binaries in `fuzz/` (feature
/// `fuzzing`) and the test that replays every input they kept.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzz;
pub(crate) mod history;
pub mod model;
pub(crate) mod pagecache;
pub(crate) mod parse;
pub(crate) mod probe;
pub(crate) mod sampler;
pub(crate) mod supervise;
pub mod usecase;
pub(crate) mod watch;

#[cfg(test)]
mod tests;

pub use error::{Error, ErrorKind, Result};
pub use probe::root::Root;
