//! Pure parsers over the bytes of kernel files. No I/O here, so each is tested on
//! captured text, odd cases included.

pub mod cgroup;
pub mod kv;
pub mod mountinfo;
pub mod record;
pub mod size;
pub mod smaps;
pub mod stat;
pub mod statm;
pub mod status;
pub mod text;
