//! `/proc/PID/mountinfo` (proc(5)): where cgroup hierarchies and tmpfs are mounted.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The directory of the mounted filesystem that appears at `mount_point`
    /// (not `/` inside a container whose cgroup is bind-mounted).
    pub root: String,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: Vec<String>,
}

/// Malformed lines are skipped: one odd mount must not hide the others.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Mount> {
    let (before, after) = line.split_once(" - ")?;
    let mut left = before.split(' ');
    let _id = left.next()?;
    let _parent = left.next()?;
    let _dev = left.next()?;
    let root = unescape_octal(left.next()?);
    let mount_point = unescape_octal(left.next()?);
    let mut right = after.split(' ');
    let fs_type = right.next()?.to_string();
    let source = unescape_octal(right.next()?);
    let super_options = right
        .next()
        .unwrap_or("")
        .split(',')
        .map(str::to_string)
        .collect();
    Some(Mount {
        root,
        mount_point,
        fs_type,
        source,
        super_options,
    })
}

/// The kernel writes space, tab, newline and backslash in paths as `\040`-style octal.
pub fn unescape_octal(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = (digits[0] - b'0') as u32 * 64
                    + (digits[1] - b'0') as u32 * 8
                    + (digits[2] - b'0') as u32;
                if let Ok(b) = u8::try_from(value) {
                    out.push(b);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// tmpfs `size=` as mountinfo shows it (`65536k`), or as written in fstab
/// (`16G`, `512m`, bytes). A percentage of RAM is left to statvfs.
pub fn tmpfs_size(s: &str) -> Option<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(crate::model::units::unit_bytes(unit)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
25 1 253:0 / / rw,relatime - ext4 /dev/vda rw
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate
35 30 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:14 - cgroup cgroup rw,memory
40 25 0:40 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=65536k
41 25 0:41 / /mnt/my\\040data rw - ext4 /dev/vdb rw
";

    #[test]
    fn finds_cgroup_and_tmpfs_mounts() {
        let mounts = parse(HYBRID);
        assert_eq!(mounts.len(), 6);
        let v2 = mounts.iter().find(|m| m.fs_type == "cgroup2").unwrap();
        assert_eq!(v2.mount_point, "/sys/fs/cgroup/unified");
        let v1 = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.iter().any(|o| o == "memory"))
            .unwrap();
        assert_eq!(v1.mount_point, "/sys/fs/cgroup/memory");
        let shm = mounts.iter().find(|m| m.mount_point == "/dev/shm").unwrap();
        assert!(shm.super_options.contains(&"size=65536k".to_string()));
    }

    #[test]
    fn octal_escapes_in_paths_are_decoded() {
        let mounts = parse(HYBRID);
        assert_eq!(mounts[5].mount_point, "/mnt/my data");
        assert_eq!(unescape_octal("a\\134b\\012"), "a\\b\n");
        assert_eq!(unescape_octal("trailing\\01"), "trailing\\01");
    }

    #[test]
    fn malformed_lines_are_skipped() {
        assert!(parse("garbage\n25 1 253:0 /\n").is_empty());
    }

    #[test]
    fn tmpfs_sizes() {
        assert_eq!(tmpfs_size("65536k"), Some(64 << 20));
        assert_eq!(tmpfs_size("16G"), Some(16 << 30));
        assert_eq!(tmpfs_size("4096"), Some(4096));
        assert_eq!(tmpfs_size("50%"), None);
        assert_eq!(tmpfs_size(""), None);
        assert_eq!(tmpfs_size("99999999999999999999k"), None);
    }
}
