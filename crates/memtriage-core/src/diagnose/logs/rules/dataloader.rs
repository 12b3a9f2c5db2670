//! PyTorch DataLoader workers: shared memory (/dev/shm) too small, workers killed by
//! a signal.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::model::finding::Certainty::Likely;
use crate::model::finding::Severity::{Error, Info, Warn};
use crate::model::ids;

/// The advice to grow a container's /dev/shm, which tells the cause of a bus error beside
/// it and is nothing alone.
pub const SHM_SIZE_ADVICE: &str = "prose.shm-size-advice";

pub(super) static RULES: &[Rule] = &[
    // ---- DataLoader workers ------------------------------------------------------
    rule(
        "dataloader.shm-bus-error",
        C::DataloaderShm,
        Error,
        &["insufficient shared memory", "encountered in worker", "nsufficient Shared memory"],
        r"(?i:unexpected bus error encountered in worker|insufficient shared memory \(shm\))",
        "A DataLoader worker died of a bus error: /dev/shm is too small",
    ),
    rule(
        "dataloader.worker-sigbus",
        C::DataloaderShm,
        Error,
        &["DataLoader worker", "data_loader.cc:"],
        // Paddle's own: `Bus error at (/paddle/paddle/fluid/imperative/data_loader.cc:165)`.
        r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal:\s*Bus(?: error|$)|Bus error at \([^)]*data_loader\.cc:\d+\)",
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
    Rule {
        why: Some(
            "Ray keeps its object store in /dev/shm; the store it was asked for is larger than the room /dev/shm \
             has. Docker gives a container 64 MiB of /dev/shm by default, and a platform that starts the container \
             may give it little more.",
        ),
        fix: Some(
            "Give /dev/shm more room: docker run --shm-size=16g (Compose: shm_size; Kubernetes: an emptyDir with \
             medium: Memory mounted at /dev/shm).\nOr ask Ray for a smaller object store: ray start \
             --object-store-memory=BYTES (ray.init(object_store_memory=…)).",
        ),
        ..rule(
            // Ray's raylet sizing its object store (vLLM, serving platforms): `System
            // memory request exceeds memory available in /dev/shm. The request is for
            // N bytes, and the amount available is M bytes.`
            "ray.object-store-request-over-shm",
            C::DataloaderShm,
            Error,
            &["exceeds memory available in /dev/shm"],
            r"System memory request exceeds memory available in /dev/shm\.(?: The request is for (?P<bytes>\d+) bytes)?",
            "Ray's object store does not fit in /dev/shm",
        )
    },
    rule(
        // Unity's player and editor in a container: `Insufficient shared memory
        // available - if using Docker, please run the container with --shm-size=1025M`.
        "unity.insufficient-shared-memory",
        C::DataloaderShm,
        Error,
        &["Insufficient shared memory available"],
        r"\bInsufficient shared memory available\b",
        "The program needs more shared memory (/dev/shm) than the container gives it",
    ),
    Rule {
        // A database's user is told of PostgreSQL's workers, not a DataLoader's.
        why: Some(
            "PostgreSQL's parallel workers (a parallel query, VACUUM, an index build) share their data through \
             dynamic shared memory segments in /dev/shm (dynamic_shared_memory_type = posix). Docker gives a \
             container 64 MiB of /dev/shm by default; a segment that needs more fails with No space left on device.",
        ),
        fix: Some(
            "Give /dev/shm more room: docker run --shm-size=1g (Compose: shm_size: 1g; Kubernetes: an emptyDir with \
             medium: Memory mounted at /dev/shm).\nOr need less of it: fewer parallel workers \
             (max_parallel_workers_per_gather, max_parallel_maintenance_workers) or a smaller work_mem.",
        ),
        ..rule(
            // PostgreSQL's parallel workers share memory through /dev/shm too (a
            // container's 64 MB).
            "postgres.shm-no-space",
            C::DataloaderShm,
            Error,
            &["No space left on device"],
            r"could not resize shared memory segment \x22(?P<segment>[^\x22]+)\x22 to (?P<bytes>\d+) bytes: No space left on device",
            "Shared memory is full: PostgreSQL could not grow the segment {segment} to {bytes} bytes in /dev/shm",
        )
    },
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
             copies every page a worker touches).\nSee what each worker holds: memtriage inspect --tree PID_OF_MAIN (memtriage.tree(pid) in Python).",
        ),
        ..rule(
            "dataloader.worker-sigkill",
            C::DataloaderWorkerKilled,
            Error,
            &["DataLoader worker", "DataLoader process"],
            // Paddle's: `DataLoader process (pid 10222) exited is killed by signal: Killed`.
            r"DataLoader (?:worker|process) \(pid (?P<pid>\d+)\) (?:exited )?is killed by signal: Killed",
            "DataLoader worker (pid {pid}) was killed by SIGKILL, most often the OOM killer",
        )
    },
    rule(
        "dataloader.worker-signal",
        C::DataloaderWorkerKilled,
        Error,
        &["DataLoader worker"],
        // A report or a cut log may stop before the signal's name (a line a terminal
        // cut after `signal: ` is read joined to the next instead).
        r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: (?P<signal>\w[^.]*)|DataLoader worker (?:\(pid[^)]*\) )?is killed by signal(?::\s*\w|\s+\w|\s*$)",
        "DataLoader worker (pid {pid}) was killed by signal: {signal}",
    ),
    Rule {
        certainty: crate::model::finding::Certainty::Possible,
        ..rule(
            "df.dev-shm-full",
            C::DataloaderShm,
            Error,
            &["/dev/shm"],
            r"^\S+\s+[\d.,]+[KMGTP]?i?\s+[\d.,]+[KMGTP]?i?\s+[\d.,]+[KMGTP]?i?\s+(?P<pct>9\d|100)%\s+/dev/shm\s*$",
            "/dev/shm is {pct}% full: shared memory is running out",
        )
    },
    Rule {
        certainty: crate::model::finding::Certainty::Likely,
        ..rule(
            // A writer who saw /dev/shm fill up before the bus error: the shared-memory
            // bus error told in words (`my /dev/shm fills up completely and exits the
            // program by causing a BUS ERROR`).
            "prose.shm-full-bus-error",
            C::DataloaderShm,
            Error,
            &["/dev/shm"],
            r"(?i:/dev/shm\b.{0,80}?\b(?:fill(?:s|ed|ing)? up|(?:is|was|gets?|got|becomes?|became) full|ran out|runs? out)\b.{0,80}?\bbus error)",
            "The text reports a bus error as /dev/shm filled up: shared memory ran out",
        )
    },
    Rule {
        extract: Some(super::claims::extract_told),
        certainty: crate::model::finding::Certainty::Possible,
        ..rule(
            // A thread's word that shared memory was too small (`这个是因为docker run的时候
            // 默认分配的共享内存不够，只有64M`, Docker's default shared memory is not
            // enough, only 64M): alone no failure, it tells whose a bus error beside it is.
            "prose.shm-too-small-told",
            C::DataloaderShm,
            Info,
            &["共享内存不", "共享内存太小", "shared memory is not enough", "shared memory was not enough", "shared memory is too small", "shared memory was too small", "not enough shared memory"],
            r"(?i:(?P<claim>共享内存(?:不够|不足|太小)|\bshared memory (?:is|was) (?:not enough|too small)\b|\bnot enough shared memory\b))",
            "The thread says shared memory (/dev/shm) was too small ({claim})",
        )
    },
    rule(
        // Ray's object store falls back to disk when /dev/shm is too small (a
        // container's 64 MB): slow, and a sign the DataLoader's shared memory is short too.
        "ray.object-store-shm-too-small",
        C::DataloaderShm,
        Warn,
        &["instead of /dev/shm because /dev/shm has only"],
        r"The object store is using /tmp instead of /dev/shm because /dev/shm has only (?P<bytes>\d+) bytes available",
        "/dev/shm has only {bytes} bytes: Ray's object store fell back to /tmp",
    ),
    rule(
        "dataloader.shm-unable-to-write",
        C::DataloaderShm,
        Error,
        &["unable to write to file </torch_"],
        r"unable to write to file (?P<path></torch_[^>]*>)",
        "Writing a shared-memory segment ({path}) failed: /dev/shm is full",
    ),
    rule(
        "dataloader.worker-segfault-message",
        C::DataloaderWorkerKilled,
        Error,
        &["Unexpected segment"],
        r"Unexpected segment\s*ation fault(?: encoun| encountered in worker)?",
        "A DataLoader worker crashed with a segmentation fault",
    ),
    Rule {
        certainty: Likely,
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            // The frame of PyTorch's SIGCHLD handler, which runs only when a worker has
            // died: a traceback through it was cut before the error it raises.
            "dataloader.sigchld-handler-frame",
            C::DataloaderWorkerKilled,
            Error,
            &["_error_if_any_worker_fails"],
            r"^\s*_error_if_any_worker_fails\(\)\s*$",
            "A DataLoader worker died: the traceback passes through PyTorch's handler for a worker's death",
        )
    },
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            "dataloader.worker-exited",
            C::DataloaderWorkerKilled,
            Error,
            &["DataLoader worker"],
            r"DataLoader worker \(pids?(?:\(s\))? (?P<pids>[\d, ]+)\) exited unexpectedly",
            "DataLoader worker (pid(s) {pids}) exited unexpectedly",
        )
    },
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            // PaddlePaddle's DataLoader says it its own way.
            "paddle.dataloader-workers-exit",
            C::DataloaderWorkerKilled,
            Error,
            &["exit unexpectedly, pids"],
            r"DataLoader (?P<count>\d+) workers? exit unexpectedly, pids: (?P<pids>[\d, ]+)",
            "{count} DataLoader worker(s) (pid(s) {pids}) exited unexpectedly",
        )
    },
];

