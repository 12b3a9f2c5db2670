//! The rules tried on one line: the first that stands takes it, and after a plain
//! kill a later rule may still name who sent it.

use super::captures::standing_match;
use super::engine::{Engine, Pattern};
use super::rules::{self, FailureClass, RULES};
use super::{diff, faulthandler, prose, report, tables, LogMatch, LogScanner};
use crate::model::finding::Severity;

/// What became of a line the rules were tried on.
pub(super) enum Taken {
    /// Rule `.0` took it and its finding was recorded.
    Recorded(usize),
    /// A rule matched text that reports nothing (a page's example, an invented value).
    Silenced,
    Nothing,
}

/// Whether a rule may name the sender of a plain kill on the kill's own line: it tells
/// of an OOM killer's kill (the plain kills' rules hold the OOM killer's class until
/// the text names another; a thread's reading, `I think that this is a out of memory
/// error`, is no kill of its own), and opens no table or block of its own.
fn names_a_killer(rule: &rules::Rule, engine: &Engine, index: usize) -> bool {
    matches!(
        rule.class,
        FailureClass::OomKill | FailureClass::UserspaceOomKill
    ) && rule.severity != Severity::Info
        && !report::is_plain_sigkill(rule.id)
        && engine.table_rows.get(index).copied().flatten().is_none()
        && !faulthandler::starts_block(rule)
}

impl LogScanner {
    /// The first candidate rule from `start` on that stands on the line, recorded; a
    /// rule after a plain kill (`start` > 0) only when it names a killer, and never one
    /// that opens a table or a block.
    pub(super) fn take_line(
        &mut self,
        engine: &Engine,
        candidates: &[bool],
        start: usize,
        (line, msg, line_no): (&str, &str, u64),
    ) -> Taken {
        let sender_only = start > 0;
        for (i, rule) in RULES.iter().enumerate().skip(start) {
            if !candidates.get(i).copied().unwrap_or(false)
                || (sender_only && !names_a_killer(rule, engine, i))
            {
                continue;
            }
            let Ok(Pattern { main: re, optional }) = engine.pattern(i) else {
                continue;
            };
            let mut found = re.captures_iter(msg).peekable();
            if found.peek().is_none() {
                continue;
            }
            if let Some(rows) = engine.table_rows.get(i).copied().flatten() {
                self.close_table();
                let quoted = self.article || prose::quoted_as_example(&self.context);
                self.table = Some(tables::Table::new(rows, (line_no, line), msg, quoted));
            }
            let Some((matched, captures)) = standing_match(found, re, optional, rule.extract, msg)
            else {
                continue;
            };
            if self.article
                || (self.impersonal
                    && rule.severity != Severity::Info
                    && prose::mentioned_not_printed(msg, matched.clone()))
                || prose::quoted_as_example(&self.context)
                || prose::explains_the_error(msg, matched.clone())
                || prose::has_invented_values(line)
                || diff::is_a_diff_line(line, &self.context)
            {
                return Taken::Silenced;
            }
            if faulthandler::starts_block(rule) {
                self.block = Some(faulthandler::Block::new(
                    i,
                    line_no,
                    line.to_string(),
                    captures,
                ));
            } else {
                let m = LogMatch {
                    class: rule.class,
                    rule: rule.id,
                    line_no,
                    line: line.to_string(),
                    captures,
                };
                self.record_or_watch(m, msg);
            }
            return Taken::Recorded(i);
        }
        Taken::Nothing
    }
}
