//! The memtriage engine: it reads the system (`probe`), holds what it read in plain
//! data (`model`), and turns that into findings (`diagnose`). It never prints; the
//! `memtriage` binary and the Python module render what it returns.
//!
//! Data flows one way: parse → probe → model → diagnose → render
//! (.ci/check-layers.sh enforces it).

pub mod diagnose;
mod error;
pub mod model;
pub mod pagecache;
pub mod parse;
pub mod probe;
pub mod sampler;
pub mod supervise;
pub mod usecase;

pub use error::{Error, ErrorKind, Result};
pub use probe::root::Root;
