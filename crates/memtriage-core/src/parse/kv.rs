//! `Key:   value kB` files: /proc/meminfo, /proc/PID/smaps_rollup, /proc/PID/status.
//! Lenient by design: unknown keys are kept, odd lines skipped, so a kernel that adds
//! or drops a field never breaks a reading.

use std::collections::HashMap;

/// Each `Key: N [kB]` line as (key, bytes): a `kB` suffix is multiplied by 1024, a
/// bare number is returned as is (e.g. `HugePages_Total`). Lines whose value is not a
/// number (the smaps_rollup header, `VmFlags`, `State`) are skipped.
pub fn sizes(text: &[u8]) -> impl Iterator<Item = (&str, u64)> {
    text.split(|b| *b == b'\n').filter_map(|line| {
        let line = std::str::from_utf8(line).ok()?;
        let (key, rest) = line.split_once(':')?;
        let mut parts = rest.split_ascii_whitespace();
        let value: u64 = parts.next()?.parse().ok()?;
        let scale = match parts.next() {
            None => 1,
            Some("kB") => 1024,
            Some(_) => return None,
        };
        Some((key.trim(), value.checked_mul(scale)?))
    })
}

pub fn size_map(text: &[u8]) -> HashMap<&str, u64> {
    sizes(text).collect()
}

/// `key value` lines (cgroup `memory.stat`, `memory.events`, /proc/vmstat).
pub fn counters(text: &str) -> impl Iterator<Item = (&str, u64)> {
    text.lines().filter_map(|line| {
        let mut parts = line.split_ascii_whitespace();
        let key = parts.next()?;
        let value = parts.next()?.parse().ok()?;
        Some((key, value))
    })
}

pub fn counter(text: &str, key: &str) -> Option<u64> {
    counters(text).find(|(k, _)| *k == key).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLUP: &[u8] =
        b"55d0c6a4c000-7ffd2c1f5000 ---p 00000000 00:00 0                          [rollup]
Rss:              137232 kB
Pss:               70011 kB
Pss_Anon:          65536 kB
Anonymous:         65536 kB
HugePages_Total:       4
VmFlags: rd wr mr mw me ac
";

    #[test]
    fn rollup_values_are_bytes_and_header_is_skipped() {
        let m = size_map(ROLLUP);
        assert_eq!(m["Rss"], 137232 * 1024);
        assert_eq!(m["Pss_Anon"], 65536 * 1024);
        assert_eq!(m["HugePages_Total"], 4);
        assert!(!m.contains_key("VmFlags"));
        assert_eq!(m.len(), 5);
    }

    #[test]
    fn truncated_lines_are_skipped_not_misread() {
        let m = size_map(b"Rss:  12 kB\nPss:\nSwap: 9 MB\nLocked: 1");
        assert_eq!(m.get("Rss"), Some(&(12 * 1024)));
        assert_eq!(m.get("Pss"), None);
        assert_eq!(
            m.get("Swap"),
            None,
            "an unknown unit must not be read as bytes"
        );
        assert_eq!(m.get("Locked"), Some(&1));
    }

    #[test]
    fn overflowing_values_are_dropped() {
        assert!(size_map(b"Rss: 18446744073709551615 kB\n").is_empty());
    }

    #[test]
    fn counters_read_key_value_lines() {
        let text = "low 0\nhigh 3\nmax 7\noom 2\noom_kill 1\n";
        assert_eq!(counter(text, "oom_kill"), Some(1));
        assert_eq!(counter(text, "oom_group_kill"), None);
    }
}
