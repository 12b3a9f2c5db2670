//! Rules that turn snapshots, run reports and log lines into findings. Pure functions
//! over the model: no I/O.
//!
//! - [`doctor`]: the machine's memory settings, one file per family of checks.
//! - [`logs`]: failures recognised in log text, its rule table one file per family.
//! - [`run`]: why a supervised job ended, confirmed from the system.
//! - [`growth`]: steady growth of a run's memory (leak-like), and what grew before a kill.
//! - [`cow`]: copy-on-write growth of forked workers (a tree or a run).
//! - [`lines`]: where a run's Python processes' memory went, line by line: each
//!   line's kind (leak, peak, copy-on-write, held), evidence and fix.
//! - [`oom`]: one OOM kill described, and its fix, for all of the above; and the
//!   one `run.oom-killed` finding, `run`'s and `why`'s.
//! - [`signal`]: a process ended by a signal (segfault, bus error, …), [`shm`]: a full
//!   /dev/shm, [`pressure`]: major-fault storms and swap thrashing; each finding built
//!   in one place for `run` and `why`.
//! - [`slurm`]: a Slurm job's death judged on its node after it ended.
//! - [`trend`]: the least-squares fit of a memory series, for `run`, `top` and `why`.
//! - [`kernel_crash`]: a kernel oops, BUG or panic logged while a job ran or recorded,
//!   read by the log rules and told whether its process was the job's.
//! - [`windump`]: a Windows crash dump's bug check and faulting driver; [`bugcheck`]: the
//!   bug checks by code, with what their parameters hold.

pub mod bugcheck;
pub mod cow;
pub mod cuda_snapshot;
pub mod doctor;
pub mod gpu;
pub mod growth;
pub mod kernel_crash;
pub mod killers;
pub mod lines;
pub mod logs;
pub mod oom;
pub mod pressure;
pub mod run;
pub mod shm;
pub mod signal;
pub mod slurm;
pub mod trend;
pub mod windump;
pub mod xid;
