//! Diagnosis from log text alone: the kernel log, a pod's or Slurm job's output, a
//! training script's stdout and stderr, in the forms people paste them.
//!
//! [`LogScanner`] is streaming and bounded: it takes bytes in chunks of any size (or
//! one line at a time), never holds more than one line's first [`MAX_LINE`] bytes plus
//! a bounded set of matches, and gives the same matches however the input was cut.
//! Recognition is the rule table in `rules` (one file per family, [`RULES`] in match
//! order); `report` turns matches into findings, `faulthandler` reads Python crash
//! stacks; this module only moves bytes.
//!
//! The unit of matching is a *segment*: the bytes between two line ends, where `\r`
//! ends a segment as `\n` does (a progress bar rewrites its line with `\r`; CRLF leaves
//! an empty segment). Line numbers count `\n` only, so they agree with `wc -l` and an
//! editor. Only the first [`MAX_LINE`] bytes of a segment are examined.
//!
//! Speed: all the rules' literals are searched for in the whole of each chunk at once
//! (Aho-Corasick, SIMD-accelerated); a segment without one is never looked at. Only the
//! rare segment that holds one is decoded and tried against its rules' regexes.

mod faulthandler;
mod report;
pub(crate) mod rules;

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use memchr::{memchr2, memrchr2};
use regex::Regex;
use serde::{Serialize, Serializer};

use crate::model::finding::Finding;
use crate::parse::kmsg;
use crate::parse::text::escape_bytes;
pub use rules::{ClassInfo, FailureClass, Rule, CLASSES, RULES};

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

/// The compiled rule table, built once per process.
struct Engine {
    /// Finds where a candidate line is in a whole chunk. Built from the fewest literals
    /// that every rule literal contains one of, so that it stays within the 64
    /// patterns that the SIMD (Teddy) search takes; a hit is only a candidate.
    bulk: AhoCorasick,
    /// Tells which literals a candidate line holds (overlapping search), so only their
    /// rules' regexes run.
    literals: AhoCorasick,
    /// For each literal, the rules that name it.
    literal_rules: Vec<Vec<usize>>,
    /// `None` for a rule whose pattern failed to compile (a unit test holds that none does).
    patterns: Vec<Option<(Regex, Vec<Regex>)>>,
    prefix: Regex,
    frame: Regex,
}

fn engine() -> Option<&'static Engine> {
    static ENGINE: OnceLock<Option<Engine>> = OnceLock::new();
    ENGINE.get_or_init(build_engine).as_ref()
}

fn build_engine() -> Option<Engine> {
    let mut literals: Vec<&'static str> = Vec::new();
    let mut literal_rules: Vec<Vec<usize>> = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        for lit in rule.literals {
            match literals.iter().position(|l| l == lit) {
                Some(j) => literal_rules[j].push(i),
                None => {
                    literals.push(lit);
                    literal_rules.push(vec![i]);
                }
            }
        }
    }
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&literals)
        .ok()?;
    let bulk = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(bulk_literals())
        .ok()?;
    let patterns = RULES
        .iter()
        .map(|r| {
            let main = Regex::new(&rules::expand(r.pattern)).ok()?;
            let optional = r
                .optional
                .iter()
                .filter_map(|p| Regex::new(&rules::expand(p)).ok())
                .collect();
            Some((main, optional))
        })
        .collect();
    Some(Engine {
        bulk,
        literals: ac,
        literal_rules,
        patterns,
        // Prefixes that launchers and log collectors put before a program's own line:
        // torchrun's `[rank3]:` / `[default0]:`, mpirun's `[1,0]<stderr>:`, srun
        // --label's `3: `, and `kubectl logs --timestamps`' RFC 3339 time.
        prefix: Regex::new(
            r"^(?:\[(?:rank|default)?\d+\]:\s?|\[\d+,\d+\]<std(?:out|err)>:\s?|\d{1,5}: |\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+)",
        )
        .ok()?,
        frame: Regex::new(r#"^\s*File "(?P<file>.+)", line (?P<line>\d+) in (?P<func>\S.*?)\s*$"#)
            .ok()?,
    })
}

