//! Host allocation failures as the runtimes beyond Python and the JVM say them: Go's,
//! Node's V8, R's, Rust's, PHP's, Ruby's, Erlang's, Perl's, Julia's and GHC's, and the
//! refusals of PostgreSQL and Redis, the allocators' (jemalloc, tcmalloc), MySQL's,
//! Elasticsearch's, MATLAB's, Octave's and Windows'. Each is the message the runtime's own source
//! prints, so the rule is the message, not a sample of it; where the fix differs from
//! a Python job's (a heap flag, a configured limit) the rule says it.

use super::{rule, FailureClass as C, Rule};
use crate::model::finding::CauseKind::Configuration;
use crate::model::finding::Severity::Error;

const NODE_FIX: &str = "Raise V8's heap limit if the work needs it: NODE_OPTIONS=--max-old-space-size=4096 \
     (MiB; keep it under the machine's or container's memory).\nOr find what grows: node --heapsnapshot-near-heap-limit=1, \
     then compare snapshots in Chrome DevTools; a build (webpack, tsc, next build) on a small CI runner may simply need a larger one.";

const PHP_FIX: &str = "PHP's memory_limit stopped the script: raise it where the work needs it (php.ini memory_limit, \
     ini_set('memory_limit', '512M'), or php -d memory_limit=512M), or make the script hold less \
     (process rows in batches, unset large arrays, stream files).";

const R_FIX: &str = "R could not get one contiguous block that large: work on fewer rows or columns at a time, \
     use sparse matrices or on-disk data (data.table, arrow, bigmemory), or run on a machine with more memory \
     (memory.limit() only applies to old R on Windows).";

const POSTGRES_FIX: &str = "A PostgreSQL backend could not allocate: the memory context names what grew. Lower work_mem \
     or maintenance_work_mem (each sort or hash of each query may take that much), fewer connections, or more memory; \
     check the server's log for the memory context dump around it.";

const REDIS_FIX: &str = "Redis refused the write at its maxmemory limit: raise maxmemory, set an eviction policy \
     (maxmemory-policy allkeys-lru) if the data is a cache, or find the keys that grew (redis-cli --bigkeys).";

