//! The bulk search that finds, in a whole chunk of log, the lines worth reading.
//!
//! Every byte of a log passes through here, so its cost sets `explain`'s speed. It
//! searches for short *anchors* with aho-corasick's Teddy (a SIMD search of at most
//! [`GROUP_LIMIT`] patterns per pass), then checks, at each anchor found, the rule
//! literals that anchor stands for. The number of passes grows with the number of
//! anchors, not of rules: a new rule whose literals hold an existing anchor costs
//! nothing, so the table can grow to hundreds of rules at two passes.
//!
//! Rules match in any case (tools print `Xid` and `XID`, people retype messages in
//! theirs), so the passes search a lower-case copy of the text, made a cache-sized
//! block at a time ([`fold_case`]). The few literals that count only in their own
//! case (a shell's `Killed`) are searched in the text itself, in a group apart.
//!
//! Which anchors are used is data (`anchors.json`), chosen by
//! `bench/prefilter_anchors.py` as the fewest substrings of the rule literals that
//! healthy text (the corpus's healthy logs, a synthetic training log; all in lower
//! case) rarely holds. So is their order in the SIMD groups (`teddy_layout.json`):
//! Teddy shares 16 buckets among a group's anchors by their place in it, and
//! compares each anchor of a bucket wherever the text fits the bucket's first
//! four bytes, so which anchors share one sets how many places are compared. A
//! literal that holds none of them becomes its own anchor, so a rule added without
//! choosing anchors again is still found, at the price of more passes; a test keeps
//! the count within two.

use aho_corasick::{packed, AhoCorasick, AhoCorasickKind, MatchKind, Span};

/// How many anchors one SIMD pass searches. aho-corasick's own limit for Teddy is 64
/// (past it, its general searcher takes an automaton several times slower); called
/// directly without that limit, Teddy shares its 16 buckets among more, and the
/// layout (`teddy_layout.json`) keeps the anchors that share one rare in healthy text.
pub const GROUP_LIMIT: usize = 80;

/// The longest anchor made from a literal that none of the chosen anchors covers:
/// Teddy tells candidates by their first bytes, and the check reads the rest.
const OWN_ANCHOR_MAX: usize = 16;

/// The anchors chosen for the current rule table (a JSON array of strings), the
/// one a literal stands under first.
const CHOSEN: &str = include_str!("anchors.json");

/// The anchors in the order they take their places in the groups (a JSON array of
/// strings); one not listed comes after those listed.
const LAYOUT: &str = include_str!("teddy_layout.json");

/// A rule literal that an anchor stands for, and where in it the anchor begins.
#[derive(Debug)]
struct Check {
    /// As the text searched holds it (in lower case where that is folded).
    literal: Box<[u8]>,
    offset: usize,
    /// The literal's first (up to) eight bytes as a word, and which of its bytes
    /// count: one load and compare turns away nearly every place an anchor is found
    /// but the literal is not.
    head: u64,
    head_mask: u64,
    /// The literal's two bytes just after its anchor, where it has them.
    after: Option<[u8; 2]>,
}

impl Check {
    fn new(literal: &str, offset: usize, anchor_len: usize) -> Check {
        let bytes = literal.as_bytes();
        let n = bytes.len().min(8);
        let mut word = [0u8; 8];
        word[..n].copy_from_slice(&bytes[..n]);
        let head_mask = if n == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        };
        Check {
            literal: bytes.into(),
            offset,
            head: u64::from_le_bytes(word),
            head_mask,
            after: bytes
                .get(offset + anchor_len..offset + anchor_len + 2)
                .map(|b| [b[0], b[1]]),
        }
    }

    /// The literal's byte at `at` from its anchor's first byte, where it has one.
    fn byte_at(&self, at: isize) -> Option<u8> {
        let i = self.offset.checked_add_signed(at)?;
        self.literal.get(i).copied()
    }

    /// Whether the literal begins at `start` of `haystack`.
    fn holds(&self, haystack: &[u8], start: usize) -> bool {
        if let Some(word) = haystack.get(start..start + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if word & self.head_mask != self.head {
                return false;
            }
        }
        haystack[start..].starts_with(&self.literal)
    }
}