/// The rules' literals without those that contain another: a line that holds a longer
/// one holds the shorter too.
fn bulk_literals() -> Vec<&'static str> {
    let all: Vec<&'static str> = RULES
        .iter()
        .flat_map(|r| r.literals.iter().copied())
        .collect();
    let mut out: Vec<&'static str> = all
        .iter()
        .copied()
        .filter(|l| !all.iter().any(|o| o != l && l.contains(o)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The message of a line: without a kernel-log, journal or launcher prefix.
fn normalize(engine: &Engine, text: &str) -> String {
    let parsed = kmsg::parse_line(text);
    let mut msg = parsed.message.as_str();
    // A prefix may wrap another (a timestamped pod log of a torchrun rank).
    for _ in 0..3 {
        match engine.prefix.find(msg) {
            Some(m) if m.end() > 0 => msg = &msg[m.end()..],
            _ => break,
        }
    }
    msg.to_string()
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
    matches: Vec<LogMatch>,
    counts: Vec<RuleCount>,
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
            matches: Vec::new(),
            counts: Vec::new(),
        }
    }

    pub fn source(&self) -> &str {
        &self.source
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
    pub fn feed_line(&mut self, line: &[u8]) {
        self.feed(line);
        self.feed(b"\n");
    }

    /// Bytes as they come, cut anywhere.
    pub fn feed(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.bytes += chunk.len() as u64;
        self.since_newline = match memchr::memrchr(b'\n', chunk) {
            Some(i) => i + 1 < chunk.len(),
            None => true,
        };
        let Some(engine) = engine() else {
            self.newlines += count_newlines(chunk);
            return;
        };
        let mut rest = chunk;
        if self.partial_open {
            let Some(i) = memchr2(b'\n', b'\r', rest) else {
                self.keep_partial(rest);
                return;
            };
            self.keep_partial(&rest[..i]);
            let seg = std::mem::take(&mut self.partial);
            self.segment(engine, &seg);
            self.partial = seg;
            self.partial.clear();
            self.partial_open = false;
            if rest[i] == b'\n' {
                self.newlines += 1;
            }
            rest = &rest[i + 1..];
        }
        let (complete, tail) = match memrchr2(b'\n', b'\r', rest) {
            Some(j) => rest.split_at(j + 1),
            None => (&rest[..0], rest),
        };
        self.scan_complete(engine, complete);
        if !tail.is_empty() {
            self.keep_partial(tail);
            self.partial_open = true;
        }
    }

    /// The end of the input: a last line without `\n` is examined, and a faulthandler
    /// block still open is closed. Feeding more afterwards goes on as a new line.
    pub fn finish(&mut self) {
        let Some(engine) = engine() else {
            return;
        };
        if self.partial_open {
            let seg = std::mem::take(&mut self.partial);
            self.segment(engine, &seg);
            self.partial_open = false;
        }
        self.close_block();
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
        report::findings(&self.matches, open.as_ref(), &self.counts, &self.source)
    }

    fn keep_partial(&mut self, bytes: &[u8]) {
        let room = (MAX_LINE + 1).saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// `region` ends with a line end. Segments with no literal are skipped wholesale.
    fn scan_complete(&mut self, engine: &Engine, region: &[u8]) {
        let mut pos = 0;
        while pos < region.len() {
            let end = if self.block.is_some() {
                // Inside a faulthandler block every line counts, literal or not.
                let end = memchr2(b'\n', b'\r', &region[pos..]).map_or(region.len(), |i| pos + i);
                self.segment(engine, &region[pos..end]);
                end
            } else {
                let Some(hit) = engine.bulk.find(&region[pos..]) else {
                    self.newlines += count_newlines(&region[pos..]);
                    return;
                };
                let hit = pos + hit.start();
                let start = memrchr2(b'\n', b'\r', &region[pos..hit]).map_or(pos, |i| pos + i + 1);
                let end = memchr2(b'\n', b'\r', &region[hit..]).map_or(region.len(), |i| hit + i);
                self.newlines += count_newlines(&region[pos..start]);
                // A literal past the examined prefix cannot count; one inside it is
                // re-found there, so both paths decide alike.
                if hit - start < MAX_LINE {
                    self.segment(engine, &region[start..end]);
                }
                end
            };
            if region.get(end) == Some(&b'\n') {
                self.newlines += 1;
            }
            pos = end + 1;
        }
    }

    /// One segment, through the faulthandler block if one is open, then the rules.
    fn segment(&mut self, engine: &Engine, seg: &[u8]) {
        let (bytes, cut) = clip(seg);
        let line_no = self.newlines + 1;
        if let Some(block) = &mut self.block {
            let text = escape_bytes(bytes);
            let msg = normalize(engine, &text);
            if block.feed(&engine.frame, &msg) {
                return;
            }
            self.close_block();
        }
        let mut candidates = [false; 128];
        let mut any = false;
        for m in engine.literals.find_overlapping_iter(bytes) {
            for &r in &engine.literal_rules[m.pattern().as_usize()] {
                if let Some(c) = candidates.get_mut(r) {
                    *c = true;
                    any = true;
                }
            }
        }
        if !any {
            return;
        }
        let mut line = escape_bytes(bytes);
        let msg = normalize(engine, &line);
        for (i, rule) in RULES.iter().enumerate() {
            if !candidates.get(i).copied().unwrap_or(false) {
                continue;
            }
            let Some(Some((re, optional))) = engine.patterns.get(i) else {
                continue;
            };
            let Some(caps) = re.captures(&msg) else {
                continue;
            };
            let mut captures = Vec::new();
            push_captures(re, &caps, &mut captures);
            for opt in optional {
                if let Some(c) = opt.captures(&msg) {
                    push_captures(opt, &c, &mut captures);
                }
            }
            if let Some(extract) = rule.extract {
                extract(&msg, &mut captures);
            }
            let trimmed = line.trim_end().len();
            line.truncate(trimmed);
            if cut {
                line.push('…');
            }
            if faulthandler::starts_block(rule) {
                self.block = Some(faulthandler::Block::new(i, line_no, line, captures));
            } else {
                self.record(LogMatch {
                    class: rule.class,
                    rule: rule.id,
                    line_no,
                    line,
                    captures,
                });
            }
            return;
        }
    }

    fn close_block(&mut self) {
        if let Some(block) = self.block.take() {
            self.record(block.to_match());
        }
    }

    fn record(&mut self, m: LogMatch) {
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

/// Named groups that took part, `_kb` figures as IEC sizes.
fn push_captures(re: &Regex, caps: &regex::Captures<'_>, out: &mut Vec<(String, String)>) {
    for name in re.capture_names().flatten() {
        let Some(v) = caps.name(name) else {
            continue;
        };
        let value = v.as_str().trim();
        if let Some(base) = name.strip_suffix("_kb") {
            if let Some(b) = value.parse::<u64>().ok().and_then(|k| k.checked_mul(1024)) {
                out.push((base.to_string(), crate::model::units::iec(b)));
            }
            continue;
        }
        if !out.iter().any(|(k, _)| k == name) {
            out.push((name.to_string(), value.to_string()));
        }
    }
}

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
    fn prefixes_of_launchers_and_collectors_are_removed() {
        let e = engine().unwrap_or_else(|| unreachable!());
        assert_eq!(
            normalize(e, "[rank3]: Fatal Python error: x"),
            "Fatal Python error: x"
        );
        assert_eq!(normalize(e, "[1,0]<stderr>:Killed"), "Killed");
        assert_eq!(
            normalize(e, "2026-11-21T06:16:42.123456789Z Killed"),
            "Killed"
        );
        assert_eq!(
            normalize(e, "Nov 21 06:16:42 node kernel: [ 12.5] Out of memory: x"),
            "Out of memory: x"
        );
        assert_eq!(
            normalize(e, "loss=0.3 killed_frac=0.1"),
            "loss=0.3 killed_frac=0.1"
        );
    }

    #[test]
    fn bulk_literals_fit_the_simd_search() {
        // aho-corasick's Teddy takes at most 64 patterns; past that the bulk scan falls
        // back to a byte-at-a-time automaton, several times slower. Choose literals
        // that share a substring (`xit code` for `exit code` and `Exit code`) instead.
        let lits = bulk_literals();
        assert!(lits.len() <= 64, "{} bulk literals: {lits:?}", lits.len());
        // Short literals let through too many healthy lines.
        assert!(lits.iter().all(|l| l.len() >= 4), "{lits:?}");
    }

    #[test]
    fn candidates_fit_the_table() {
        assert!(RULES.len() <= 128);
    }
}
