//! `bench load`: loading a checkpoint each way people do (read, mmap, prefetch, huge
//! pages), cold and hot, against the machine's own ceilings measured in the same run. The report is [`crate::model::bench::LoadBench`].

pub use crate::pagecache::bench::{check_synthetic, generate, run, MIN_SYNTHETIC};