/// A region of text and its lower-case copy ([`fold_case`]), at the same offsets.
#[derive(Debug, Clone, Copy)]
pub struct Region<'a> {
    pub text: &'a [u8],
    pub folded: &'a [u8],
}

/// A rule literal, and whether it counts only in its own case.
#[derive(Debug, Clone, Copy)]
pub struct Literal {
    pub text: &'static str,
    pub exact_case: bool,
}

/// The literals to check where one anchor is found, indexed by the bytes around it.
///
/// An anchor a healthy log holds on every line (`kill` in `killed_frac`, `emory` in
/// `memory peak`) may stand for dozens of literals (`oom-kill`, `sigkill`, `zsh:
/// killed`; `out of memory`, `memory cgroup`), and trying each at every hit was most
/// of the search's cost past its SIMD passes. The literals are split by the byte at
/// the position around the anchor that tells them apart best, those without a byte
/// there by the next best position, and so on: a hit compares only the literals
/// whose byte agrees with the text's at each position, and the few left unkeyed.
#[derive(Debug)]
struct AnchorChecks {
    levels: Vec<Keyed>,
    unkeyed: Vec<Check>,
    anchor_len: usize,
}

/// The literals that have a byte at one position around the anchor, by that byte.
#[derive(Debug)]
struct Keyed {
    /// The position, from the anchor's first byte (negative: before it).
    at: isize,
    /// Which bytes some literal has there (a bit per byte value).
    present: [u64; 4],
    /// Each literal's byte there, sorted, beside `checks`.
    keys: Box<[u8]>,
    checks: Box<[Check]>,
}

/// How many positions before and after an anchor are weighed as keys.
const KEY_REACH: isize = 8;

/// The most levels of keys an anchor gets: past them, the literals left are few.
const KEY_LEVELS: usize = 4;

impl AnchorChecks {
    fn new(checks: Vec<Check>, anchor_len: usize) -> AnchorChecks {
        let mut levels = Vec::new();
        let mut rest = checks;
        while rest.len() > 2 && levels.len() < KEY_LEVELS {
            let Some(at) = best_key(&rest, anchor_len) else {
                break;
            };
            let (mut keyed, unkeyed): (Vec<Check>, Vec<Check>) =
                rest.into_iter().partition(|c| c.byte_at(at).is_some());
            keyed.sort_by_key(|c| c.byte_at(at));
            let keys: Box<[u8]> = keyed.iter().filter_map(|c| c.byte_at(at)).collect();
            let mut present = [0u64; 4];
            for &b in keys.iter() {
                present[usize::from(b >> 6)] |= 1 << (b & 63);
            }
            levels.push(Keyed {
                at,
                present,
                keys,
                checks: keyed.into(),
            });
            rest = unkeyed;
        }
        AnchorChecks {
            levels,
            unkeyed: rest,
            anchor_len,
        }
    }

    /// Where one of the literals begins, the anchor being found at `at` of
    /// `haystack` and literals counting from `start` on.
    fn confirm(&self, haystack: &[u8], at: usize, start: usize) -> Option<usize> {
        let after = at + self.anchor_len;
        let text_after = haystack.get(after..after + 2).map(|b| [b[0], b[1]]);
        let holds = |c: &Check| {
            c.after.is_none_or(|a| Some(a) == text_after)
                && at >= start + c.offset
                && c.holds(haystack, at - c.offset)
        };
        for level in &self.levels {
            // Where the text has no byte at the key's position, no literal keyed
            // there fits.
            let Some(&b) = at
                .checked_add_signed(level.at)
                .and_then(|p| haystack.get(p))
            else {
                continue;
            };
            if level.present[usize::from(b >> 6)] & (1 << (b & 63)) == 0 {
                continue;
            }
            let first = memchr::memchr(b, &level.keys).expect("a present key is in the keys");
            let found = level.keys[first..]
                .iter()
                .zip(&level.checks[first..])
                .take_while(|(&k, _)| k == b)
                .find(|(_, c)| holds(c));
            if let Some((_, c)) = found {
                return Some(at - c.offset);
            }
        }
        self.unkeyed
            .iter()
            .find(|c| holds(c))
            .map(|c| at - c.offset)
    }
}

