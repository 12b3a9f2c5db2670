//! Every parser takes any bytes without panicking: arbitrary input, and every
//! truncation of real kernel text (a file cut short mid-read is the common case).

use memtriage_core::parse::{
    cgroup, environ, kmsg, kv, limits, meminfo, mountinfo, passwd, pressure, proc_connector,
    safetensors, smaps, smaps_rollup, stat, status, swaps, text, thp, uptime,
};
use proptest::prelude::*;

fn all_parsers(bytes: &[u8]) {
    let lossy = String::from_utf8_lossy(bytes);
    let _ = smaps::parse(bytes);
    let _ = status::parse(bytes);
    let _ = smaps_rollup::parse(bytes);
    let _ = kv::sizes(bytes).count();
    let _ = kv::counters(&lossy).count();
    let _ = text::escape_bytes(bytes);
    let _ = text::split_cmdline(bytes);
    let _ = mountinfo::parse(&lossy);
    let _ = mountinfo::unescape_octal(&lossy);
    let _ = cgroup::parse_membership(&lossy);
    let _ = cgroup::parse_v1_limit(&lossy);
    let _ = cgroup::parse_v2_limit(&lossy);
    let _ = stat::parse(bytes);
    let _ = status::cap_eff(&lossy);
    let _ = meminfo::parse(&lossy);
    let _ = swaps::parse(&lossy);
    let _ = pressure::parse(&lossy);
    let _ = thp::selected(&lossy);
    let _ = mountinfo::tmpfs_size(&lossy);
    let _ = limits::limit(&lossy, "Max locked memory");
    let _ = uptime::parse(&lossy);
    let _ = passwd::parse(&lossy);
    let _ = proc_connector::parse_datagram(bytes);
    let _ = environ::rank(bytes);
    // The header's JSON as it follows the length field, whatever sizes are claimed.
    let len = bytes.len() as u64;
    for (file_size, declared) in [(len + 8, len), (len, len), (0, len), (u64::MAX, u64::MAX)] {
        let _ = safetensors::parse(file_size, declared, bytes);
    }
    for line in lossy.lines() {
        let _ = kmsg::parse_line(line);
    }
    let _ = kmsg::oom_kills(lossy.lines());
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
    out.push(std::fs::read(crate::support::fixtures().join("kmsg-oom")).expect("kmsg fixture"));
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
