//! `/proc/self/mountinfo`: where tmpfs and the cgroup hierarchies are mounted.

use crate::error::Result;
use crate::parse::mountinfo::{self, Mount};
use crate::probe::root::Root;

pub use crate::model::system::MOUNTINFO;

/// Every mount this process sees, in the kernel's order (later mounts stack on
/// earlier ones at the same mount point).
pub fn read(root: &Root) -> Result<Vec<Mount>> {
    Ok(mountinfo::parse(&root.read_string(MOUNTINFO)?))
}