/// The position around an anchor whose byte splits `checks` best, where one
/// splits them at all: the fewest literals a hit is expected to compare, were the
/// text's byte there one of theirs, counting those with no byte there.
fn best_key(checks: &[Check], anchor_len: usize) -> Option<isize> {
    let end = anchor_len as isize;
    let positions = (-KEY_REACH..0).rev().chain(end..end + KEY_REACH);
    let mut best: Option<(f64, isize)> = None;
    for at in positions {
        let mut per_byte = [0u32; 256];
        let mut unkeyed = 0u32;
        for c in checks {
            match c.byte_at(at) {
                Some(b) => per_byte[usize::from(b)] += 1,
                None => unkeyed += 1,
            }
        }
        let keyed: u32 = per_byte.iter().sum();
        if keyed == 0 {
            continue;
        }
        let squares: u32 = per_byte.iter().map(|n| n * n).sum();
        let expected = f64::from(squares) / f64::from(keyed) + f64::from(unkeyed);
        if best.is_none_or(|(score, _)| expected < score) {
            best = Some((expected, at));
        }
    }
    // A key worth a level leaves fewer to compare than comparing them all.
    best.filter(|&(score, _)| score < checks.len() as f64 - 0.5)
        .map(|(_, at)| at)
}

/// A group's search for its anchors: Teddy itself where the CPU has it, called
/// directly (the general searcher's set-up per call cost as much as the checks, a
/// hot anchor being found on most lines); an automaton elsewhere.
#[derive(Debug)]
enum AnchorSearch {
    Teddy(packed::Searcher),
    Automaton(AhoCorasick),
}

impl AnchorSearch {
    fn new(anchors: &[&str]) -> Result<AnchorSearch, String> {
        // One anchor is searched faster by memchr's pair search, which the
        // automaton's own prefilter picks.
        let teddy = (anchors.len() > 1).then(|| {
            packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .heuristic_pattern_limits(false)
                .builder()
                .extend(anchors)
                .build()
        });
        if let Some(teddy) = teddy.flatten() {
            return Ok(AnchorSearch::Teddy(teddy));
        }
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(anchors)
            .map(AnchorSearch::Automaton)
            .map_err(|e| format!("the prefilter: {e}"))
    }

    /// The first anchor found at or after `from`: which, and where.
    fn find(&self, haystack: &[u8], from: usize) -> Option<(usize, usize)> {
        let span = Span::from(from..haystack.len());
        let m = match self {
            AnchorSearch::Teddy(teddy) => teddy.find_in(haystack, span)?,
            AnchorSearch::Automaton(automaton) => {
                automaton.find(aho_corasick::Input::new(haystack).span(span))?
            }
        };
        Some((m.pattern().as_usize(), m.start()))
    }
}

#[derive(Debug)]
struct Group {
    searcher: AnchorSearch,
    /// For each of the group's anchors, the literals to check where it is found.
    checks: Vec<AnchorChecks>,
    /// Searches the text's lower-case copy, not the text.
    folded: bool,
}

#[derive(Debug)]
pub(crate) struct Prefilter {
    groups: Vec<Group>,
    longest_literal: usize,
}

impl Prefilter {
    /// Anchors for `literals`: the chosen ones that cover some literal, then, for a
    /// literal none covers, its own first bytes.
    pub fn new(literals: &[Literal]) -> Result<Prefilter, String> {
        let chosen: Vec<String> = serde_json::from_str(CHOSEN)
            .map_err(|e| format!("the prefilter's anchors.json: {e}"))?;
        let layout: Vec<String> = serde_json::from_str(LAYOUT)
            .map_err(|e| format!("the prefilter's teddy_layout.json: {e}"))?;
        Self::with_anchors(literals, &chosen, &layout)
    }

