//! The rule table compiled once per process: the prefilter's anchors, the literals
//! that pick a line's rules, each rule's regexes, and the prefixes a line loses before
//! it is matched. Only the prefilter is built before the first line: the rest waits
//! for a line that holds a literal, so a healthy log (and a short one) costs little
//! more than the process's start.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{Regex, RegexBuilder};

use super::{prefilter, rules, RULES};
use crate::parse::kmsg;

/// The compiled rule table, built once per process.
pub(crate) struct Engine {
    /// Finds where a candidate line is in a whole chunk.
    pub(super) prefilter: prefilter::Prefilter,
    /// Tells which literals a candidate line holds (overlapping search), so only their
    /// rules' regexes run: a contiguous NFA built for the first candidate line, then a
    /// DFA once a log has shown many (see [`Engine::literals`]).
    literals: OnceLock<Result<AhoCorasick, String>>,
    literals_dfa: OnceLock<Result<AhoCorasick, String>>,
    /// Candidate lines searched with the NFA so far.
    nfa_searches: AtomicUsize,
    /// For each literal, the rules that name it.
    pub(super) literal_rules: Vec<Vec<usize>>,
    /// Each literal as its rules write it: a rule of [`rules::Rule::exact_case`] takes
    /// only that case.
    pub(super) literal_text: Vec<&'static str>,
    /// Each rule's regexes, compiled when a line first holds one of its literals:
    /// most logs reach few rules, and compiling all of them was most of the time
    /// `explain` took on a short log.
    patterns: Vec<OnceLock<Result<Pattern, String>>>,
    /// For each rule, the index of the rule that reads the table rows it heads.
    pub(super) table_rows: Vec<Option<usize>>,
}

/// Candidate lines searched with the literals' NFA before their DFA is built.
const DFA_AFTER: usize = 4096;

/// A rule's regexes: the one a line must match, and those that add captures.
pub(super) struct Pattern {
    pub(super) main: Regex,
    pub(super) optional: Vec<Regex>,
}

impl Engine {
    /// The searcher of the rules' literals, built on first use. First a contiguous
    /// NFA, built in a fifth of a DFA's time (1.5 ms against 8 on this table): a short
    /// log's few candidate lines never repay a DFA. After [`DFA_AFTER`] candidate lines
    /// the DFA is built and used: a long log's millions search 15% faster with it.
    pub(super) fn literals(&self) -> Result<&AhoCorasick, &str> {
        if let Some(Ok(dfa)) = self.literals_dfa.get() {
            return Ok(dfa);
        }
        let kind = match self.nfa_searches.fetch_add(1, Ordering::Relaxed) < DFA_AFTER {
            true => (&self.literals, AhoCorasickKind::ContiguousNFA),
            false => (&self.literals_dfa, AhoCorasickKind::DFA),
        };
        let (cell, kind) = kind;
        cell.get_or_init(|| {
            AhoCorasick::builder()
                .kind(Some(kind))
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(true)
                .build(&self.literal_text)
                .map_err(|e| format!("the rules' literals: {e}"))
        })
        .as_ref()
        .map_err(String::as_str)
    }

    /// Rule `index`'s regexes, compiled on first use; the error where they do not
    /// compile (the tests compile every rule, so a release build meets none).
    pub(super) fn pattern(&self, index: usize) -> Result<&Pattern, &str> {
        let Some(slot) = self.patterns.get(index) else {
            return Err("no such rule");
        };
        slot.get_or_init(|| compile_rule(RULES[index]))
            .as_ref()
            .map_err(String::as_str)
    }
}

fn compile_rule(r: &rules::Rule) -> Result<Pattern, String> {
    let any_case = !r.exact_case;
    let main = compile(r.id, &rules::expand(r.pattern), any_case)?;
    let optional = r
        .optional
        .iter()
        .map(|p| compile(r.id, &rules::expand(p), any_case))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Pattern { main, optional })
}

/// A pattern compiled on first use and kept: the readers of whole reports (an oops,
/// a bug check) and of pages ask each line few questions, most lines none.
pub(super) fn lazy_regex(
    cell: &'static OnceLock<Option<Regex>>,
    pattern: &str,
) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

pub(super) fn engine() -> Result<&'static Engine, &'static str> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    ENGINE
        .get_or_init(build_engine)
        .as_ref()
        .map_err(String::as_str)
}

