//! The memtriage engine: it reads the system (`probe`), holds what it read in plain
//! data (`model`), and turns that into findings (`diagnose`). It never prints; the
//! `memtriage` binary and the Python module render what it returns.
//!
//! Data flows one way: probe → model → diagnose → render.

pub mod diagnose;
pub mod error;
pub mod model;
pub mod pagecache;
pub mod parse;
pub mod probe;
pub mod sampler;
pub mod supervise;

pub use error::{Error, Result};
pub use probe::root::Root;
