//! Rules that turn snapshots into findings. Pure functions over the model: no I/O.

pub mod cow;
pub mod doctor;
pub mod logs;
pub mod run;
