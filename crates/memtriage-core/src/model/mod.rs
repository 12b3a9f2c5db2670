//! Plain data that every layer shares. Bytes are `u64` counts of bytes; counters are
//! counters. `None` means "could not be read" (see the snapshot's `unreadable` list),
//! never zero.
//!
//! The bottom layer: it depends on serde and std only, never on the parsers,
//! probes or rules that fill it (.ci/check-layers.py enforces that). One file per
//! subject: a process (`process`), its maps (`maps`), a process tree (`tree`), the
//! machine (`system`), a supervised run (`run`) and how its memory grew (`growth`),
//! the machine's recorded history (`history`) and `why`'s report of a death in it
//! (`why`), `bench load`'s report (`bench`), NVIDIA GPUs (`gpu`), a PyTorch CUDA memory snapshot explained
//! (`cuda_snapshot`), findings (`finding`) and the registry of their ids (`ids`), the
//! one IEC size formatter, size parser and table of units (`units`), and command lines
//! quoted for display (`shell`), a Slurm job and its verdict (`slurm`).

pub mod bench;
pub mod cuda_snapshot;
pub mod finding;
pub mod gpu;
pub mod growth;
pub mod history;
pub mod ids;
pub mod killers;
pub mod lines;
pub mod maps;
pub mod process;
pub mod run;
pub mod shell;
pub mod slurm;
pub mod system;
pub mod tree;
pub mod units;
pub mod why;
