//! Tables whose rows hold nothing a prefilter could find: `vmstat`'s numbers under its
//! header, and the task table the kernel's OOM killer dumps before it kills
//! (`[  pid  ]   uid  tgid total_vm      rss … name`). The header opens the table; each
//! row is read while rows last.
//!
//! The task table is summed by command, so a finding can say who held the memory at
//! the kill (16 `python` workers with 25 GiB between them), not only who was killed.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;

use super::process_table::Columns;
use super::rules::{host::PROCESS_ROW, oom::TASK_TABLE, FailureClass, RULES};
use super::LogMatch;
use crate::model::units::iec;

/// The kernel prints rss in pages; 4 KiB on x86-64 and most arm64 kernels.
const PAGE: u64 = 4096;
/// Distinct commands summed; a table of more is summed into the ones seen first.
const MAX_COMMANDS: usize = 4096;
/// Commands named in the summary.
const SHOWN: usize = 5;

#[derive(Debug, Clone)]
pub(super) struct Table {
    rows_rule: usize,
    line_no: u64,
    line: String,
    /// For the task table: by command, (tasks, rss pages).
    tasks: BTreeMap<String, (u64, u64)>,
    rows: u64,
    /// For a table of processes with their memory: where its columns are.
    columns: Option<Columns>,
    /// Its header stands in a page, or under a sentence that introduces an example:
    /// its rows are read, and recorded as no one's memory.
    quoted: bool,
    /// The series its rows have read (a name-keyed table may name one twice).
    series_read: BTreeSet<String>,
}

/// What a line under a table of processes is.
pub(super) enum ProcessRow {
    Reading(LogMatch),
    /// A row, but no reading: a process named again, or a table a page quotes.
    Skipped,
    NotARow,
}

impl Table {
    /// A table opened by its header line (where, as written) and that line's message;
    /// `quoted` where a page quotes it (see [`Table::process_row`]).
    pub(super) fn new(
        rows_rule: usize,
        (line_no, line): (u64, &str),
        msg: &str,
        quoted: bool,
    ) -> Self {
        let mut table = Table {
            columns: None,
            quoted: false,
            series_read: BTreeSet::new(),
            rows_rule,
            line_no,
            line: line.to_string(),
            tasks: BTreeMap::new(),
            rows: 0,
        };
        if table.is_process_table() {
            // Read from the message, without a prefix a tool put on every line, as
            // the rows are.
            table.columns = Columns::from_header(msg);
            table.quoted = quoted;
        }
        table
    }

    pub(super) fn line_no(&self) -> u64 {
        self.line_no
    }

    pub(super) fn rows_rule(&self) -> usize {
        self.rows_rule
    }

    pub(super) fn is_task_table(&self) -> bool {
        RULES
            .get(self.rows_rule)
            .is_some_and(|r| r.id == TASK_TABLE)
    }

    /// Whether this is a table of processes with their memory ([`Columns`]).
    pub(super) fn is_process_table(&self) -> bool {
        RULES
            .get(self.rows_rule)
            .is_some_and(|r| r.id == PROCESS_ROW)
    }

    /// A line under a table of processes: one reading of its process's memory.
    pub(super) fn process_row(&mut self, line_no: u64, line: &str, msg: &str) -> ProcessRow {
        let Some(reading) = self.columns.as_ref().and_then(|c| c.reading(msg)) else {
            return ProcessRow::NotARow;
        };
        if self.quoted || !self.series_read.insert(reading.series.clone()) {
            return ProcessRow::Skipped;
        }
        ProcessRow::Reading(LogMatch {
            class: FailureClass::MemoryGrowth,
            rule: PROCESS_ROW,
            line_no,
            line: line.trim_end().to_string(),
            captures: vec![
                ("series".to_string(), reading.series),
                ("bytes".to_string(), reading.bytes.to_string()),
                ("snapshot".to_string(), "yes".to_string()),
            ],
        })
    }

    /// A row of the task table: `false` when the line is not one.
    pub(super) fn task_row(&mut self, row: &Regex, msg: &str) -> bool {
        let Some(c) = row.captures(msg) else {
            return false;
        };
        let (Some(rss), Some(name)) = (
            c.name("rss").and_then(|r| r.as_str().parse::<u64>().ok()),
            c.name("name"),
        ) else {
            return false;
        };
        self.rows += 1;
        let name = name.as_str().to_string();
        if self.tasks.len() < MAX_COMMANDS || self.tasks.contains_key(&name) {
            let e = self.tasks.entry(name).or_default();
            e.0 += 1;
            e.1 = e.1.saturating_add(rss);
        }
        true
    }

    /// The task table as one match: the largest holders by command. `None` for other
    /// tables, and for a task table without rows.
    pub(super) fn summary(&self) -> Option<LogMatch> {
        if !self.is_task_table() || self.rows == 0 {
            return None;
        }
        let mut by_size: Vec<(&String, &(u64, u64))> = self.tasks.iter().collect();
        by_size.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(b.0)));
        let total: u64 = self
            .tasks
            .values()
            .map(|(_, p)| p.saturating_mul(PAGE))
            .sum();
        let holders: Vec<String> = by_size
            .iter()
            .take(SHOWN)
            .map(|(name, (n, pages))| {
                let size = iec(pages.saturating_mul(PAGE));
                if *n > 1 {
                    format!("{name} ×{n}: {size}")
                } else {
                    format!("{name}: {size}")
                }
            })
            .collect();
        let mut captures = vec![
            ("holders".to_string(), holders.join(", ")),
            ("tasks".to_string(), self.rows.to_string()),
            ("table_rss".to_string(), iec(total)),
        ];
        if let Some((name, _)) = by_size.first() {
            captures.push(("largest_holder".to_string(), (*name).clone()));
        }
        Some(LogMatch {
            class: FailureClass::OomKill,
            rule: TASK_TABLE,
            line_no: self.line_no,
            line: self.line.clone(),
            captures,
        })
    }
}
