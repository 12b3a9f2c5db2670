//! Batch 15's forms, each from the program that prints it (Blender Cycles' devices,
//! pyarrow's allocator, Chromium's older Windows allocator shim, GDAL's error number
//! for memory, OpenVPN's `--mlock`, Solana's accounts store, the kernel's
//! hardware-error NMIs, a child's status 137), a shell's
//! `Killed` after a program's unfinished line or closing an inline code span, a
//! report's crash of a bus error or its retold EMFILE, and memory a report says rises
//! while a job runs; after the set-aside third's scoring, osm2pgsql's node cache, macOS's
//! malloc region, a kill by the OOM killer told in prose, unbounded growth, TensorFlow's
//! allocation its caller may do without, and CUDA's fault reported at the host allocator.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn desktop_science_and_node_programs_say_it_in_their_own_words() {
    each_named_first(&[
        ("System is out of GPU and shared host memory", "log.cuda-oom"),
        ("System is out of GPU memory", "log.cuda-oom"),
        ("pyarrow.lib.ArrowMemoryError", "log.host-alloc-failure"),
        (
            "pyarrow.lib.ArrowMemoryError: malloc of size 2147483712 failed",
            "log.host-alloc-failure",
        ),
        (
            "[11704:0813/180610:FATAL:memory_win.cc(38)] Out of memory, size = 216678811",
            "log.host-alloc-failure",
        ),
        (
            "0...10...20..ERROR 2: overview.cpp, 4145: cannot allocate 29949646468 bytes",
            "log.host-alloc-failure",
        ),
        ("mlock: RLIMIT_MEMLOCK < 100 MB, increase limit", "log.memlock-limit"),
        (
            "[2022-09-08T05:48:09.922161045Z ERROR solana_runtime::append_vec] Failed to map the data file (size: 786432): Cannot allocate memory (os error 12).",
            "log.max-map-count",
        ),
        (
            "[ 1046.123456] NMI: IOCK error (debug interrupt?) for reason 71 on CPU 0.",
            "log.kernel-oops",
        ),
        (
            "Uhhuh. NMI: PCI system error (SERR) for reason a1 on CPU 0.",
            "log.kernel-oops",
        ),
        ("Exception: Child returned 137", "log.sigkill"),
        ("        Running... Killed", "log.sigkill"),
        ("Killed`", "log.sigkill"),
        ("`Killed", "log.sigkill"),
        (
            "Could you please check why charon crashes due to SIGBUS error?",
            "log.mmap-bus-error",
        ),
        (
            "2023-04-18 Processing: Node(5036470k 7133.8k/s) Way(0k 0.00k/s) Relation(0 0.0/s)Killed",
            "log.sigkill",
        ),
        (
            "The first command finishes without any problems, but the second command continuously allocates up to 50GB before being terminated by OOM killer.",
            "log.oom-kill",
        ),
        (
            "We observed unbounded worker memory growth for a single worker over 4 days before it OOMd.",
            "log.memory-growth",
        ),
        ("- Out of memory for dense node cache, reduce --cache size", "log.host-alloc-failure"),
        ("Python(8835,0x10eafadc0) malloc: can't allocate region", "log.host-alloc-failure"),
        (
            "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch/work/aten/src/THC/THCCachingHostAllocator.cpp line=278 error=700 : an illegal memory access was encountered",
            "log.cuda-illegal-memory-access",
        ),
        (
            "With two GPUs selected we get a too many files open error after several epochs.",
            "log.too-many-open-files",
        ),
        (
            "After running that call, the CPU memory began to increase at a rate of approximately 0.1-0.2GiB/s.",
            "log.memory-growth",
        ),
        (
            "We are using yolov5m, and while training system RAM is increasing and reaches to it's maximum limit.",
            "log.memory-growth",
        ),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        // A span that opens and closes in the line is how a page names words.
        "The shell prints `Killed` when the kernel ends the job.",
        // GDAL's other error numbers are not memory.
        "ERROR 4: `/data/x.tif' does not exist in the file system",
        // Asking whether, not why, a crash happens.
        "Does charon crash due to SIGBUS?",
        "charon never crashes due to SIGBUS.",
        "Does this cause a too many files open error?",
        // TensorFlow's allocator asked for memory its caller can go without.
        "2021-01-25 15:02:10.390154: W tensorflow/core/common_runtime/bfc_allocator.cc:211] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.26GiB. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
        "If the job is killed by the OOM killer, lower the batch size.",
        // A claim is denied in its own clause, after it as well as before.
        "It was not terminated by the OOM killer, but by the scheduler's time limit.",
        "- メモリリーク: アプリケーションが使用済みメモリを解放していない",
        "A segfaulting program might be the symptom of a bug in C code.",
        "Memory stays constant while training.",
        "If you see too many files open, raise ulimit -n.",
        // A rise said not to happen, or supposed.
        "Memory should not increase while training.",
        "If RAM keeps increasing while training, lower the batch size.",
    ]);
}
