//! Batch 18's forms (microscopy, astronomy, audio, trading, chat servers, Chinese pages,
//! mobile toolchains), each from the program that prints it: ImageJ's dialog for a JVM
//! out of its heap.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn imaging_and_trading_programs_say_it_in_their_own_words() {
    each_named_first(&[(
        "Out of memory error: Java heap space",
        "log.host-alloc-failure",
    )]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        "If you see an out of memory error: raise -Xmx in Edit > Options > Memory & Threads.",
    ]);
}
