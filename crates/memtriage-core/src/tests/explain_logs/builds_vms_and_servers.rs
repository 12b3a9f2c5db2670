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
}