/// Whether the rule table's prefilter was built: enough to start reading a log (what
/// a line needs beyond it is built when a line needs it; the tests build it all).
pub fn check_prefilter() -> Result<(), String> {
    engine().map(|_| ()).map_err(str::to_string)
}

/// Whether the rule table's literals, prefilter and the patterns every line may meet
/// were built: all that is not per rule (each rule's regexes are compiled when first
/// needed; [`compile_all_rules`] compiles them all). `run` builds them before its job
/// starts, so the scanner never makes a short job's output wait.
pub fn check_rules() -> Result<(), String> {
    let engine = engine()?;
    engine.literals()?;
    for (what, cell, pattern) in FIXED {
        if lazy_regex(cell, pattern).is_none() {
            return Err(format!("rule {what} does not compile"));
        }
    }
    Ok(())
}

/// Compiles every rule's regexes: a rule that does not compile is an error to report,
/// never a rule silently skipped (a regex feature missing from a release build once
/// dropped one that way). `explain --rules` runs it, and so the tests of the release
/// binary.
pub fn compile_all_rules() -> Result<(), String> {
    check_rules()?;
    let engine = engine()?;
    for i in 0..RULES.len() {
        engine.pattern(i).map_err(str::to_string)?;
    }
    Ok(())
}

/// A literal that no text holds: the rule is reached only through a table its header
/// opened.
pub(super) fn never_occurs(literal: &str) -> bool {
    literal.starts_with('\0')
}

/// A rule's regex, in any case unless the rule says otherwise: tools print the same
/// message in several (`Out of memory`/`out of memory`, `Xid`/`XID`) and people
/// retype it in theirs.
///
/// A word boundary is ASCII's (`(?-u:\b)`): the messages' words are ASCII, and a
/// Unicode one makes the fast lazy DFA give up at the first non-ASCII byte of a
/// line (a CJK page, a box-drawing progress bar), leaving a search of the whole
/// line to the slow engines, which took a third of `explain`'s time on text dense
/// with failures.
fn compile(what: &str, pattern: &str, any_case: bool) -> Result<Regex, String> {
    RegexBuilder::new(&ascii_word_boundaries(pattern))
        .case_insensitive(any_case)
        .build()
        .map_err(|e| format!("rule {what} does not compile: {e}"))
}

/// `pattern` with each `\b` and `\B` made ASCII's; an escaped backslash stays.
fn ascii_word_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(b @ ('b' | 'B')) => {
                out.push_str("(?-u:\\");
                out.push(b);
                out.push(')');
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn build_engine() -> Result<Engine, String> {
    let mut literals: Vec<&'static str> = Vec::new();
    let mut literal_rules: Vec<Vec<usize>> = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        for lit in rule.literals.iter().filter(|l| !never_occurs(l)) {
            match literals.iter().position(|l| l == lit) {
                Some(j) => literal_rules[j].push(i),
                None => {
                    literals.push(lit);
                    literal_rules.push(vec![i]);
                }
            }
        }
    }
    // A literal is searched in its own case only where every rule naming it wants so.
    let given: Vec<prefilter::Literal> = literals
        .iter()
        .zip(&literal_rules)
        .map(|(&text, named_by)| prefilter::Literal {
            text,
            exact_case: named_by.iter().all(|&r| RULES[r].exact_case),
        })
        .collect();
    let prefilter = prefilter::Prefilter::new(&given)?;
    let patterns = (0..RULES.len()).map(|_| OnceLock::new()).collect();
    let mut table_rows = Vec::with_capacity(RULES.len());
    for r in RULES.iter() {
        table_rows.push(match r.table_rows {
            Some(id) => Some(
                RULES
                    .iter()
                    .position(|x| x.id == id)
                    .ok_or_else(|| format!("rule {}: no rule {id} for its table", r.id))?,
            ),
            None => None,
        });
    }
    Ok(Engine {
        prefilter,
        literals: OnceLock::new(),
        literals_dfa: OnceLock::new(),
        nfa_searches: AtomicUsize::new(0),
        literal_rules,
        literal_text: literals,
        patterns,
        table_rows,
    })
}