pub(super) static RULES: &[Rule] = &[
    rule(
        // SQL Server's In-Memory OLTP at its quota: the engine's log line and the error
        // (Msg 41823) the client gets.
        "sqlserver.in-memory-quota",
        C::HostAllocFailure,
        Error,
        &[
            "Out of user memory quota",
            "reached its quota for in-memory tables",
        ],
        r"\bOut of user memory quota: requested = \d+|\bthe database has reached its quota for in-memory tables\b",
        "SQL Server's In-Memory OLTP reached its memory quota",
    ),
    rule(
        // CockroachDB refusing a query at its SQL memory budget (--max-sql-memory).
        "cockroachdb.memory-budget-exceeded",
        C::HostAllocFailure,
        Error,
        &["memory budget exceeded"],
        r"\bmemory budget exceeded: \d+ bytes requested, \d+ currently allocated, \d+ bytes in budget\b",
        "CockroachDB refused the query at its SQL memory budget (--max-sql-memory)",
    ),
    rule(
        // STAR loading its genome into System V shared memory (--genomeLoad).
        "star.shared-memory-enomem",
        C::HostAllocFailure,
        Error,
        &["Cannot allocate memory(12)", "problems with shared memory"],
        r"\bShared memory error: \d+, errno: Cannot allocate memory\(12\)|\bproblems with shared memory: error from shmget\(\)",
        "STAR could not allocate its genome in shared memory (shmget: Cannot allocate memory)",
    ),
    rule(
        // Minecraft's own crash screen when its JVM's heap ran out.
        "minecraft.out-of-memory-screen",
        C::HostAllocFailure,
        Error,
        &["Minecraft ran out of memory"],
        r"\bMinecraft ran out of memory\b",
        "Minecraft ran out of memory (its Java heap, -Xmx)",
    ),
    rule(
        // klib's allocator (minimap2, bwa, seqtk) when its arena cannot grow.
        "klib.insufficient-memory",
        C::HostAllocFailure,
        Error,
        &["] insufficient memory"],
        r"^\s*\[(?:morecore|kmalloc|krealloc|kcalloc)\] insufficient memory\s*$",
        "The program's allocator could not grow its arena: insufficient memory",
    ),
    rule(
        "go.runtime-out-of-memory",
        C::HostAllocFailure,
        Error,
        &["runtime: out of memory"],
        r"\bfatal error: runtime: out of memory\b|\bruntime: out of memory: cannot allocate (?P<bytes>\d+)-byte block",
        "Go's runtime could not get memory from the system (fatal error: runtime: out of memory)",
    ),
    Rule {
        fix: Some(NODE_FIX),
        ..rule(
            "node.heap-out-of-memory",
            C::HostAllocFailure,
            Error,
            &[
                "JavaScript heap out of memory",
                "process out of memory",
                "near heap limit",
                "Reached heap limit",
                "CALL_AND_RETRY_LAST",
                "Last few GCs",
                "last resort gc",
                "Fatal process out of memory",
                "Fatal process OOM",
                "Renderer process oom",
                "reason: 'oom",
                "reason: oom",
                "reason\":\"oom",
                "reason\\\":\\\"oom",
                "536870904",
                "ERR_WORKER_OUT_OF_MEMORY",
            ],
            // V8 prints its last collections only as it dies of a full heap; `last
            // resort gc` is its final attempt before. Chromium and Electron report a
            // renderer V8 ended so with reason `oom` (exit code 0xE0000008). A worker
            // thread past its heap limit ends with `ERR_WORKER_OUT_OF_MEMORY`.
            r"Allocation failed - (?:JavaScript heap out of memory|process out of memory)|FATAL ERROR: (?:Reached heap limit|Ineffective mark-compacts near heap limit|CALL_AND_RETRY_LAST)|^<--- Last few GCs --->\s*$|\bMark-sweep .*\[last resort gc\]|\bFatal process (?:out of memory|OOM in)\b|\bRenderer process oom\b|\breason: '?oom\b|\breason\\?\x22:\\?\x22oom\b|\bexitCode\W{1,6}-536870904\b|\bERR_WORKER_OUT_OF_MEMORY\b",
            "Node.js ran out of its V8 heap (JavaScript heap out of memory)",
        )
    },
    Rule {
        fix: Some(R_FIX),
        ..rule(
            "r.cannot-allocate-vector",
            C::HostAllocFailure,
            Error,
            &["cannot allocate vector"],
            r"cannot allocate vector of size (?P<size>[\d.]+ ?[KMGT]?b)",
            "R could not allocate a vector of {size}",
        )
    },
    rule(
        // Rust's default allocation-error handler; glued to a progress bar's last
        // redraw in a terminal (`ETA:  2smemory allocation of …`).
        "rust.allocation-failed",
        C::HostAllocFailure,
        Error,
        &["memory allocation of"],
        r"memory allocation of (?P<bytes>\d+) bytes failed",
        "Rust's allocator could not allocate {bytes} bytes and aborted",
    ),
    Rule {
        fix: Some(PHP_FIX),
        cause: Some(Configuration),
        ..rule(
            "php.memory-exhausted",
            C::HostAllocFailure,
            Error,
            &["Allowed memory size of", "Out of memory (allocated"],
            r"Allowed memory size of (?P<limit>\d+) bytes exhausted(?: \(tried to allocate (?P<bytes>\d+) bytes\))?|\bOut of memory \(allocated (?P<allocated>\d+)\)",
            "PHP's memory_limit of {limit} bytes was exhausted",
        )
    },
    rule(
        "ruby.no-memory-error",
        C::HostAllocFailure,
        Error,
        &["NoMemoryError"],
        r"failed to allocate memory \(NoMemoryError\)|\bNoMemoryError\b",
        "Ruby could not allocate memory (NoMemoryError)",
    ),
    rule(
        // The Erlang VM's allocators (`eheap_alloc`, `binary_alloc`, …) end the node.
        "erlang.cannot-allocate",
        C::HostAllocFailure,
        Error,
        // A growing term fails as a reallocation (`temp_alloc: Cannot reallocate N
        // bytes of memory (of type "estack")`).
        &["_alloc: Cannot allocate", "_alloc: Cannot reallocate"],
        r"\b(?P<allocator>\w+_alloc): Cannot (?:re)?allocate (?P<bytes>\d+) bytes of memory",
        "The Erlang VM's {allocator} could not allocate {bytes} bytes and the node stopped",
    ),
    rule(
        "runtime.out-of-memory-request",
        C::HostAllocFailure,
        Error,
        &[
            "Out of memory during",
            "OutOfMemoryError()",
            "out of memory (requested",
            "xmalloc: cannot allocate",
            "ERROR: MemoryError()",
            "Out of Memory Error: ",
            "[FATAL] failed to allocate memory",
            "Bun has ran out of memory",
            "Bun ran out of memory",
            ": out of memory error",
            "Memory allocation failed for",
            "allocate Wasm memory",
            "max. memory exceeded",
            "insufficient memory",
        ],
        // Perl, Julia (`MemoryError()` before 0.4), GHC, bash's xmalloc and DuckDB's
        // OutOfMemoryException; Ruby's GC where it cannot even raise NoMemoryError,
        // Bun's crash handler, HAProxy's Lua (`Lua function 'f': out of memory
        // error.`, and its applets', converters', fetches' and filters'), GKlib's
        // allocator under METIS (`***Memory allocation failed for SetUpCoarseGraph:
        // gdata. Requested size: -1987870220 bytes`), V8's WebAssembly (`Out of memory:
        // Cannot allocate Wasm memory for new instance`), Z3's (`error: max. memory
        // exceeded`), SCIP's block memory (`Insufficient memory for reallocation of N
        // bytes`).
        r#"\[FATAL\] failed to allocate memory\b|\bBun (?:has )?ran out of memory\b|\bLua (?:function|applet|converter|sample-fetch|filter|task|action)\b.{0,60}: out of memory error\b|\bMemory allocation failed for .{1,80}\bRequested size: -?\d+ bytes|Out of memory during (?:request for|"large" request for|ridiculously large request)|\bOutOfMemoryError\(\)|\bERROR: MemoryError\(\)|\bOut of Memory Error: (?:failed to allocate|could not allocate|allocation failure|failed to pin|failed to offload)|: out of memory \(requested (?P<bytes>\d+) bytes\)|\bxmalloc: cannot allocate (?P<bytes2>\d+) bytes|\bOut of memory: Cannot allocate Wasm memory\b|(?:^|\x22|error: )max\. memory exceeded\b|\bInsufficient memory for (?:re)?allocation of (?P<bytes3>\d+) bytes"#,
        "The program's runtime could not allocate memory",
    ),
    Rule {
        fix: Some(POSTGRES_FIX),
        ..rule(
            "postgres.failed-on-request",
            C::HostAllocFailure,
            Error,
            &["Failed on request of size"],
            r#"Failed on request of size (?P<bytes>\d+)(?: in memory context "(?P<context>[^"]+)")?"#,
            "A PostgreSQL backend ran out of memory (failed on a request of {bytes} bytes)",
        )
    },
    Rule {
        fix: Some(REDIS_FIX),
        cause: Some(Configuration),
        ..rule(
            "redis.maxmemory",
            C::HostAllocFailure,
            Error,
            &["OOM command not allowed"],
            r"OOM command not allowed when used memory > 'maxmemory'",
            "Redis refused a write at its maxmemory limit",
        )
    },
    rule(
        // The allocators' own reports: jemalloc's, and tcmalloc's large allocation
        // that got no memory (`== (nil)`; with an address it only warns).
        "allocator.out-of-memory",
        C::HostAllocFailure,
        Error,
        &["<jemalloc>: Error in", "tcmalloc: large alloc"],
        r"<jemalloc>: Error in (?:malloc|calloc|realloc|posix_memalign|aligned_alloc)\(\): out of memory|tcmalloc: large alloc (?P<bytes>\d+) bytes == \(nil\)",
        "The memory allocator could not get memory from the system",
    ),
    rule(
        // The JVM's commit that the OS refused, databases' and numeric environments'
        // own words: MySQL's client error and
        // InnoDB's, Elasticsearch's circuit breaker, MATLAB's and Octave's.
        "program.out-of-memory",
        C::HostAllocFailure,
        Error,
        &[
            "os::commit_memory",
            "(HY000): Out of memory",
            "(HY001): Out of memory",
            "bytes of memory after",
            "Data too large, data for",
            "help memory",
            "exceeds maximum array size preference",
            "dimension too large for Octave",
            "likely cause is an infinite recursion",
            "couldn't allocate memory for",
            "bytes for array",
            "Out of memory (Needed",
        ],
        // MySQL's server (`Out of memory (Needed 8164 bytes)`), MATLAB's recursion,
        // samtools' and LAMMPS' allocators (memory.cpp's
        // `Failed to reallocate N bytes for array comm:buf_send`).
        r#"\bOut of memory \(Needed \d+ bytes\)|\bOut of memory\. The likely cause is an infinite recursion|\bcouldn't allocate memory for \S+|\bFailed to (?:re)?allocate \d+ bytes for array \S+|\bos::commit_memory\(0x[0-9a-f]+, \d+, \d+\) failed; error='[^']*' \(errno=12\)|\bERROR \d+ \(HY00[01]\): Out of memory\b|\bInnoDB: Cannot allocate (?P<bytes>\d+) bytes of memory after \d+ retries|\[(?P<breaker>parent|request|fielddata|in_flight_requests)\] Data too large, data for \[|Out of memory\. Type "?help memory"? for your options|array exceeds maximum array size preference|out of memory or dimension too large for Octave's index type"#,
        "The program could not allocate the memory it needed",
    ),
    rule(
        // Windows' system errors 8, 1450 and 1455 as FormatMessage writes them (a
        // PyTorch import on Windows fails with WinError 1455: the page file is too small
        // for the DLLs it maps); error 8 in Japanese Windows' words too (`このコマンドを
        // 処理するにはメモリ リソースが足りません`).
        "windows.not-enough-memory",
        C::HostAllocFailure,
        Error,
        &[
            "Not enough memory resources are available",
            "Insufficient system resources exist",
            "paging file is too small",
            "メモリ リソースが足りません",
        ],
        r"Not enough memory resources are available to (?:process this command|complete this operation)|このコマンドを処理するにはメモリ リソースが足りません|Insufficient system resources exist to complete the requested service|The paging file is too small for this operation to complete",
        "Windows could not commit the memory the program asked for",
    ),
    rule(
        // Any program's error line that says only this: `LLVM ERROR: out of memory`,
        // PostgreSQL's `ERROR:  out of memory`, git's `fatal: Out of memory, malloc
        // failed`; Unity's `Could not allocate memory: System out of memory!`; a
        // program's tag and its function (`rpc.statd: clnt_dg_create: out of memory`),
        // Wine's error channel (`003c:err:virtual:map_fixed_area out of memory for
        // 0x6fffffb30000-…`), the Boehm collector (Crystal, Mono, Guile: `GC Warning:
        // Out of Memory! Heap size: 2070 MiB. Returning NULL!`), Zig's error set
        // (`error: OutOfMemory`), a routine's own (`fock_rep_txs: insufficient memory
        // 176307258`, `*** picosat: out of memory in 'resize'`, `Not enough memory:
        // aborting in run_stochastic_cipsi`), a daemon's (`error: Nix daemon out of
        // memory`). The GPU stacks' forms are named before it.
        "error.out-of-memory",
        C::HostAllocFailure,
        Error,
        &[
            "out of memory",
            "error: OutOfMemory",
            "insufficient memory",
            "Not enough memory: abort",
        ],
        r"\bGC Warning: Out of Memory! Heap size: |^\s*\w+: insufficient memory\b|\b[\w.-]+: out of memory in '\w+'|(?-i:^\s*Not enough memory: abort)|\berror: (?:\w+ ){1,3}out of memory\s*$|(?-i:^error: OutOfMemory\s*$)|(?i:(?:^|[\s\]])(?:error|fatal|fatal error|panic|critical|err)\]?:\s+out of memory\b)|^[\w.-]+: [\w.-]+: out of memory\s*$|\berr:\w+:\w+ out of memory\b|\bCould not allocate memory: System out of memory!",
        "The program could not allocate memory (out of memory)",
    ),
];
