//! The rule table: how each failure shows up in a log, and what to say about it.
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

use serde::{Deserialize, Serialize};

use crate::model::finding::Severity;

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
}

impl FailureClass {
    pub const ALL: [FailureClass; 15] = [
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
    ];

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
    /// The finding id, `log.<name>`.
    pub id: &'static str,
    /// Used when the best rule's title cannot be filled in.
    pub title: &'static str,
    pub why: &'static str,
    pub fix: &'static str,
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
}

/// Fills captures from the message of a line the rule matched.
pub type Extractor = fn(&str, &mut Vec<(String, String)>);

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
    }
}

use FailureClass as C;
use Severity::{Error, Info, Warn};

const SIZE: &str = r"[\d.]+ [KMGTP]?i?B";

/// The capture `SIZE` stands for a size as PyTorch prints it (`2.00 GiB`).
pub fn expand(pattern: &str) -> String {
    pattern.replace("SIZE", SIZE)
}

/// A shell's report of a job that died by a signal: bare (`Bus error (core dumped)`),
/// after a job number (`[1]+  Aborted`), from a script (`train.sh: line 12: 4567
/// Segmentation fault (core dumped) python train.py`), or zsh's (`zsh: bus error  python`).
/// The OOM class's fix, also the tail of the fix for a SIGKILL seen without the
/// kernel's own line.
macro_rules! oom_fix {
    () => {
        "See what grew and when: memtriage run -- python train.py (samples the job's whole process tree: \
              parent, DataLoader workers, NCCL helpers).\nIf a limit was hit, raise it: docker run --memory=…, \
              Kubernetes resources.limits.memory, Slurm #SBATCH --mem=… (or --mem-per-gpu).\nOr lower the peak: \
              fewer DataLoader workers (num_workers), load checkpoints with torch.load(path, mmap=True) or \
              safetensors instead of a full copy in RAM, keep datasets in numpy arrays or memory-mapped files."
    };
}

macro_rules! shell_signal {
    ($signal:literal) => {
        // With a prefix the command may follow; bare, the signal must be all the line
        // says, so prose that mentions a segmentation fault is not one.
        concat!(
            r"^(?:(?:\[\d+\][+-]?\s+|[+-]\s+|\S[^:]*: line \d+:\s+(?P<pid>\d+)\s+|zsh: )(?:",
            $signal,
            r")(?:\s+\(core dumped\))?(?:\s+(?P<command>.*?))?|(?:",
            $signal,
            r")(?:\s+\(core dumped\))?)\s*$"
        )
    };
}

const SIGKILL_FIX: &str = concat!(
    "Confirm it was the OOM killer in the node's kernel log: dmesg -T | grep -iE 'killed process|out of memory' \
     (or journalctl -k).\n",
    oom_fix!()
);