/// Prefixes that launchers and log collectors put before a program's own line:
/// torchrun's `[rank3]:` / `[default0]:`, mpirun's `[1,0]<stderr>:`, srun --label's
/// `3: `, `kubectl logs --timestamps`' RFC 3339 time, and a syslog time without a
/// host (`May 18 21:01:26: `), the kernel's tag and time of a syslog written without
/// date or host (`kernel: [   53.159891] `), and a collector's field that holds the
/// line as a string (`textPayload: "`, `"log": "`), in any case.
const PREFIX: &str = r"(?i)^(?:\[(?:rank|default)?\d+\]:\s?|\[\d+,\d+\]<std(?:out|err)>:\s?|\d{1,5}: |\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec) [ \d]\d \d\d:\d\d:\d\d: |kernel: \[\s*\d+\.\d+\]\s?|\s*\x22?(?:textPayload|message|msg|log)\x22?:\s*\x22)";
/// The last state of a tqdm progress bar, which redraws its line with `\r` and so
/// ends up before whatever was printed next once the log is copied
/// (`Epoch 0: |   | 4540/? [07:57<00:00, 9.51it/s]Fatal Python error: ...`).
const PROGRESS: &str = r"^.{0,300}?\|\s*\d+/[\d?]+\s*\[\d+:\d\d(?::\d\d)?<[^\]]{0,120}\]\s*";
/// The placeholders people put for the values they anonymise (`pid XXX`, `<pid>`,
/// `NGB`), read as [`PLACEHOLDER`].
const PLACEHOLDERS: &str = r"(?x)
      \b[Xx]{3,}\b                                           # pid XXX, 0xXXXX
    | <(?i:pid|tid|uid|n|num|number|id|size|bytes|count|value|addr|address|ptr|hex)>
    | \{(?i:pid|n|num|size)\}                                # {pid}
    | %(?:l{1,2}|z)?[du](?P<printf_unit>[KMGT]i?B)?\b          # printf's %d, %luGB
    | \bN(?P<unit>\s?(?:[KMGTP]i?B|kB))\b                    # NGB, N MiB, NkB
    | (?P<key>\b(?i:pid|tid|process|task)[:=\ ]\s?)N\b       # pid N, task N
    ";
/// A Python frame as faulthandler prints it.
const FRAME: &str = r#"^\s*File "(?P<file>.+)", line (?P<line>\d+) in (?P<func>\S.*?)\s*$"#;
/// A row of the task table the OOM killer prints (the `[ pid ]` column may have been
/// taken for a timestamp and removed): uid tgid total_vm rss, then 3 or 4 numeric
/// columns by kernel era, then the name.
const TASK_ROW: &str =
    r"^\s*(?:\[\s*\d+\]\s+)?\d+\s+\d+\s+\d+\s+(?P<rss>\d+)\s+(?:-?\d+\s+){3,4}(?P<name>\S.*?)\s*$";

static PREFIX_RE: OnceLock<Option<Regex>> = OnceLock::new();
static PROGRESS_RE: OnceLock<Option<Regex>> = OnceLock::new();
static PLACEHOLDERS_RE: OnceLock<Option<Regex>> = OnceLock::new();
static FRAME_RE: OnceLock<Option<Regex>> = OnceLock::new();
static TASK_ROW_RE: OnceLock<Option<Regex>> = OnceLock::new();

/// The patterns every rule's line may meet, each compiled when first needed (the
/// progress bar's alone took 3 ms); [`check_rules`] compiles them all.
type Fixed = (&'static str, &'static OnceLock<Option<Regex>>, &'static str);
const FIXED: [Fixed; 5] = [
    ("prefix", &PREFIX_RE, PREFIX),
    ("progress", &PROGRESS_RE, PROGRESS),
    ("placeholder", &PLACEHOLDERS_RE, PLACEHOLDERS),
    ("frame", &FRAME_RE, FRAME),
    ("task row", &TASK_ROW_RE, TASK_ROW),
];

/// A launcher's or collector's prefix ([`PREFIX`]).
fn prefix() -> Option<&'static Regex> {
    lazy_regex(&PREFIX_RE, PREFIX)
}

/// A faulthandler frame ([`FRAME`]).
pub(super) fn frame() -> Option<&'static Regex> {
    lazy_regex(&FRAME_RE, FRAME)
}

/// A row of the OOM killer's task table ([`TASK_ROW`]).
pub(super) fn task_row() -> Option<&'static Regex> {
    lazy_regex(&TASK_ROW_RE, TASK_ROW)
}

