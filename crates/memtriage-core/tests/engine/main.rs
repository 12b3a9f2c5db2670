//! The engine's integration tests, one binary: each module tests one part of
//! `memtriage_core` through its public API, on captured fixtures or on this machine;
//! `support` holds what they share. proptest keeps the seeds of past failures in
//! `tests/proptest-regressions/<module>.txt`: beside a crate root (this `main.rs`) its
//! default is a parallel tree, not a file beside the module.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod cgroup;
mod doctor;
mod explain_logs;
mod maps_live;
mod parsers_never_panic;
mod sampler_live;
mod usecases;
