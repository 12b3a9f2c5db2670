//! Per-process limits: locked memory (RDMA, pinning), file descriptors (tensor
//! sharing) and memory mappings (vm.max_map_count).

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::model::finding::Certainty::{Likely, Possible};
use crate::model::finding::Severity::{Error, Info, Warn};
use crate::model::ids;

/// Under this a locked-memory limit breaks RDMA registration, pinning and io_uring.
const SMALL_MEMLOCK_BYTES: u64 = 64 << 20;

/// A locked-memory limit shown in a limits table, when it is small (the 64 KiB or
/// 8 MiB defaults that break RDMA registration, pinning and io_uring). Many healthy
/// machines run with these defaults, so it is context for a failure, not one.
fn small_memlock(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let bytes = out.iter().find_map(|(k, v)| match k.as_str() {
        "soft_bytes" => v.parse::<u64>().ok(),
        "soft_kib" => v.parse::<u64>().ok().map(|kb| kb << 10),
        _ => None,
    });
    match bytes {
        Some(b) if b < SMALL_MEMLOCK_BYTES => {
            out.push(("limit".into(), crate::model::units::iec(b)));
            true
        }
        _ => false,
    }
}

/// A limit named in words (`ulimit -l` is in KiB): evidence when under
/// [`SMALL_MEMLOCK_BYTES`], as a table's is; a kernel object charged to the limit
/// needs no figure.
fn small_memlock_in_words(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let Some(value) = out
        .iter()
        .find(|(k, _)| k == "value")
        .and_then(|(_, v)| v.parse::<u64>().ok())
    else {
        return true;
    };
    let unit = out
        .iter()
        .find(|(k, _)| k == "unit")
        .map(|(_, v)| v.to_ascii_lowercase());
    let bytes = match unit.as_deref() {
        Some("m" | "mb" | "mib") => value << 20,
        _ => value << 10,
    };
    if bytes >= SMALL_MEMLOCK_BYTES {
        return false;
    }
    out.push(("limit".into(), crate::model::units::iec(bytes)));
    true
}

