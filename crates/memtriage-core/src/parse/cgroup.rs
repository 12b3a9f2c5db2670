//! `/proc/PID/cgroup` and the cgroup memory controller's files.

/// Where a process sits in the v2 hierarchy and in the v1 memory hierarchy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Membership {
    /// `0::/path` (absent on pure v1 systems).
    pub v2: Option<String>,
    /// `N:memory[,...]:/path` (absent where the v1 memory controller is not mounted).
    pub v1_memory: Option<String>,
}

pub fn parse_membership(text: &str) -> Membership {
    let mut m = Membership::default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            m.v2 = Some(path.to_string());
        } else if controllers.split(',').any(|c| c == "memory") {
            m.v1_memory = Some(path.to_string());
        }
    }
    m
}

/// A v2 limit file (`memory.max`, `memory.high`, `memory.swap.max`): `max` is no limit.
pub fn parse_v2_limit(text: &str) -> Option<Option<u64>> {
    match text.trim() {
        "max" => Some(None),
        n => n.parse().ok().map(Some),
    }
}

/// v1 reports "no limit" as the largest page-aligned `i64` (9223372036854771712);
/// anything at or above 2^62 is treated as unlimited.
pub fn parse_v1_limit(text: &str) -> Option<Option<u64>> {
    let n: u64 = text.trim().parse().ok()?;
    Some((n < 1 << 62).then_some(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_membership_reads_both_hierarchies() {
        let m = parse_membership("9:name=systemd:/\n4:memory:/process_api/a64a\n1:cpu:/\n0::/\n");
        assert_eq!(m.v2.as_deref(), Some("/"));
        assert_eq!(m.v1_memory.as_deref(), Some("/process_api/a64a"));
    }

    #[test]
    fn combined_controllers_and_colons_in_paths() {
        let m = parse_membership("3:cpu,memory:/a:b\n");
        assert_eq!(m.v1_memory.as_deref(), Some("/a:b"));
        assert_eq!(m.v2, None);
    }

    #[test]
    fn limits_distinguish_unlimited_from_unreadable() {
        assert_eq!(parse_v2_limit("max\n"), Some(None));
        assert_eq!(parse_v2_limit("1073741824\n"), Some(Some(1 << 30)));
        assert_eq!(parse_v2_limit("lots"), None);
        assert_eq!(parse_v1_limit("9223372036854771712\n"), Some(None));
        assert_eq!(parse_v1_limit("536870912"), Some(Some(512 << 20)));
        assert_eq!(parse_v1_limit(""), None);
    }
}
