//! Every way a rule's pattern can match must hold one of its literals: the prefilter
//! shows the pattern only lines that hold a literal, so an alternative without one is
//! dead text that looks like coverage (Ray's `Task was killed due to the node running
//! low on memory` sat in a pattern for a day, reached by no literal).
//!
//! For each alternative of each alternation in a pattern, the test writes the
//! shortest text that takes it (the other alternations take their first branch,
//! repetitions their least count, a class its most ordinary character) and asks
//! whether that text holds a literal.

use regex_syntax::hir::{Class, Hir, HirKind};

use super::{Rule, RULES};
use crate::diagnose::logs::engine::never_occurs;

/// How many alternations `hir` holds, itself included.
fn alternations(hir: &Hir) -> usize {
    let own = usize::from(matches!(hir.kind(), HirKind::Alternation(_)));
    own + match hir.kind() {
        HirKind::Repetition(r) => alternations(&r.sub),
        HirKind::Capture(c) => alternations(&c.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().map(alternations).sum(),
        _ => 0,
    }
}

/// The branch counts of the alternations of `hir`, in pre-order.
fn branch_counts(hir: &Hir, out: &mut Vec<usize>) {
    match hir.kind() {
        HirKind::Alternation(subs) => {
            out.push(subs.len());
            subs.iter().for_each(|s| branch_counts(s, out));
        }
        HirKind::Concat(subs) => subs.iter().for_each(|s| branch_counts(s, out)),
        HirKind::Repetition(r) => branch_counts(&r.sub, out),
        HirKind::Capture(c) => branch_counts(&c.sub, out),
        _ => {}
    }
}

/// A character a class holds, the one a log would most likely show there.
fn ordinary(class: &Class) -> char {
    let holds = |c: char| match class {
        Class::Unicode(u) => u.ranges().iter().any(|r| r.start() <= c && c <= r.end()),
        Class::Bytes(b) => b
            .ranges()
            .iter()
            .any(|r| r.start() <= c as u8 && c as u8 <= r.end()),
    };
    let first = match class {
        Class::Unicode(u) => u.ranges().first().map(|r| r.start()),
        Class::Bytes(b) => b.ranges().first().map(|r| char::from(r.start())),
    };
    [' ', 'a', 'A', '0']
        .into_iter()
        .find(|&c| holds(c))
        .or(first)
        .unwrap_or(' ')
}

/// The shortest text through `hir` that takes branch `target.1` of alternation
/// `target.0` (numbered in pre-order from `*next`).
fn write(hir: &Hir, target: (usize, usize), next: &mut usize, out: &mut String) {
    let inside = |start: usize, h: &Hir| (start..start + alternations(h)).contains(&target.0);
    match hir.kind() {
        HirKind::Literal(l) => out.push_str(&String::from_utf8_lossy(&l.0)),
        HirKind::Class(c) => out.push(ordinary(c)),
        HirKind::Capture(c) => write(&c.sub, target, next, out),
        HirKind::Concat(subs) => subs.iter().for_each(|s| write(s, target, next, out)),
        HirKind::Repetition(r) => {
            let start = *next;
            let times = if inside(start, &r.sub) {
                r.min.max(1)
            } else {
                r.min
            };
            for _ in 0..times {
                *next = start;
                write(&r.sub, target, next, out);
            }
            *next = start + alternations(&r.sub);
        }
        HirKind::Alternation(subs) => {
            let own = *next;
            *next += 1;
            let mut start = *next;
            let chosen = if own == target.0 {
                target.1
            } else {
                let mut s = start;
                subs.iter()
                    .position(|b| {
                        let hit = inside(s, b);
                        s += alternations(b);
                        hit
                    })
                    .unwrap_or(0)
            };
            for (i, b) in subs.iter().enumerate() {
                if i == chosen {
                    *next = start;
                    write(b, target, next, out);
                }
                start += alternations(b);
            }
            *next = start;
        }
        HirKind::Empty | HirKind::Look(_) => {}
    }
}

/// The texts through `pattern` that hold none of the rule's literals.
fn unreached(rule: &Rule, pattern: &str) -> Vec<String> {
    let hir = match regex_syntax::parse(pattern) {
        Ok(h) => h,
        Err(e) => return vec![format!("does not parse: {e}")],
    };
    let holds = |text: &str| {
        rule.literals.iter().any(|l| {
            if rule.exact_case {
                text.contains(l)
            } else {
                text.to_lowercase().contains(&l.to_lowercase())
            }
        })
    };
    let mut counts = Vec::new();
    branch_counts(&hir, &mut counts);
    let targets = counts
        .iter()
        .enumerate()
        .flat_map(|(alt, &n)| (0..n).map(move |b| (alt, b)));
    let mut missed: Vec<String> = std::iter::once((usize::MAX, 0))
        .chain(targets)
        .map(|t| {
            let mut text = String::new();
            write(&hir, t, &mut 0, &mut text);
            text
        })
        .filter(|t| !holds(t))
        .collect();
    missed.sort();
    missed.dedup();
    missed
}

#[test]
fn every_alternative_of_every_rule_holds_a_literal() {
    let mut report = Vec::new();
    for rule in RULES.iter() {
        if rule.literals.iter().all(|l| never_occurs(l)) {
            continue;
        }
        for text in unreached(rule, rule.pattern) {
            report.push(format!("{}: {text:?}", rule.id));
        }
    }
    assert!(
        report.is_empty(),
        "{} texts match a rule's pattern but hold none of its literals, so the \
         prefilter never shows them to it:\n{}",
        report.len(),
        report.join("\n")
    );
}

/// The release build's `regex` lacks Unicode's general categories and scripts
/// (`\p` classes); the tests have them, because proptest turns them on. A pattern that
/// names one compiles only in the tests: a rule would fail to build the engine, and a
/// page mark in `prose.rs` would answer "no" without a word. No source names one.
#[test]
fn no_pattern_names_a_unicode_class_the_release_build_lacks() {
    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    sources(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 50, "{} sources found", files.len());
    let classes = [format!("{}p{{", '\\'), format!("{}P{{", '\\')];
    let named: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            text.lines()
                .filter(|l| classes.iter().any(|c| l.contains(c.as_str())))
                .map(|l| format!("{}: {}", f.display(), l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(named.is_empty(), "{}", named.join("\n"));
}
