//! The rule table, one file per family of failures (`oom`, `dataloader`, `cuda`,
//! `limits`, `crash`, `bus`, `gpu`, `kernel`): how each failure shows up in a log, and
//! what to say about it. `RULES` joins the families in match order.
//!
//! A rule is data. `literals` are substrings one of which every line the rule matches
//! contains; they are the cheap prefilter, searched for in all the input at once, so a
//! line without any of them costs nothing more. Only a line that holds one of a rule's
//! literals is tried against its `pattern`, a regex over the line's message (the line
//! with any kernel-log, journal, rank or timestamp prefix removed, so `^` anchors on the
//! message). Named groups become the match's captures; `optional` patterns add captures
//! when they match. The first rule in table order that matches a line wins, so specific
//! rules come before generic ones (a `NCCL WARN` about `ibv_reg_mr` is a memlock
//! failure, not a generic NCCL warning).
//!
//! Capture names ending in `_kb` hold kernel `kB` figures; they are stored as bytes in
//! IEC units under the name without the suffix.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::model::finding::{CauseKind, Certainty, Severity};

macro_rules! shell_signal {
    ($signal:literal) => {
        // With a prefix the command may follow; bare, the signal must be all the line
        // says (text glued before it by a progress bar is not words), so prose that
        // mentions a segmentation fault is not one. Nor is the count a progress line
        // left without its newline (`82.29% 3911680/4753435Segmentation fault (core
        // dumped)`). The shell's note in brackets may follow, in its locale's words
        // (`(core dumped)`, `(\`core' generado)`).
        // Bare with the command after it, only as bash's job table pads it. No command
        // opens with a bracket or a colon: a list that defines the signal does
        // (`- 总线错误 (SIGBUS):通常与…`).
        concat!(
            r"^\s*(?:(?:\[\d+\][+-]?\s+(?:\d+\s+)?|\d+\s+|[+-]\s+|\S[^:]*: (?:line|Zeile|ligne|línea|строка|riga|行) \d+:\s+(?P<pid>\d+)\s+|zsh: )(?:",
            $signal,
            r")(?::? \d+)?(?:\s*[(（][^()（）]{1,40}[)）])?(?:\s+(?P<command>[^\s(（:：].*?))?|(?:.*?[^\w\s`'\x22:,.(]\s*|.*?\d)?(?:",
            $signal,
            r")(?:: \d+)?(?:\s*[(（][^()（）]{1,40}[)）])?)\s*$|^\s*`?(?:",
            $signal,
            // Bash's job table pads the status to its column before the command
            // (`Segmentation fault      (core dumped) kitupiikki`).
            r")\s{2,}(?:[(（][^()（）]{1,40}[)）]\s+)?[^\s`(（][^`]*`?\s*$"
        )
    };
}

/// A failure someone reports in their own words: "I get 'Bus error'", "the terminal
/// shows …", "it crashed with …", the signal's name quoted after the verb. `$told`
/// lists the verbs that count for a subject other than I or we: a tense that
/// documentation, which says what a program does in the present, does not use.
macro_rules! reported {
    ($told:literal, $signal:literal) => {
        concat!(
            r#"(?i:(?:\b(?:I|we)\b[^.\n]{0,40}?\b(?:shows?|showed|got|gets?|getting|see|saw|fails?|failed|prints?|printed|gives?|gave)|\b(?:it|terminal|console|process|program|job|script|training|python)\b[^.\n]{0,40}?\b(?:"#,
            $told,
            r#")|\b(?:erred|errored|crash(?:es|ed)|dies|died|aborts?|aborted)\b[^.\n]{0,10}?\bwith|\band (?:said|showed|printed|got|gave))\b[^.\n]{0,20}?["'`*“]+"#,
            $signal,
            r"\b)"
        )
    };
}

mod bus;
pub(super) mod claims;
mod crash;
mod crash_and_limit_claims;
pub(super) mod cuda;
pub(super) mod dataloader;
pub mod gpu;
mod gpu_and_kernel_claims;
mod growth_claims;
pub mod host;
mod kernel;
pub(super) mod kill_claims;
mod leak_claim;
mod limits;
pub mod oom;
mod platforms;
#[cfg(test)]
mod reach;
mod runtimes;
mod schedulers;
pub mod signals;
mod windows;

