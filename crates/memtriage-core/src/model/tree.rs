//! A process and all its descendants.

use serde::{Deserialize, Serialize};

use super::finding::Finding;
use super::process::ProcessSnapshot;

pub const TREE_SCHEMA: &str = "memtriage.tree/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeNode {
    /// 0 for the root, 1 for its children, and so on.
    pub depth: usize,
    pub process: ProcessSnapshot,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeTotals {
    pub processes: usize,
    /// Sum of RSS: what naive tools show; counts shared pages once per process.
    pub rss_sum: u64,
    /// Sum of PSS: the tree's true footprint (shared pages split between sharers),
    /// over the processes it could be read of; `None` when it could be read of none.
    pub pss: Option<u64>,
    /// Sum of USS: memory that only one process of the tree maps; `None` as for PSS.
    pub uss_sum: Option<u64>,
    pub swap: u64,
    /// Processes whose PSS/USS could not be read (not in the sums).
    pub unreadable: usize,
    /// GPU memory the tree's processes hold, summed; `None` when unknown (no NVML).
    #[serde(default)]
    pub gpu: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeSnapshot {
    pub root: i32,
    /// Depth-first, parents before children.
    pub nodes: Vec<TreeNode>,
    pub totals: TreeTotals,
    pub findings: Vec<Finding>,
    /// The OOM killers that may end the tree, first to act first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub killers: Vec<super::killers::KillerReach>,
}
