//! What a thread says in words about the kill it shows and the memory it watched:
//! its reading of a plain `Killed` (`Looks like OOM`, `due to lack of memory`), and a
//! rise told with the verbs people use (`goes up and never down`, `rises`).

use super::{each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn a_threads_reading_of_a_plain_kill_names_the_oom_killer() {
    texts_named_first(&[
        ("Killed\ngmake[2]: *** [zig2.o] Error 137\nLooks like OOM\n", "log.oom-kill"),
        (
            "Killed\nI think it's failing due to lack of memory. I've tried a 6GB swapfile.\n",
            "log.oom-kill",
        ),
        (
            "/bin/bash: line 1:    64 Killed                  python -u main.py\nThis looks like insufficient memory problem.\n",
            "log.oom-kill",
        ),
        (
            "cc: fatal error: Killed signal terminated program cc1\nIt's \"Out of memory\" error. Don't use any \"-j\" switch.\n",
            "log.oom-kill",
        ),
        (
            "Killed\nI have found the problem because the memory is not enough\n",
            "log.oom-kill",
        ),
        (
            "./run.sh: line 19:  6545 Killed   duckdb hits.db\nAlmost certainly an out-of-memory error.\n",
            "log.oom-kill",
        ),
    ]);
}

#[test]
fn a_kill_for_oom_told_in_words() {
    each_named_first(&[
        (
            "`dmesg -T | egrep -i 'killed process'` shows that on Fri Aug 12 14:02:43 2016 a ruby process was killed for OOM.",
            "log.oom-kill",
        ),
        (
            "Our notebook servers get killed by Out of Memory (OOM) every few days.",
            "log.oom-kill",
        ),
    ]);
    lines_raise_nothing(&["If a process is killed for OOM, raise the container's limit."]);
}

#[test]
fn a_reading_denied_or_asked_leaves_the_kill_unexplained() {
    texts_named_first(&[
        (
            "Killed\nIt is not due to lack of memory: the machine has 64 GB free.\n",
            "log.sigkill",
        ),
        ("Killed\nIs it due to lack of memory?\n", "log.sigkill"),
        ("Killed\nIf it looks like OOM, add swap.\n", "log.sigkill"),
    ]);
    // Without a kill the reading claims nothing.
    lines_raise_nothing(&[
        "Looks like OOM to me.",
        "The job failed due to lack of memory on the old node, so we moved it.",
    ]);
}

#[test]
fn a_rise_told_with_everyday_verbs() {
    each_named_first(&[
        (
            "Memory usage goes up and never down if messages are bridged via a bridge that has no host.",
            "log.memory-growth",
        ),
        (
            "My fresh sidekiq process slowly increases it's RSS memory usage.",
            "log.memory-growth",
        ),
        (
            "After calling seek the memory consumption increases drastically with time.",
            "log.memory-growth",
        ),
        (
            "如果网页有iframe，然后不停的重复刷新页面，内存就会不停的增加，然后一直到页面无响应。",
            "log.memory-growth",
        ),
        (
            "Repeat the last 3 steps above and watch viewer memory usage. It grows without bound.",
            "log.memory-growth",
        ),
        (
            "After upgrading it uses a lot more memory than v2 did. And it keeps increasing, indicating a possible memory leak.",
            "log.memory-growth",
        ),
    ]);
    lines_raise_nothing(&[
        "The model takes 2 GB of memory. It grows the cache only when asked.",
        "Memory usage goes up to 4 GB while loading the model.",
        "If memory usage goes up over time, lower the cache size.",
    ]);
}