/// What kind of failure a line is evidence of. One finding per class seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The kernel or a memory cgroup's OOM killer killed a process (also as seen by
    /// Kubernetes, Slurm, a shell, or an exit code of 137).
    OomKill,
    /// A DataLoader worker died of SIGBUS: /dev/shm too small for the batches it shares.
    DataloaderShm,
    /// A DataLoader worker was killed by another signal (SIGKILL: an OOM kill of the
    /// worker; SIGSEGV: a crash in native code in the worker).
    DataloaderWorkerKilled,
    /// A segmentation fault or abort in native code (an extension, a library, glibc).
    NativeCrash,
    /// SIGBUS on a memory-mapped file (it shrank, or the disk failed a read).
    MmapBusError,
    /// The CUDA caching allocator could not allocate.
    CudaOom,
    /// A kernel touched memory it must not (illegal address, misaligned, launch failure).
    CudaIllegalMemoryAccess,
    /// A device-side assertion failed (most often an index out of range).
    CudaDeviceAssert,
    /// The NVIDIA driver reported an Xid error.
    GpuXid,
    /// A collective timed out or NCCL warned.
    NcclFailure,
    /// The kernel struggled to reclaim memory (stalled reclaim, failed allocations).
    MemoryPressure,
    /// mmap failed: the process ran out of memory mappings (vm.max_map_count).
    MaxMapCount,
    /// The process ran out of file descriptors (tensor sharing across workers).
    TooManyOpenFiles,
    /// Pinning or registering memory failed under RLIMIT_MEMLOCK.
    MemlockLimit,
    /// The Linux kernel itself faulted (oops, BUG, panic).
    KernelOops,
    /// A process died of SIGKILL and the text does not say it was the OOM killer (or
    /// says it was not: Kubernetes `Reason: Error`, Docker `OOMKilled: false`).
    Sigkill,
    /// A userspace killer or a scheduler ended the job for memory: systemd-oomd,
    /// earlyoom, nohang, the kubelet's eviction, Slurm's memory enforcement.
    UserspaceOomKill,
    /// A host (CPU RAM) allocation raised instead of the process being killed:
    /// `MemoryError`, `DefaultCPUAllocator: can't allocate memory`, `ENOMEM` at fork.
    HostAllocFailure,
    /// Memory figures the job printed rise step after step: a leak or copy-on-write.
    MemoryGrowth,
    /// GPU memory ECC errors: uncorrectable errors, retired or remapped pages.
    GpuEcc,
    /// Swap nearly full and pages moving in and out: the machine thrashes.
    SwapThrashing,
    /// The Windows face of a memory fault: a bug check, an access violation.
    WindowsMemoryFault,
}

impl FailureClass {
    pub const ALL: [FailureClass; 22] = [
        FailureClass::OomKill,
        FailureClass::DataloaderShm,
        FailureClass::DataloaderWorkerKilled,
        FailureClass::NativeCrash,
        FailureClass::MmapBusError,
        FailureClass::CudaOom,
        FailureClass::CudaIllegalMemoryAccess,
        FailureClass::CudaDeviceAssert,
        FailureClass::GpuXid,
        FailureClass::NcclFailure,
        FailureClass::MemoryPressure,
        FailureClass::MaxMapCount,
        FailureClass::TooManyOpenFiles,
        FailureClass::MemlockLimit,
        FailureClass::KernelOops,
        FailureClass::Sigkill,
        FailureClass::UserspaceOomKill,
        FailureClass::HostAllocFailure,
        FailureClass::MemoryGrowth,
        FailureClass::GpuEcc,
        FailureClass::SwapThrashing,
        FailureClass::WindowsMemoryFault,
    ];

    /// The serde name (`oom_kill`) back to the class.
    pub fn from_name(name: &str) -> Option<FailureClass> {
        FailureClass::ALL.into_iter().find(|c| c.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn info(self) -> &'static ClassInfo {
        // CLASSES is written in the enum's order; a unit test holds it to that.
        &CLASSES[self.index()]
    }
}

/// What is said about a class whatever rule recognised it.
#[derive(Debug)]
pub struct ClassInfo {
    pub class: FailureClass,
    /// The serde name, e.g. `oom_kill`.
    pub name: &'static str,
    /// The finding id from `model::ids`, `log.<name in kebab case>`.
    pub id: &'static str,
    /// Used when the best rule's title cannot be filled in.
    pub title: &'static str,
    pub why: &'static str,
    pub fix: &'static str,
    /// Whom the class points at, unless a rule says otherwise.
    pub cause: CauseKind,
    /// The one check that confirms a finding of this class that the text only suggests.
    pub confirm: &'static str,
}

#[derive(Debug)]
pub struct Rule {
    /// Stable id, `<source>.<what>`, e.g. `kernel.oom-killed-process`.
    pub id: &'static str,
    pub class: FailureClass,
    pub severity: Severity,
    pub literals: &'static [&'static str],
    pub pattern: &'static str,
    pub optional: &'static [&'static str],
    /// `{name}` is replaced by the capture `name`; a title whose captures are missing
    /// falls back to the class title.
    pub title: &'static str,
    /// Replace the class's why and fix when this rule is the finding's best evidence.
    pub why: Option<&'static str>,
    pub fix: Option<&'static str>,
    /// Where this line is only an echo of another class's failure (a worker's
    /// "exited unexpectedly" after its shared-memory bus error), it is reported with
    /// that class when that class is seen.
    pub absorbed_by: Option<FailureClass>,
    /// Where the captures come from a parser that already exists for this line.
    pub extract: Option<Extractor>,
    /// The line opens a block of Python's faulthandler output: the stack frames that
    /// follow belong to this match.
    pub faulthandler_block: bool,
    /// The line heads a table whose rows (which hold no literal) are read by the rule
    /// with this id while they last (vmstat's rows under its header).
    pub table_rows: Option<&'static str>,
    /// How sure a line of this rule makes the diagnosis (most rules quote the failure
    /// itself: confirmed).
    pub certainty: Certainty,
    /// Overrides the class's cause (a Slurm limit is configuration, an OOM capacity).
    pub cause: Option<CauseKind>,
    /// The literals and pattern count only in the case written: the line is one
    /// program's, always printed so, and its words in another case are common in
    /// healthy text (a shell's `Killed` beside `killed_frac=0.95`). Rules match in any
    /// case otherwise.
    pub exact_case: bool,
}

