//! Allocation failures as the runtimes beyond Python and the JVM print them, the
//! kernel's memory-corruption reports, and the GPU forms of other frameworks: each the
//! message its program's source prints (the seventh unseen batch's train split met
//! several: corpus/unseen/2026-11-29d, whose index.jsonl gives each source).

use super::{classes, each_named_first, lines_raise_nothing};

#[test]
fn runtimes_say_they_ran_out_in_their_own_words() {
    let alloc = "log.host-alloc-failure";
    each_named_first(&[
        ("fatal error: runtime: out of memory", alloc),
        ("runtime: out of memory: cannot allocate 1073741824-byte block (3925278720 in use)", alloc),
        ("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", alloc),
        ("FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory", alloc),
        ("Error: cannot allocate vector of size 14.1 Gb", alloc),
        // Glued to a progress bar's last redraw (rust-lang/rust#73202).
        ("  8.0 MiB/s in  5s ETA:  2smemory allocation of 166442784 bytes failedsh: line 371: 18018 Aborted", alloc),
        ("PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /var/www/html/index.php on line 12", alloc),
        ("failed to allocate memory (NoMemoryError)", alloc),
        ("eheap_alloc: Cannot allocate 1098556536 bytes of memory (of type \"heap\").", alloc),
        ("Out of memory during request for 1048576 bytes, total sbrk() is 2147483648 bytes!", alloc),
        ("ERROR: OutOfMemoryError()", alloc),
        ("DETAIL:  Failed on request of size 1048576 in memory context \"ExecutorState\".", alloc),
        ("(error) OOM command not allowed when used memory > 'maxmemory'.", alloc),
        ("mmap() failed: [12] Cannot allocate memory", alloc),
    ]);
}

#[test]
fn the_kernel_and_other_gpu_stacks_are_named() {
    each_named_first(&[
        ("[ 1000.691858] BUG: Bad page state in process server.o  pfn:309d22", "log.kernel-oops"),
        ("list_del corruption. next->prev should be ffff88810a2b3c00, but was dead000000000122", "log.kernel-oops"),
        ("BUG: KASAN: use-after-free in ext4_find_extent+0x1a/0x3c0", "log.kernel-oops"),
        // A syslog time without a host before the kernel's line (openzfs/zfs#10365).
        ("May 18 21:01:26: general protection fault: 0000 [#1] SMP NOPTI", "log.kernel-oops"),
        ("[  402.306487] amdgpu 0000:2f:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32772)", "log.cuda-illegal-memory-access"),
        ("ERROR: [TRT]: 2: [virtualMemoryBuffer.cpp::resizePhysical::160] Error Code 2: OutOfMemory (no further information)", "log.cuda-oom"),
        ("RuntimeError: DataLoader 1 workers exit unexpectedly, pids: 15471", "log.dataloader-worker-killed"),
    ]);
}

#[test]
fn an_issue_templates_heading_is_no_article_title() {
    let log = "### What is the issue?\n\
               ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144.00 MiB on device 4: cudaMalloc failed: out of memory\n";
    assert_eq!(classes(log.as_bytes()), ["log.cuda-oom"]);
}

#[test]
fn the_words_alone_are_no_failure() {
    lines_raise_nothing(&[
        "Set NODE_OPTIONS=--max-old-space-size=4096 to raise the heap limit.",
        "memory_limit = 512M",
        "maxmemory-policy allkeys-lru",
        "amdgpu 0000:2f:00.0: amdgpu: VM_L2_PROTECTION_FAULT_DEFAULT_ADDR set",
    ]);
}

