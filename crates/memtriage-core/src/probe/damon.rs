//! Proactive reclaim: DAMON schemes that page out memory once it has been idle for a
//! while, memory pressure or not. Cloud VMs run them to hand memory back to the host
//! (Firecracker guests, some managed Kubernetes nodes). Page cache is memory too: a
//! model file warmed before the first request and then idle is read from disk again.
//!
//! Two interfaces: the DAMON sysfs admin tree (`/sys/kernel/mm/damon/admin`, 5.18+),
//! where each running kdamond's contexts hold schemes with an action and an access
//! pattern, and the DAMON_RECLAIM module's parameters (5.16+).

use crate::error::{Error, Result};
use crate::model::system::ProactiveReclaim;
use crate::probe::root::Root;

const ADMIN: &str = "/sys/kernel/mm/damon/admin/kdamonds";
const RECLAIM_MODULE: &str = "/sys/module/damon_reclaim/parameters";

/// Every reclaiming agent that is running now; files that are absent mean no DAMON.
/// An error says why the files could not be read (they are root's alone, mode 0600).
pub fn read(root: &Root) -> Result<Vec<ProactiveReclaim>> {
    let mut found = admin_schemes(root)?;
    found.extend(reclaim_module(root)?);
    Ok(found)
}

/// A file's trimmed text; `None` when it does not exist (no DAMON in this kernel).
fn text(root: &Root, rel: &str) -> Result<Option<String>> {
    let path = root.path(rel);
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok(Some(t.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

fn number(root: &Root, rel: &str) -> Result<Option<u64>> {
    Ok(text(root, rel)?.and_then(|t| t.parse().ok()))
}

fn reads(root: &Root, rel: &str, value: &str) -> Result<bool> {
    Ok(text(root, rel)?.is_some_and(|v| v == value))
}

/// The numbered subdirectories `dir/0`, `dir/1`, … that `dir/count` announces.
fn numbered(root: &Root, dir: &str, count: &str) -> Result<Vec<String>> {
    let n = number(root, &format!("{dir}/{count}"))?.unwrap_or(0);
    Ok((0..n).map(|i| format!("{dir}/{i}")).collect())
}

fn admin_schemes(root: &Root) -> Result<Vec<ProactiveReclaim>> {
    let mut found = Vec::new();
    for kdamond in numbered(root, ADMIN, "nr_kdamonds")? {
        if !reads(root, &format!("{kdamond}/state"), "on")? {
            continue;
        }
        for context in numbered(root, &format!("{kdamond}/contexts"), "nr_contexts")? {
            let operations =
                text(root, &format!("{context}/operations"))?.unwrap_or_else(|| "unknown".into());
            let aggregation_us = number(
                root,
                &format!("{context}/monitoring_attrs/intervals/aggr_us"),
            )?;
            for scheme in numbered(root, &format!("{context}/schemes"), "nr_schemes")? {
                if !reads(root, &format!("{scheme}/action"), "pageout")? {
                    continue;
                }
                // A region's age counts aggregation intervals without a change in
                // how often it is accessed.
                let min_age = number(root, &format!("{scheme}/access_pattern/age/min"))?;
                found.push(ProactiveReclaim {
                    source: root.path(&scheme).display().to_string(),
                    operations: operations.clone(),
                    min_idle_seconds: min_age
                        .zip(aggregation_us)
                        .map(|(age, us)| age as f64 * us as f64 / 1e6),
                });
            }
        }
    }
    Ok(found)
}

fn reclaim_module(root: &Root) -> Result<Option<ProactiveReclaim>> {
    if !reads(root, &format!("{RECLAIM_MODULE}/enabled"), "Y")? {
        return Ok(None);
    }
    Ok(Some(ProactiveReclaim {
        source: root.path(RECLAIM_MODULE).display().to_string(),
        operations: "damon_reclaim".into(),
        min_idle_seconds: number(root, &format!("{RECLAIM_MODULE}/min_age"))?
            .map(|us| us as f64 / 1e6),
    }))
}

#[cfg(test)]
mod tests {
    use super::read;
    use crate::probe::root::Root;
    use std::path::Path;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel.trim_start_matches('/'));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The layout of a Firecracker guest: one kdamond over physical memory, a
    /// `pageout` scheme for regions idle 12 aggregation intervals of 5 s.
    fn kdamond(root: &Path, state: &str, action: &str) {
        let k = "sys/kernel/mm/damon/admin/kdamonds";
        write(root, &format!("{k}/nr_kdamonds"), "1\n");
        write(root, &format!("{k}/0/state"), &format!("{state}\n"));
        write(root, &format!("{k}/0/contexts/nr_contexts"), "1\n");
        write(root, &format!("{k}/0/contexts/0/operations"), "paddr\n");
        write(
            root,
            &format!("{k}/0/contexts/0/monitoring_attrs/intervals/aggr_us"),
            "5000000\n",
        );
        write(root, &format!("{k}/0/contexts/0/schemes/nr_schemes"), "1\n");
        let s = format!("{k}/0/contexts/0/schemes/0");
        write(root, &format!("{s}/action"), &format!("{action}\n"));
        write(root, &format!("{s}/access_pattern/age/min"), "12\n");
    }

    #[test]
    fn a_running_pageout_scheme_is_found_with_its_idle_time() {
        let dir = tempfile::tempdir().unwrap();
        kdamond(dir.path(), "on", "pageout");
        let found = read(&Root::at(dir.path())).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].operations, "paddr");
        assert_eq!(found[0].min_idle_seconds, Some(60.0));
        assert!(found[0].source.ends_with("kdamonds/0/contexts/0/schemes/0"));
    }

    #[test]
    fn stopped_kdamonds_and_schemes_that_only_watch_are_not_reclaim() {
        for (state, action) in [("off", "pageout"), ("on", "stat"), ("on", "hugepage")] {
            let dir = tempfile::tempdir().unwrap();
            kdamond(dir.path(), state, action);
            assert!(
                read(&Root::at(dir.path())).unwrap().is_empty(),
                "{state} {action}"
            );
        }
    }

    #[test]
    fn the_damon_reclaim_module_counts_when_enabled() {
        let dir = tempfile::tempdir().unwrap();
        let p = "sys/module/damon_reclaim/parameters";
        write(dir.path(), &format!("{p}/enabled"), "N\n");
        write(dir.path(), &format!("{p}/min_age"), "120000000\n");
        assert!(read(&Root::at(dir.path())).unwrap().is_empty());
        write(dir.path(), &format!("{p}/enabled"), "Y\n");
        let found = read(&Root::at(dir.path())).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].operations, "damon_reclaim");
        assert_eq!(found[0].min_idle_seconds, Some(120.0));
    }

    #[test]
    fn no_damon_at_all_is_nothing_found() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(&Root::at(dir.path())).unwrap().is_empty());
    }

    /// Root's alone (mode 0600) for anyone else: unreadable is not "none".
    #[test]
    fn a_file_that_cannot_be_read_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(
            dir.path()
                .join("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds"),
        )
        .unwrap();
        let err = read(&Root::at(dir.path())).unwrap_err();
        assert!(err.to_string().contains("nr_kdamonds"), "{err}");
    }
}
