//! Readers of the live system. Every probe reads through a [`root::Root`], so tests
//! can point it at a captured tree of /proc and /sys files.

pub mod cgroup;
pub mod damon;
pub mod kmsg;
pub mod maps;
pub mod mounts;
pub mod procdir;
pub mod process;
pub mod root;
pub mod system;
pub mod tree;
pub mod users;
