//! `/proc/PID/limits`.

use crate::model::system::Rlimit;

/// One line, e.g. `Max locked memory  8388608  8388608  bytes`. The columns are
/// fixed-width but their widths are not an ABI; the name is matched and the two
/// values after it taken.
pub fn limit(text: &str, name: &str) -> Option<Rlimit> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut values = line[name.len()..].split_ascii_whitespace();
    let value = |v: Option<&str>| -> Option<Option<u64>> {
        match v? {
            "unlimited" => Some(None),
            n => n.parse().ok().map(Some),
        }
    };
    Some(Rlimit {
        soft: value(values.next())?,
        hard: value(values.next())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_lines() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max open files            1024                 1048576              files     \n\
                    Max locked memory         unlimited            unlimited            bytes     \n";
        assert_eq!(
            limit(text, "Max open files"),
            Some(Rlimit {
                soft: Some(1024),
                hard: Some(1048576)
            })
        );
        assert_eq!(
            limit(text, "Max locked memory"),
            Some(Rlimit {
                soft: None,
                hard: None
            })
        );
        assert_eq!(limit("Max open files  12\n", "Max open files"), None);
        assert_eq!(limit("Max open files x y files\n", "Max open files"), None);
    }
}
