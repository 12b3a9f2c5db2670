//! The use cases: one engine function (or a small type) per thing a user asks for,
//! returning the report struct that both front ends serialise. The CLI renders these
//! reports and the Python module converts them; neither re-assembles the engine, so
//! the two cannot drift. Each report carries its `schema` (`memtriage.<thing>/v1`).
//!
//! - [`inspect`]: processes by pid, by name, as trees or all of them.
//! - [`doctor`]: the machine's memory settings audited for a profile of use.
//! - [`explain`]: the diagnosis of a log.
//! - [`run`]: a job supervised to its end, and why it ended.
//! - [`cache`]: page-cache residency of files; [`warm`] and [`evict`] change it;
//!   [`lock`] pins files in memory after checking it is safe; [`bench`](mod@bench) compares ways
//!   of loading a checkpoint.
//! - [`explain_snapshot`]: a PyTorch CUDA memory snapshot explained.
//! - [`track`]: the caller's own memory over a block of its code.
//! - [`top`]: every process, live, one frame per sample.
//! - [`watch`]: the machine watched over time (jobs, cgroups, OOM kills, files, GPUs),
//!   for front ends that stay up: an exporter, the recorder.
//! - [`record`], [`why`] and [`report`]: the machine's history kept, a death in it
//!   explained, and a run's timeline or a window of the history drawn.
//! - [`slurm`]: a Slurm job's death explained on its node (the epilog's verdict).

pub mod bench;
pub mod cache;
pub mod doctor;
pub mod evict;
pub mod explain;
pub mod explain_dump;
pub mod explain_many;
pub mod explain_snapshot;
pub mod inspect;
pub mod lock;
pub mod record;
pub mod report;
pub mod run;
pub mod slurm;
pub mod top;
pub mod track;
pub mod warm;
pub mod watch;
pub mod why;

/// Serialises an error as its message, the way JSON reports show it.
fn message<S: serde::Serializer>(e: &crate::Error, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(e)
}
