//! Claims with a condition after them (`leaks if …`, `segfaults when …`): the condition
//! says when the failure comes and its words deny nothing of it; a definition's
//! `a memory leak occurs when …` stays quiet.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn a_condition_after_a_claim_denies_nothing_of_it() {
    each_named_first(&[
        (
            "Ledfx seems to have a memory leak issue if certain audio interfaces are reset.",
            "log.memory-growth",
        ),
        (
            "gnome-shell segfaults if the file is not there.",
            "log.native-crash",
        ),
    ]);
    // A supposition before the claim, a definition, a question.
    lines_raise_nothing(&[
        "There might be a memory leak if you do that.",
        "A memory leak occurs when a program cannot free what it no longer needs.",
        "Is there a memory leak when audio interfaces are reset?",
        "If gnome-shell segfaults when the file is not there, restart it.",
    ]);
}