pub(super) const DATALOADER_SHM: ClassInfo = ClassInfo {
    class: C::DataloaderShm,
    name: "dataloader_shm",
    id: ids::LOG_DATALOADER_SHM,
    title: "A DataLoader worker died of a bus error: /dev/shm is too small",
    why: "DataLoader workers pass each batch to the main process through shared memory in /dev/shm. When \
          /dev/shm is full a worker's write to its mapping raises SIGBUS. Docker gives containers 64 MiB by \
          default, far too little for image batches.",
    fix: "Give /dev/shm more room:\n  docker run --shm-size=16g …  (or --ipc=host)\n  Kubernetes: mount an \
          emptyDir with medium: Memory (sizeLimit: 16Gi) at /dev/shm\n  on a host: mount -o remount,size=16G \
          /dev/shm\nOr share through files instead of shm segments: \
          torch.multiprocessing.set_sharing_strategy('file_system')",    cause: crate::model::finding::CauseKind::Configuration,
    confirm: "df -h /dev/shm inside the container while the job runs (64M is Docker's default).",
};

pub(super) const DATALOADER_WORKER_KILLED: ClassInfo = ClassInfo {
    class: C::DataloaderWorkerKilled,
    name: "dataloader_worker_killed",
    id: ids::LOG_DATALOADER_WORKER_KILLED,
    title: "A DataLoader worker died",
    why: "A worker process died by a signal; the main process only sees it vanish. SIGKILL is the OOM \
          killer, SIGSEGV a crash in native code run by the worker (a decoder, an augmentation library).",
    fix: "Run with num_workers=0 to get the real error in the main process.\nFor SIGKILL: lower the workers' \
          memory (fewer workers, smaller prefetch_factor; see memtriage inspect --tree PID_OF_MAIN, or memtriage.tree(pid) in Python).\nFor \
          SIGSEGV: PYTHONFAULTHANDLER=1 python train.py prints the Python stack of the crash.",    cause: crate::model::finding::CauseKind::Capacity,
    confirm: "For SIGKILL: dmesg -T | grep -i 'killed process' on the node; for SIGSEGV: rerun with num_workers=0.",
};

/// Read after every program's rule: a line that holds the advice and a program's own
/// words (Ray's `… pass '--shm-size=10.24gb' to 'docker run'`) is the program's.
pub(super) static ADVICE_RULES: &[Rule] = &[Rule {
    certainty: crate::model::finding::Certainty::Possible,
    ..rule(
        // A thread's fix that grows a container's shared memory (`--shm-size=1g`):
        // read only beside a bus error, whose cause it tells; a healthy log's own
        // `docker run --shm-size=16g …` reports nothing (the report drops it).
        SHM_SIZE_ADVICE,
        C::DataloaderShm,
        Info,
        &["shm-size"],
        r"--shm-size[= ](?P<size>\d+(?:\.\d+)?\s*[kmgtKMGT]?i?[bB]?)\b",
        "The thread grows the container's shared memory (/dev/shm) to {size}",
    )
}];