pub static RULES: &[Rule] = &[
    // ---- kernel OOM killer -------------------------------------------------------
    Rule {
        extract: Some(super::report::extract_oom_kill),
        ..rule(
            "kernel.oom-killed-process",
            C::OomKill,
            Error,
            &["Killed process "],
            r"^(?:(?:Memory cgroup )?[Oo]ut of memory(?: \([a-z_]+\))?: )?Killed process \d+ \(",
            "The kernel's OOM killer killed {comm} (pid {pid}) holding {anon_rss} of anonymous memory",
        )
    },
    Rule {
        extract: Some(super::report::extract_oom_kill),
        ..rule(
            "kernel.oom-kill-constraint",
            C::OomKill,
            Error,
            &["oom-kill:constraint="],
            r"^oom-kill:constraint=\w+,",
            "The kernel's OOM killer killed {comm} (pid {pid})",
        )
    },
    rule(
        "kernel.oom-killer-invoked",
        C::OomKill,
        Error,
        &["invoked oom-killer"],
        r"^(?P<trigger>.+?) invoked oom-killer: gfp_mask=\S+,? order=(?P<order>\d+)",
        "{trigger} ran the kernel out of memory and the OOM killer was invoked",
    ),
    // ---- the same kill as others report it ---------------------------------------
    rule(
        "kubernetes.oomkilled",
        C::OomKill,
        Error,
        &["OOMKilled"],
        r"\bOOMKilled\b",
        "Kubernetes: the container was OOMKilled (it reached its memory limit)",
    ),
    rule(
        "slurm.oom-kill-event",
        C::OomKill,
        Error,
        &["kill event"],
        r"Detected (?P<count>\d+) oom[-_]kill events? in (?:StepId=|step )(?P<step>\d+(?:\.\w+)?)",
        "Slurm: {count} OOM kill in step {step} (the job's memory cgroup limit was hit)",
    ),
    rule(
        "slurm.task-out-of-memory",
        C::OomKill,
        Error,
        &["Out Of Memory"],
        r"^srun: error: (?P<node>[^:\s]+): tasks? (?P<task>[\d,\-\[\]]+): Out Of Memory",
        "Slurm: task {task} on {node} ran out of memory and was killed",
    ),
    rule(
        "slurm.exceeded-memory-limit",
        C::OomKill,
        Error,
        &["xceeded"],
        r"(?:Job|Step|StepId=)\s*(?P<step>\S+?) exceeded memory limit|Exceeded job memory limit",
        "Slurm: the job exceeded its memory limit",
    ),
    Rule {
        fix: Some(SIGKILL_FIX),
        ..rule(
        "exit.sigkill",
        C::OomKill,
        Error,
        &["xit Code", "xit code", "xit status", "exitcode", "with code 137", "SIGKILL"],
        r"(?i:\bexit(?:ed with)?[ _]?(?:code|status)\s*:?\s*137\b)|\bexitcode\s*:\s*-9\b|Signal 9 \(SIGKILL\) received by PID (?P<pid>\d+)",
        "The process was killed by SIGKILL (exit code 137), the mark of an OOM kill",
    )
    },
    Rule {
        fix: Some(SIGKILL_FIX),
        ..rule(
            "shell.killed",
            C::OomKill,
            Error,
            &["Killed", "zsh: "],
            // Bare `Killed` only when it is all the line says, so prose is not a kill.
            r"^(?:\[\d+\][+-]?\s+|[+-]\s+|\S[^:]*: line \d+:\s+(?P<pid>\d+)\s+)Killed(?:\s+(?P<command>.*?))?\s*$|^zsh: killed(?:\s+(?P<zsh_command>.*?))?\s*$|^Killed\s*$",
            "The shell reports the job was Killed (SIGKILL), most often by the OOM killer",
        )
    },
    // ---- DataLoader workers ------------------------------------------------------
    rule(
        "dataloader.shm-bus-error",
        C::DataloaderShm,
        Error,
        &["insufficient shared memory"],
        r"Unexpected bus error encountered in worker|insufficient shared memory \(shm\)",
        "A DataLoader worker died of a bus error: /dev/shm is too small",
    ),
    rule(
        "dataloader.worker-sigbus",
        C::DataloaderShm,
        Error,
        &["DataLoader worker"],
        r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: Bus error",
        "DataLoader worker (pid {pid}) died of a bus error: /dev/shm is too small",
    ),
    rule(
        "dataloader.shm-no-space",
        C::DataloaderShm,
        Error,
        &["No space left on device"],
        r"(?P<path>/dev/shm\S*|</torch_[^>]*>|torch_shm_manager).*No space left on device",
        "Shared memory is full: writing {path} failed with No space left on device",
    ),
    rule(
        "dataloader.shm-no-space-path-after",
        C::DataloaderShm,
        Error,
        &["No space left on device"],
        r"No space left on device.*?(?P<path>/dev/shm[^\s'\x22]*|</torch_[^>]*>|torch_shm_manager)",
        "Shared memory is full: writing {path} failed with No space left on device",
    ),
    Rule {
        why: Some(
            "A DataLoader worker died of SIGKILL. That is almost always the kernel's OOM killer: each \
             worker holds its own copy of whatever it touched of the dataset, plus its prefetched batches.",
        ),
        fix: Some(
            "Lower the workers' memory: fewer workers (num_workers), prefetch_factor=2 or less, keep the dataset \
             in numpy arrays or a memory-mapped file rather than Python lists and dicts (reference counting \
             copies every page a worker touches).\nSee what each worker holds: memtriage inspect --tree PID_OF_MAIN.",
        ),
        ..rule(
            "dataloader.worker-sigkill",
            C::DataloaderWorkerKilled,
            Error,
            &["DataLoader worker"],
            r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: Killed",
            "DataLoader worker (pid {pid}) was killed by SIGKILL, most often the OOM killer",
        )
    },
    rule(
        "dataloader.worker-signal",
        C::DataloaderWorkerKilled,
        Error,
        &["DataLoader worker"],
        r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: (?P<signal>[^.]+)",
        "DataLoader worker (pid {pid}) was killed by signal: {signal}",
    ),
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            "dataloader.worker-exited",
            C::DataloaderWorkerKilled,
            Error,
            &["DataLoader worker"],
            r"DataLoader worker \(pid\(s\) (?P<pids>[\d, ]+)\) exited unexpectedly",
            "DataLoader worker (pid(s) {pids}) exited unexpectedly",
        )
    },
    // ---- CUDA --------------------------------------------------------------------
    Rule {
        optional: &[
            r"Tried to allocate (?P<asked>SIZE)",
            r"GPU (?P<gpu>\d+) has a total capacity of (?P<total>SIZE) of which (?P<free>SIZE) is free",
            r"this process has (?P<in_use>SIZE) memory in use",
            r"Of the allocated memory (?P<allocated>SIZE) is allocated by PyTorch, and (?P<reserved_unallocated>SIZE) is reserved by PyTorch but unallocated",
            r"\(GPU (?P<gpu>\d+); (?P<total>SIZE) total capacity; (?P<allocated>SIZE) already allocated; (?P<free>SIZE) free;",
            r"(?P<reserved>SIZE) reserved in total by PyTorch",
        ],
        ..rule(
            "torch.cuda-oom",
            C::CudaOom,
            Error,
            &["CUDA out of memory"],
            r"CUDA out of memory\.",
            "CUDA out of memory on GPU {gpu}: asked for {asked} with {free} free of {total}",
        )
    },
    Rule {
        why: Some(
            "Page-locked (pinned) host memory counts against RLIMIT_MEMLOCK and cannot be swapped; when the limit or \
             the host's memory is reached, pinning fails.",
        ),
        fix: Some(
            "Raise the locked-memory limit: ulimit -l unlimited (shell), LimitMEMLOCK=infinity (systemd), \
             docker run --ulimit memlock=-1, or /etc/security/limits.conf: * - memlock unlimited.\nOr pin less: \
             DataLoader(pin_memory=False), fewer workers.",
        ),
        ..rule(
            "torch.pinned-memory",
            C::MemlockLimit,
            Error,
            &["cudaHost", "CachingHostAllocator", "pin memory thread", "pin_memory"],
            r"(?:cudaHostAlloc|cudaHostRegister|CachingHostAllocator|pin memory thread|pin_memory).*(?:out of memory|[Ff]ailed|[Ee]rror|Cannot allocate memory)|(?:Error|[Ff]ailed).*(?:cudaHostAlloc|cudaHostRegister|CachingHostAllocator|pin memory thread)",
            "Pinning host memory failed",
        )
    },
    rule(
        "cuda.runtime-oom",
        C::CudaOom,
        Error,
        &["CUDA error: out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "cudaError"],
        r"CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED|cudaErrorMemoryAllocation",
        "CUDA out of memory (outside PyTorch's caching allocator)",
    ),
    rule(
        "cuda.illegal-address",
        C::CudaIllegalMemoryAccess,
        Error,
        &["illegal memory access", "cudaError"],
        r"an illegal memory access was encountered|cudaErrorIllegalAddress",
        "CUDA error: an illegal memory access was encountered",
    ),
    rule(
        "cuda.misaligned-or-launch-failure",
        C::CudaIllegalMemoryAccess,
        Error,
        &["CUDA error: misaligned address", "unspecified launch failure"],
        r"CUDA error: (?P<error>misaligned address|unspecified launch failure)",
        "CUDA error: {error}",
    ),
    rule(
        "cuda.kernel-assertion",
        C::CudaDeviceAssert,
        Error,
        &["Assertion `"],
        r"(?P<file>[^\s:]+\.cuh?):(?P<line>\d+): .*?Assertion `(?P<assertion>.+)` failed",
        "A CUDA kernel assertion failed in {file}:{line}: {assertion}",
    ),
    rule(
        "cuda.device-side-assert",
        C::CudaDeviceAssert,
        Error,
        &["device-side assert triggered"],
        r"device-side assert triggered",
        "CUDA error: device-side assert triggered",
    ),
    // ---- memlock, file descriptors, mappings --------------------------------------
    rule(
        "rdma.ibv-reg-mr",
        C::MemlockLimit,
        Error,
        &["ibv_reg_mr"],
        r"ibv_reg_mr.*(?:[Ff]ailed|error|Cannot allocate memory)|[Ff]ailed.*ibv_reg_mr",
        "Registering memory for RDMA (ibv_reg_mr) failed: the locked-memory limit is too low",
    ),
    rule(
        "rdma.memlock-warning",
        C::MemlockLimit,
        Error,
        &["RLIMIT_MEMLOCK"],
        r"RLIMIT_MEMLOCK is (?P<limit>\d+) bytes",
        "RLIMIT_MEMLOCK is only {limit} bytes: RDMA memory registration will fail",
    ),
    rule(
        "nccl.ib-enomem",
        C::MemlockLimit,
        Error,
        &["Cannot allocate memory"],
        r"(?:NET/IB|ibv_|NCCL WARN.*\bIB\b).*Cannot allocate memory",
        "NCCL could not register InfiniBand memory (Cannot allocate memory): the locked-memory limit is too low",
    ),
    rule(
        "fd.ancdata",
        C::TooManyOpenFiles,
        Error,
        &["received 0 items of ancdata"],
        r"received 0 items of ancdata",
        "Tensor sharing between processes ran out of file descriptors (received 0 items of ancdata)",
    ),
    rule(
        "fd.emfile",
        C::TooManyOpenFiles,
        Error,
        &["Too many open files"],
        r"Too many open files",
        "Too many open files",
    ),
    rule(
        "mmap.torch-enomem",
        C::MaxMapCount,
        Error,
        &["unable to mmap"],
        r"unable to mmap (?P<bytes>\d+) bytes from file <(?P<path>[^>]*)>: Cannot allocate memory",
        "mmap of {path} failed with Cannot allocate memory: the process is out of memory mappings",
    ),
    rule(
        "mmap.enomem",
        C::MaxMapCount,
        Error,
        &["mmap", "max_map_count"],
        r"\bmmap(?:\(\))?(?: failed)?: Cannot allocate memory|\bmmap\b.*\[Errno 12\] Cannot allocate memory|\[Errno 12\] Cannot allocate memory.*\bmmap\b|max_map_count \[?(?P<max_map_count>\d+)\]? is too low",
        "mmap failed with Cannot allocate memory: the process is out of memory mappings",
    ),
    // ---- native crashes ----------------------------------------------------------
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            "python.faulthandler-bus-error",
            C::MmapBusError,
            Error,
            &["Fatal Python error: "],
            r"^Fatal Python error: (?P<error>Bus error)",
            "Python died of a bus error (SIGBUS) in {site}",
        )
    },
    rule(
        "python.faulthandler",
        C::NativeCrash,
        Error,
        &["Fatal Python error: "],
        r"^Fatal Python error: (?P<error>.+?)\s*$",
        "Python crashed: {error} in {site}",
    ),
    rule(
        "kernel.segfault",
        C::NativeCrash,
        Error,
        &["segfault at "],
        r"^(?P<comm>.+?)\[(?P<pid>\d+)\]: segfault at (?P<address>[0-9a-f]+) ip (?P<ip>[0-9a-f]+) sp [0-9a-f]+ error (?P<error>\d+)(?:.*? in (?P<object>[^\[\s]+)\[)?",
        "{comm} (pid {pid}) segfaulted at address 0x{address} in {object}",
    ),
    rule(
        "kernel.trap",
        C::NativeCrash,
        Error,
        &["traps: "],
        r"^traps: (?P<comm>.+?)\[(?P<pid>\d+)\] (?P<trap>general protection fault|trap invalid opcode|trap divide error)",
        "{comm} (pid {pid}) crashed: {trap}",
    ),
    rule(
        "shell.segfault",
        C::NativeCrash,
        Error,
        &["Segmentation fault", "zsh: "],
        shell_signal!("Segmentation fault|segmentation fault"),
        "The process crashed with a segmentation fault (SIGSEGV)",
    ),
    rule(
        "glibc.heap-corruption",
        C::NativeCrash,
        Error,
        &["(): ", "double free or corruption", "corrupted size vs"],
        r"^(?P<message>(?:free|malloc|realloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): [a-z][^\n]*|double free or corruption.*|corrupted size vs\. prev_size.*)$",
        "glibc detected heap corruption: {message}",
    ),
    rule(
        "cxx.terminate",
        C::NativeCrash,
        Error,
        &["terminate called"],
        r"^terminate called (?:after throwing an instance of '(?P<exception>[^']+)'|without an active exception|recursively)",
        "A C++ exception was not caught: terminate called after throwing {exception}",
    ),
    rule(
        "cxx.what",
        C::NativeCrash,
        Error,
        &["(): "],
        r"^\s*what\(\):\s+(?P<what>.+?)\s*$",
        "A C++ exception was not caught: {what}",
    ),
    rule(
        "glibc.stack-smashing",
        C::NativeCrash,
        Error,
        &["stack smashing detected"],
        r"\*\*\* stack smashing detected \*\*\*",
        "A native stack buffer overflow was detected (stack smashing)",
    ),
    rule(
        "shell.aborted",
        C::NativeCrash,
        Error,
        &["Aborted", "zsh: "],
        shell_signal!("Aborted|abort"),
        "The process aborted (SIGABRT)",
    ),
    // ---- SIGBUS and disks --------------------------------------------------------
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            "shell.bus-error",
            C::MmapBusError,
            Error,
            &["Bus error", "zsh: "],
            shell_signal!("Bus error|bus error"),
            "The process died of a bus error (SIGBUS)",
        )
    },
    rule(
        "kernel.block-io-error",
        C::MmapBusError,
        Error,
        &[" error, dev "],
        r"^(?:(?:blk_update_request|blk_print_req_error|print_req_error): )?(?:critical )?(?:I/O|medium|target|space allocation) error,? dev (?P<device>[\w\-]+), sector (?P<sector>\d+)",
        "The disk failed a read: I/O error on {device}",
    ),
    rule(
        "kernel.buffer-io-error",
        C::MmapBusError,
        Error,
        &["Buffer I/O error"],
        r"^Buffer I/O error on dev(?:ice)? (?P<device>[\w\-]+), logical block (?P<block>\d+)",
        "The disk failed a read: Buffer I/O error on {device}",
    ),
    // ---- GPU, NCCL ---------------------------------------------------------------
    Rule {
        extract: Some(super::report::extract_xid),
        ..rule(
            "nvidia.xid",
            C::GpuXid,
            Error,
            &["NVRM: Xid"],
            r"NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>\d+),\s*(?:pid=(?P<pid>[^,\s]+),\s*)?(?:name=(?P<name>[^,]*),\s*)?(?P<detail>.*?)\s*$",
            "GPU Xid {xid} on {pci}: {meaning}",
        )
    },
    Rule {
        optional: &[r"\[Rank (?P<rank>\d+)\]"],
        ..rule(
            "nccl.watchdog-timeout",
            C::NcclFailure,
            Error,
            &["Watchdog caught collective operation timeout"],
            r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)(?:.*?Timeout\(ms\)=(?P<timeout_ms>\d+))?.*?\) ran for (?P<ran_ms>\d+) milliseconds before timing out",
            "NCCL collective {op} (SeqNum {seq}) timed out after {ran_ms} ms",
        )
    },
    rule(
        "nccl.timeout",
        C::NcclFailure,
        Error,
        &["imed out", "Timeout at NCCL work", "watchdog got stuck"],
        r"Some NCCL operations have failed or timed out|Timeout at NCCL work: (?P<work>\d+)|watchdog got stuck for (?P<stuck_s>\d+) seconds|ProcessGroupNCCL.*\b(?:timed out|Timed out)\b",
        "NCCL operations timed out",
    ),
    Rule {
        why: Some("NCCL warned; a warning right before a hang or crash is usually its cause."),
        fix: Some(
            "Rerun with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET) to see which transport and peer failed; \
             read the warning's text: 'Cuda failure' is a GPU error on that rank, 'NET/IB' or 'NET/Socket' a network \
             problem between nodes.",
        ),
        ..rule(
            "nccl.warn",
            C::NcclFailure,
            Warn,
            &["NCCL WARN"],
            r"NCCL WARN (?P<warning>.+?)\s*$",
            "NCCL warned: {warning}",
        )
    },
    // ---- kernel memory pressure and faults --------------------------------------
    rule(
        "kernel.reclaim-hung-task",
        C::MemoryPressure,
        Warn,
        &["blocked for more than"],
        r"^INFO: task (?P<comm>kswapd\d*|kcompactd\d*|khugepaged):(?P<pid>\d+) blocked for more than (?P<seconds>\d+) seconds",
        "Memory reclaim stalled: {comm} was blocked for more than {seconds} s",
    ),
    rule(
        "kernel.page-allocation-failure",
        C::MemoryPressure,
        Warn,
        &["page allocation failure"],
        r"^(?P<comm>.+?): page allocation failure: order:(?P<order>\d+), mode:(?P<mode>\S+?),?(?:\s|$)",
        "The kernel failed an order-{order} page allocation for {comm}",
    ),
    rule(
        "kernel.page-fault-bug",
        C::KernelOops,
        Error,
        &["BUG: unable to handle"],
        r"^BUG: unable to handle (?P<what>page fault|kernel NULL pointer dereference|kernel paging request) (?:for|at) (?:address:? ?)?(?P<address>[0-9a-fx]+)",
        "Kernel oops: unable to handle {what} at {address}",
    ),
    rule(
        "kernel.bug",
        C::KernelOops,
        Error,
        &["kernel BUG at"],
        r"^kernel BUG at (?P<location>\S+?)!?$",
        "Kernel BUG at {location}",
    ),
    rule(
        "kernel.gpf",
        C::KernelOops,
        Error,
        &["general protection fault"],
        r"^general protection fault(?:,|:)?\s*(?P<detail>.*)$",
        "Kernel oops: general protection fault",
    ),
    rule(
        "kernel.oops",
        C::KernelOops,
        Error,
        &["Oops: "],
        r"^(?:Oops: )+(?P<detail>[0-9a-f]{4}\b.*|[\w -]+ \[#\d+\].*)$",
        "Kernel oops: {detail}",
    ),
    rule(
        "kernel.panic",
        C::KernelOops,
        Error,
        &["Kernel panic"],
        r"^Kernel panic - not syncing: (?P<reason>.+?)\s*$",
        "Kernel panic: {reason}",
    ),
];

