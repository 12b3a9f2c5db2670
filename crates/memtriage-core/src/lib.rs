//! The memtriage engine: it reads the system (`probe`, through pure parsers in
//! `parse`), holds what it read in plain data (`model`), and turns that into findings
//! (`diagnose`). It never prints; the `memtriage` binary and the Python module call
//! its use cases (`usecase`) and render what they return.
//!
//! - `parse/`: pure parsers over kernel bytes; `probe/`: one reader per system file.
//! - `model/`: plain serde data every layer shares; depends on nothing above it.
//! - `diagnose/`: rules by family that turn data into findings.
//! - `sampler/`: the one sampler (a thread, a scope, a PSS budget) that `run`,
//!   Python's `track()` and live views consume.
//! - `supervise/`: spawn, pass through, sample and reap a job.
//! - `pagecache/`: residency, warm, lock, evict and the load benchmark.
//! - `usecase/`: what a user asks for, as one function each; both front ends call these.
//! - `history/`: the recorder's database (SQLite, WAL, versioned schema, retention).
//! - `watch/`: the whole machine followed over time (jobs, cgroups, OOM kills, files,
//!   GPUs, doctor) for front ends that stay up: `serve` and the recorder.
//!
//! Data flows one way: parse → probe → model → diagnose → render
//! (.ci/check-layers.sh enforces it).

pub mod diagnose;
mod error;
pub mod history;
pub mod model;
pub mod pagecache;
pub mod parse;
pub mod probe;
pub mod sampler;
pub mod supervise;
pub mod usecase;
pub mod watch;

pub use error::{panic_message, Error, ErrorKind, Result};
pub use probe::root::Root;