/// Pages of the seventh batch's train split: the marks that tell them from a report.
#[test]
fn pages_that_quote_these_errors_are_told_from_reports() {
    // A block of log lines under the sentence that introduces it as an example
    // (docs.nvidia.com's Xid page), and the same block under a report's sentence.
    let example = "The following is an example of a Xid string:\n\
                   [\u{2026}] NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7\n\
                   [\u{2026}] NVRM: Xid (0000:03:00): 14, Channel 00000001\n";
    assert_eq!(classes(example.as_bytes()), Vec::<String>::new());
    let report = "Our node lost a GPU overnight:\n\
                  [ 812.331] NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7\n\
                  [ 812.332] NVRM: Xid (0000:03:00): 79, pid=1911, GPU has fallen off the bus.\n";
    assert_eq!(
        classes(report.as_bytes()).first().map(String::as_str),
        Some("log.gpu-xid")
    );
    // A title in Spanish (tecnobits.com), a conditional about the reader's process,
    // names made up for the reader's own.
    let spanish = "\u{201c}PAGE_FAULT_IN_NONPAGED_AREA\u{201d}: qu\u{e9} lo causa y c\u{f3}mo identificar el controlador culpable\n\
                   PAGE_FAULT_IN_NONPAGED_AREA\n";
    assert_eq!(classes(spanish.as_bytes()), Vec::<String>::new());
    lines_raise_nothing(&[
        "The JVM has a well-known -Xmx option. If your process gets killed with exit code 137, you want to lower the heap limit.",
        "PHP Fatal error: Allowed memory size of xxxx bytes exhausted (tried to allocate yyyy) in yourscript.php",
        "RequestId: abc-123 Error: Runtime exited with error: signal: killed",
    ]);
}

/// Forms the seventh batch's set-aside third missed on its one scoring (not counted
/// since): Paddle's DataLoader, MIPS's page-fault line, IBM J9's thread refusal.
#[test]
fn forms_the_set_aside_third_missed_are_named() {
    each_named_first(&[
        ("Bus error at (/paddle/paddle/fluid/imperative/data_loader.cc:165)", "log.dataloader-shm"),
        ("SystemError: (Fatal) DataLoader process (pid 10222) exited is killed by signal: Killed. (at /paddle/paddle/fluid/imperative/data_loader.cc:181)", "log.dataloader-worker-killed"),
        ("[ 499.895233] do_page_fault(): sending SIGSEGV to bw_set for invalid read access from 77f14000", "log.native-crash"),
        ("Throwable occurred: java.lang.OutOfMemoryError: Failed to create a thread: retVal -1073741830, errno 11", "log.host-alloc-failure"),
    ]);
}

/// Crash, bus-error, GPU, locked-memory and bug-check messages as their programs'
/// sources print them (Android's debuggerd, Rust's stack guard, Valgrind, glibc,
/// systemd-coredump, the JVM's unsafe access, ROCm, HIP, CuPy, Elasticsearch, libbpf,
/// Windows), each named for what it is.
#[test]
fn crash_and_gpu_messages_of_other_programs_are_named() {
    each_named_first(&[
        ("Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4242 (RenderThread), pid 4210 (com.example.app)", "log.native-crash"),
        ("thread 'main' has overflowed its stack", "log.native-crash"),
        ("==48213== Invalid read of size 8", "log.native-crash"),
        ("corrupted double-linked list", "log.native-crash"),
        ("systemd-coredump[4821]: Process 4810 (python3) of user 1000 terminated abnormally with signal 11/SEGV, processing...", "log.native-crash"),
        ("Fatal signal 7 (SIGBUS), code 2 (BUS_ADRERR), fault addr 0x7f3a2b1c4000 in tid 4242 (Thread-2), pid 4210 (com.example.app)", "log.mmap-bus-error"),
        ("java.lang.InternalError: a fault occurred in a recent unsafe memory access operation in compiled Java code", "log.mmap-bus-error"),
        ("Memory access fault by GPU node-1 (Agent handle: 0x55d7c1b2c3d0) on address 0x7f3a2b1c4000. Reason: Page not present or supervisor privilege.", "log.cuda-illegal-memory-access"),
        ("hipErrorOutOfMemory", "log.cuda-oom"),
        ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 4,294,967,296 bytes (allocated so far: 0 bytes).", "log.cuda-oom"),
        ("[1]: ERROR: bootstrap checks failed. memory locking requested for elasticsearch process but memory is not locked", "log.memlock-limit"),
        ("KERNEL_DATA_INPAGE_ERROR (7a)", "log.windows-memory-fault"),
        ("Unhandled exception at 0x00007FF8A1B2C3D4 in app.exe: 0xC0000374: A heap has been corrupted.", "log.windows-memory-fault"),
    ]);
}
