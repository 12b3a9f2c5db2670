//! User names for uids, from the root's /etc/passwd (read once, on first use).

use std::collections::HashMap;

use crate::probe::root::Root;

#[derive(Debug, Default)]
pub struct Users {
    names: Option<HashMap<u32, String>>,
    root: Root,
}

impl Users {
    pub fn new(root: &Root) -> Self {
        Users {
            names: None,
            root: root.clone(),
        }
    }

    pub fn name(&mut self, uid: u32) -> Option<String> {
        let root = &self.root;
        let names = self.names.get_or_insert_with(|| {
            root.read_optional("/etc/passwd")
                .ok()
                .flatten()
                .map(|t| parse_passwd(&t))
                .unwrap_or_default()
        });
        names.get(&uid).cloned()
    }
}

fn parse_passwd(text: &str) -> HashMap<u32, String> {
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
        let m = super::parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\nbad\nnobody:x:65534:65534::/:/usr/sbin/nologin\n",
        );
        assert_eq!(m[&0], "root");
        assert_eq!(m[&65534], "nobody");
        assert_eq!(m.len(), 2);
    }
}
