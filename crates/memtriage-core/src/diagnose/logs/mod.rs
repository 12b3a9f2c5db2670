//! Diagnosis from log text alone: the kernel log, a pod's or Slurm job's output, a
//! training script's stdout and stderr, in the forms people paste them.
//!
//! [`LogScanner`] is streaming and bounded: it takes bytes in chunks of any size (or
//! one line at a time), never holds more than one line's first [`MAX_LINE`] bytes plus
//! a bounded set of matches, and gives the same matches however the input was cut.
//! Recognition is the rule table in `rules` (one file per family, [`RULES`] in match
//! order), built once by `engine` (a rule's regexes when a line first needs them);
//! `report` turns matches into findings,
//! `faulthandler` reads Python crash stacks; this module only moves bytes.
//!
//! The unit of matching is a *segment*: the bytes between two line ends, where `\r`
//! ends a segment as `\n` does (a progress bar rewrites its line with `\r`; CRLF leaves
//! an empty segment). Line numbers count `\n` only, so they agree with `wc -l` and an
//! editor. Only the first [`MAX_LINE`] bytes of a segment are examined.
//!
//! Speed: `prefilter` finds the rules' literals, in any case, in the whole of each
//! chunk at once (SIMD searches of a few anchors, run by `search` over a lower-case
//! copy a block at a time, one part of the chunk per core); a segment without one is
//! never looked at. Only the rare segment that holds one is decoded and tried against
//! its rules' regexes.

mod captures;
mod diff;
mod document;
mod encoding;
mod engine;
mod faulthandler;
mod growth_series;
mod join;
mod line_rules;
mod oops;
mod prefilter;
mod process_table;
mod prose;
mod report;
pub(crate) mod rules;
mod search;
mod tables;
mod windbg;
mod wrap;

use memchr::{memchr2, memrchr2};
use serde::{Serialize, Serializer};

use crate::model::finding::Finding;
use crate::parse::text::escape_bytes;
use captures::push_captures;
use engine::{engine, frame, normalize, task_row, Engine, Pattern};
use join::PendingJoin;
use line_rules::Taken;

pub use engine::{check_prefilter, check_rules, compile_all_rules};
pub use rules::{ClassInfo, FailureClass, CLASSES, RULES};

/// Bytes of a segment examined and kept; a longer line is cut here (at a UTF-8
/// boundary), so a 10 MB line costs no more memory than a short one.
pub const MAX_LINE: usize = 4096;
/// Matches kept per class: the first few (how it started) and the last few (how it
/// ended); the ones between are counted, not kept.
pub const KEEP_FIRST: usize = 8;
pub const KEEP_LAST: usize = 8;

/// The label of the innermost Python frame in a finding's evidence: present when the
/// log held a faulthandler stack.
pub const INNERMOST_FRAME: &str = "frame 1 (innermost)";
/// The label of the innermost of those frames that is the job's own code.
pub const INNERMOST_USER_FRAME: &str = "innermost frame in your code";
/// The label of a frame reading a memory-mapped file, in a bus error's evidence.
pub const MAPPED_FILE_READER: &str = "reading a memory-mapped file in";

/// A Python frame's file and line, as the evidence shows it (`/job/x.py:3 in <module>`).
pub fn frame_location(frame: &str) -> Option<(&str, u32)> {
    let (file, line) = frame.split_once(" in ")?.0.rsplit_once(':')?;
    Some((file, line.parse().ok()?))
}

/// One line a rule recognised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogMatch {
    pub class: FailureClass,
    /// The id of the rule in [`RULES`] that matched.
    pub rule: &'static str,
    /// 1-based, counting `\n`.
    pub line_no: u64,
    /// The line as it was, non-UTF-8 bytes as `\xNN`, cut at [`MAX_LINE`] bytes
    /// (marked with a trailing `…`).
    pub line: String,
    /// What the rule captured, in order; a name may repeat (`frame`, innermost first).
    #[serde(serialize_with = "captures_as_objects")]
    pub captures: Vec<(String, String)>,
}

