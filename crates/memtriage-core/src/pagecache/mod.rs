//! The page cache and the files in it: how much of a file is cached (per tensor for
//! safetensors), bringing files in at the speed the disk allows, and dropping them.

pub mod bench;
pub mod files;
pub mod lock;
pub mod mappers;
pub mod mapping;
pub mod report;
pub mod residency;
pub mod safetensors;
pub mod warm;
