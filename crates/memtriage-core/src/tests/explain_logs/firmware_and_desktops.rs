//! Batch 21's forms (microcontroller firmware, quantum chemistry codes, search engines,
//! package managers, the Linux desktop, proxies, CJK infrastructure pages), each from
//! the program that prints it, and the reports' own words.

use super::{each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn firmware_and_services_say_it_in_their_own_words() {
    each_named_first(&[
        (
            "Guru Meditation Error: Core  0 panic'ed (LoadProhibited)",
            "log.native-crash",
        ),
        (
            "CORRUPT HEAP: Bad tail at 0x3ffe04d1. Expected 0xbaad5678 got 0xcececece",
            "log.native-crash",
        ),
        (
            "***ERROR*** A stack overflow in task eventTask has been detected.",
            "log.native-crash",
        ),
        ("abort() was called at PC 0x400889bb on core 0", "log.native-crash"),
        (
            "[00:00:00.429,199] <err> os: ***** MPU FAULT *****",
            "log.native-crash",
        ),
        (
            "Aug  6 18:07:22 Ubuntu searchd[2012673]: Handling signal 11",
            "log.native-crash",
        ),
        (
            "ESP_ERROR_CHECK failed: esp_err_t 0x101 (ESP_ERR_NO_MEM) at 0x4008de48",
            "log.host-alloc-failure",
        ),
        (
            "[1536659152.02][CONN][RXD] Error Message: Operator new[] out of memory",
            "log.host-alloc-failure",
        ),
        (
            "E (118749) camera: Failed to allocate frame buffer",
            "log.host-alloc-failure",
        ),
        (
            "[00:00:09.514,648] <err> net_pkt: Data buffer (704) allocation failed.",
            "log.host-alloc-failure",
        ),
        (
            "FATAL: xcalloc: Unable to allocate 1073741816 blocks of 392 bytes!",
            "log.host-alloc-failure",
        ),
        (
            " fock_rep_txs: insufficient memory            176307258",
            "log.host-alloc-failure",
        ),
        (
            " Not enough memory: aborting in run_stochastic_cipsi",
            "log.host-alloc-failure",
        ),
        (
            "Solving environment: ...working... *** picosat: out of memory in 'resize'",
            "log.host-alloc-failure",
        ),
        ("error: Nix daemon out of memory", "log.host-alloc-failure"),
        (
            "Actual: CondaMemoryError: The conda process ran out of memory. Increase system memory and/or try again.",
            "log.host-alloc-failure",
        ),
        (
            "Caused by: java.lang.OutOfMemoryError: PermGen space",
            "log.host-alloc-failure",
        ),
        (
            r#"Error: {"responseHeader":{"status":400},"error":{"metadata":["error-class","org.apache.solr.common.SolrException","root-error-class","java.lang.OutOfMemoryError"],"msg":"Exception writing document"}}"#,
            "log.host-alloc-failure",
        ),
        (
            "Nov 25 22:50:06 nixos pipewire-pulse[961]: Failed to mlock memory 0x7fd93c124000 32832: This is not a problem but for best performance, consider increasing RLIMIT_MEMLOCK",
            "log.memlock-limit",
        ),
        ("Solving environment: / Killed", "log.sigkill"),
        (
            "> emerg kernel[]: [ 4591.698432] Internal error: Oops: 5 [#1] SMP ARM",
            "log.kernel-oops",
        ),
    ]);
}

#[test]
fn reports_tell_it_in_their_own_words() {
    each_named_first(&[
        (
            "The OOM killer repetitively killed each of my instances during merge operations.",
            "log.oom-kill",
        ),
        (
            "The Meilisearch process is killed by Linux kernel (Out of memory) because uses a lot of memory.",
            "log.oom-kill",
        ),
        (
            "In this case it's the kernel killing Quickwit since it's exceeding the memory limit allocated.",
            "log.oom-kill",
        ),
        (
            "Memory usage seems to climb upon repeated calculations in the same process.",
            "log.memory-growth",
        ),
        (
            "This extension causes gnome-shell memory use to grow _quickly_.",
            "log.memory-growth",
        ),
        (
            "htop dump a day later: as you can see the used memory grows until it reaches the maximum allowed",
            "log.memory-growth",
        ),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        // A page's general statement, in the present tense.
        "When a function uses more memory than allowed, the kernel's OOM killer terminates the process immediately.",
        "Guru Meditation is what the ESP32 prints when it panics.",
        "If you can see the memory grow until it reaches the limit, lower the cache.",
        "Handling signals in Python is done with the signal module.",
    ]);
}

/// A crash `with the following error log` is the report's own, however many words
/// stand between the verb and the log.
#[test]
fn a_crash_with_the_following_error_log_is_the_writers() {
    texts_named_first(&[(
        "After manual installation sway crashes at startup with the following error log\n\n```\n*** Error in `sway': free(): invalid pointer: 0x000055ff2aa11641 ***\n```\n",
        "log.native-crash",
    )]);
}

/// Forms read after batch 21's set-aside third was scored (its misses).
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        (
            "Out of memory (Needed 8164 bytes)",
            "log.host-alloc-failure",
        ),
        (
            " ERROR: trying to allocate an array of size  -1208014592",
            "log.host-alloc-failure",
        ),
        (
            "Your build has exceeded the memory limit of 4G on 1 container.",
            "log.oom-kill",
        ),
    ]);
}
