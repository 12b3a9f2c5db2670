//! The engine's integration tests, one binary: each module tests one part of
//! `memtriage_core` through its public API, on captured fixtures or on this machine;
//! `support` holds what they share. proptest keeps the seeds of past failures in
//! `tests/proptest-regressions/<file's path below this main.rs>.txt` (so
//! `explain_logs/streaming.txt` for `explain_logs/streaming.rs`): beside a crate root its
//! default is a parallel tree, not a file beside the module; a proptest that moves to
//! another file takes its seeds file along.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod cgroup;
mod corpus;
mod cuda_snapshot;
mod doctor;
mod explain_logs;
mod fuzz_replay;
/// The fuzz targets' bodies, shared with the libFuzzer binaries in `fuzz/`.
#[path = "../../../../fuzz/targets.rs"]
mod fuzz_targets;
mod maps_live;
mod parsers_never_panic;
mod sampler_live;
mod serve_corpus;
mod usecases;
