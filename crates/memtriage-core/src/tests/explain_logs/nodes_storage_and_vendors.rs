//! Batch 33's forms (GlusterFS's crash report, Bitbucket Pipelines' build container,
//! TPU memory) and its words (an OOM kill told without the kernel's lines, a quoted
//! `Killed`, growth that starts or never stops, a machine that chokes on full memory,
//! a crash with a segfault, a kernel panic met), each with the near miss that must stay
//! quiet.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn glusterfs_and_bitbucket_name_what_ended_the_process() {
    each_named_first(&[
        ("signal received: 7", "log.mmap-bus-error"),
        ("signal received: 11", "log.native-crash"),
        (
            "\"Container 'Build' exceeded memory limit.\"",
            "log.oom-kill",
        ),
    ]);
    // Another count, a page's words on limits.
    lines_raise_nothing(&[
        "signal received: 17 frames",
        "If you get \"Container 'Build' exceeded memory limit.\", raise the step size.",
    ]);
}

#[test]
fn an_oom_kill_told_in_words() {
    each_named_first(&[
        ("Killed by oom", "log.oom-kill"),
        (
            "After 24 hours running, Bitcoin daemon is killed because out of memory error.",
            "log.oom-kill",
        ),
        (
            "We hit master OOM-kill under an 8 GB cgroup limit at ~800k volume IDs",
            "log.oom-kill",
        ),
        (
            "Confluence process dies unexpectedly due to Linux OOM-Killer",
            "log.oom-kill",
        ),
    ]);
    // A supposition, a guess with `or some`, a question.
    lines_raise_nothing(&[
        "If the job is killed because of OOM, raise its memory.",
        "Eventually a self-hosted runner is killed by OOM or some issue.",
        "Does the process die due to the OOM killer?",
    ]);
}

#[test]
fn a_quoted_killed_is_the_shells_word() {
    each_named_first(&[
        (
            "i get kicked out and says \"killed\" right after normal \"Imported new block headers\"...",
            "log.sigkill",
        ),
        (
            "I come up to see the status \"Killed\" in the synchronisation process output.",
            "log.sigkill",
        ),
    ]);
    // A page's list of messages, a reader's case.
    lines_raise_nothing(&[
        "- Console shows “Killed”, “Out of memory”, or similar messages",
        "If you see \"Killed\" in the output, the kernel ended the process.",
        // A page's habit: the same words, with `saw`, are a report.
        "A worker that leaks will then see the status \"killed\".",
    ]);
    each_named_first(&[(
        "A worker that leaks then saw the status \"killed\".",
        "log.sigkill",
    )]);
}

#[test]
fn tpu_memory_and_a_java_heap_run_out() {
    each_named_first(&[
        (
            "but a really strange problem is hbm OOM.",
            "log.cuda-oom",
        ),
        (
            "I'm getting compilation OOM of about 1GB VMEM on a v3-8.",
            "log.cuda-oom",
        ),
        (
            "three pipeline service pods began experiencing Java Heap OOM (Out of Memory) issues around 7:56 PM IST.",
            "log.host-alloc-failure",
        ),
    ]);
    // Advice, a question.
    lines_raise_nothing(&[
        "Use remat to avoid HBM OOM on large models.",
        "How do I avoid getting Java heap OOM errors?",
    ]);
}

#[test]
fn growth_that_starts_or_never_stops_and_memory_that_chokes() {
    each_named_first(&[
        (
            "with the following code the ram dont stop to grow.",
            "log.memory-growth",
        ),
        (
            "Then memory started climbing across all instances.",
            "log.memory-growth",
        ),
        (
            "**同一文の繰り返し合成でもメモリ使用量が継続的に増加する**",
            "log.memory-growth",
        ),
        (
            "After running for 3 hours (synced up) memory is maxed out and server is almost unresponsive.",
            "log.memory-pressure",
        ),
        ("CPU at 100% mostly used by kswapd0", "log.memory-pressure"),
    ]);
    // A supposition, a denial, a figure too low to burn.
    lines_raise_nothing(&[
        "If memory started climbing, restart the service.",
        "Memory never started growing after the fix was applied, so it is not a leak.",
        "If memory is full the server may become unresponsive.",
        "CPU at 10% and kswapd0 idle",
    ]);
}

#[test]
fn a_crash_with_a_segfault_a_kernel_panic_and_open_files_met() {
    each_named_first(&[
        (
            "A worker process crashed roughly once an hour with a segfault.",
            "log.native-crash",
        ),
        (
            " Segmentation fault で落ちるのは、以下の手順です。",
            "log.native-crash",
        ),
        (
            "This change triggered a delayed kernel panic that only manifested after the VM had fully loaded",
            "log.kernel-oops",
        ),
        (
            "The indexer has hit the the maximum permitted number of open files in Linux/UNIX operating systems.",
            "log.too-many-open-files",
        ),
    ]);
    // Suppositions and a question.
    lines_raise_nothing(&[
        "If it crashed with a segfault, send us the core file.",
        "Could this change have triggered a kernel panic?",
        "If the indexer has hit the maximum number of open files, raise the limit.",
    ]);
}

#[test]
fn nvidia_smis_critical_xid_and_windows_error_8_in_japanese() {
    each_named_first(&[
        (
            "GPU 00000000:04:00.0: Detected Critical Xid Error",
            "log.gpu-xid",
        ),
        (
            "このコマンドを処理するにはメモリ リソースが足りません。",
            "log.host-alloc-failure",
        ),
    ]);
    // A code comment that retells nvidia-smi without the GPU's address.
    lines_raise_nothing(&[
        "// nvidia-smi says (Detected Critical Xid Error) but due to async this might be from somewhere else",
    ]);
}

#[test]
fn a_pages_words_on_these_failures_raise_nothing() {
    // A review's sentences from manuals, dashboards, changelogs and tutorials, each of
    // which a claim of this batch once matched.
    lines_raise_nothing(&[
        "JAX prints an HBM OOM report listing the largest buffers.",
        "Use this dashboard to see OOM kills per node.",
        "Containers killed by OOM are restarted according to their restartPolicy.",
        "Check for OOMKilled status in kubectl describe pod.",
        "When memory is exhausted, the system becomes unresponsive.",
        "Memory was maxed out, but the server never became unresponsive.",
        "Heap usage started climbing after startup and then levelled off at 1.2 GB.",
        "Memory usage began to grow with the batch size, as expected.",
        "By design, heap usage doesn't stop growing until it reaches -Xmx;",
        "This error occurs when a process has reached the maximum number of open files.",
        "The kdump service saves a vmcore from a system that has experienced a kernel panic.",
        "To test kdump, we triggered a kernel panic with echo c > /proc/sysrq-trigger.",
        "Applications stopped with yarn application -kill show status \"KILLED\".",
        "The OS was killing the app because it took too long to launch.",
        "Segmentation fault で落ちる場合は、ulimit -c unlimited を設定してください",
        "GCが動作するまでメモリ使用量が徐々に増加しますが、これは正常です",
        "If OOMKilled=true, raise the memory limit.",
        "Alert when CPU exceeds 90% and kswapd0 shows up in top.",
    ]);
}
