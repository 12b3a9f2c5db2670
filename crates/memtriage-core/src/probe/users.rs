//! User names for uids, from the root's /etc/passwd (read once, on first use).

use std::collections::HashMap;

use crate::parse::passwd;
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
                .map(|t| passwd::parse(&t))
                .unwrap_or_default()
        });
        names.get(&uid).cloned()
    }
}
