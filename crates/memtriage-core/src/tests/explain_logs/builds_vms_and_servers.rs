//! Batch 24's forms (scientific codes, mobile and desktop apps, LLM servers, compilers
//! and builds, hypervisors and schedulers, Chinese and Korean threads), each from the
//! program that prints it, and the reports' own words.

use super::{each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn programs_name_the_allocation_that_failed() {
    each_named_first(&[
        // breakpad's minidump_stackwalk over a dump of VS Code and of an Electron app.
        ("Crash reason:  Out of Memory", "log.host-alloc-failure"),
        (
            "Crash reason:  0xe0000008 / 0x00000001",
            "log.host-alloc-failure",
        ),
        (
            "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504",
            "log.host-alloc-failure",
        ),
        (
            "ggml_gallocr_reserve_n: failed to allocate CPU buffer of size 84940800",
            "log.host-alloc-failure",
        ),
        (
            "ERROR on proc 1: Failed to allocate -156019200 bytes for array _ncachex (src/memory.cpp:64)",
            "log.host-alloc-failure",
        ),
    ]);
    // A breakpad crash of a signal stays a crash; Varnish's error page is no VM's.
    each_named_first(&[("Crash reason:  SIGSEGV", "log.native-crash")]);
    lines_raise_nothing(&[
        "Crash reason:  EXCEPTION_BREAKPOINT",
        "Guru Meditation: XID: 32770",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.00 MiB on device 0",
    ]);
}

#[test]
fn kills_and_crashes_in_the_words_of_their_tools() {
    each_named_first(&[
        // BSD make's report of its child's signal.
        ("*** Signal 9", "log.sigkill"),
        // Argo's reason for a step, as its UI prints it.
        ("main: OOMKilled (exit code 137)", "log.oom-kill"),
        (
            "00:01:42.110 !!         VCPU0: Guru Meditation -2701 (VERR_VMM_RING0_ASSERTION)",
            "log.native-crash",
        ),
        (
            "A running Linux guest was aborted by a Guru Meditation triple fault ~90 s after a balloon request.",
            "log.native-crash",
        ),
    ]);
}

#[test]
fn a_kill_and_its_sender_on_one_line_name_the_sender() {
    // The exit status takes the line first; the sender after it is read all the same.
    each_named_first(&[
        (
            "I noticed the job failed: exit code 137 (the pod got OOM killed)",
            "log.oom-kill",
        ),
        (
            "The executor with id 1 exited with exit code 137 because it was OOMKilled.",
            "log.oom-kill",
        ),
        // Without a sender the kill stays one of unknown cause, and a reading of it is
        // no kill of its own.
        ("I noticed the job failed: exit code 137", "log.sigkill"),
        (
            "The step failed with exit code 137. I think that this is a out of memory error.",
            "log.sigkill",
        ),
    ]);
}

#[test]
fn reports_tell_kills_and_rises_in_their_words() {
    each_named_first(&[
        (
            "looks like the host is OOM-killing CH, not a CH crash.",
            "log.oom-kill",
        ),
        (
            "Now as we run applications and load increases, the OOM killer invokes and kills the JVMs.",
            "log.oom-kill",
        ),
        (
            "Turns out this was the OOM killer, the CI machines were running out of memory during the Bazel run.",
            "log.oom-kill",
        ),
        (
            "Container is killed by Kubernetes when memory crosses the defined limit while model is loading.",
            "log.oom-kill",
        ),
        (
            "I found that the memory was completely (99%+) used during load so it was killed.",
            "log.oom-kill",
        ),
        (
            "gnome-shell is slowly leaking memory with freon enabled.",
            "log.memory-growth",
        ),
        (
            "gnome-shell, running as the gdm user, has started gradually eating up my memory.",
            "log.memory-growth",
        ),
        (
            "the memory used by QEMULauncher only grows, we need to restart the vm to release it.",
            "log.memory-growth",
        ),
        (
            "I think it is stuck because it is started to consume swap memory.",
            "log.swap-thrashing",
        ),
        (
            "Ollama utilized the swap memory on start and caused an incredibly slow system.",
            "log.swap-thrashing",
        ),
        (
            "当我运行python zeggs_data_to_lmdb.py时会出现段错误",
            "log.native-crash",
        ),
    ]);
    lines_raise_nothing(&[
        "Using swap does not slow the system down here.",
        "If the OOM killer invokes and kills the JVMs, raise the limit.",
        "Memory leaks are a common cause of slowness.",
        "it complains loudly when `--version` decides to segfault or something.",
    ]);
}

#[test]
fn a_thread_reads_its_kill_as_memory_unless_it_only_feels_so() {
    texts_named_first(&[(
        "I ran python -m apps.avatarizer and it shows `Killed`\n\n应该是内存爆了，32G改为64G问题就解决了\n",
        "log.oom-kill",
    )]);
    texts_named_first(&[(
        "I ran python inference/convert.py\nKilled\n\n感觉应该是内存爆了\n",
        "log.sigkill",
    )]);
}

#[test]
fn a_change_and_an_issue_under_its_tracker_line_read_as_such() {
    // A pull request's conventional title: what it describes is the change's subject.
    assert!(super::classes(
        b"# fix(docker): stop build immediately on memory starvation\n\n1. The container enters an intense Linux kernel swap-thrashing loop.\n2. When processes were killed by the Linux kernel OOM killer (`exit code 137`), it printed raw `returned a non-zero code: 137`.\n"
    )
    .is_empty());
    // An issue's title under the tracker's line is the report's own.
    texts_named_first(&[(
        "zhu30844/MotionSense · issue #4 · open · C\n# 程序出现Segmentation fault (core dumped)\n\nwp-chen · description · 2025-02-27\n您好，我clone您的项目在本地运行时出现了core dumped。\n",
        "log.native-crash",
    )]);
    // The tracker's line alone makes the heading under it the issue's title, whatever
    // follows it (here a profiler's table, no byline); without it a heading is a page's.
    let titled = "PennyLaneAI/pennylane · issue #6297 · closed · Python\nlabels: bug\n# Memory leak occurs while using lightning.kokkos device\n\n```shell\n    96    764.7 MiB      2.8 MiB           1           results = self.qcircuit(inputs_stack)\n```\n";
    texts_named_first(&[(titled, "log.memory-growth")]);
    let untitled = titled
        .split_once('\n')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    assert!(super::classes(untitled.as_bytes()).is_empty());
}

/// Read after batch 24's set-aside was scored: Ray's object store too big for /dev/shm,
/// a failed page allocation's call trace without its first line, Windows' access
/// violation dialog as users capitalise it, a bug check's long code after `STOP code`,
/// jetsam in the kernel's own log, a Russian issue's title under its labels.
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        (
            "[2026-03-25 05:44:29,435 W 39 39] (raylet) store_runner.cc:83: System memory request exceeds memory available in /dev/shm. The request is for 10200547328 bytes, and the amount available is 9663676416 bytes.",
            "log.dataloader-shm",
        ),
        (
            "[4238992.151057]  [<ffffffffaf5bcaa0>] warn_alloc_failed+0x110/0x180",
            "log.memory-pressure",
        ),
        (
            "[  412.118201]  warn_alloc+0x14c/0x1d0",
            "log.memory-pressure",
        ),
        (
            "The Instruction at 0x00007FFB36EC11F1 referenced memory at 0x0000000000000000.",
            "log.windows-memory-fault",
        ),
        (
            "I got a BSOD crash in balloon.sys.  STOP code 0x0000007e and on all subsequent boots.",
            "log.windows-memory-fault",
        ),
        (
            "16:12:49.226  kernel: memorystatus: exceeded mem limit: ActiveHard 50 MB (fatal)",
            "log.userspace-oom-kill",
        ),
        (
            "16:12:49.229  kernel: killing_specific_process pid 1879 [Tunnel] ... 51200KB",
            "log.userspace-oom-kill",
        ),
    ]);
    texts_named_first(&[(
        "OneMoreGres/ScreenTranslator · issue #158 · closed · C++\nlabels: bug\n# Ошибка сегментирования (образ памяти сброшен на диск)\n\ndimjkee90 · description · 2023-07-19\nПри запуске ошибка сегментирования\n",
        "log.native-crash",
    )]);
    lines_raise_nothing(&["warn_alloc_failed is a function of mm/page_alloc.c"]);
}

