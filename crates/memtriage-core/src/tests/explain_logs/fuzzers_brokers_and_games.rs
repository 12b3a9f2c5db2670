//! Batch 22's forms (fuzzers and sanitizers, Ruby and .NET backends, routers and NAS,
//! edge AI devices, Wine and games, message brokers, French and Dutch pages), each
//! from the program that prints it, and the reports' own words.

use super::{each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn programs_name_the_allocation_that_failed() {
    each_named_first(&[
        (
            "==23== ERROR: libFuzzer: out-of-memory (malloc(4294971391))",
            "log.host-alloc-failure",
        ),
        (
            "==17== ERROR: libFuzzer: out-of-memory (used: 2049Mb; exceeds: 2048Mb)",
            "log.host-alloc-failure",
        ),
        (
            "io.netty.util.internal.OutOfDirectMemoryError: failed to allocate 16777216 byte(s) of direct memory (used: 246960619520, max: 246960619520)",
            "log.host-alloc-failure",
        ),
        (
            "/data/src/tier0/memstd.cpp (2501) : Assertion Failed: OUT OF MEMORY",
            "log.host-alloc-failure",
        ),
        (
            "Assert( Fatal Assertion Failed: OUT OF MEMORY ):/data/src/tier0/memstd.cpp:2487",
            "log.host-alloc-failure",
        ),
        (
            "==25216==     Valgrind's memory management: out of memory:",
            "log.host-alloc-failure",
        ),
        (
            "ERROR 2024-04-19 23:37:58,791 [shard  0:main] seastar - Failed to allocate 3486128278744296161 bytes",
            "log.host-alloc-failure",
        ),
        (
            "Apr 20 14:33:13 srv-01 rpk[15248]: ERROR 2023-04-20 14:33:13,958 [shard  0] seastar_memory - Dumping seastar memory diagnostics",
            "log.host-alloc-failure",
        ),
        (
            "err:   DxvkMemoryAllocator: Memory allocation failed",
            "log.cuda-oom",
        ),
        (
            r#"RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/opt/pytorch/pytorch/c10/cuda/CUDACachingAllocator.cpp":841, please report a bug to PyTorch."#,
            "log.cuda-oom",
        ),
        (
            "W, [2017-11-22T11:46:54.396973 #833]  WARN -- : #<Unicorn::HttpServer:0x00000000012dde70>: worker (pid: 833) exceeds memory limit (458501632.0 bytes > 334369369 bytes)",
            "log.userspace-oom-kill",
        ),
    ]);
}

#[test]
fn crashes_in_the_words_of_their_runtime() {
    each_named_first(&[
        (
            "Process is terminating due to StackOverflowException.",
            "log.native-crash",
        ),
        (
            "[-] PROGRAM ABORT : Fork server crashed with signal 6",
            "log.native-crash",
        ),
        (
            "wine: Unhandled page fault on read access to 0x7d925744 at address 0x7d925744 (thread 0009), starting debugger...",
            "log.windows-memory-fault",
        ),
        (
            "Unhandled exception: page fault on read access to 0x00000000 in wow64 32-bit code (0x0095d6e6).",
            "log.windows-memory-fault",
        ),
        (
            "panic: swap_pager_force_pagein: read from swap failed",
            "log.kernel-oops",
        ),
        (
            "Fatal trap 12: page fault while in kernel mode",
            "log.kernel-oops",
        ),
    ]);
}

#[test]
fn reports_tell_it_in_their_own_words() {
    each_named_first(&[
        (
            "For sites with a lot of pages Sidekiq process killed by system because it use all of the memory (2Gb).",
            "log.oom-kill",
        ),
        (
            "Server will die with a range of symptoms, mostly silently OOM killed, sometimes throwing readloop errors.",
            "log.oom-kill",
        ),
        (
            "The Server only crashes if it is without players for 1-2 days. It runs into a OutofMemory error and the thread has to be killed.",
            "log.host-alloc-failure",
        ),
        (
            "OFSEP encountered this error twice at import : Java Heap space.",
            "log.host-alloc-failure",
        ),
        (
            "le job échoue avant la fin avec une erreur heap space.",
            "log.host-alloc-failure",
        ),
        (
            "I'm noticing if I leave OctoPrint running for a few hours it's memory increases gradually from 10% to 30% on my rasp pi.",
            "log.memory-growth",
        ),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        // Go's panics are no kernel's; a page's advice; a supposition.
        "panic: runtime error: index out of range [3] with length 3",
        "To fix a Java heap space error, raise -Xmx.",
        "If you notice that memory increases, lower the cache size.",
        "The fork server crashed with signal handlers installed twice in this release.",
    ]);
}

/// `Here is error logs` shows the writer's own log, whatever a later clause supposes
/// (`OutOfMemory exception may occurs on many different places`).
#[test]
fn a_writers_own_log_is_no_example() {
    texts_named_first(&[(
        "Here is error logs, note that OutOfMemory exception may occurs on many different places .\n\n```\nSystem.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n   at System.Data.SqlClient.SqlCommand.ExecuteReader()\n```\n",
        "log.host-alloc-failure",
    )]);
}

/// Read after batch 22's set-aside was scored: other releases' and allocators' words
/// for the forms above.
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        (
            "==2493== ERROR: libFuzzer: out-of-memory (used: 2855Mb; limit: 2048Mb)",
            "log.host-alloc-failure",
        ),
        (
            r#"Slogan: temp_alloc: Cannot reallocate 34359738368 bytes of memory (of type "estack")"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Jun 30 10:30:56 lavinmq[630825]:  lmq.amqp.client[vhost: "/"] Unexpected error, while reading: Cannot allocate new fiber stack: Cannot allocate memory (RuntimeError)"#,
            "log.host-alloc-failure",
        ),
        (
            "2024-11-13 09:57:41 system,error,critical out of memory condition was detected",
            "log.memory-pressure",
        ),
    ]);
    lines_raise_nothing(&[
        "If you see out of memory condition was detected in the log, add RAM or stop containers.",
    ]);
}
