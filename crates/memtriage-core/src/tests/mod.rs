//! The engine's tests of its own parts (parsers, probes, rules, the sampler), on
//! captured fixtures or on this machine; what front ends see is tested through the
//! use cases in `tests/engine`. `support` holds what both share. proptest keeps the
//! seeds of past failures in `proptest-regressions/tests/<file's path below this
//! directory>.txt`, beside `src/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub(crate) mod support;

mod cgroup;
mod doctor;
mod explain_logs;
mod fuzz_replay;
mod lines_kinds;
mod maps_live;
mod parsers_never_panic;
mod sampler_live;
mod serve_corpus;
