//! Batch 20's forms (language toolchains and runtimes, distributed storage, CAD/CAE
//! and visualisation, DataFrame engines, emulators, mailing lists), each from the
//! program that prints it, and the reports' own words.

use super::{classes, each_named_first, lines_raise_nothing, scan, texts_named_first};
use crate::model::finding::Severity;

#[test]
fn runtimes_and_storage_say_it_in_their_own_words() {
    each_named_first(&[
        // A journal's line kept without its time and host.
        (
            "kernel: BUG: Bad page state in process kworker/0:3 pfn:10ac40",
            "log.kernel-oops",
        ),
        (
            "Internal error: : 1008 [#1] PREEMPT SMP ARM",
            "log.kernel-oops",
        ),
        (
            "[0]PETSC ERROR: Caught signal number 11 SEGV: Segmentation Violation, probably memory access out of range",
            "log.native-crash",
        ),
        (
            "debug      0> 2021-07-01T16:22:36.445+0000 7fd501047080 -1 *** Caught signal (Segmentation fault) **",
            "log.native-crash",
        ),
        (
            "*************** Unhandled SIGBUS at 0x7b53e7b75d4a ***************",
            "log.mmap-bus-error",
        ),
        (
            "Fatal glibc error: malloc assertion failure in __libc_calloc: !mem || chunk_is_mmapped (mem2chunk (mem))",
            "log.native-crash",
        ),
        (
            "error: emit-module command failed due to signal 9 (use -v to see invocation)",
            "log.sigkill",
        ),
        (
            "    Process exited with code: ExitFailure (-9) (THIS MAY INDICATE OUT OF MEMORY)",
            "log.sigkill",
        ),
        (
            "g++: fatal error: Terminado (killed) signal terminated program cc1plus",
            "log.sigkill",
        ),
        (
            "Error: Resources exhausted: Failed to allocate additional 131072 bytes for ExternalSorterMerge[0] with 31850496 bytes already allocated for this reservation - 45560 bytes remain available for the total pool",
            "log.host-alloc-failure",
        ),
        (
            "Failed to create index on column 'value' with type BTree: LanceError(IO): Resources exhausted: Additional allocation failed for ExternalSorterMerge[0] with top memory consumers (across reservations) as:",
            "log.host-alloc-failure",
        ),
        ("[ccPointCloud::resize] Not enough memory!", "log.host-alloc-failure"),
        (
            "vtkFloatArray (0x1ef2ea0): Unable to allocate 422203279805607 elements of size 4 bytes. ",
            "log.host-alloc-failure",
        ),
        (
            "*ERROR in u_calloc: error allocating memory variable=nodempc, file=ccx_2.13.c, line=261, num=376864419, size=4",
            "log.host-alloc-failure",
        ),
        ("rpc.statd: clnt_dg_create: out of memory", "log.host-alloc-failure"),
        (
            "003c:err:virtual:map_fixed_area out of memory for 0x6fffffb30000-0x6fffffcba000",
            "log.host-alloc-failure",
        ),
        (
            "Error: invocation of external compiler program failed. Cannot allocate memory 12",
            "log.host-alloc-failure",
        ),
        (
            "CUDA error at /home/user/dev/colmap/src/mvs/gpu_mat.h:167 - out of memory",
            "log.cuda-oom",
        ),
        (
            "Getting the `rmm.rmm.RMMError: RMM_ERROR_OUT_OF_MEMORY` even with the smallest numpy array",
            "log.cuda-oom",
        ),
        (
            "File operation error: emfile. Target: lager_logger.beam. Function: get_file. Process: code_server.",
            "log.too-many-open-files",
        ),
        (
            "2019-05-10 09:12:01.123 [info] <0.367.0> memory resource limit alarm set on node rabbit@ctl001.",
            "log.memory-pressure",
        ),
        ("    vtkDebugLeaks has detected LEAKS!", "log.memory-growth"),
        (
            "pyarrow.lib.ArrowMemoryError: malloc of size 1073741824 failed",
            "log.host-alloc-failure",
        ),
    ]);
}