    /// Literals of any case are searched, folded, in the region's lower-case copy;
    /// those of [`Literal::exact_case`] in the text itself, in a group of their own
    /// (a healthy log may hold their lower-case form on every line).
    fn with_anchors(
        given: &[Literal],
        chosen: &[String],
        layout: &[String],
    ) -> Result<Prefilter, String> {
        let folded = without_redundant(
            given
                .iter()
                .filter(|l| !l.exact_case)
                .map(|l| l.text.to_ascii_lowercase())
                .collect(),
            &[],
        );
        let exact = without_redundant(
            given
                .iter()
                .filter(|l| l.exact_case)
                .map(|l| l.text.to_string())
                .collect(),
            &folded,
        );
        let fold = |anchors: &[String]| -> Vec<String> {
            anchors.iter().map(|a| a.to_ascii_lowercase()).collect()
        };
        let mut groups = groups_for(&folded, &fold(chosen), &fold(layout), true)?;
        groups.extend(groups_for(&exact, chosen, layout, false)?);
        let longest_literal = given.iter().map(|l| l.text.len()).max().unwrap_or(0);
        Ok(Prefilter {
            groups,
            longest_literal,
        })
    }

    /// Whether `group` searches the text's lower-case copy ([`fold_case`]).
    pub fn searches_folded(&self, group: usize) -> bool {
        self.groups[group].folded
    }

    /// The longest rule literal, in bytes.
    pub fn longest_literal(&self) -> usize {
        self.longest_literal
    }

    /// How many SIMD passes each byte gets.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The first literal each anchor of `group` stands for, in the group's order.
    #[cfg(test)]
    fn first_literals(&self, group: usize) -> Vec<String> {
        self.groups[group]
            .checks
            .iter()
            .filter_map(|a| {
                a.levels
                    .iter()
                    .flat_map(|l| l.checks.iter())
                    .chain(&a.unkeyed)
                    .next()
            })
            .map(|c| String::from_utf8_lossy(&c.literal).into_owned())
            .collect()
    }

    /// How many anchors are searched in all.
    #[cfg(test)]
    pub fn anchors(&self) -> usize {
        self.groups.iter().map(|g| g.checks.len()).sum()
    }

    /// Where a rule literal that begins at or after `start` begins, among those of
    /// one group: the first by where its anchor is. Literals are found whatever their
    /// case, but those of [`Literal::exact_case`].
    pub fn find(&self, group: usize, region: Region<'_>, start: usize) -> Option<usize> {
        let group = &self.groups[group];
        let haystack = if group.folded {
            region.folded
        } else {
            region.text
        };
        let mut from = start;
        while from < haystack.len() {
            let (anchor, at) = group.searcher.find(haystack, from)?;
            if let Some(begins) = group.checks[anchor].confirm(haystack, at, start) {
                return Some(begins);
            }
            from = at + 1;
        }
        None
    }
}

/// `literals` less those that hold another (or, in lower case, one of `found_anyway`):
/// the search only finds the lines worth reading, and wherever `oom-kill:constraint`
/// is, `oom-kill` is too. Each literal left is checked at every place its anchor is.
fn without_redundant(literals: Vec<String>, found_anyway: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let literals: Vec<String> = literals
        .into_iter()
        .filter(|l| seen.insert(l.clone()))
        .collect();
    // An automaton over the literals finds, inside each, every other one it holds:
    // comparing each pair costs more than the rest of building the engine.
    let holds_another = |haystacks: &[String], needles: &[String], same: bool| -> Vec<bool> {
        let Ok(automaton) = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::NoncontiguousNFA))
            .build(needles)
        else {
            return vec![false; haystacks.len()];
        };
        haystacks
            .iter()
            .enumerate()
            .map(|(i, h)| {
                automaton
                    .find_overlapping_iter(h.as_str())
                    .any(|m| !same || m.pattern().as_usize() != i)
            })
            .collect()
    };
    let within = holds_another(&literals, &literals, true);
    let lower: Vec<String> = literals.iter().map(|l| l.to_ascii_lowercase()).collect();
    let beside = if found_anyway.is_empty() {
        vec![false; literals.len()]
    } else {
        holds_another(&lower, found_anyway, false)
    };
    literals
        .into_iter()
        .zip(within.into_iter().zip(beside))
        .filter(|(_, (a, b))| !a && !b)
        .map(|(l, _)| l)
        .collect()
}