impl LogMatch {
    /// The first capture called `name`.
    pub fn capture(&self, name: &str) -> Option<&str> {
        self.captures
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every capture called `name`, in order.
    pub fn captures_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.captures
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn captures_as_objects<S: Serializer>(
    captures: &[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Capture<'a> {
        name: &'a str,
        value: &'a str,
    }
    s.collect_seq(captures.iter().map(|(name, value)| Capture { name, value }))
}

/// How many lines each (rule, class) matched, including the ones not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleCount {
    pub rule: &'static str,
    pub class: FailureClass,
    pub count: u64,
    pub first_line: u64,
    pub last_line: u64,
}

/// A segment's first [`MAX_LINE`] bytes, cut where a UTF-8 character starts, and
/// whether it was cut. Reads at most `MAX_LINE + 1` bytes, so a kept partial line of
/// that size decides exactly as the whole line would.
fn clip(seg: &[u8]) -> (&[u8], bool) {
    if seg.len() <= MAX_LINE {
        return (seg, false);
    }
    let mut cut = MAX_LINE;
    while cut > MAX_LINE - 3 && seg[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    (&seg[..cut], true)
}

fn count_newlines(bytes: &[u8]) -> u64 {
    // memchr's iterator counts with SIMD, far faster than a byte loop.
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// Reads log text and recognises failures in it. See the module docs.
#[derive(Debug, Clone)]
pub struct LogScanner {
    source: String,
    bytes: u64,
    newlines: u64,
    /// Bytes seen since the last `\n` (a last line without one still counts).
    since_newline: bool,
    partial: Vec<u8>,
    partial_open: bool,
    block: Option<faulthandler::Block>,
    /// A crash report being read whole (an oops, a bug check: its headline's match held
    /// until it ends), and how many have been.
    report: Option<oops::Watch>,
    reports: usize,
    /// A table whose rows hold no literal, open since its header line.
    table: Option<tables::Table>,
    /// How the bytes are encoded, decided from the first ones (UTF-16 is turned into
    /// UTF-8 before scanning).
    decoder: encoding::Decoder,
    matches: Vec<LogMatch>,
    counts: Vec<RuleCount>,
    /// The OOM kills that freed the most memory, whether kept in `matches` or not.
    largest_kills: Vec<LogMatch>,
    /// A line that held a literal but matched no rule, or the pieces of a line a
    /// terminal cut: the next line is read joined to it.
    pending_join: Option<PendingJoin>,
    had_literal: bool,
    /// The width a terminal hard-wrapped the input at, told from its start.
    wrap: wrap::WrapWidth,
    /// That width, while the region being read is within the input's start.
    wrap_at: Option<usize>,
    /// The input's first line has been read (for an article's title).
    title_read: bool,
    /// The input opens with an article's title: the errors it quotes are examples.
    article: bool,
    /// The input is a pasted issue thread: its first line, a heading over the
    /// author's byline, is the issue's title (the error the poster got), no section.
    issue_title: Option<String>,
    /// The input's head never has its writer speak of themselves (`I`, `my`, `我`):
    /// a page, not a user's report.
    impersonal: bool,
    /// Memory figures the job printed: evidence only as a series (growth), so kept
    /// apart from the matches.
    figures: growth_series::Figures,
    /// The bytes before the line being read ([`from_a_line_start`]).
    context: Vec<u8>,
    /// The input's start, held until the terminal width it shows (if any) is told
    /// from all of it: the answer must not depend on how the input was cut in chunks.
    head: Option<Vec<u8>>,
    /// The last [`CONTEXT_REACH`] bytes of the input read so far, so a line at the start of
    /// a chunk has the context it would have had in one piece.
    recent: Vec<u8>,
    /// `recent` as it was where the open partial line began.
    partial_context: Vec<u8>,
}

/// A line shorter than this was not wrapped by a terminal or a paste.
const WRAP_MIN: usize = 40;

/// Bytes before a matching line looked at for prose that quotes it as an example.
const CONTEXT: usize = 400;
/// How far back the context may reach for the start of the line it would cut: a
/// sentence that introduces a quote (`Seeing intermittent errors like the following`)
/// is read from its first word, whatever prefix made its line long.
const CONTEXT_REACH: usize = 2 * CONTEXT;

/// `context` from the start of its first whole line, where one starts within the
/// last [`CONTEXT_REACH`] bytes; from its last [`CONTEXT`] bytes where none does.
/// Shorter than the reach, it holds all the input before the line, whose start is a
/// line's.
fn from_a_line_start(context: &mut Vec<u8>) {
    let cut = context.len().saturating_sub(CONTEXT);
    if cut == 0 {
        return;
    }
    let whole_input = context.len() < CONTEXT_REACH;
    let from = memchr::memrchr(b'\n', &context[..cut])
        .map_or(if whole_input { 0 } else { cut }, |i| i + 1);
    context.drain(..from);
}

impl Default for LogScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl LogScanner {
    pub fn new() -> Self {
        Self::with_source("log")
    }

    /// `source` names the input in findings' evidence (`train.log:1234`).
    pub fn with_source(source: impl Into<String>) -> Self {
        LogScanner {
            source: source.into(),
            bytes: 0,
            newlines: 0,
            since_newline: false,
            partial: Vec::new(),
            partial_open: false,
            block: None,
            report: None,
            reports: 0,
            table: None,
            decoder: encoding::Decoder::default(),
            matches: Vec::new(),
            counts: Vec::new(),
            largest_kills: Vec::new(),
            pending_join: None,
            wrap: wrap::WrapWidth::default(),
            wrap_at: None,
            title_read: false,
            article: false,
            issue_title: None,
            impersonal: false,
            had_literal: false,
            figures: growth_series::Figures::default(),
            context: Vec::new(),
            recent: Vec::new(),
            partial_context: Vec::new(),
            head: Some(Vec::new()),
        }
    }

    /// A program's output read as it is written (`run`'s streams): what is seen is
    /// matched at once, and no terminal cut its lines, so no width is looked for.
    pub fn live(source: impl Into<String>) -> Self {
        let mut scanner = Self::with_source(source);
        scanner.head = None;
        scanner.wrap.refute();
        scanner
    }

    /// Bytes fed so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Lines fed so far: each `\n`, and a last line without one.
    pub fn lines(&self) -> u64 {
        self.newlines + u64::from(self.since_newline)
    }

    /// One line without its `\n`. A partial line left by [`feed`](Self::feed) is
    /// completed by it.
    #[cfg(test)]
    pub fn feed_line(&mut self, line: &[u8]) {
        self.feed(line);
        self.feed(b"\n");
    }

    /// Bytes as they come, cut anywhere. UTF-8 (a byte-order mark is skipped), any
    /// ASCII-compatible encoding (GBK, Latin-1: the messages are ASCII), or UTF-16
    /// (PowerShell's default), told from the first bytes.
    pub fn feed(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.bytes += chunk.len() as u64;
        match self.decoder.decode(chunk) {
            encoding::Decoded::Same(bytes) => self.feed_utf8(bytes),
            encoding::Decoded::Converted(text) => self.feed_utf8(&text),
        }
    }

    fn feed_utf8(&mut self, chunk: &[u8]) {
        let Some(head) = &mut self.head else {
            self.scan_chunk(chunk);
            return;
        };
        head.extend_from_slice(chunk);
        // The whole sample and the end of the line it ends in.
        let held_enough =
            head.len() > wrap::SAMPLE && memchr::memchr(b'\n', &head[wrap::SAMPLE..]).is_some();
        if held_enough {
            self.release_head();
        }
    }

    /// Reads the input's start held so far.
    fn release_head(&mut self) {
        if let Some(head) = self.head.take() {
            self.scan_chunk(&head);
        }
    }

    fn scan_chunk(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.since_newline = match memchr::memrchr(b'\n', chunk) {
            Some(i) => i + 1 < chunk.len(),
            None => true,
        };
        let Ok(engine) = engine() else {
            self.newlines += count_newlines(chunk);
            return;
        };
        let mut rest = chunk;
        if self.partial_open {
            let Some(i) = memchr2(b'\n', b'\r', rest) else {
                self.keep_partial(rest);
                self.remember(rest);
                return;
            };
            self.keep_partial(&rest[..i]);
            let seg = std::mem::take(&mut self.partial);
            self.context = std::mem::take(&mut self.partial_context);
            from_a_line_start(&mut self.context);
            self.segment(engine, &seg);
            self.context.clear();
            self.partial = seg;
            self.partial.clear();
            self.partial_open = false;
            if rest[i] == b'\n' {
                self.newlines += 1;
            }
            self.remember(&rest[..=i]);
            rest = &rest[i + 1..];
        }
        let (complete, tail) = match memrchr2(b'\n', b'\r', rest) {
            Some(j) => rest.split_at(j + 1),
            None => (&rest[..0], rest),
        };
        self.scan_complete(engine, complete);
        self.remember(complete);
        if !tail.is_empty() {
            self.partial_context.clone_from(&self.recent);
            self.keep_partial(tail);
            self.remember(tail);
            self.partial_open = true;
        }
    }

    /// The [`CONTEXT`] bytes before `start` in `region` ([`from_a_line_start`]),
    /// reaching back into earlier input where the region begins too near, as they
    /// would be in one piece.
    fn set_context(&mut self, region: &[u8], start: usize) {
        self.context.clear();
        let before = &region[start.saturating_sub(CONTEXT_REACH)..start];
        if before.len() < CONTEXT_REACH {
            let earlier = CONTEXT_REACH - before.len();
            let r = &self.recent;
            self.context
                .extend_from_slice(&r[r.len().saturating_sub(earlier)..]);
        }
        self.context.extend_from_slice(before);
        from_a_line_start(&mut self.context);
    }

    /// Keeps the last [`CONTEXT_REACH`] bytes of the input, `bytes` being the next read.
    fn remember(&mut self, bytes: &[u8]) {
        let keep = &bytes[bytes.len().saturating_sub(CONTEXT_REACH)..];
        self.recent.extend_from_slice(keep);
        let excess = self.recent.len().saturating_sub(CONTEXT_REACH);
        self.recent.drain(..excess);
    }

    /// The end of the input: a last line without `\n` is examined, and a faulthandler
    /// block still open is closed. Feeding more afterwards goes on as a new line.
    pub fn finish(&mut self) {
        let Ok(engine) = engine() else {
            return;
        };
        if let Some(text) = self.decoder.finish() {
            self.feed_utf8(&text);
        }
        self.release_head();
        if self.partial_open {
            let seg = std::mem::take(&mut self.partial);
            self.context = std::mem::take(&mut self.partial_context);
            from_a_line_start(&mut self.context);
            self.segment(engine, &seg);
            self.context.clear();
            self.partial_open = false;
        }
        self.read_unread_pieces(engine);
        self.close_block();
        self.close_report();
        self.close_table();
    }

    /// What was recognised, in input order; at most [`KEEP_FIRST`] + [`KEEP_LAST`] per
    /// class. A faulthandler block still open (its frames may go on) appears once it
    /// ends or at [`finish`](Self::finish).
    pub fn matches(&self) -> &[LogMatch] {
        &self.matches
    }

    /// How many lines each rule matched, kept or not, in the order first seen.
    pub fn rule_counts(&self) -> &[RuleCount] {
        &self.counts
    }

    /// The diagnosis: one finding per class seen, most severe first, then in the order
    /// the classes first appeared.
    pub fn findings(&self) -> Vec<Finding> {
        let open = self.block.as_ref().map(faulthandler::Block::to_match);
        let open = open.or_else(|| self.report.as_ref().map(oops::Watch::to_match));
        let table = self.table.as_ref().and_then(tables::Table::summary);
        let open: Vec<LogMatch> = open
            .into_iter()
            .chain(table)
            .chain(self.figures.in_order())
            .collect();
        report::findings(
            &self.matches,
            &open,
            &self.counts,
            &self.largest_kills,
            &self.source,
        )
    }

    fn keep_partial(&mut self, bytes: &[u8]) {
        let room = (MAX_LINE + 1).saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// `region` ends with a line end. Segments with no literal are skipped wholesale.
    fn scan_complete(&mut self, engine: &Engine, region: &[u8]) {
        let mut hits = search::search(engine, region);
        if !self.title_read {
            self.read_title(region);
        }
        let wrapped = self.wrap.sample(region);
        let wrapped_until = wrapped.map_or(0, |(_, bytes)| bytes);
        self.wrap_at = wrapped.map(|(width, _)| width);
        let mut pos = 0;
        while pos < region.len() {
            if pos >= wrapped_until {
                self.wrap_at = None;
            }
            let every_line = self.block.is_some()
                || self.report.is_some()
                || self.table.is_some()
                || self.pending_join.is_some()
                || self.wrap_at.is_some();
            let end = if every_line {
                // Inside a faulthandler block or a table every line counts, literal or
                // not; in a hard-wrapped copy, a literal may be cut between two lines.
                let end = memchr2(b'\n', b'\r', &region[pos..]).map_or(region.len(), |i| pos + i);
                self.set_context(region, pos);
                self.segment(engine, &region[pos..end]);
                self.context.clear();
                end
            } else {
                let Some(hit) = hits.next_hit(pos) else {
                    self.newlines += count_newlines(&region[pos..]);
                    return;
                };

                let start = memrchr2(b'\n', b'\r', &region[pos..hit]).map_or(pos, |i| pos + i + 1);
                let end = memchr2(b'\n', b'\r', &region[hit..]).map_or(region.len(), |i| hit + i);
                self.newlines += count_newlines(&region[pos..start]);
                // A literal past the examined prefix cannot count; one inside it is
                // re-found there, so both paths decide alike.
                // Most prefilter hits are healthy lines that hold a fragment of a
                // literal but no literal: told cheaply, before any decoding.
                let worth_reading = hit - start < MAX_LINE
                    && (self.pending_join.is_some()
                        || engine
                            .literals()
                            .is_ok_and(|ac| ac.is_match(clip(&region[start..end]).0)));
                if worth_reading {
                    self.set_context(region, start);
                    self.segment(engine, &region[start..end]);
                    self.context.clear();
                }
                end
            };
            if region.get(end) == Some(&b'\n') {
                self.newlines += 1;
            }
            pos = end + 1;
        }
    }

    /// Whether the input is a page, a report in its writer's words, or a pasted issue
    /// ([`prose::read_head`]); read again until the input has a non-empty line.
    fn read_title(&mut self, region: &[u8]) {
        if let Some(head) = prose::read_head(region) {
            self.article = head.article;
            self.impersonal = head.impersonal;
            self.issue_title = head.issue_title;
            self.title_read = true;
        }
    }

    /// One segment, through the faulthandler block if one is open, then the rules.
    fn segment(&mut self, engine: &Engine, seg: &[u8]) {
        let (bytes, cut) = clip(seg);
        let line_no = self.newlines + 1;
        if let Some(block) = &mut self.block {
            let text = escape_bytes(bytes);
            let msg = normalize(&text);
            if frame().is_some_and(|re| block.feed(re, &msg)) {
                return;
            }
            self.close_block();
        }
        if let Some(watch) = &mut self.report {
            if !watch.observe(&normalize(&escape_bytes(bytes))) {
                self.close_report();
            }
        }
        if self.table.is_some() {
            if bytes.is_empty() {
                // The empty segment between `\r` and `\n` of a CRLF line.
                return;
            }
            let text = escape_bytes(bytes);
            let msg = normalize(&text);
            if !self.table_row(engine, line_no, &text, &msg) {
                self.close_table();
            } else if !self
                .table
                .as_ref()
                .is_some_and(tables::Table::is_process_table)
            {
                return;
            }
            // A process's row is read by the rules too (kswapd0 at 100% in top's).
        }
        let pending = self.pending_join.take();
        let mut line = escape_bytes(bytes);
        // A terminal cuts at its width, spaces included: a piece is glued with them
        // (kept apart, so most lines, which end in none, are not copied).
        let trailing = line.split_off(line.trim_end().len());
        let piece = |line: &str| format!("{line}{trailing}");
        if cut {
            line.push('…');
        }
        let blank = line.trim().is_empty();
        // A piece of a terminal's full width goes on in the next line, literal or not.
        let columns = wrap::columns(bytes);
        // A line padded with spaces to the width (a pager's, a table's) ended there.
        let cut_by_terminal = self.wrap_at == Some(columns) && !blank && !trailing.ends_with("  ");
        if self.wrap_at.is_some_and(|w| columns > w) {
            self.wrap.refute();
            self.wrap_at = None;
        }
        let Some(pending) = pending else {
            if cut_by_terminal {
                // Read whole before in pieces: the piece alone may match a lesser
                // form of the message (`Xid 45` without `caused by previous Xid 149`).
                let piece = piece(&line);
                self.pending_join = Some(PendingJoin::cut(line_no, piece, line, &self.context));
                return;
            }
            if !self.try_rules(engine, bytes, &line, line_no)
                && !blank
                && self.had_literal
                && line.len() >= WRAP_MIN
            {
                self.pending_join = Some(PendingJoin::unmatched(line_no, line, &self.context));
            }
            return;
        };
        if blank {
            // An empty segment between (CRLF) keeps the wrapped line waiting.
            self.pending_join = Some(pending);
            return;
        }
        if !pending.unread.is_empty() {
            let piece = piece(&line);
            self.join_cut_piece(engine, pending, piece, line, line_no, cut_by_terminal);
            return;
        }
        if self.try_rules(engine, bytes, &line, line_no) {
            return;
        }
        // The next line without the prefix a tool or a quote put on every line,
        // wrapped at a space or mid-word (`illegal me` / `mory access`). At a space
        // first: prose wrapped at words glued would lose them (`was` / `not very
        // effective` read as `wasnot`).
        let rest = normalize(&line);
        let glued = format!("{}{rest}", pending.text);
        let spaced = format!("{} {}", pending.text, rest.trim_start());
        for joined in [&spaced, &glued] {
            if self.try_joined(engine, joined, &pending) {
                return;
            }
        }
    }

    /// The rules over one line (or two joined): `true` when one matched. Sets
    /// `had_literal` when the line held any rule's literal.
    fn try_rules(&mut self, engine: &Engine, bytes: &[u8], line: &str, line_no: u64) -> bool {
        self.had_literal = false;
        let mut candidates = [false; 512];
        let mut any = false;
        let Ok(literals) = engine.literals() else {
            return false;
        };
        for m in literals.find_overlapping_iter(bytes) {
            let literal = engine.literal_text[m.pattern().as_usize()];
            let exact = bytes[m.range()] == *literal.as_bytes();
            for &r in &engine.literal_rules[m.pattern().as_usize()] {
                if RULES[r].exact_case && !exact {
                    continue;
                }
                if let Some(c) = candidates.get_mut(r) {
                    *c = true;
                    any = true;
                }
            }
        }
        if !any {
            return false;
        }
        self.had_literal = true;
        let msg = normalize(line);
        if prose::is_markdown_heading(&msg) && self.issue_title.as_deref() != Some(line.trim()) {
            return false;
        }
        match self.take_line(engine, &candidates, 0, (line, &msg, line_no)) {
            // A plain kill and its sender told on the same line (`Killed … OOMKilled (exit
            // code 137)`, `killed by Kubernetes with exit code 137 because of High Memory
            // Usage`): the kill takes the line, and a later rule may name who sent it.
            Taken::Recorded(i) if report::is_plain_sigkill(RULES[i].id) => {
                self.take_line(engine, &candidates, i + 1, (line, &msg, line_no));
                return true;
            }
            Taken::Recorded(_) | Taken::Silenced => return true,
            Taken::Nothing => {}
        }
        // A table header matched without a finding of its own.
        self.table.as_ref().is_some_and(|t| t.line_no() == line_no)
    }

    /// A row of the open table: `false` when the line is not one (the table ended).
    fn table_row(&mut self, engine: &Engine, line_no: u64, line: &str, msg: &str) -> bool {
        let Some(table) = &mut self.table else {
            return false;
        };
        if table.is_task_table() {
            return task_row().is_some_and(|re| table.task_row(re, msg));
        }
        if table.is_process_table() {
            let row = table.process_row(line_no, line, msg);
            let is_row = !matches!(row, tables::ProcessRow::NotARow);
            if let tables::ProcessRow::Reading(m) = row {
                self.record(m);
            }
            return is_row;
        }
        let rule_index = table.rows_rule();
        let Some(rule) = RULES.get(rule_index) else {
            return false;
        };
        let Ok(Pattern { main: re, .. }) = engine.pattern(rule_index) else {
            return false;
        };
        let Some(caps) = re.captures(msg) else {
            return false;
        };
        let mut captures = Vec::new();
        push_captures(re, &caps, &mut captures);
        if rule
            .extract
            .is_none_or(|extract| extract(msg, &mut captures))
        {
            self.record(LogMatch {
                class: rule.class,
                rule: rule.id,
                line_no,
                line: line.trim_end().to_string(),
                captures,
            });
        }
        true
    }

    fn close_table(&mut self) {
        if let Some(m) = self.table.take().and_then(|t| t.summary()) {
            self.record(m);
        }
    }

    /// An oops's headline is held while the lines after it tell what faulted.
    fn record_or_watch(&mut self, m: LogMatch, msg: &str) {
        if self.report.is_some() || self.reports >= oops::MAX_REPORTS {
            return self.record(m);
        }
        match oops::Watch::new(m, msg) {
            Ok(mut watch) => {
                self.reports += 1;
                watch.read_context(&self.context);
                self.report = Some(watch);
            }
            Err(m) => self.record(m),
        }
    }

    fn close_report(&mut self) {
        if let Some(watch) = self.report.take() {
            self.record(watch.to_match());
        }
    }

    fn close_block(&mut self) {
        if let Some(block) = self.block.take() {
            self.record(block.to_match());
        }
    }

    fn record(&mut self, m: LogMatch) {
        if m.capture("series").is_some() {
            return self.figures.push(m);
        }
        if m.rule == rules::oom::KILLED_PROCESS {
            self.keep_if_large(&m);
        }
        match self
            .counts
            .iter_mut()
            .find(|c| c.rule == m.rule && c.class == m.class)
        {
            Some(c) => {
                c.count += 1;
                c.last_line = m.line_no;
            }
            None => self.counts.push(RuleCount {
                rule: m.rule,
                class: m.class,
                count: 1,
                first_line: m.line_no,
                last_line: m.line_no,
            }),
        }
        let kept: Vec<usize> = self
            .matches
            .iter()
            .enumerate()
            .filter(|(_, x)| x.class == m.class)
            .map(|(i, _)| i)
            .collect();
        if kept.len() >= KEEP_FIRST + KEEP_LAST {
            // The oldest of the "last few" makes room; the first few stay.
            self.matches.remove(kept[KEEP_FIRST]);
        }
        self.matches.push(m);
    }
}

impl LogScanner {
    /// Keeps the [`LARGEST_KILLS`] kills that freed the most anonymous memory.
    fn keep_if_large(&mut self, m: &LogMatch) {
        let anon = |m: &LogMatch| {
            m.capture("anon_rss_bytes")
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        self.largest_kills.push(m.clone());
        self.largest_kills
            .sort_by(|a, b| anon(b).cmp(&anon(a)).then(a.line_no.cmp(&b.line_no)));
        self.largest_kills.truncate(LARGEST_KILLS);
    }
}

/// OOM kills listed by size in a finding, whatever their number.
pub const LARGEST_KILLS: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_at_a_character_boundary() {
        let mut line = vec![b'a'; MAX_LINE - 1];
        line.extend_from_slice("é€".as_bytes());
        let (c, cut) = clip(&line);
        assert!(cut);
        assert_eq!(c.len(), MAX_LINE - 1);
        assert!(std::str::from_utf8(c).is_ok());
        // Deciding from MAX_LINE + 1 bytes gives what the whole line gives.
        assert_eq!(clip(&line[..MAX_LINE + 1]), (c, true));
    }

    #[test]
    fn a_frame_gives_its_file_and_line() {
        assert_eq!(
            frame_location("/tmp/job.py:2 in <module>  [your code]"),
            Some(("/tmp/job.py", 2))
        );
        assert_eq!(
            frame_location("<string>:12 in crash"),
            Some(("<string>", 12))
        );
        assert_eq!(frame_location("job.py line 3"), None);
    }

    #[test]
    fn candidates_fit_the_table() {
        assert!(RULES.len() <= 512);
    }
}
