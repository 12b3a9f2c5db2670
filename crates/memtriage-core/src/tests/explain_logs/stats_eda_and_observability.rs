//! Batch 34's words (observability stacks, statistics software, EDA and CAD tools,
//! PyTorch threads): a kill with memory as its cause in one clause, an out-of-memory
//! error met, a crash on too little memory, and the forms its scoring showed; each with
//! the near miss that must stay quiet.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn a_kill_with_memory_as_its_cause() {
    each_named_first(&[
        (
            "The app did terminate when I first saw that, but it was the os who killed it because of memory consumption.",
            "log.oom-kill",
        ),
        (
            "After it starts sampling, it hogs all memory and the my whole session is killed.",
            "log.oom-kill",
        ),
        (
            "I've seen it burst to as much as 27GB of memory which causes it to be killed by memory limits defined.",
            "log.oom-kill",
        ),
        (
            "But we found it sometimes still be killed by system oom killer.",
            "log.oom-kill",
        ),
        (
            "the Compactor is consistently being killed due to out of memory no matter how much memory it gets as limit",
            "log.oom-kill",
        ),
    ]);
    // A case supposed, another killer named, a guess, a generalisation, the noun
    // `OOM kills`.
    lines_raise_nothing(&[
        "If a process uses too much memory, it is killed.",
        "The worker exceeded its memory limit and the watchdog killed it for memory usage.",
        "The pod probably got killed because of memory usage.",
        "A worker typically gets killed because of memory pressure.",
        "On kernel 5.0+, memcg OOM kills emit only the structured line.",
        // Memory denied its part, a page's present, the writer's own kill, another
        // killer, a fix.
        "Memory usage is much lower now and nothing gets killed anymore.",
        "The OOM killer selects a process and kills it.",
        "I killed the process because memory usage was too high.",
        "The worker was killed by PM2 because of memory usage over 500 MB.",
        "Resolved an issue where the worker was killed due to excessive memory usage.",
    ]);
}

#[test]
fn an_out_of_memory_error_met() {
    each_named_first(&[
        (
            "When trying to slice at 0.05mm, I got an out of memory error and the program crashed.",
            "log.host-alloc-failure",
        ),
        (
            "The R system() function, for whatever reason, fails with an out of memory error, even though there is ~15GB free.",
            "log.host-alloc-failure",
        ),
        (
            "Slicing crashes due to too little memory even though 16 GB are free.",
            "log.host-alloc-failure",
        ),
    ]);
    // On a GPU or a model's run, a cluster's job (a limit's kill, most often), a page's
    // habit or pointer.
    lines_raise_nothing(&[
        "I got an out of memory error on the GPU after the third epoch.",
        "When I increase the batch size to 32 I get an out of memory error.",
        "The esfc job on WCOSS2 fails with an out-of-memory error:",
        "Users will get an out of memory error when the file exceeds 2 GB.",
        "See the out of memory errors section below.",
    ]);
}

#[test]
fn a_doubt_in_brackets_asks_nothing() {
    each_named_first(&[(
        "Nightly release of `torchaudio` (with Cuda 12.1) segfaults when `torchaudio.load` is called with (any?) `.wav` file.",
        "log.native-crash",
    )]);
    lines_raise_nothing(&[
        "Does `torchaudio` segfault when `torchaudio.load` is called?",
        "Is this a memory leak (in PyTorch?)",
    ]);
}

#[test]
fn memory_eaten_gradually() {
    each_named_first(&[(
        "When I leave RStudio open, it gradually eats memory.",
        "log.memory-growth",
    )]);
    lines_raise_nothing(&["It never gradually eats memory."]);
}

/// Read after batch 34's set-aside was scored: ninja's word for a job it saw killed,
/// Armadillo's refusal of a matrix too large for its index type.
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        (
            "ninja: job terminated due to signal 9: cd /home/build && /home/build/build/zig1 src/stage1.zig",
            "log.sigkill",
        ),
        (
            "  SpMat::init(): requested size is too large; suggest to enable ARMA_64BIT_WORD",
            "log.host-alloc-failure",
        ),
    ]);
    lines_raise_nothing(&[
        "ninja: job terminated due to signal 2",
        "ARMA_64BIT_WORD is enabled by default on 64-bit systems.",
    ]);
}
