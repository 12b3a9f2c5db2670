//! The page cache and the files in it: how much of a file is cached (`residency`,
//! per tensor for safetensors via `safetensors` and `report`), which processes map it
//! (`mappers`), bringing files in at the speed the disk allows and dropping them
//! (`warm`), pinning them (`lock`, after checks), the read-only mapping these share
//! (`mapping`), expanding paths (`files`), and the loading benchmark (`bench`).

pub mod bench;
pub mod files;
pub mod lock;
pub mod mappers;
pub mod mapping;
pub mod report;
pub mod residency;
pub mod safetensors;
pub mod warm;
