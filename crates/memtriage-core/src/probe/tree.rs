//! A process and all its descendants, parents before children, with totals; the
//! findings about them are the caller's (`usecase::inspect::tree`).

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::model::tree::{TreeNode, TreeSnapshot, TreeTotals};
use crate::probe::process::{default_threads, parent_links, Detail, Link, ProcessReader};
use crate::probe::root::Root;

/// Descendants that exit while the tree is read are left out; the root exiting is an
/// error. The processes are read on all cores, like `--all`. `rollup_elsewhere` is
/// told the tree's processes (parent and layout, from the `stat` read to find the
/// tree) and names the processes whose rollup the
/// caller reads itself (from their whole smaps, which it reads anyway): their
/// `smaps_rollup` is not read, so no page table is walked twice. Their rollups are
/// `None` here and the totals count them once the caller has set them ([`totals`]).
pub fn read(
    root: &Root,
    detail: Detail,
    root_pid: i32,
    rollup_elsewhere: impl FnOnce(&[Link]) -> HashSet<i32>,
) -> Result<TreeSnapshot> {
    let links: HashMap<i32, Link> = parent_links(root)?
        .into_iter()
        .map(|l| (l.pid, l))
        .collect();
    if !links.contains_key(&root_pid) {
        return Err(Error::NoSuchProcess { pid: root_pid });
    }
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for l in links.values() {
        if l.pid != l.ppid {
            children.entry(l.ppid).or_default().push(l.pid);
        }
    }
    for kids in children.values_mut() {
        kids.sort_unstable();
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
    let members: Vec<Link> = order
        .iter()
        .filter_map(|(pid, _)| links.get(pid).copied())
        .collect();
    let elsewhere = match detail.rollup {
        true => rollup_elsewhere(&members),
        false => HashSet::new(),
    };
    let (skipped, read_here): (Vec<i32>, Vec<i32>) = order
        .iter()
        .map(|(pid, _)| *pid)
        .partition(|pid| elsewhere.contains(pid));
    let mut reader = ProcessReader::new(root, detail);
    let mut without_rollup = reader.with_detail(Detail {
        rollup: false,
        ..detail
    });
    let mut read: HashMap<i32, Result<_>> = read_here
        .iter()
        .copied()
        .zip(reader.read_many(&read_here, default_threads()))
        .chain(
            skipped
                .iter()
                .copied()
                .zip(without_rollup.read_many(&skipped, default_threads())),
        )
        .collect();
    let mut nodes = Vec::with_capacity(order.len());
    for (pid, depth) in order {
        let Some(result) = read.remove(&pid) else {
            continue;
        };
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

/// The tree's sums: RSS, swap, and PSS and USS where every process has a rollup.
pub fn totals(nodes: &[TreeNode]) -> TreeTotals {
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