pub(super) static RULES: &[Rule] = &[
    // ---- memlock, file descriptors, mappings --------------------------------------
    // io_uring_setup(2) charges its rings to RLIMIT_MEMLOCK before kernel 5.12 and
    // fails with ENOMEM past it (netty's `failed to create io_uring ring fd Cannot
    // allocate memory` under a CI runner's `ulimit -l` of 64).
    Rule {
        certainty: Likely,
        ..rule(
            "io-uring.enomem",
            C::MemlockLimit,
            Error,
            &["io_uring"],
            r"\bio_uring\w*[^\n]{0,80}?(?:Cannot allocate memory|\bENOMEM\b|errno:? ?12\b)|(?:Cannot allocate memory|\bENOMEM\b)[^\n]{0,40}?\bio_uring",
            "io_uring failed with Cannot allocate memory: its rings count against the locked-memory limit",
        )
    },
    Rule {
        certainty: Possible,
        extract: Some(small_memlock),
        ..rule(
            // `/proc/PID/limits` and `prlimit`'s row, `ulimit -a`'s line.
            "limits.small-memlock",
            C::MemlockLimit,
            Info,
            &["locked memory", "locked-in-memory"],
            r"^Max locked memory\s+(?P<soft_bytes>\d+)\s+(?:\d+|unlimited)\s+bytes\s*$|^(?:max )?locked(?:-in)?[ -]memory(?: size)?\s+\(kbytes, -l\)\s+(?P<soft_kib>\d+)\s*$",
            "The locked-memory limit is {limit}: RDMA registration, pinned memory and io_uring fail under it",
        )
    },
    rule(
        "rdma.ibv-reg-mr",
        C::MemlockLimit,
        Error,
        &["ibv_reg_mr"],
        r"ibv_reg_mr.*(?:[Ff]ailed|\berr(?:or)?\b|Cannot allocate memory)|[Ff]ailed.*ibv_reg_mr",
        "Registering memory for RDMA (ibv_reg_mr) failed: the locked-memory limit is too low",
    ),
    rule(
        "rdma.memlock-warning",
        C::MemlockLimit,
        Error,
        &["RLIMIT_MEMLOCK", "allocate some locked memory", "couldn't lock", "mlock", "Cannot lock down", "MEMLOCK may be too low"],
        // grsecurity's denial names the request and the limit; Intel MPI's DAPL and
        // Open MPI's openib only that it is too small; PipeWire its refused mlock
        // (`Failed to mlock memory 0x7fd93c124000 32832: … consider increasing
        // RLIMIT_MEMLOCK`).
        r"\bFailed to mlock memory 0x[0-9a-f]+ \d+\b|RLIMIT_MEMLOCK is (?P<limit>\d+) bytes|requesting \d+ for RLIMIT_MEMLOCK against limit (?P<limit2>\d+)|\bDAPL startup: RLIMIT_MEMLOCK too small|failed to initialize while trying to allocate some locked memory|\blibibverbs: Warning: couldn't lock \d+ bytes of memory|Couldn't set RLIMIT_MEMLOCK\b|RLIMIT_MEMLOCK is set to big enough value|(?:\bfailed to mlock\b|\bmlock(?:all)?(?:\(\))?(?: failed)?:).{0,60}(?:Cannot allocate memory|Resource temporarily unavailable|ENOMEM|EAGAIN)|\bCannot lock down \d+ byte memory area\b|\bMEMLOCK may be too low\b",
        "RLIMIT_MEMLOCK is only {limit} bytes: RDMA memory registration will fail",
    ),
    rule(
        // VFIO pins a guest's or a device's memory against the process's limit
        // (GPU passthrough, SPDK, DPDK): the kernel says so in its log, in
        // vfio_iommu_type1.c's two forms (`vfio_pin_pages_remote: RLIMIT_MEMLOCK (N)
        // exceeded`, `vfio_lock_acct: Task qemu (575712) RLIMIT_MEMLOCK (N) exceeded`).
        "vfio.memlock-exceeded",
        C::MemlockLimit,
        Error,
        &["RLIMIT_MEMLOCK ("],
        r"\bvfio\w*: (?:Task .{1,20}? \(\d+\) )?RLIMIT_MEMLOCK \((?P<limit>\d+)\) exceeded",
        "The kernel refused to pin memory for VFIO: RLIMIT_MEMLOCK ({limit} bytes) exceeded",
    ),
    // Open MPI's openib warning: the HCA driver's MTT table caps what can be registered
    // (log_num_mtt, log_mtts_per_seg), a limit on pinned memory below RAM.
    rule(
        "openmpi.registerable-memory",
        C::MemlockLimit,
        Warn,
        &["registering part of your physical memory"],
        r"allow registering part of your physical memory",
        "Open MPI: the InfiniBand driver lets only part of RAM be registered (pinned) for RDMA",
    ),
    rule(
        "nccl.ib-enomem",
        C::MemlockLimit,
        Error,
        &["Cannot allocate memory"],
        r"(?:NET/IB|ibv_|NCCL WARN.*\bIB\b).*Cannot allocate memory",
        "NCCL could not register InfiniBand memory (Cannot allocate memory): the locked-memory limit is too low",
    ),
    // Before Linux 5.12 an io_uring's rings are charged to RLIMIT_MEMLOCK: its setup
    // fails with ENOMEM when the limit (often 64 KiB or 8 MiB) is reached.
    rule(
        "io-uring.setup-enomem",
        C::MemlockLimit,
        Error,
        &["io_uring_setup", "io_uring_queue_init", "io_uring_register"],
        // Registered buffers are pinned and charged to the same limit.
        r"io_uring_(?:setup|queue_init|register(?:_buffers)?)\b.*(?:= -1 ENOMEM|Cannot allocate memory|-ENOMEM|\bENOMEM\b|\b-12\b)|ENOMEM\b.{0,10}io_uring_(?:setup|register(?:_buffers)?)\b",
        "io_uring could not be set up (ENOMEM): the locked-memory limit is too low",
    ),
    rule(
        "mlock.failed",
        C::MemlockLimit,
        Error,
        &["lock memory", "lock the memory", "locking page", "mlock", "memlock", "Unable to lock", "Increase RLIMIT_MEMLOCK", "increasing RLIMIT_M", "memory is not locked", "memory lock limit"],
        // Elasticsearch and other JVMs: `Unable to lock JVM Memory: error=12`, then
        // `Increase RLIMIT_MEMLOCK, soft limit: 65536`; OpenVPN's `--mlock` (`mlock:
        // RLIMIT_MEMLOCK < 100 MB, increase limit`). Agave (Solana's validator) for its
        // io_uring buffers: `Unable to increase the maximum memory lock limit to
        // 2000000000 from 65536`, `unable to set memory lock limit`.
        r"(?i:failed to lock memory|RLIMIT_MEMLOCK < \d+ MB, increase limit|Error locking page|mlock(?:all)?(?:\(\))? (?:failed|errors)|memlock.{0,80}\bcurrently (?:64|8192|65536)\b|Unable to lock (?:the |JVM )?memory|No proper privileges to lock the memory|Increase RLIMIT_MEMLOCK|failed to mlock \d+-byte buffer|Try increasing RLIMIT_M(?:EM)?LOCK|memory locking requested for \w+ process but memory is not locked|Unable to increase the maximum memory lock limit to \d+ from \d+|\bunable to set memory lock limit\b)",
        "Locking memory failed: the locked-memory limit is too low",
    ),
    rule(
        // UCX (under Open MPI, NCCL's net plugins, TensorRT-LLM) asks for the limit.
        "ucx.memlock",
        C::MemlockLimit,
        Error,
        &["max locked memory"],
        r"(?i:set max locked memory \(ulimit -l\) to .{0,2}unlimited.{0,2}(?: \(current: (?P<current_kib>\d+) kbytes\))?)",
        "UCX could not lock memory: the locked-memory limit is too low",
    ),
    Rule {
        certainty: Possible,
        extract: Some(small_memlock_in_words),
        ..rule(
            // A writer saying the limit is small (`ulimit -l` is `64`, the soft memlock
            // is set to 64K), or that a kernel object is charged to it.
            "prose.small-memlock",
            C::MemlockLimit,
            Warn,
            &["ulimit -l", "memlock", "max locked memory", "locked memory limit"],
            r"(?i:\b(?:ulimit -l|memlock|max locked memory)\b[\s`'\x22]{0,3}(?:limit |setting |value )?(?:is being set to|being set to|is set to|set to|is|was|of|=)[\s`'\x22:]{0,3}(?P<value>\d+)\s*(?P<unit>kbytes|kib|kb|k|mib|mb|m)?\b|\bagainst the locked memory limit\b)",
            "The text says the locked-memory limit is small",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            // Before Linux 5.11 a BPF map is charged to the locked-memory limit: its
            // creation fails with EPERM past it.
            "bpf.map-eperm",
            C::MemlockLimit,
            Error,
            &["create_map"],
            r"(?i:\be?bpf_create_map\w*\(\)? failed: Operation not permitted)",
            "Creating a BPF map was refused (EPERM): before Linux 5.11 maps count against the locked-memory limit",
        )
    },
    rule(
        // HPX names the limit when a thread's stack (with its guard page, a mapping of
        // its own) cannot be mapped.
        "hpx.thread-stack-max-map-count",
        C::MaxMapCount,
        Error,
        &["failed to allocate thread stack"],
        r"\bmmap\(\) failed to allocate thread stack due to insufficient resources, increase /proc/sys/vm/max_map_count\b",
        "HPX could not map a thread's stack: the process is at vm.max_map_count",
    ),
    rule(
        // ClickHouse explains its ENOMEM when the mappings are what ran out.
        "clickhouse.max-map-count",
        C::MaxMapCount,
        Error,
        &["number of mappings"],
        r"Limit on number of mappings \(/proc/sys/vm/max_map_count\): (?P<max_map_count>\d+)",
        "The process is at the limit on memory mappings (vm.max_map_count)",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // HotSpot's warning at start (ZGC's heap needs a mapping per granule): the
            // limit is not met yet, but mmap will fail before the heap is full.
            "jvm.max-map-count-low",
            C::MaxMapCount,
            Warn,
            &["memory mappings per process"],
            r"\bThe system limit on number of memory mappings per process might be too low\b",
            "The JVM warns that vm.max_map_count is too low for its heap",
        )
    },
    rule(
        // Erlang's Ranch slows its acceptors when accept(2) fails with EMFILE.
        "ranch.out-of-file-descriptors",
        C::TooManyOpenFiles,
        Error,
        &["out of file descriptors"],
        r"\bRanch acceptor reducing accept rate: out of file descriptors\b",
        "The server ran out of file descriptors and slowed accepting connections",
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
        // strerror's words in the locales, SQL Server's, libuv's code, PHP's own
        // (`Process open FD table is full`) and PRRTE's (`system limit exceeded on number
        // of files that can be open`).
        "fd.emfile",
        C::TooManyOpenFiles,
        Error,
        &["Too many open files", "error number 24 in a file operation", "EMFILE", "打开的文件过多", "開いているファイルが多すぎます", "Zu viele offene Dateien", "Trop de fichiers ouverts", "Demasiados archivos abiertos", "Muitos arquivos abertos", "Слишком много открытых файлов", "Process open FD table is full", "number of files that can be open"],
        // Erlang names it in lower case (`File operation error: emfile. Target: …`,
        // `{error,emfile}`).
        // InnoDB names EMFILE by its number, Node by its name after the call that met it
        // (`listen EMFILE /tmp/x.sock`); glibc's translations of strerror(EMFILE) come
        // after a colon.
        r"Too many open files|\bProcess open FD table is full\b|\bsystem limit exceeded on number of files that can be open\b|(?-i:\bFile operation error: emfile\b)|\{error,\s*emfile\}|\bOperating system error number 24 in a file operation|\b(?:listen|getaddrinfo|connect|open|spawn|accept|watch|scandir|socket|uv_\w+) EMFILE\b|\b(?:errno|code): '?EMFILE\b|(?:^|[:：]\s*)(?:打开的文件过多|開いているファイルが多すぎます|Zu viele offene Dateien|Trop de fichiers ouverts|Demasiados archivos abiertos|Muitos arquivos abertos|Слишком много открытых файлов)",
        "Too many open files",
    ),
    // mprotect(2) fails with ENOMEM when splitting a mapping would pass the count of
    // mappings allowed: a JVM's stack guard pages, a runtime protecting its heap.
    Rule {
        certainty: Likely,
        ..rule(
            "mprotect.enomem",
            C::MaxMapCount,
            Error,
            &["mprotect"],
            r"(?i:\(mprotect\) failed to protect|mprotect(?:\(\))?(?: \(\d+\))?:? (?:failed[^\n]{0,40}(?:ENOMEM|Cannot allocate memory|out of memory)|(?:ENOMEM|Cannot allocate memory|out of memory)))",
            "mprotect failed for want of memory mappings: the process is at vm.max_map_count",
        )
    },
    rule(
        "mmap.torch-enomem",
        C::MaxMapCount,
        Error,
        &["unable to mmap"],
        r"unable to mmap (?P<bytes>\d+) bytes from file <(?P<path>[^>]*)>: Cannot allocate memory",
        "mmap of {path} failed with Cannot allocate memory: the process is out of memory mappings",
    ),
    Rule {
        extract: Some(not_one_large_mapping),
        ..rule(
        "mmap.enomem",
        C::MaxMapCount,
        Error,
        &["mmap", "max_map_count", "Map failed", "Failed to map the data file", "increase sysctl vm.max_map_count"],
        // MongoDB's and Elasticsearch's start-up check: `vm.max_map_count is too low`;
        // a JVM's FileChannel.map, whose ENOMEM it reports as `OutOfMemoryError: Map
        // failed` (the heap has room: the mappings or the address space ran out);
        // Solana's accounts store (`Failed to map the data file (size: 786432):
        // Cannot allocate memory (os error 12)`, then its advice on max_map_count, read
        // alone where a terminal cut the error line: `Please increase sysctl
        // vm.max_map_count or equivalent for your platform`).
        r"vm\.max_map_count is too low|\bPlease increase sysctl vm\.max_map_count\b|\bFailed to map the data file\b.{0,60}\bCannot allocate memory|OutOfMemoryError: Map failed|\bmmap(?:\(\))?(?: failed| error)?:? Cannot allocate memory|Cannot mmap .{0,40}errno:? 12|failed to mmap(?: memory dataSize=(?P<size>\d+))?|\bmmap, size (?P<size2>\d+): cannot allocate memory|max_map_count\)?\s*\[?(?P<max_map_count2>\d+)\]? is too low|\bmmap\b.*\[Errno 12\] Cannot allocate memory|\[Errno 12\] Cannot allocate memory.*\bmmap\b|max_map_count \[?(?P<max_map_count>\d+)\]? is too low",
        "mmap failed with Cannot allocate memory: the process is out of memory mappings",
    )
    },
    // What `mmap.enomem` leaves: one mapping of a gigabyte or more refused, for want of
    // memory or address space (overcommit, `ulimit -v`), not of mappings (MMseqs2's
    // `Failed to mmap memory dataSize=244437757952 File=….idx. Error 12.`).
    Rule {
        extract: Some(one_large_mapping),
        ..rule(
            "mmap.large-enomem",
            C::HostAllocFailure,
            Error,
            &["failed to mmap", "mmap, size"],
            r"failed to mmap memory dataSize=(?P<size>\d+)[^\n]{0,300}?\bError 12\b|\bmmap, size (?P<size2>\d+): cannot allocate memory",
            "A mapping of {bytes} was refused (ENOMEM): the machine's memory or the process's address space ran out",
        )
    },
];

