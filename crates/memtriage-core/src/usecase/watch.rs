//! The machine watched over time, for front ends that stay up: an exporter (`serve`)
//! and the recorder (`record`). A [`Watcher`] runs the sampler over every process
//! (grouped into jobs) and a slow loop (kernel log, cgroups' event counters, watched
//! files, doctor), and keeps one [`MachineView`], replaced whole at each change: a
//! reader takes the latest and never waits on a reading in progress.

pub use crate::watch::{
    CgroupView, FileView, GroupView, Grouping, KillKey, KillRecord, MachineFigures, MachineView,
    OomCounts, SamplerStats, TensorView, WatchConfig, Watcher, OTHER,
};

/// What a watch run by this process cannot read, to be said once as it starts: other
/// users' PSS without CAP_SYS_PTRACE (their groups' coverage stays 0, and the PSS
/// source is not counted as up).
pub fn unreadable_here(root: &crate::probe::root::Root) -> Vec<String> {
    if crate::probe::system::reads_every_users_pss(root) {
        return Vec::new();
    }
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    vec![format!(
        "as uid {uid} without CAP_SYS_PTRACE, other users' processes have no PSS or swap \
         (RSS only; memtriage_source_up{{source=\"pss\"}} is 0): run as root or with that \
         capability (the systemd unit in deploy/ does)"
    )]
}
