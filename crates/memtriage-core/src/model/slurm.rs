//! A Slurm job as its node sees it after the job ended (what Slurm said of it, where
//! its output went, what it asked for), and memtriage's verdict on it.

use std::path::PathBuf;

use serde::Serialize;

use super::finding::Finding;

/// A job of this node, from `scontrol show job` and the epilog's environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SlurmJob {
    pub id: u64,
    pub user: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// The owner is slurmd's word (the epilog's environment), not read from
    /// scontrol's text: only then is the job's output written as that owner.
    pub owner_from_slurmd: bool,
    /// `OUT_OF_MEMORY`, `FAILED`, `COMPLETING`, …
    pub state: Option<String>,
    /// `OutOfMemory`, `NonZeroExitCode`.
    pub reason: Option<String>,
    /// `0:125`: the batch script's exit status and signal.
    pub exit_code: Option<String>,
    /// The highest exit status of its srun steps.
    pub derived_exit_code: Option<String>,
    /// The file its stderr went to (its stdout's where they are one).
    pub output: Option<PathBuf>,
    /// The memory it asked for.
    pub mem_request: Option<MemRequest>,
    /// When it ran (Unix seconds), where known.
    pub started_unix: Option<i64>,
    pub ended_unix: Option<i64>,
}

impl SlurmJob {
    /// Slurm's own word that a step of the job had an OOM kill.
    pub fn slurm_says_oom(&self) -> bool {
        self.reason.as_deref() == Some("OutOfMemory")
            || self.state.as_deref() == Some("OUT_OF_MEMORY")
            || self.exit_code.as_deref() == Some("0:125")
            || self.derived_exit_code.as_deref() == Some("0:125")
    }
}

/// `--mem=300M`: the memory per node, or per CPU or GPU, as asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemRequest {
    /// `--mem`, `--mem-per-cpu`.
    pub option: &'static str,
    /// As Slurm writes it: `300M`.
    pub written: String,
    /// The job's limit on this node, where known (`--mem`, or the TRES total).
    pub node_bytes: Option<u64>,
}

impl MemRequest {
    /// `--mem=300M`.
    pub fn as_option(&self) -> String {
        format!("{}={}", self.option, self.written)
    }
}

/// What memtriage says of a job that died.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlurmVerdict {
    pub job_id: u64,
    /// One line, for a job record or a log: `OOM kill of pt_data_worker (pid 4242) at
    /// --mem=300M; fix: --mem=450M or fewer DataLoader workers`.
    pub short: String,
    pub findings: Vec<Finding>,
}
