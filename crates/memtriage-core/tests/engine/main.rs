//! The engine's integration tests, one binary: each module tests one part of
//! `memtriage_core` through its public API, on captured fixtures or on this machine;
//! `support` holds what they share.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod cgroup;
mod doctor;
mod explain_logs;
mod maps_live;
mod parsers_never_panic;
mod sampler_live;
mod usecases;