const CUDA_ASYNC_FIX: &str = "Rerun with CUDA_LAUNCH_BLOCKING=1 python … : CUDA reports errors asynchronously, at a later \
     call far from the kernel that failed; with it the traceback points at the real launch.\nBuild-time checks: \
     TORCH_USE_CUDA_DSA=1 (device-side assertions with the failing kernel named, needs a PyTorch built with it).\n\
     Find the bad access: compute-sanitizer --tool memcheck python train.py";

pub static CLASSES: [ClassInfo; 15] = [
    ClassInfo {
        class: C::OomKill,
        name: "oom_kill",
        id: "log.oom_kill",
        title: "A process was killed for running out of memory",
        why: "The kernel (or the memory cgroup of a container, pod or Slurm job) ran out of memory and killed \
              the process using the most; a SIGKILL leaves no Python traceback, only 'Killed' or exit code 137.",
        fix: oom_fix!(),
    },
    ClassInfo {
        class: C::DataloaderShm,
        name: "dataloader_shm",
        id: "log.dataloader_shm",
        title: "A DataLoader worker died of a bus error: /dev/shm is too small",
        why: "DataLoader workers pass each batch to the main process through shared memory in /dev/shm. When \
              /dev/shm is full a worker's write to its mapping raises SIGBUS. Docker gives containers 64 MiB by \
              default, far too little for image batches.",
        fix: "Give /dev/shm more room:\n  docker run --shm-size=16g …  (or --ipc=host)\n  Kubernetes: mount an \
              emptyDir with medium: Memory (sizeLimit: 16Gi) at /dev/shm\n  on a host: mount -o remount,size=16G \
              /dev/shm\nOr share through files instead of shm segments: \
              torch.multiprocessing.set_sharing_strategy('file_system')",
    },
    ClassInfo {
        class: C::DataloaderWorkerKilled,
        name: "dataloader_worker_killed",
        id: "log.dataloader_worker_killed",
        title: "A DataLoader worker died",
        why: "A worker process died by a signal; the main process only sees it vanish. SIGKILL is the OOM \
              killer, SIGSEGV a crash in native code run by the worker (a decoder, an augmentation library).",
        fix: "Run with num_workers=0 to get the real error in the main process.\nFor SIGKILL: lower the workers' \
              memory (fewer workers, smaller prefetch_factor; see memtriage inspect --tree PID_OF_MAIN).\nFor \
              SIGSEGV: PYTHONFAULTHANDLER=1 python train.py prints the Python stack of the crash.",
    },
    ClassInfo {
        class: C::NativeCrash,
        name: "native_crash",
        id: "log.native_crash",
        title: "Native code crashed (segmentation fault or abort)",
        why: "Code outside Python (a C/C++/CUDA extension, a library, glibc) faulted or aborted; Python cannot \
              catch it, and without faulthandler the log has no Python stack.",
        fix: "Get the Python stack of the crash: PYTHONFAULTHANDLER=1 python train.py (or python -X faulthandler).\n\
              Get the native stack: ulimit -c unlimited, then gdb -batch -ex bt python core; or run under \
              gdb -ex run --args python train.py.\nHeap corruption: rerun with MALLOC_CHECK_=3, or under \
              valgrind/AddressSanitizer; check that every extension was built against the installed torch/numpy \
              (pip check; reinstall the wheel that crashes).",
    },
    ClassInfo {
        class: C::MmapBusError,
        name: "mmap_bus_error",
        id: "log.mmap_bus_error",
        title: "SIGBUS: a memory-mapped file could not be read",
        why: "A bus error outside DataLoader shared memory means a page of a memory-mapped file could not be \
              supplied: the file was truncated or rewritten while mapped (a checkpoint overwritten in place, a \
              dataset replaced), or the disk or network filesystem failed the read.",
        fix: "Never overwrite a file that a running job maps: write the new one beside it and rename(2) it into \
              place (os.replace), so the old mapping keeps its pages.\nCheck the disk: dmesg -T | grep -iE 'I/O \
              error|blk_update_request'; smartctl -a /dev/DEV.\nCopy the file to local disk before mapping it \
              (numpy.memmap, safetensors, torch.load(mmap=True)) when it lives on a network filesystem.",
    },
    ClassInfo {
        class: C::CudaOom,
        name: "cuda_oom",
        id: "log.cuda_oom",
        title: "CUDA out of memory",
        why: "PyTorch asked the GPU for more memory than was free.",
        fix: "Lower the peak: a smaller batch (gradient accumulation keeps the effective batch), activation \
              checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast(dtype=torch.bfloat16)); \
              do not keep tensors across steps (loss.item(), not loss, in running totals).\nSee the peak: \
              torch.cuda.memory_summary(), torch.cuda.max_memory_allocated().",
    },
    ClassInfo {
        class: C::CudaIllegalMemoryAccess,
        name: "cuda_illegal_memory_access",
        id: "log.cuda_illegal_memory_access",
        title: "CUDA error: an illegal memory access was encountered",
        why: "A GPU kernel read or wrote memory outside any allocation (an out-of-range index, a use after free, \
              a race). The CUDA context is now unusable: every later CUDA call fails.",
        fix: CUDA_ASYNC_FIX,
    },
    ClassInfo {
        class: C::CudaDeviceAssert,
        name: "cuda_device_assert",
        id: "log.cuda_device_assert",
        title: "CUDA error: device-side assert triggered",
        why: "A check inside a GPU kernel failed, most often an index out of range (a label ≥ num_classes in a \
              loss, a token id ≥ vocabulary size in an embedding). The CUDA context is now unusable.",
        fix: CUDA_ASYNC_FIX,
    },
    ClassInfo {
        class: C::GpuXid,
        name: "gpu_xid",
        id: "log.gpu_xid",
        title: "The NVIDIA driver reported an Xid error",
        why: "Xid errors are the driver's reports of GPU faults; some are application bugs, others hardware that \
              needs a reset or service.",
        fix: "See the driver's state: nvidia-smi -q | grep -iA5 -E 'retired|remapp|ecc'.",
    },
    ClassInfo {
        class: C::NcclFailure,
        name: "nccl_failure",
        id: "log.nccl_failure",
        title: "NCCL collective timed out",
        why: "A collective waits for every rank; it times out when one rank never joins: that rank crashed, was \
              OOM-killed, hangs (a deadlock, a data-loading stall) or runs different code (a rank-dependent branch).",
        fix: "Find the rank that did not join: look for an earlier error on another rank or node (an OOM kill in \
              dmesg, a Python exception).\nRecord what each rank was doing: TORCH_NCCL_TRACE_BUFFER_SIZE=2000 \
              TORCH_NCCL_DUMP_ON_TIMEOUT=1 (flight recorder), NCCL_DEBUG=INFO.\nOnly for a step that is \
              legitimately slow: init_process_group(timeout=timedelta(minutes=30)).",
    },
    ClassInfo {
        class: C::MemoryPressure,
        name: "memory_pressure",
        id: "log.memory_pressure",
        title: "The kernel struggled to reclaim memory",
        why: "Reclaim stalls and failed allocations mean memory ran out and the machine thrashed (swapping or \
              re-reading file pages) before or instead of an OOM kill; jobs slow to a crawl.",
        fix: "Measure the job's fault rate and pressure: memtriage run -- python train.py; cat \
              /proc/pressure/memory.\nGive the job headroom (lower its peak, fewer jobs per node) and consider \
              swap off on dedicated training nodes (swapoff -a) so it fails fast instead of thrashing.",
    },
    ClassInfo {
        class: C::MaxMapCount,
        name: "max_map_count",
        id: "log.max_map_count",
        title: "mmap failed: out of memory mappings (vm.max_map_count)",
        why: "Each mapped shard, tensor storage and allocator arena is at least one mapping; the default limit of \
              65530 per process is reached long before memory runs out, and mmap then fails with ENOMEM.",
        fix: "sysctl -w vm.max_map_count=1048576\necho 'vm.max_map_count = 1048576' >> \
              /etc/sysctl.d/90-memtriage.conf\nCount a process's mappings: wc -l /proc/PID/maps",
    },
    ClassInfo {
        class: C::TooManyOpenFiles,
        name: "too_many_open_files",
        id: "log.too_many_open_files",
        title: "Out of file descriptors while sharing tensors between processes",
        why: "With the default 'file_descriptor' sharing strategy every tensor a DataLoader worker sends holds a \
              file descriptor open; many small tensors per batch exhaust RLIMIT_NOFILE (often 1024).",
        fix: "ulimit -n 1048576  (docker run --ulimit nofile=1048576:1048576; LimitNOFILE= in systemd)\nor \
              torch.multiprocessing.set_sharing_strategy('file_system')\nor return fewer, larger tensors per sample \
              (collate into one array).",
    },
    ClassInfo {
        class: C::MemlockLimit,
        name: "memlock_limit",
        id: "log.memlock_limit",
        title: "Locking memory failed: RLIMIT_MEMLOCK is too low",
        why: "RDMA (InfiniBand, RoCE) and pinned host memory must be locked in RAM; the locked-memory limit \
              (often 64 KiB or 8 MiB in containers) makes registration fail with ENOMEM.",
        fix: "ulimit -l unlimited  (before starting the job)\ndocker run --ulimit memlock=-1 … ; systemd: \
              LimitMEMLOCK=infinity; Slurm: PropagateResourceLimitsExcept=MEMLOCK and slurmd with \
              LimitMEMLOCK=infinity; /etc/security/limits.conf: * - memlock unlimited",
    },
    ClassInfo {
        class: C::KernelOops,
        name: "kernel_oops",
        id: "log.kernel_oops",
        title: "The Linux kernel faulted (oops)",
        why: "The kernel itself touched memory it must not (the Linux counterpart of Windows' \
              PAGE_FAULT_IN_NONPAGED_AREA): a driver or kernel bug, or failing RAM. Processes in the faulting \
              path hang or die, and the kernel is tainted until reboot.",
        fix: "Read the whole oops (dmesg -T, from the 'BUG:' or 'Oops:' line to the end of its call trace): the \
              module in the RIP line is the suspect (nvidia, a filesystem, a network driver).\nReboot the node; \
              update that driver or kernel; if oopses recur at random addresses, test the RAM (memtest86+, \
              edac-util).",
    },
];