/// What a placeholder becomes in a line's message: rules take it where they take a
/// number ([`rules::expand`]), and a value read from it is unknown, never a number.
pub(super) const PLACEHOLDER: &str = "<n>";

/// The message of a line: without a kernel-log, journal or launcher prefix, its
/// placeholders made one.
pub(super) fn normalize(text: &str) -> String {
    // A line quoted in markdown (`> `) is read as the line, and so is one glued to the
    // fence that opens a code block (```` ```Fatal Python error: … ````).
    let mut text = text;
    while let Some(rest) = text.strip_prefix("> ").or_else(|| text.strip_prefix('>')) {
        text = rest;
    }
    let text = text.strip_prefix("```").unwrap_or(text);
    // An issue's title that is zsh's line with its pid (`# 19823 segmentation fault
    // ./main`): the heading's mark is the tracker's, not the line's. A page's numbered
    // heading (`# 11 Segmentation fault`) keeps it.
    let text = match text.strip_prefix("# ") {
        Some(title) if is_zsh_job_line(title) => title,
        _ => text,
    };
    // A line whose only backticks open or close it is read without them: one inline
    // code span whole (`` `Killed` ``), a line the writer pasted and set in code, or
    // one end of a span a paste spread over lines (`` `Going over pending ways... ``,
    // ``Killed` ``). A span that opens and closes inside a line is how a page mentions
    // words, and stays.
    let trimmed = text.trim_end();
    let inner = trimmed.strip_prefix('`').unwrap_or(trimmed);
    let inner = inner.strip_suffix('`').unwrap_or(inner);
    let text = if inner.len() < trimmed.len() && !inner.is_empty() && !inner.contains('`') {
        inner
    } else {
        text
    };
    // Words a poster made bold (`**Segmentation fault**`) are the words, and a number
    // set in quotes or code (`exit code '-1073741819'`, ``returning exit code `-9` ``)
    // is the number.
    let unmarked;
    let text = if text.contains("**") || quotes_a_number(text) {
        unmarked = without_quotes_around_numbers(&without_bold(text));
        unmarked.as_str()
    } else {
        text
    };
    let parsed = kmsg::parse_line(text);
    let mut msg = parsed.message.as_str();
    // The kernel's own indent after its prefix (`[   5.1]  Kernel panic`) is no part
    // of the message, as it is none at the start of a line.
    if msg.len() < text.trim_start().len() {
        msg = msg.trim_start();
    }
    // A prefix may wrap another (a timestamped pod log of a torchrun rank).
    for _ in 0..3 {
        match prefix().and_then(|re| re.find(msg)) {
            Some(m) if m.end() > 0 => msg = &msg[m.end()..],
            _ => break,
        }
    }
    // Most lines have neither: the checks keep their regexes off them.
    if msg.contains('|') && msg.contains('<') {
        if let Some(m) = lazy_regex(&PROGRESS_RE, PROGRESS).and_then(|re| re.find(msg)) {
            msg = &msg[m.end()..];
        }
    }
    if !may_hold_a_placeholder(msg) {
        return msg.to_string();
    }
    let Some(placeholders) = lazy_regex(&PLACEHOLDERS_RE, PLACEHOLDERS) else {
        return msg.to_string();
    };
    let replaced = placeholders.replace_all(msg, |c: &regex::Captures<'_>| {
        let key = c.name("key").map_or("", |m| m.as_str());
        let unit = c
            .name("unit")
            .or_else(|| c.name("printf_unit"))
            .map_or("", |m| m.as_str());
        format!("{key}{PLACEHOLDER}{unit}")
    });
    replaced.into_owned()
}

/// zsh's report of a job a signal ended, as it prints it with the pid: `19823
/// segmentation fault  ./main`, `4242 killed  python train.py`.
fn is_zsh_job_line(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let rest = line[digits..].trim_start().to_ascii_lowercase();
    digits >= 3
        && ["segmentation fault ", "bus error ", "killed ", "abort "]
            .iter()
            .any(|word| rest.starts_with(word) && rest.len() > word.len())
}

