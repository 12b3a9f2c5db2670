//! User names for uids, from the root's /etc/passwd (read once, on first use, and
//! shared by every clone: the threads of one read of many processes parse it once).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::parse::passwd;
use crate::probe::root::Root;

#[derive(Debug, Default, Clone)]
pub struct Users {
    names: Arc<OnceLock<HashMap<u32, String>>>,
    root: Root,
}

impl Users {
    pub fn new(root: &Root) -> Self {
        Users {
            names: Arc::default(),
            root: root.clone(),
        }
    }

    pub fn name(&self, uid: u32) -> Option<String> {
        let names = self.names.get_or_init(|| {
            self.root
                .read_optional("/etc/passwd")
                .ok()
                .flatten()
                .map(|t| passwd::parse(&t))
                .unwrap_or_default()
        });
        names.get(&uid).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_read_of_passwd() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("etc")).expect("mkdir");
        let passwd = dir.path().join("etc/passwd");
        std::fs::write(&passwd, "alice:x:1000:1000::/home/alice:/bin/sh\n").expect("write");
        let users = Users::new(&Root::at(dir.path()));
        let copy = users.clone();
        assert_eq!(users.name(1000).as_deref(), Some("alice"));
        // The clone sees what the first lookup read, not the file as it is now.
        std::fs::write(&passwd, "bob:x:1000:1000::/home/bob:/bin/sh\n").expect("write");
        assert_eq!(copy.name(1000).as_deref(), Some("alice"));
        assert_eq!(copy.name(1001), None);
    }
}