/// Batch 25's train forms: a CUDA wrapper's name for an illegal address and CUDA's own
/// sentence for it, Cycles' driver call out of memory, Unity's shared memory in a
/// container, Python's MemoryError as its repr, zstd's allocation error, and a restart
/// told as due to `OOMKilled`.
#[test]
fn web_data_and_render_stacks_name_their_failures() {
    each_named_first(&[
        (
            "GPU GeForce GTX 1070 ID 4: Critical error in main cuda loop ErrorIllegalAddress: While executing a kernel, the device encountered a load or store instruction on an invalid memory address.",
            "log.cuda-illegal-memory-access",
        ),
        (
            r"Out of memory in cuStreamCreate(&cuda_stream_, CU_STREAM_NON_BLOCKING) (C:\Users\blender\git\blender-v410\blender.git\intern\cycles\device\cuda\queue.cpp:21)",
            "log.cuda-oom",
        ),
        (
            "Error:  Insufficient shared memory available - if using Docker, please run the container with --shm-size=1025M",
            "log.dataloader-shm",
        ),
        ("MemoryError()", "log.host-alloc-failure"),
        (
            "[18:08:22] [ForkJoinPool-1-worker-2/WARN]: java.io.IOException: Compression error: cannot create header: Allocation error : not enough memory",
            "log.host-alloc-failure",
        ),
        (
            "We have found that Segment Store pods frequently got restarted due to `OOMKilled`.",
            "log.oom-kill",
        ),
    ]);
    lines_raise_nothing(&["def on_error(e): return MemoryError() if e else None"]);
}

/// Read after batch 25's set-aside was scored: Cycles' illegal address in its own
/// function, a bug check's code as `nt!KeBugCheckEx`'s first argument in a stack's text.
#[test]
fn forms_read_after_batch_25s_scoring() {
    each_named_first(&[
        (
            "CUDA error: Illegal address in mem_alloc_result, line 815",
            "log.cuda-illegal-memory-access",
        ),
        (
            "CUDA error: Illegal address in cuMemcpyHtoD(mem, host, size), line 1027",
            "log.cuda-illegal-memory-access",
        ),
        (
            "fffff803`178370b8 fffff803`19a2bf29     : 00000000`0000000a ffffa282`0f7ffff0 00000000`00000002 00000000`00000000 : nt!KeBugCheckEx",
            "log.windows-memory-fault",
        ),
    ]);
    // Another bug check's code in the same place is not a memory fault's.
    lines_raise_nothing(&["fffff803`178370b8 fffff803`19a2bf29     : 00000000`000000ef ffffa282`0f7ffff0 00000000`00000002 00000000`00000000 : nt!KeBugCheckEx"]);
}
