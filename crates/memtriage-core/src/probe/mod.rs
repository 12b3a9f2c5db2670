//! Readers of the live system. Every probe reads through a [`root::Root`], so tests
//! can point it at a captured tree of /proc and /sys files, hands the bytes to a
//! parser in [`crate::parse`], and returns [`crate::model`] data. A probe never
//! prints and never judges; each system file has one reader here.
//!
//! `process` and `procdir` read one process, `tree` many, `maps` its regions, `fork`
//! whether a child was forked without exec and what it copied of its parent's memory;
//! `system` the machine (meminfo, swaps, pressure, vmstat, uptime, `/dev/shm`, THP,
//! hugepages, sysctls, limits), `cgroup` memory cgroups, `mounts` mountinfo, `kmsg`
//! the kernel log, `proc_events` the kernel's process events (fork, exec, exit),
//! `damon` proactive reclaim, `users` user names, `environ` the rank a distributed
//! launcher gave a process, `files` a regular file the user named (never a device),
//! `slurm` a Slurm job as scontrol and its epilog's environment tell, `command` the
//! bounded run of a program whose output a probe reads, `killers` the OOM killers and
//! how each is set, `victim` whom one that goes by score would pick now.

pub mod cgroup;
pub mod command;
pub mod crashes;
pub mod damon;
pub mod environ;
pub mod files;
pub mod fork;
pub mod gpu;
pub mod killers;
pub mod kmsg;
pub mod maps;
pub mod mounts;
pub mod proc_events;
pub mod procdir;
pub mod process;
pub(crate) mod root;
pub mod slurm;
pub mod source;
pub mod system;
pub mod tree;
pub mod users;
pub mod victim;
