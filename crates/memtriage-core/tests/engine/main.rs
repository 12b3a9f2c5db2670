//! The engine as its front ends see it: the use cases and the model, nothing else
//! (the engine's own parts are tested inside it, in `src/tests`). Each module tests
//! one use case on captured fixtures or on this machine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../src/tests/support.rs"]
mod support;

mod corpus;
mod cuda_snapshot;
mod usecases;
