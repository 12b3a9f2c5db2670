//! Batch 29's forms (genomics tools, games and their servers, local LLM tooling,
//! databases, boards and phones, Korean threads), each from the program that prints
//! it, and the words of the threads that tell who killed a process or what crashed.

use super::{each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn allocators_databases_and_games_name_what_ran_out() {
    each_named_first(&[
        ("[morecore] insufficient memory", "log.host-alloc-failure"),
        (
            "Failed to allocate a 51916812 byte allocation with 16777216 free bytes and 21MB until OOM",
            "log.host-alloc-failure",
        ),
        (
            "[INFO] HkDatabaseTryAcquireUserMemory(): Database ID: [7]. Out of user memory quota: requested = 131200; available = 74641; quota = 34359738368; operation = 1. |",
            "log.host-alloc-failure",
        ),
        (
            "Msg 41823, Level 16, State 171, Line 6 Could not perform the operation because the database has reached its quota for in-memory tables.",
            "log.host-alloc-failure",
        ),
        (
            "After playing the modpack for a while, my game crashes and gives the \"Minecraft ran out of memory\" error screen.",
            "log.host-alloc-failure",
        ),
        (
            "[ 1639.859563] Alignment trap: not handling instruction f9430a2f at [<005fa0a2>]",
            "log.mmap-bus-error",
        ),
        (
            "Gradle build daemon disappeared unexpectedly (it may have been killed or may have crashed)",
            "log.sigkill",
        ),
        (
            "Jun 27 22:57:37 stealth16 systemd-ollama[44353]: /usr/lib/ollama/libggml-base.so.0(ggml_abort+0x11d)[0x7ff0089d272d]",
            "log.native-crash",
        ),
    ]);
    // Another function's words, a frame that is no abort.
    lines_raise_nothing(&[
        "[foo] insufficient memory for the buffer, retrying",
        "/usr/lib/libfoo.so.0(foo_abortable_read+0x11d)[0x7ff0089d272d]",
    ]);
}

#[test]
fn the_shells_killed_ends_a_bar_of_blocks_or_a_quote() {
    each_named_first(&[
        (
            " 45% ▕███████████████████████████                                 ▏ Killed",
            "log.sigkill",
        ),
        ("Killed`,so could anyone give some advice?", "log.sigkill"),
    ]);
    lines_raise_nothing(&["Killed processes are listed in the report below."]);
}

#[test]
fn a_thread_tells_who_killed_it_or_what_crashed() {
    texts_named_first(&[
        (
            "That peak exceeds the host RAM ceiling, the Linux OOM-killer sends SIGKILL, and the process dies silently.\n",
            "log.oom-kill",
        ),
        (
            "The job is killed due to memory limits in around 10 secs but snakemake does not see it.\n",
            "log.userspace-oom-kill",
        ),
        (
            "On a 4GB phone Android's `lowmemorykiller` kills the app at ~1300MB.\n",
            "log.userspace-oom-kill",
        ),
        (
            "second, the problem was the  systemd-oomd of fedora. i disabled it\n",
            "log.userspace-oom-kill",
        ),
        (
            "All of my samples run fine except one of them which reproducibly gives me a Segmentation fault (core dumped) error.\n",
            "log.native-crash",
        ),
        (
            "After the line `use profile rx`, The message `Bus error` appears and the program exits.\n",
            "log.mmap-bus-error",
        ),
        // Korean: an error says CUDA memory is short; the browser freezes of a leak.
        (
            "돌리던 중에 wellness.py의 85번째 줄에서 쿠다 메모리가 모자란다는 에러가 발생합니다.\n",
            "log.cuda-oom",
        ),
        (
            "- 프리젠테이션에서 3~5시간 이상 유지 시 메모리 누수로 인해 브라우저 멈춤\n",
            "log.memory-growth",
        ),
    ]);
    // A manual's killer, a question, a meaning asked, memory that is enough.
    lines_raise_nothing(&[
        "The low memory killer decides which app to kill by its oom_adj score.",
        "Does the job get killed due to memory limits?",
        "What does the message `Bus error` mean?",
        "GPU 메모리가 충분합니다.",
    ]);
}

#[test]
fn a_cpus_load_at_its_clock_is_no_full_swap() {
    lines_raise_nothing(&[
        "05-15-2025 18:30:28 RAM 6982/7620MB (lfb 5x1MB) SWAP 2640/16384MB (cached 202MB) CPU [97%@1984,95%@1984]",
    ]);
}

#[test]
fn a_database_and_an_aligner_refuse_at_their_own_limits() {
    each_named_first(&[
        (
            "ERROR: root: memory budget exceeded: 215040 bytes requested, 1024000000 currently allocated, 1024000000 bytes in budget",
            "log.host-alloc-failure",
        ),
        (
            "Shared memory error: 4, errno: Cannot allocate memory(12)",
            "log.host-alloc-failure",
        ),
        (
            "EXITING because of FATAL ERROR: problems with shared memory: error from shmget() or shm_open().",
            "log.host-alloc-failure",
        ),
    ]);
    lines_raise_nothing(&["The memory budget exceeded our plans this quarter."]);
}
