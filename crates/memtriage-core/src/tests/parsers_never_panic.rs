//! Every parser takes any bytes without panicking: arbitrary input, and every
//! truncation of real kernel text (a file cut short mid-read is the common case).

use proptest::prelude::*;

use crate::fuzz::TARGETS;

/// Every parser's fuzz target (the log scanner has tests of its own: scanning each
/// prefix of a large file twice would take minutes here).
fn all_parsers(bytes: &[u8]) {
    for (name, target) in TARGETS {
        if *name != "logs" {
            target(bytes);
        }
    }
}

/// Real text from this process and from captured kernel output.
fn samples() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for f in [
        "smaps",
        "smaps_rollup",
        "status",
        "stat",
        "cmdline",
        "cgroup",
        "mountinfo",
        "limits",
    ] {
        if let Ok(b) = std::fs::read(format!("/proc/self/{f}")) {
            out.push(b);
        }
    }
    for f in [
        "/proc/meminfo",
        "/proc/swaps",
        "/proc/pressure/memory",
        "/proc/vmstat",
        "/proc/uptime",
        "/etc/passwd",
    ] {
        if let Ok(b) = std::fs::read(f) {
            out.push(b);
        }
    }
    out.push(
        std::fs::read(crate::tests::support::fixtures().join("kmsg-oom")).expect("kmsg fixture"),
    );
    out
}

#[test]
fn every_truncation_of_real_kernel_text_parses_without_panic() {
    for sample in samples() {
        // Every prefix of small files; a stride through big ones (smaps).
        let step = (sample.len() / 2000).max(1);
        for end in (0..=sample.len()).step_by(step) {
            all_parsers(&sample[..end]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_parse_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        all_parsers(&bytes);
    }

    #[test]
    fn kernel_like_lines_parse_without_panic(
        lines in proptest::collection::vec("[0-9a-f]{1,12}-[0-9a-f]{1,12} [rwxps-]{4} [0-9a-f]{1,8} [0-9:]{5} [0-9]{1,6} {0,20}[ -~]{0,40}|[A-Z][a-zA-Z_]{1,14}: {0,8}[0-9]{0,21} ?(kB)?|<[0-9]>\\[ *[0-9.]{1,12}\\] [ -~]{0,80}", 0..40)
    ) {
        all_parsers(lines.join("\n").as_bytes());
    }
}
