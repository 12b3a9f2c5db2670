//! Batch 17's forms, each from the program that prints it (a library's exception whose
//! message is that memory ran out, Tcl's refused fork and its child killed, a strerror
//! in parentheses, V8's WebAssembly memory, Z3's and SCIP's limits, Playwright's and
//! systemd's `signal=`, Verilator's thrown signal, macOS's `Killed: 9`, a Windows
//! status written after a key), and what reports say in words: a `Killed` retold in
//! quotes, an OOM kill with an adverb, memory rising more and more, RSS growth, swap
//! filling up. A rejected claim lets the line's next one be read, and a SIGKILL nobody
//! is shown sending yields the verdict to the growth that explains it. After the
//! set-aside third's scoring: SIGILL from the shell and its reporters, `systemctl
//! status`'s `Result: oom-kill`, `OUT_OF_MEMORY` as Slurm's state and not another
//! program's error, and a Japanese reference page's sections.

use super::{classes, each_named_first, lines_raise_nothing};

#[test]
fn tool_and_solver_programs_say_it_in_their_own_words() {
    each_named_first(&[
        ("    gurobipy.GurobiError: Out of memory", "log.host-alloc-failure"),
        (
            "Error: flow.tcl, 149 couldn't fork child process: not enough memory",
            "log.host-alloc-failure",
        ),
        (
            "hashindex: malloc buckets failed(Cannot allocate memory)",
            "log.host-alloc-failure",
        ),
        (
            "all the tests with number 30+ start failing due to memory issues WebAssembly.instantiate(): Out of memory: Cannot allocate Wasm memory for new instance.",
            "log.host-alloc-failure",
        ),
        ("error: max. memory exceeded", "log.host-alloc-failure"),
        (
            "[/home/scip/scip/src/blockmemshell/memory.c:2927] ERROR: Insufficient memory for reallocation of 18446744065119617024 bytes.",
            "log.host-alloc-failure",
        ),
        (
            "    [pid=32777] <process did exit: exitCode=null, signal=SIGKILL>",
            "log.sigkill",
        ),
        (
            "%Error: Verilator threw signal 9.  Consider trying --debug --gdbbt",
            "log.sigkill",
        ),
        ("child killed: kill signal", "log.sigkill"),
        ("child killed: segmentation violation", "log.native-crash"),
        (
            "   Main PID: 13914 (code=dumped, signal=ABRT)",
            "log.native-crash",
        ),
        (">Killed: 9 ", "log.sigkill"),
        (
            "It collects a lot of GPU crash logs with exitCode: -1073741819。",
            "log.windows-memory-fault",
        ),
        (
            "When I run the solver, after 90 minutes of reading the LP model, it simply returns `Killed`.",
            "log.sigkill",
        ),
        (
            "I'm getting a \"Killed\" message right after the NER package tries to load.",
            "log.sigkill",
        ),
        // The quoted `Killed` is the claim, not a `Killed` before it.
        (
            "Killed the old run first; the new one printed \"Killed\" at epoch 3.",
            "log.sigkill",
        ),
        (
            "I am deploying crawlee in a kubernetes pod. It gets recurrently OOMKilled because crawlee increases the desired concurrency continuously.",
            "log.oom-kill",
        ),
        (
            "I constantly find rust-analyzer memory ballooning  and OOM killing it.",
            "log.oom-kill",
        ),
        (
            "RA  cost more and more memory when i coding and won't free it until it use up all of memory",
            "log.memory-growth",
        ),
        (
            "Steady, monotonic RSS growth of the server process, with no plateau.",
            "log.memory-growth",
        ),
        (
            "My swap file fills up and then Home Assistant hangs.",
            "log.swap-thrashing",
        ),
        (
            "the RAM usage on my Pi is growing for no particular reason. In the screenshot, the used RAM gradually increases.",
            "log.memory-growth",
        ),
        // After the set-aside third's scoring.
        (
            "/entrypoint.sh: line 94:    19 Illegal instruction     (core dumped) \"$@\"",
            "log.native-crash",
        ),
        ("Illegal instruction (core dumped)", "log.native-crash"),
        ("error: signal: illegal instruction", "log.native-crash"),
        (
            "Active: failed (Result: oom-kill) since Mon 2024-09-09 10:49:19 JST; 1h 51min ago",
            "log.oom-kill",
        ),
        ("State: OUT_OF_MEMORY (exit code 0)", "log.oom-kill"),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        // An exception whose message goes on, or a device's.
        "ValueError: out of memory budget for this plan: 3 GiB",
        "CudaRuntimeError: out of memory",
        // A page's numbered advice.
        "  1. if you got page crash with BUS_ADRERR (chromium issue), increase shm-size on docker run with --shm-size argument",
        "If you're seeing `Killed` in the logs, raise the memory limit.",
        // `Killed` defined, not met.
        "`Killed` means you ran out of memory.",
        "The terse \"Killed\" output (no Python traceback) is the kernel's.",
        "If the swap file fills up, the machine slows down.",
        "If more is needed, Gurobi will fail with an OUT_OF_MEMORY error (see the Error Code section).",
        "An illegal instruction means the binary uses an instruction this CPU lacks.",
    ]);
}

#[test]
fn a_japanese_reference_page_with_its_overview_and_causes_is_a_page() {
    let page = "Linux: Too many open files\n\n概要\n\nプロセスがオープンできるファイルディスクリプタの数が上限に達した場合に発生するエラーです。\n\nエラーメッセージ\n\nToo many open files\njava.io.IOException: Too many open files\n\n原因\n\n  1. ulimitの制限値が低い\n";
    assert_eq!(classes(page.as_bytes()), Vec::<String>::new());
}

#[test]
fn a_sigkill_nobody_is_shown_sending_yields_the_verdict_to_the_growth_beside_it() {
    let text = "The run was \"Killed\" at epoch 25.\nI watched it: memory usage keeps increasing every epoch.\n";
    assert_eq!(
        classes(text.as_bytes()),
        ["log.memory-growth", "log.sigkill"]
    );
}
