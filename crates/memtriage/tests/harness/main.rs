//! The fault harness: the bad cases made to happen on the real kernel, repeatedly
//! (directories churned while walked, processes forking and exiting while read, the
//! commands as another user). A test binary of its own, so the load it makes never
//! runs beside the timing-sensitive tests of `cli`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared with `cli`, of which this binary uses a part.
#[allow(dead_code)]
#[path = "../cli/support/mod.rs"]
mod support;

mod full_disk;
mod pagecache;
mod processes;
mod unknown_not_zero;
