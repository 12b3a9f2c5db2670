//! Pure parsers over the bytes of kernel files and file headers. No I/O here, so
//! each is tested on captured text, odd cases included, and none panics on any input
//! (tests/engine/parsers_never_panic.rs). Probes, the sampler, `pagecache/` and the log
//! explainer read the files and hand the bytes to these.
//!
//! One file per format: `/proc` files (`meminfo`, `swaps`, `pressure`, `limits`,
//! `uptime`, `stat`, `statm`, `status`, `smaps`, `smaps_rollup`, `mountinfo`,
//! `cgroup`, and the rank variables of `environ`), `/sys` choices (`thp`), the kernel
//! log (`kmsg`), the kernel's process events (`proc_connector`), `/etc/passwd`
//! (`passwd`), the `.safetensors` header (`safetensors`), Windows kernel crash dump
//! headers and their triage data (`windump`), the kernel's OOM reports
//! (`oom_report`, `oom_task_table`), Slurm's job records and lines (`slurm`), `--record` files
//! (`record`), and the shared helpers `kv`, `text` and `size`.

use std::fmt;

pub mod cgroup;
pub mod cuda_snapshot;
pub mod environ;
pub mod fatal_signal;
pub mod killer_settings;
pub mod kmsg;
pub mod kv;
pub mod limits;
pub mod meminfo;
pub mod mountinfo;
pub mod oom_report;
pub mod oom_task_table;
pub mod passwd;
pub mod pickle;
pub mod pressure;
pub mod proc_connector;
pub mod safetensors;
pub mod slurm;
pub mod smaps;
pub mod smaps_rollup;
pub mod stat;
pub mod statm;
pub mod status;
pub mod swaps;
pub mod text;
pub mod thp;
pub mod timeline;
pub mod uptime;
pub mod userspace_oom;
pub mod windump;
pub mod workload;

/// Text that is not in the format a parser reads. The caller knows which file it
/// was and says so; `detail` says what in the text is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The format, e.g. `"memory pressure"`, for callers that name it.
    pub what: &'static str,
    pub detail: String,
}

impl ParseError {
    pub fn new(what: &'static str, detail: impl Into<String>) -> Self {
        ParseError {
            what,
            detail: detail.into(),
        }
    }
}

/// Only the detail: callers put the file's path (and the format) before it.
impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for ParseError {}