/// Anchors for `literals` (the chosen ones that cover some literal, then, for a
/// literal none covers, its own first bytes), in groups of [`GROUP_LIMIT`] that
/// search the lower-case copy of the text where `folded`, the text itself otherwise.
fn groups_for(
    literals: &[String],
    chosen: &[String],
    layout: &[String],
    folded: bool,
) -> Result<Vec<Group>, String> {
    let mut anchors: Vec<String> = Vec::new();
    let mut owner: Vec<usize> = Vec::with_capacity(literals.len());
    for lit in literals {
        // The chosen anchor first, in the order chosen (the cheapest for healthy text
        // comes first), then one made for an earlier literal.
        let found = chosen
            .iter()
            .find(|a| !a.is_empty() && lit.contains(a.as_str()))
            .map(|a| match anchors.iter().position(|made| made == a) {
                Some(made) => made,
                None => {
                    anchors.push(a.clone());
                    anchors.len() - 1
                }
            })
            .or_else(|| anchors.iter().position(|a| lit.contains(a.as_str())));
        let index = found.unwrap_or_else(|| {
            anchors.push(own_anchor(lit).to_string());
            anchors.len() - 1
        });
        owner.push(index);
    }
    // An anchor that holds another is redundant: every literal that holds it holds
    // the other. Dropping it also leaves no anchor the prefix of another, so at
    // most one anchor begins at any byte and leftmost-first search misses none.
    let mut keep: Vec<usize> = (0..anchors.len()).collect();
    for i in 0..anchors.len() {
        let inner = (0..anchors.len())
            .filter(|&j| j != i && anchors[i].contains(anchors[j].as_str()))
            .find(|&j| anchors[j].len() < anchors[i].len() || j < i);
        if let Some(j) = inner {
            keep[i] = keep[j];
        }
    }
    // Follow chains (a ⊃ b ⊃ c) to the anchor that stays.
    for i in 0..keep.len() {
        let mut k = keep[i];
        while keep[k] != k {
            k = keep[k];
        }
        keep[i] = k;
    }
    let mut slots: Vec<Option<usize>> = vec![None; anchors.len()];
    let mut kept: Vec<&str> = Vec::new();
    for (i, a) in anchors.iter().enumerate() {
        if keep[i] == i {
            slots[i] = Some(kept.len());
            kept.push(a);
        }
    }
    let mut checks: Vec<Vec<Check>> = (0..kept.len()).map(|_| Vec::new()).collect();
    for (lit, &a) in literals.iter().zip(&owner) {
        let slot = slots[keep[a]].expect("a kept anchor has a slot");
        let offset = lit
            .find(kept[slot])
            .expect("a literal holds the anchor it was given");
        checks[slot].push(Check::new(lit, offset, kept[slot].len()));
    }
    let place = |a: &str| layout.iter().position(|l| l == a).unwrap_or(usize::MAX);
    let mut laid: Vec<(&str, Vec<Check>)> = kept.into_iter().zip(checks).collect();
    laid.sort_by_cached_key(|(a, _)| place(a));
    let (kept, checks): (Vec<&str>, Vec<Vec<Check>>) = laid.into_iter().unzip();
    let mut groups = Vec::new();
    let mut checks = checks.into_iter();
    for names in kept.chunks(GROUP_LIMIT) {
        groups.push(Group {
            searcher: AnchorSearch::new(names)?,
            checks: checks
                .by_ref()
                .zip(names)
                .map(|(c, name)| AnchorChecks::new(c, name.len()))
                .collect(),
            folded,
        });
    }
    Ok(groups)
}

