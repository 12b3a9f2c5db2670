//! `/etc/passwd`: user names by uid.

use std::collections::HashMap;

/// `name:password:uid:...`; lines without a numeric uid are skipped.
pub fn parse(text: &str) -> HashMap<u32, String> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split(':');
            let name = f.next()?;
            let uid = f.nth(1)?.parse().ok()?;
            Some((uid, name.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwd_lines_map_uid_to_name() {
        let m = super::parse(
            "root:x:0:0:root:/root:/bin/bash\nbad\nnobody:x:65534:65534::/:/usr/sbin/nologin\n",
        );
        assert_eq!(m[&0], "root");
        assert_eq!(m[&65534], "nobody");
        assert_eq!(m.len(), 2);
    }
}
