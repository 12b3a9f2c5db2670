//! `bench load`: loading a checkpoint each way people do (read, mmap, prefetch, huge
//! pages), cold and hot, against the machine's own ceilings measured in the same run.

pub use crate::pagecache::bench::{generate, run, LoadBench, Measurement, Method, BENCH_SCHEMA};
