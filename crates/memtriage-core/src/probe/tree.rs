//! A process and all its descendants, parents before children, with totals; the
//! findings about them are the caller's (`usecase::inspect::tree`).

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::model::tree::{TreeNode, TreeSnapshot, TreeTotals};
use crate::probe::process::{default_threads, parent_links, read_many, Detail};
use crate::probe::root::Root;

/// Descendants that exit while the tree is read are left out; the root exiting is an
/// error. The processes are read on all cores, like `--all`.
pub fn read(root: &Root, detail: Detail, root_pid: i32) -> Result<TreeSnapshot> {
    let links = parent_links(root)?;
    if !links.iter().any(|(pid, _)| *pid == root_pid) {
        return Err(Error::NoSuchProcess { pid: root_pid });
    }
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (pid, ppid) in links {
        if pid != ppid {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut order: Vec<(i32, usize)> = Vec::new();
    let mut stack = vec![(root_pid, 0usize)];
    while let Some((pid, depth)) = stack.pop() {
        order.push((pid, depth));
        if let Some(kids) = children.get(&pid) {
            for kid in kids.iter().rev() {
                stack.push((*kid, depth + 1));
            }
        }
    }
    let pids: Vec<i32> = order.iter().map(|(pid, _)| *pid).collect();
    let mut nodes = Vec::with_capacity(order.len());
    for ((pid, depth), result) in
        order
            .into_iter()
            .zip(read_many(root, detail, &pids, default_threads()))
    {
        match result {
            Ok(process) => nodes.push(TreeNode { depth, process }),
            Err(Error::NoSuchProcess { .. }) if pid != root_pid => {}
            Err(e) => return Err(e),
        }
    }
    let totals = totals(&nodes);
    // Judging is not a probe's job: the use case adds the findings.
    Ok(TreeSnapshot {
        root: root_pid,
        nodes,
        totals,
        findings: Vec::new(),
        killers: Vec::new(),
    })
}

fn totals(nodes: &[TreeNode]) -> TreeTotals {
    let mut t = TreeTotals {
        processes: nodes.len(),
        ..TreeTotals::default()
    };
    for n in nodes {
        let p = &n.process;
        if p.kernel_thread {
            continue;
        }
        t.rss_sum += p.rss().unwrap_or(0);
        t.swap += p.swap().unwrap_or(0);
        match &p.rollup {
            Some(r) => {
                t.pss = Some(t.pss.unwrap_or(0) + r.pss);
                t.uss_sum = Some(t.uss_sum.unwrap_or(0) + r.uss());
            }
            None => t.unreadable += 1,
        }
    }
    t
}