/// What each NVIDIA Xid means, how bad it is, and what to do (NVIDIA's Xid catalog).
pub struct XidInfo {
    pub xid: u32,
    pub meaning: &'static str,
    pub severity: Severity,
    pub fix: &'static str,
}

const XID_APP_FIX: &str = "Usually a bug in the application's kernels: rerun with CUDA_LAUNCH_BLOCKING=1 and \
     compute-sanitizer --tool memcheck python train.py. If it recurs across different programs on this GPU, \
     suspect the hardware.";
const XID_RESET_FIX: &str =
    "Drain the node and reset the GPU: nvidia-smi -r -i GPU (or reboot); check \
     nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT. If it recurs, the GPU needs service (RMA).";

pub static XIDS: &[XidInfo] = &[
    XidInfo {
        xid: 13,
        meaning: "graphics engine exception (typically an out-of-range access in a kernel)",
        severity: Error,
        fix: XID_APP_FIX,
    },
    XidInfo {
        xid: 31,
        meaning: "GPU memory page fault (a kernel accessed an invalid address)",
        severity: Error,
        fix: XID_APP_FIX,
    },
    XidInfo {
        xid: 43,
        meaning: "GPU stopped processing (the application hit a fault and was stopped; the GPU is healthy)",
        severity: Warn,
        fix: "Look for the application's own error (an illegal memory access, an assert) just before it.",
    },
    XidInfo {
        xid: 45,
        meaning: "preemptive cleanup after earlier errors (the driver tore down a process that was killed or crashed)",
        severity: Info,
        fix: "A consequence, not a cause: look for the earlier Xid, OOM kill or crash that ended the process.",
    },
    XidInfo {
        xid: 48,
        meaning: "double-bit ECC error (an uncorrectable GPU memory error)",
        severity: Error,
        fix: XID_RESET_FIX,
    },
    XidInfo {
        xid: 63,
        meaning: "ECC page retirement or row remapping recorded",
        severity: Warn,
        fix: "Reset the GPU when it is idle to apply the remapping: nvidia-smi -r -i GPU. Watch for it recurring.",
    },
    XidInfo {
        xid: 64,
        meaning: "ECC page retirement or row remapping failed",
        severity: Error,
        fix: XID_RESET_FIX,
    },
    XidInfo {
        xid: 74,
        meaning: "NVLink error",
        severity: Error,
        fix: "Check the links: nvidia-smi nvlink -s and -e; drain the node, reset the GPUs or reboot; recurring \
              errors need the NVLink bridge or baseboard serviced.",
    },
    XidInfo {
        xid: 79,
        meaning: "GPU has fallen off the bus (no longer reachable over PCIe)",
        severity: Error,
        fix: "Drain the node and reboot it; check power, thermals (nvidia-smi -q -d TEMPERATURE,POWER before it \
              happens) and the PCIe link (lspci -vv, reseat the card). Recurring: service the GPU or the slot.",
    },
    XidInfo {
        xid: 92,
        meaning: "high single-bit ECC error rate (GPU memory is degrading)",
        severity: Warn,
        fix: "Watch it: nvidia-smi -q -d ECC; plan to replace the GPU if the rate keeps rising.",
    },
    XidInfo {
        xid: 94,
        meaning: "contained ECC error (an uncorrectable error, confined to the application that hit it)",
        severity: Error,
        fix: "Restart the affected job; the GPU stays usable. Reset it when idle (nvidia-smi -r) to remap the row.",
    },
    XidInfo {
        xid: 95,
        meaning: "uncontained ECC error (every application on the GPU is affected)",
        severity: Error,
        fix: XID_RESET_FIX,
    },
];

pub fn xid_info(xid: u32) -> Option<&'static XidInfo> {
    XIDS.iter().find(|x| x.xid == xid)
}

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
            assert_eq!(CLASSES[i].id, format!("log.{}", CLASSES[i].name));
        }
    }

    #[test]
    fn every_pattern_compiles_and_every_rule_has_literals() {
        let mut ids = std::collections::HashSet::new();
        for r in RULES {
            assert!(ids.insert(r.id), "duplicate rule id {}", r.id);
            assert!(!r.literals.is_empty(), "{}", r.id);
            assert!(regex::Regex::new(&expand(r.pattern)).is_ok(), "{}", r.id);
            for p in r.optional {
                assert!(regex::Regex::new(&expand(p)).is_ok(), "{}: {p}", r.id);
            }
        }
    }
}