/// A mapping this large that fails is refused for memory or address space: one
/// request is one mapping, so the count of mappings is not what ran out.
const LARGE_MAPPING_BYTES: u64 = 1 << 30;

/// The size of the refused mapping, where the line gives it.
fn mapping_size(out: &[(String, String)]) -> Option<u64> {
    out.iter()
        .find(|(k, _)| k == "size" || k == "size2")
        .and_then(|(_, v)| v.parse().ok())
}

#[allow(clippy::ptr_arg)]
fn not_one_large_mapping(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    mapping_size(out).is_none_or(|b| b < LARGE_MAPPING_BYTES)
}

fn one_large_mapping(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let Some(bytes) = mapping_size(out).filter(|b| *b >= LARGE_MAPPING_BYTES) else {
        return false;
    };
    out.push(("bytes".into(), crate::model::units::iec(bytes)));
    true
}

pub(super) const MAX_MAP_COUNT: ClassInfo = ClassInfo {
    class: C::MaxMapCount,
    name: "max_map_count",
    id: ids::LOG_MAX_MAP_COUNT,
    title: "mmap failed: out of memory mappings (vm.max_map_count)",
    why: "Each mapped shard, tensor storage and allocator arena is at least one mapping; the default limit of \
          65530 per process is reached long before memory runs out, and mmap then fails with ENOMEM.",
    fix: "sysctl -w vm.max_map_count=1048576\necho 'vm.max_map_count = 1048576' >> \
          /etc/sysctl.d/90-memtriage.conf\nCount a process's mappings: wc -l /proc/PID/maps",    cause: crate::model::finding::CauseKind::Configuration,
    confirm: "sysctl vm.max_map_count against wc -l /proc/PID/maps of the process.",
};

