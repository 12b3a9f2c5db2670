//! The task table an OOM report prints before its verdict (`[  pid  ]   uid  tgid
//! total_vm      rss … name`, one row per process that could be chosen), reduced to
//! its largest rows: what the machine held at the moment of the kill, in the kernel's
//! own words. Rows are kept as the kernel printed them (without the log prefix).

use super::kmsg::parse_line;

/// Rows kept per table: the largest by resident pages.
pub const ROWS_KEPT: usize = 20;

/// One table per report in `lines`, in order, each its header and its largest rows.
pub fn task_tables<S: AsRef<str>>(lines: &[S]) -> Vec<Vec<String>> {
    let mut tables = Vec::new();
    let mut current: Option<(String, Vec<(u64, String)>)> = None;
    for line in lines {
        let message = parse_line(line.as_ref()).message;
        let message = message.trim();
        if is_header(message) {
            if let Some(t) = current.take() {
                tables.push(largest(t));
            }
            current = Some((message.to_string(), Vec::new()));
            continue;
        }
        let Some((_, rows)) = current.as_mut() else {
            continue;
        };
        match resident_pages(message) {
            Some(rss) => rows.push((rss, message.to_string())),
            None => tables.push(largest(current.take().expect("checked above"))),
        }
    }
    if let Some(t) = current {
        tables.push(largest(t));
    }
    tables
}

fn is_header(message: &str) -> bool {
    message.starts_with('[')
        && message.contains("pid")
        && message.contains("total_vm")
        && message.contains("rss")
}

/// A row's `rss` column (pages).
fn resident_pages(message: &str) -> Option<u64> {
    row(message).map(|r| r.rss_pages)
}

/// One process of a task table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskRow<'a> {
    pub pid: i32,
    /// The `rss` column, in pages: the fifth number, after pid, uid, tgid, total_vm.
    pub rss_pages: u64,
    /// The last column (it holds no spaces here).
    pub name: &'a str,
}

/// `[   4242]  1000  4242  2000000   900000  8000000        0             0 python3`.
pub fn row(message: &str) -> Option<TaskRow<'_>> {
    let rest = message.strip_prefix('[')?;
    let (pid, rest) = rest.split_once(']')?;
    let pid = pid.trim().parse().ok()?;
    let mut fields = rest.split_whitespace();
    let _uid = fields.next()?;
    let _tgid = fields.next()?.parse::<i64>().ok()?;
    let _total_vm = fields.next()?.parse::<u64>().ok()?;
    let rss_pages = fields.next()?.parse().ok()?;
    Some(TaskRow {
        pid,
        rss_pages,
        name: fields.last().unwrap_or(""),
    })
}

fn largest((header, mut rows): (String, Vec<(u64, String)>)) -> Vec<String> {
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    std::iter::once(header)
        .chain(rows.into_iter().take(ROWS_KEPT).map(|(_, r)| r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_gives_its_header_and_largest_rows_first() {
        let lines = [
            "6,1001,4000000,-;Tasks state (memory values in pages):",
            "6,1002,4000001,-;[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
            "6,1003,4000002,-;[    812]     0   812    10000      300    65536        0             0 sshd",
            "6,1004,4000003,-;[   4242]  1000  4242  2000000   900000  8000000        0             0 python3",
            "6,1005,4000004,-;[   4243]  1000  4243    50000     2000   100000        0             0 bash",
            "6,1006,4000005,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task=python3,pid=4242",
        ];
        let tables = task_tables(&lines);
        assert_eq!(tables.len(), 1);
        assert!(tables[0][0].starts_with("[  pid  ]"));
        assert!(tables[0][1].ends_with("python3"), "{:?}", tables[0]);
        assert!(tables[0][3].ends_with("sshd"));
    }

    #[test]
    fn old_kernels_dmesg_prefixes_and_a_cut_table_never_panic() {
        let lines = [
            "[12345.678] [ pid ]   uid  tgid total_vm      rss nr_ptes nr_pmds swapents oom_score_adj name",
            "[12345.679] [ 1201]     0  1201     4000      500      12       3        0             0 crond",
            "[12345.680] [ 1202]     0  12",
        ];
        let tables = task_tables(&lines);
        assert_eq!(tables, vec![vec![
            "[ pid ]   uid  tgid total_vm      rss nr_ptes nr_pmds swapents oom_score_adj name".to_string(),
            "[ 1201]     0  1201     4000      500      12       3        0             0 crond".to_string(),
        ]]);
        assert!(task_tables(&["", "[", "[ pid ] total_vm rss"]).len() == 1);
    }
}
