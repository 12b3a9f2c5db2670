//! Leaks their reporters tell, written from the misses of scored batches before batch
//! 34 was read: the writer facing or suffering one, a program that contains one, a
//! named subject that leaks memory in the present, a leak of one kind of memory
//! (`leaking node memory`); each with the near miss that must stay quiet.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn a_leak_met_by_its_reporter() {
    each_named_first(&[
        (
            "We are facing the issue with the memory leak in airflow started on Docker.",
            "log.memory-growth",
        ),
        (
            "rllib suffers from a memory leak independently of the framework used",
            "log.memory-growth",
        ),
        (
            "alpha-6 beacon-chain contains a memory leak",
            "log.memory-growth",
        ),
        (
            "Só que estou com problema de Memory Leak...",
            "log.memory-growth",
        ),
    ]);
    // Supposed, asked, fixed.
    lines_raise_nothing(&[
        "If you are facing a memory leak, restart the worker.",
        "Are you seeing a memory leak?",
        "This release fixes an issue with a memory leak in the scheduler.",
    ]);
}

#[test]
fn a_named_subject_leaks_memory() {
    each_named_first(&[
        (
            "The application leaks memory in development mode, causing a crash sooner or later.",
            "log.memory-growth",
        ),
        (
            "Running an always-on transcription service leaks memory.",
            "log.memory-growth",
        ),
        (
            "Lua-widow-control is leaking node memory somewhere.",
            "log.memory-growth",
        ),
    ]);
    // A generic subject, a negation, the reader addressed, code's gerund, a leak of
    // something else into memory or of memory's contents.
    lines_raise_nothing(&[
        "A closure in a loop leaks memory.",
        "Every handle leaks memory.",
        "Nothing here leaks shared memory anymore.",
        "Your worker leaks GPU memory when you forget to call close().",
        "Forgetting to call close() on the response leaks memory.",
        "The API key was leaked into memory dumps.",
        "The ioctl handler leaks uninitialized memory to userspace.",
    ]);
}