#[test]
fn reports_tell_it_in_their_own_words() {
    each_named_first(&[
        (
            "My process was getting killed for exceeding the memory limit.",
            "log.oom-kill",
        ),
        (
            "The mq process was killed by the Linux OOM, and the system log records that",
            "log.oom-kill",
        ),
        (
            "when I open a game after less than 1 minute all of my ram and swap fill up and thr linux kernel terminates it",
            "log.oom-kill",
        ),
        (
            "When building the project memory and swap (zram) get gradually filled up by rustc until the system becomes unresponsive.",
            "log.swap-thrashing",
        ),
        (
            "the emulator hangs while compiling shaders, eventually filling the whole RAM and even swap file.",
            "log.swap-thrashing",
        ),
        // A full stop inside a name ends no sentence.
        (
            "I think something is leaking as resident memory usage of beam.smp process grows without stop at rate 2 GB / a day.",
            "log.memory-growth",
        ),
        ("Rapid and unlimited memory growth", "log.memory-growth"),
        (
            "On Erlang 17.5 my app has run 81 days, and suddenly memory is increasing for about 10 hours.",
            "log.memory-growth",
        ),
        // A leak claimed in Portuguese, whatever English words stand near it.
        (
            "verificamos que tem um vazamento de memoria.",
            "log.memory-growth",
        ),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        "Internal error: the parser met an unknown token",
        "Set the signal number 11 handler before you fork.",
        "The page explains glibc's malloc assertion messages.",
        "If the process is killed for exceeding the memory limit, raise the limit.",
        "memory resource limit alarm cleared on node rabbit@ctl001",
        "We must not fill the RAM and swap up with caches.",
        "The binary is beam.smp. Memory grows.",
    ]);
}

/// An issue template's question (`> What is your rclone version`) opens no article,
/// and a report's crash `as shown below` is the writer's own.
#[test]
fn a_reports_template_and_its_own_words_leave_its_errors_standing() {
    texts_named_first(&[
        (
            "> What is your rclone version (eg output from `rclone -V`)\nrclone v1.35\n\n> A log from the command with the `-v` flag\n\n`Post https://api.amazon.com/auth/o2/token: dial tcp: lookup api.amazon.com on 62.210.16.7:53: dial udp 62.210.16.7:53: socket: too many open files`\n",
            "log.too-many-open-files",
        ),
        (
            "I was trying out the example which runs to completion but then crashes as shown below.\nFinalising parallel run*** Error in `dsmcFoam+': double free or corruption (!prev): 0x0000000002cfb0f0 ***\n",
            "log.native-crash",
        ),
    ]);
}

/// Forms read after batch 20's set-aside third was scored (its misses).
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        (
            "GC Warning: Out of Memory! Heap size: 2070 MiB. Returning NULL!",
            "log.host-alloc-failure",
        ),
        ("error: OutOfMemory", "log.host-alloc-failure"),
        (
            "Error: Error executing /usr/bin/ldc2: Killed",
            "log.sigkill",
        ),
        (
            "It looks like it was rather OOM killed instead of this being an LDC problem.",
            "log.oom-kill",
        ),
    ]);
    lines_raise_nothing(&[
        // Alone, the thread's word that memory ran out claims no failure.
        "most likely you are running out of memory. Try building with fewer cores (`-j 2`)",
        "error: OutOfMemory is one of the errors an allocator may return",
    ]);
}

/// A plain SIGKILL is the OOM killer's where the thread concludes that memory ran out;
/// a guess at it, or memory running out only supposed, leaves the sender unknown.
#[test]
fn a_thread_that_concludes_memory_ran_out_names_who_sent_the_kill() {
    let first = |text: &str| classes(text.as_bytes()).first().cloned();
    let killed = "c++: internal compiler error: Killed (program cc1plus)\n";
    assert_eq!(
        first(&format!(
            "{killed}most likely you are running out of memory. Try building with fewer cores.\n"
        ))
        .as_deref(),
        Some("log.oom-kill")
    );
    for unknown in [
        "A search leads me to guess that you are simply running out of memory.\n",
        "If you are running out of memory, build with fewer cores.\n",
        "You are not running out of memory: the build was cancelled.\n",
    ] {
        assert_eq!(
            first(&format!("{killed}{unknown}")).as_deref(),
            Some("log.sigkill"),
            "{unknown}"
        );
    }
}

/// A page titled by the kind of errors it is about quotes them as examples.
#[test]
fn a_page_titled_by_a_kind_of_error_raises_nothing() {
    let page = "Out of Memory Errors\n\nOut of memory errors mainly occur in two forms:\n\nOutOfMemoryException\n\nIf the OOM reaper killed your process, you often see the following message:\n\nKilled\n";
    let warned: Vec<String> = scan(page.as_bytes())
        .findings()
        .into_iter()
        .filter(|f| f.severity >= Severity::Warn)
        .map(|f| f.id)
        .collect();
    assert_eq!(warned, Vec::<String>::new());
}