/// `text` in ASCII lower case, into `folded` (reused: a region at a time). Offsets
/// are kept, so a hit in the copy is the same place in the text.
pub fn fold_case(text: &[u8], folded: &mut Vec<u8>) {
    // Every byte is written below: the length is all that needs setting.
    if folded.len() != text.len() {
        folded.resize(text.len(), 0);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { fold_avx2(text, folded) };
        return;
    }
    fold_bytes(text, folded);
}

/// [`fold_bytes`] compiled for AVX2: twice the bytes an instruction of the baseline
/// x86-64 (SSE2) takes, and the fold is a tenth of `explain`'s time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_avx2(text: &[u8], folded: &mut [u8]) {
    fold_bytes(text, folded);
}

/// A plain loop over two slices of one length, without branches: the compiler makes
/// it SIMD (`to_ascii_lowercase` here runs a third slower).
#[inline(always)]
fn fold_bytes(text: &[u8], folded: &mut [u8]) {
    for (to, &from) in folded.iter_mut().zip(text) {
        *to = from | (u8::from(from.wrapping_sub(b'A') < 26) << 5);
    }
}

/// A literal's first bytes, cut where a character begins.
fn own_anchor(lit: &str) -> &str {
    let mut end = lit.len().min(OWN_ANCHOR_MAX);
    while !lit.is_char_boundary(end) {
        end -= 1;
    }
    &lit[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any_case(texts: &[&'static str]) -> Vec<Literal> {
        texts
            .iter()
            .map(|&text| Literal {
                text,
                exact_case: false,
            })
            .collect()
    }

    fn finds(p: &Prefilter, text: &str) -> Vec<usize> {
        let mut folded = Vec::new();
        fold_case(text.as_bytes(), &mut folded);
        let region = Region {
            text: text.as_bytes(),
            folded: &folded,
        };
        let mut out = Vec::new();
        for g in 0..p.groups() {
            let mut from = 0;
            while let Some(at) = p.find(g, region, from) {
                out.push(at);
                from = at + 1;
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn an_anchor_alone_is_not_a_hit() {
        let p =
            Prefilter::with_anchors(&any_case(&["out of memory"]), &["emor".into()], &[]).unwrap();
        assert_eq!(p.anchors(), 1);
        assert_eq!(
            finds(&p, "peak memory 3 GiB, no error"),
            Vec::<usize>::new()
        );
        assert_eq!(finds(&p, "x: CUDA out of memory"), vec![8]);
    }

    #[test]
    fn literals_are_found_whatever_their_case() {
        let p = Prefilter::with_anchors(
            &any_case(&["Killed process", "NVRM: Xid"]),
            &["illed".into()],
            &[],
        )
        .unwrap();
        assert_eq!(
            finds(&p, "KILLED PROCESS 42; nvrm: xid 79; Killed process"),
            vec![0, 19, 33]
        );
    }

    #[test]
    fn an_exact_case_literal_is_found_only_in_its_case() {
        let exact = Literal {
            text: "Killed",
            exact_case: true,
        };
        let p = Prefilter::with_anchors(&[exact], &["illed".into()], &[]).unwrap();
        assert_eq!(finds(&p, "killed_frac=0.9 KILLED Killed"), vec![23]);
    }

    #[test]
    fn a_literal_no_anchor_covers_is_its_own() {
        let p =
            Prefilter::with_anchors(&any_case(&["Killed", "Bus error"]), &["illed".into()], &[])
                .unwrap();
        assert_eq!(p.anchors(), 2);
        assert_eq!(finds(&p, "Bus error (core dumped)"), vec![0]);
        assert_eq!(finds(&p, "bash: line 1: 42 Killed"), vec![17]);
    }

    #[test]
    fn overlapping_anchors_miss_nothing() {
        // `kill` is found first at the same place `killed` would be; the longer anchor
        // is dropped, its literal checked under the shorter.
        let p = Prefilter::with_anchors(
            &any_case(&["killed by signal", "kill event"]),
            &["killed".into(), "kill".into()],
            &[],
        )
        .unwrap();
        assert_eq!(p.anchors(), 1);
        assert_eq!(
            finds(&p, "a kill event; worker killed by signal 9"),
            vec![2, 21]
        );
    }

    #[test]
    fn a_hit_too_near_the_start_for_its_literal_is_checked_safely() {
        let p = Prefilter::with_anchors(&any_case(&["Out of memory"]), &["memory".into()], &[])
            .unwrap();
        assert_eq!(finds(&p, "memory"), Vec::<usize>::new());
    }

    #[test]
    fn literals_are_told_apart_past_their_first_eight_bytes_and_at_the_texts_end() {
        // The first word compared holds eight bytes: literals alike in those differ
        // after them; a literal shorter than eight bytes, or one at the very end of
        // the text, has fewer to compare.
        let p = Prefilter::with_anchors(
            &any_case(&["oom-kill:constraint", "oom-kill:task", "Killed"]),
            &["kill".into()],
            &[],
        )
        .unwrap();
        assert_eq!(finds(&p, "x oom-kill:task=python"), vec![2]);
        assert_eq!(finds(&p, "x oom-kill:tas"), Vec::<usize>::new());
        assert_eq!(finds(&p, "x oom-kill:constraint"), vec![2]);
        assert_eq!(finds(&p, "zsh: killed"), vec![5]);
        assert_eq!(finds(&p, "zsh: kille"), Vec::<usize>::new());
    }

    #[test]
    fn many_anchors_fill_several_groups() {
        let n = 2 * GROUP_LIMIT + 2;
        let lits: Vec<&'static str> = (0..n)
            .map(|i| &*Box::leak(format!("literal-{i:03}-x").into_boxed_str()))
            .collect();
        let p = Prefilter::with_anchors(&any_case(&lits), &[], &[]).unwrap();
        assert_eq!(p.groups(), 3);
        let last = format!("zz literal-{:03}-x", n - 1);
        assert_eq!(finds(&p, &last), vec![3]);
    }

    #[test]
    fn literals_under_one_anchor_are_told_apart_by_the_bytes_around_it() {
        // Dozens of literals read `memory` around one anchor; the bytes before and
        // after it pick the few to compare, and those with no byte at a key
        // position (the anchor at their start or end) are still found.
        let mut texts = vec!["out of memory", "memory cgroup", "memory.high"];
        let more: Vec<&'static str> = (0..40)
            .map(|i| {
                &*Box::leak(
                    format!("{}x memory-{i:02}", char::from(b'a' + i % 26)).into_boxed_str(),
                )
            })
            .collect();
        texts.extend(more);
        let p = Prefilter::with_anchors(&any_case(&texts), &["emory".into()], &[]).unwrap();
        assert_eq!(p.anchors(), 1);
        assert_eq!(finds(&p, "memory"), Vec::<usize>::new());
        assert_eq!(finds(&p, "CUDA out of memory."), vec![5]);
        assert_eq!(finds(&p, "memory.high=1"), vec![0]);
        assert_eq!(finds(&p, "px memory-15 and nx memory-39"), vec![0, 17]);
        assert_eq!(finds(&p, "zx memory-99 qx memory-15"), Vec::<usize>::new());
    }

    #[test]
    fn the_layout_orders_anchors_in_the_groups_and_finds_the_same() {
        let lits: Vec<&'static str> = (0..100)
            .map(|i| &*Box::leak(format!("literal-{i:03}-x").into_boxed_str()))
            .collect();
        let layout: Vec<String> = (0..100)
            .rev()
            .map(|i| format!("literal-{i:03}-x"))
            .collect();
        let p = Prefilter::with_anchors(&any_case(&lits), &[], &layout).unwrap();
        let q = Prefilter::with_anchors(&any_case(&lits), &[], &[]).unwrap();
        let text = "a literal-099-x b literal-000-x c literal-064-x";
        assert_eq!(p.first_literals(0)[..2], ["literal-099-x", "literal-098-x"]);
        assert_eq!(q.first_literals(0)[..2], ["literal-000-x", "literal-001-x"]);
        assert_eq!(finds(&p, text), finds(&q, text));
        assert_eq!(finds(&p, text), vec![2, 18, 34]);
    }
}