pub(super) const TOO_MANY_OPEN_FILES: ClassInfo = ClassInfo {
    class: C::TooManyOpenFiles,
    name: "too_many_open_files",
    id: ids::LOG_TOO_MANY_OPEN_FILES,
    title: "Out of file descriptors while sharing tensors between processes",
    why: "With the default 'file_descriptor' sharing strategy every tensor a DataLoader worker sends holds a \
          file descriptor open; many small tensors per batch exhaust RLIMIT_NOFILE (often 1024).",
    fix: "ulimit -n 1048576  (docker run --ulimit nofile=1048576:1048576; LimitNOFILE= in systemd)\nor \
          torch.multiprocessing.set_sharing_strategy('file_system')\nor return fewer, larger tensors per sample \
          (collate into one array).",    cause: crate::model::finding::CauseKind::Configuration,
    confirm: "ulimit -n in the job's environment against ls /proc/PID/fd | wc -l.",
};

pub(super) const MEMLOCK_LIMIT: ClassInfo = ClassInfo {
    class: C::MemlockLimit,
    name: "memlock_limit",
    id: ids::LOG_MEMLOCK_LIMIT,
    title: "Locking memory failed: RLIMIT_MEMLOCK is too low",
    why: "RDMA (InfiniBand, RoCE) and pinned host memory must be locked in RAM; the locked-memory limit \
          (often 64 KiB or 8 MiB in containers) makes registration fail with ENOMEM.",
    fix: "ulimit -l unlimited  (before starting the job)\ndocker run --ulimit memlock=-1 … ; systemd: \
          LimitMEMLOCK=infinity; Slurm: PropagateResourceLimitsExcept=MEMLOCK and slurmd with \
          LimitMEMLOCK=infinity; /etc/security/limits.conf: * - memlock unlimited",    cause: crate::model::finding::CauseKind::Configuration,
    confirm: "ulimit -l inside the job's environment (64 or 8192 is too low for RDMA).",
};
