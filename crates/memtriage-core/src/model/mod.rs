//! Plain data that every layer shares. Bytes are `u64` counts of bytes; counters are
//! counters. `None` means "could not be read" (see the snapshot's `unreadable` list),
//! never zero.

pub mod finding;
pub mod maps;
pub mod process;
pub mod run;
pub mod system;
pub mod tree;
pub mod units;

pub use finding::{Evidence, Finding, Severity};
