//! The machine watched over time, for front ends that stay up: an exporter (`serve`)
//! and the recorder (`record`). A [`Watcher`] runs the sampler over every process
//! (grouped into jobs) and a slow loop (kernel log, cgroups' event counters, watched
//! files, doctor), and keeps one [`MachineView`], replaced whole at each change: a
//! reader takes the latest and never waits on a reading in progress.

pub use crate::watch::{
    CgroupView, FileView, GroupView, Grouping, KillKey, KillRecord, MachineFigures, MachineView,
    OomCounts, SamplerStats, TensorView, WatchConfig, Watcher, OTHER,
};