/// The rest of a line after the prefix a tool or a quote put before it, its own
/// leading spaces kept: a terminal may have cut the message at one.
pub(super) fn after_prefix(text: &str) -> &str {
    let mut text = text;
    while let Some(rest) = text.strip_prefix("> ").or_else(|| text.strip_prefix('>')) {
        text = rest;
    }
    let message = kmsg::parse_line(text).message;
    let mut rest = if message.len() < text.trim_start().len() && text.ends_with(&message) {
        &text[text.len() - message.len()..]
    } else {
        text
    };
    for _ in 0..3 {
        match prefix().and_then(|re| re.find(rest)) {
            Some(m) if m.end() > 0 => rest = &rest[m.end()..],
            _ => break,
        }
    }
    rest
}

/// `text` without markdown's bold markers: a `**` that is not part of a longer run of
/// asterisks (`*** Received signal 11 ***` and glibc's `*** Error in` stay).
fn without_bold(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let pair = b[i..].starts_with(b"**");
        let run_before = i > 0 && b[i - 1] == b'*';
        let run_after = b.get(i + 2) == Some(&b'*');
        if pair && !run_before && !run_after {
            i += 2;
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or('*');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

const NUMBER_QUOTES: [u8; 3] = [b'`', b'\'', b'"'];

/// Whether a quote or backtick opens a number (`'-9`, `` `137 ``) somewhere in `text`.
fn quotes_a_number(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(2).enumerate().any(|(i, w)| {
        NUMBER_QUOTES.contains(&w[0])
            && (w[1].is_ascii_digit()
                || (w[1] == b'-' && b.get(i + 2).is_some_and(u8::is_ascii_digit)))
    })
}

/// `text` with the quotes or backticks around a lone number (`'-9'`) taken off.
fn without_quotes_around_numbers(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        let q = b[i];
        if NUMBER_QUOTES.contains(&q) {
            let sign = usize::from(b.get(i + 1) == Some(&b'-'));
            let digits = b[i + 1 + sign..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            let close = i + 1 + sign + digits;
            if digits > 0 && b.get(close) == Some(&q) {
                out.push_str(&text[copied..i]);
                out.push_str(&text[i + 1..close]);
                i = close + 1;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether the placeholder regex can match: `XXX`/`xxx`, `<…>`, `{…}`, `%d`, or a lone
/// `N` (not inside a word, `NCCL`).
fn may_hold_a_placeholder(msg: &str) -> bool {
    let b = msg.as_bytes();
    if memchr::memchr3(b'<', b'{', b'%', b).is_some() || msg.contains("XXX") || msg.contains("xxx")
    {
        return true;
    }
    memchr::memchr_iter(b'N', b).any(|i| {
        let before = i.checked_sub(1).map(|j| b[j]);
        let after = b.get(i + 1).copied();
        // A unit may follow it (`NGB`, `NkB`); any other letter or digit makes a word.
        let in_a_word = |c: u8| {
            (c.is_ascii_alphanumeric() || c == b'_')
                && !matches!(c, b'K' | b'M' | b'G' | b'T' | b'P' | b'k')
        };
        !before.is_some_and(|c| c.is_ascii_alphanumeric()) && !after.is_some_and(in_a_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_of_launchers_and_collectors_are_removed() {
        assert_eq!(
            normalize("[rank3]: Fatal Python error: x"),
            "Fatal Python error: x"
        );
        assert_eq!(normalize("[1,0]<stderr>:Killed"), "Killed");
        assert_eq!(normalize("2026-11-21T06:16:42.123456789Z Killed"), "Killed");
        assert_eq!(
            normalize("Nov 21 06:16:42 node kernel: [ 12.5] Out of memory: x"),
            "Out of memory: x"
        );
        assert_eq!(
            normalize("loss=0.3 killed_frac=0.1"),
            "loss=0.3 killed_frac=0.1"
        );
        assert_eq!(
            normalize("Epoch 0: |          | 4540/? [07:57<00:00,  9.51it/s]Fatal Python error: Segmentation fault"
            ),
            "Fatal Python error: Segmentation fault"
        );
        // A progress bar alone leaves nothing for a rule.
        let bar = "100%|██████████| 10/10 [00:01<00:00,  9.51it/s]";
        assert_eq!(normalize(bar), "");
    }

    #[test]
    fn markdown_around_a_line_is_not_the_line() {
        assert_eq!(
            normalize("```Fatal Python error: Segmentation fault"),
            "Fatal Python error: Segmentation fault"
        );
        assert_eq!(
            normalize("line 31: 86298 **Segmentation fault**      (core dumped) job"),
            "line 31: 86298 Segmentation fault      (core dumped) job"
        );
        assert_eq!(
            normalize("*** Received signal 11 ***"),
            "*** Received signal 11 ***"
        );
    }

    #[test]
    fn placeholders_of_anonymised_values_are_made_one() {
        for (text, want) in [
            (
                "DataLoader worker (pid XXX) is killed",
                "DataLoader worker (pid <n>) is killed",
            ),
            (
                "DataLoader worker (pid <pid>) is killed",
                "DataLoader worker (pid <n>) is killed",
            ),
            (
                "Killed process {pid} (python)",
                "Killed process <n> (python)",
            ),
            (
                "memory: usage NkB, limit NkB",
                "memory: usage <n>kB, limit <n>kB",
            ),
            (
                "increase from NGB to N GiB",
                "increase from <n>GB to <n> GiB",
            ),
            ("worker timeout (pid:N)", "worker timeout (pid:<n>)"),
            (
                "you tried to allocate %dGB. Buy new RAM!",
                "you tried to allocate <n>GB. Buy new RAM!",
            ),
            (
                "segfault at 0 ip <addr> sp XXXXXXXX error 4",
                "segfault at 0 ip <n> sp <n> error 4",
            ),
        ] {
            assert_eq!(normalize(text), want);
        }
        // Words and values that are not placeholders stay.
        for text in [
            "Xid 79 on GPU",
            "N/A",
            "Killed process 42 (python)",
            "NCCL WARN x",
        ] {
            assert_eq!(normalize(text), text);
        }
    }

    #[test]
    fn the_prefilter_finds_every_rule_literal() {
        let e = engine().unwrap();
        for rule in RULES.iter() {
            for lit in rule.literals.iter().filter(|l| !never_occurs(l)) {
                let line = format!("[ 12.5] x {lit} y");
                // In another case, unless the rule wants its own.
                let line = if rule.exact_case {
                    line
                } else {
                    line.to_ascii_uppercase()
                };
                let mut folded = Vec::new();
                prefilter::fold_case(line.as_bytes(), &mut folded);
                let region = prefilter::Region {
                    text: line.as_bytes(),
                    folded: &folded,
                };
                let found = (0..e.prefilter.groups())
                    .filter_map(|g| e.prefilter.find(g, region, 0))
                    .min();
                // Found where it is (or a literal inside it that another rule names,
                // or one that takes the space before it: ` RSS` for `RSS:`).
                assert!(
                    found.is_some_and(|at| (9..10 + lit.len()).contains(&at)),
                    "{}: {lit:?} at {found:?}",
                    rule.id
                );
            }
        }
    }

    #[test]
    fn every_rule_compiles() {
        compile_all_rules().unwrap();
    }

    #[test]
    fn the_prefilter_takes_two_passes() {
        // Each group of anchors is one more SIMD pass over every byte: a third would
        // cost explain a third of its speed. Choose the anchors again for the table
        // (python3 bench/prefilter_anchors.py) when this fails. The literals matched
        // in their own case are a group apart, searched in the text itself: one
        // literal, which memchr's memmem finds at a fraction of a Teddy pass's cost.
        let e = engine().unwrap();
        let folded = (0..e.prefilter.groups())
            .filter(|&g| e.prefilter.searches_folded(g))
            .count();
        assert!(
            folded <= 2,
            "{} anchors in {} groups",
            e.prefilter.anchors(),
            e.prefilter.groups()
        );
        let mut exact: Vec<&str> = RULES
            .iter()
            .filter(|r| r.exact_case)
            .flat_map(|r| r.literals.iter().copied())
            .collect();
        // Rules that share the literal share its search.
        exact.sort_unstable();
        exact.dedup();
        assert!(exact.len() <= 1, "{exact:?}");
    }

    #[test]
    fn word_boundaries_are_asciis() {
        assert_eq!(
            ascii_word_boundaries(r"\bOOM\B|a\\b|\d+"),
            r"(?-u:\b)OOM(?-u:\B)|a\\b|\d+"
        );
        // A CJK character beside an ASCII word is a boundary now, as people write
        // `内存OOM` without a space.
        let r = compile("t", r"\bOOM\b", true).unwrap();
        assert!(r.is_match("内存OOM了"));
        assert!(!r.is_match("BOOM"));
    }
}
