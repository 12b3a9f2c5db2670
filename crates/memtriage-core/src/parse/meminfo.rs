//! `/proc/meminfo`.

use crate::model::system::MemInfo;
use crate::parse::kv::size_map;

/// Lenient: fields that are missing stay `None`.
pub fn parse(text: &str) -> MemInfo {
    let m = size_map(text.as_bytes());
    let get = |k: &str| m.get(k).copied();
    MemInfo {
        total: get("MemTotal"),
        available: get("MemAvailable"),
        free: get("MemFree"),
        swap_total: get("SwapTotal"),
        swap_free: get("SwapFree"),
        shmem: get("Shmem"),
        commit_limit: get("CommitLimit"),
        committed_as: get("Committed_AS"),
        hugepage_size: get("Hugepagesize"),
        anon_huge_pages: get("AnonHugePages"),
        cached: get("Cached"),
        inactive_file: get("Inactive(file)"),
        anon_pages: get("AnonPages"),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn missing_fields_stay_unknown() {
        let m = parse("MemTotal:       16384 kB\nSwapTotal: 0 kB\nbad line\n");
        assert_eq!(m.total, Some(16384 * 1024));
        assert_eq!(m.swap_total, Some(0), "a zero is a reading");
        assert_eq!(m.available, None, "an absent line is unknown, not 0");
    }
}