/// Fills captures from the message of a line the rule matched; `false` when the line,
/// read whole, is not evidence after all (swap figures of a healthy machine).
pub type Extractor = fn(&str, &mut Vec<(String, String)>) -> bool;

const fn rule(
    id: &'static str,
    class: FailureClass,
    severity: Severity,
    literals: &'static [&'static str],
    pattern: &'static str,
    title: &'static str,
) -> Rule {
    Rule {
        id,
        class,
        severity,
        literals,
        pattern,
        optional: &[],
        title,
        why: None,
        fix: None,
        absorbed_by: None,
        extract: None,
        faulthandler_block: false,
        table_rows: None,
        certainty: Certainty::Confirmed,
        cause: None,
        exact_case: false,
    }
}

const SIZE: &str = r"(?:[\d.]+|<n>) [KMGTP]?i?B";

/// The capture `SIZE` stands for a size as PyTorch prints it (`2.00 GiB`); a number
/// (`\d+`) or a hex value (`[0-9a-f]+`) may be a placeholder, as the message's
/// normalisation writes it (`pid <n>`):
/// each rule is written once, against numbers.
pub fn expand(pattern: &str) -> String {
    pattern
        .replace("SIZE", SIZE)
        .replace(r"\d+", r"(?:\d+|<n>)")
        .replace("[0-9a-f]+", "(?:[0-9a-f]+|<n>)")
}

/// Every rule, in the order they are tried: the first that matches a line wins, so a
/// family's specific rules come before its generic ones, and the families keep the
/// order in which their rules were written (a DataLoader worker's bus error before a
/// shell's bare one).
pub static RULES: LazyLock<Vec<&'static Rule>> = LazyLock::new(|| {
    [
        // A platform's words for its memory kill come before a bare exit status 137
        // on the same line (ECS's `… due to memory usage Exit Code 137`).
        platforms::RULES,
        oom::RULES,
        schedulers::RULES,
        dataloader::RULES,
        cuda::RULES,
        limits::RULES,
        host::RULES,
        runtimes::RULES,
        gpu::RULES,
        crash::RULES,
        bus::RULES,
        kernel::RULES,
        windows::RULES,
        signals::RULES,
        // A writer's words come last: a program's line that also holds them is the
        // program's.
        kill_claims::RULES,
        claims::RULES,
        growth_claims::RULES,
        crash_and_limit_claims::RULES,
        gpu_and_kernel_claims::RULES,
        dataloader::ADVICE_RULES,
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// Written in the enum's order; a unit test holds it to that.
pub static CLASSES: [ClassInfo; 22] = [
    oom::OOM_KILL,
    dataloader::DATALOADER_SHM,
    dataloader::DATALOADER_WORKER_KILLED,
    crash::NATIVE_CRASH,
    bus::MMAP_BUS_ERROR,
    cuda::CUDA_OOM,
    cuda::CUDA_ILLEGAL_MEMORY_ACCESS,
    cuda::CUDA_DEVICE_ASSERT,
    gpu::GPU_XID,
    gpu::NCCL_FAILURE,
    kernel::MEMORY_PRESSURE,
    limits::MAX_MAP_COUNT,
    limits::TOO_MANY_OPEN_FILES,
    limits::MEMLOCK_LIMIT,
    kernel::KERNEL_OOPS,
    oom::SIGKILL,
    oom::USERSPACE_OOM_KILL,
    host::HOST_ALLOC_FAILURE,
    host::MEMORY_GROWTH,
    gpu::GPU_ECC,
    host::SWAP_THRASHING,
    windows::WINDOWS_MEMORY_FAULT,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_table_follows_the_enum() {
        for (i, c) in FailureClass::ALL.iter().enumerate() {
            assert_eq!(CLASSES[i].class, *c);
            assert_eq!(c.index(), i);
            let json = serde_json::to_string(c).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", CLASSES[i].name));
            assert_eq!(
                CLASSES[i].id,
                format!("log.{}", CLASSES[i].name.replace('_', "-"))
            );
            assert!(crate::model::ids::ALL.contains(&CLASSES[i].id));
        }
    }

    #[test]
    fn every_pattern_compiles_and_every_rule_has_literals() {
        let mut ids = std::collections::HashSet::new();
        for r in RULES.iter() {
            assert!(ids.insert(r.id), "duplicate rule id {}", r.id);
            assert!(!r.literals.is_empty(), "{}", r.id);
            assert!(regex::Regex::new(&expand(r.pattern)).is_ok(), "{}", r.id);
            for p in r.optional {
                assert!(regex::Regex::new(&expand(p)).is_ok(), "{}: {p}", r.id);
            }
        }
    }
}
