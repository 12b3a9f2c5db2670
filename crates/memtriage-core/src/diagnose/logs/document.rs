//! Marks that a whole text is a page, not a program's output: front matter, a
//! directive, an article's sections, a caption, a page speaking of itself. The
//! errors such a page shows are its examples.

use std::sync::OnceLock;

use regex::Regex;

use super::prose::{first_person, matches};

/// How much of the input's head is read for the marks of a document: the sample the
/// scanner holds before it reads anything (pages are short), so the answer does not
/// depend on how the input was cut in chunks.
pub(super) const DOCUMENT_HEAD: usize = super::wrap::SAMPLE;

/// The input is a page, not a program's output: it carries what only documents
/// carry. A reStructuredText directive (`.. code-block:: text`), a page's front matter
/// (`---` then `title:`), or a knowledge-base article's sections, two of `Problem`,
/// `Cause`, `Analysis`, `Solution`, … each alone on its line. Headings and bullets are
/// no such mark: issue templates have them (`### Describe the bug`).
pub(super) fn reads_as_document(head: &str) -> bool {
    static CAPTION: OnceLock<Option<Regex>> = OnceLock::new();
    static CHANGE: OnceLock<Option<Regex>> = OnceLock::new();
    static DIRECTIVE: OnceLock<Option<Regex>> = OnceLock::new();
    static SECTION: OnceLock<Option<Regex>> = OnceLock::new();
    // As a diff (`+`), a quote (`> `) or both may show the page.
    let lines: Vec<&str> = head
        .lines()
        .map(|l| l.trim_start_matches(['+', '>', ' ']).trim_end())
        .collect();
    // Front matter opens the page, or the first lines of a quote of it (a fence, a
    // line that says what it is).
    let front_matter = lines.iter().take(8).enumerate().any(|(i, l)| {
        *l == "---"
            && lines.iter().skip(i + 1).take(5).any(|l| {
                let l = l.to_ascii_lowercase();
                l.starts_with("title:") || l.starts_with("description:")
            })
    });
    let directive = lines.iter().any(|l| {
        matches(
            &DIRECTIVE,
            r"(?i)^\.\. (?:code-block|code|sourcecode|note|warning|tip|important|admonition|literalinclude)::",
            l,
        )
    });
    let mut sections: Vec<String> = lines
        .iter()
        .filter(|l| {
            matches(
                &SECTION,
                r"(?i)^(?:\d{1,2}[.)、]\s*)?\**(?:problem|cause|root cause|possible causes?|symptoms?|troubleshooting|analysis|solution|resolution|workaround|applies to|diagnosis|原因|根本原因分析|原因分析|问题现象(?:与背景)?|解决方法|解决方案|解決策|解決方法|対処法|対策|症状|概要|概述|причина|решение|проблема|ursache|lösung|causa|solución|solução|overview|introduction|implementation|what this means|what (?:this|the) error means|what it is|what it means|why it happens|why it matters|how to reproduce|how to monitor|how to detect|how to fix|how to diagnose(?: it)?|what to do|diagnostic steps|common causes|prerequisites|see also|references|explanation|why this matters|why this is a problem|what this check looks for|bad configuration|good configuration)\**\s*:?\s*\**$",
                l,
            )
        })
        .map(|l| {
            l.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | ')' | '、'))
                .trim_matches(|c: char| c == '*' || c == ':' || c.is_whitespace())
                .to_lowercase()
        })
        .collect();
    sections.sort();
    sections.dedup();
    // Sphinx and MkDocs end a rendered heading with its permalink's pilcrow; a vendor's
    // knowledge base states an article's review (`Solution Verified - Updated`).
    let permalink = lines
        .iter()
        .any(|l| l.ends_with('\u{b6}') && l.chars().count() <= 100)
        || permalinks_below_headings(&lines) >= 2;
    // A book's or a manual's numbered caption (`Example A-1 Sample Header from a
    // Crash`, `Figure 3.2 …`) over the output it shows.
    let caption = lines.iter().any(|l| {
        matches(
            &CAPTION,
            r"^(?:Example|Figure|Fig\.|Listing|Table)\s+[A-Z]?-?\d+(?:[.-]\d+)*[.:]?\s+[A-Z]",
            l,
        )
    });
    let knowledge_base = lines
        .iter()
        .any(|l| l.starts_with("Solution ") && l.contains(" - Updated"));
    let faq = lines.iter().take(8).any(|l| {
        matches!(
            l.trim_matches(|c: char| c == '#' || c == '*' || c.is_whitespace())
                .to_ascii_lowercase()
                .as_str(),
            "frequently asked question" | "frequently asked questions" | "faq" | "faqs"
        )
    }) || lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| {
            // An FAQ entry kept as an issue: `# FAQ: I keep getting “Too many open files” …`.
            let title = l
                .trim_start_matches(|c: char| c == '#' || c == '*' || c.is_whitespace())
                .to_ascii_lowercase();
            title.starts_with("faq:") || title.starts_with("faq**:") || title.starts_with("[faq]")
        });
    // A manual page's sections, each alone on its line, as the translated pages name
    // them too (Polish `NAZWA`, `SKŁADNIA`, `OPIS`; German, French, Spanish, Italian,
    // Portuguese, Russian, Japanese); a wiki's line under the title.
    let man_page = MAN_PAGE_SECTIONS
        .iter()
        .filter(|s| lines.contains(s))
        .count()
        >= 2;
    let wiki = lines.iter().take(4).any(|l| {
        l.starts_with("From ")
            && (l.ends_with(" Wiki") || l.ends_with("Wiki") || l.contains("the free encyclopedia"))
    });
    // A change's own title (`fix(docker): stop build immediately on memory
    // starvation`, a conventional commit's, with its scope or as the page's heading;
    // a log's `build: clang++ …` is none): the text tells what the change does about
    // a failure, not a failure met. So is an Apache project's pull request titled by
    // its ticket and component (`[SPARK-40781][CORE] Explain exit code 137 as …`).
    let change = lines.iter().take(4).any(|l| {
        matches(
            &CHANGE,
            r"^(?:#+\s*(?:fix|feat|perf|refactor|chore|docs|build|ci|test)(?:\([A-Za-z0-9_./-]+\))?|(?:fix|feat|perf|refactor|chore|docs|build|ci|test)\([A-Za-z0-9_./-]+\))!?: \S|^#+\s*\[[A-Z][A-Z0-9]+-\d+\](?:\[[A-Za-z0-9 _-]+\])+ \S",
            l,
        )
    });
    front_matter
        || change
        || man_page
        || wiki
        || directive
        || caption
        || permalink
        || knowledge_base
        || faq
        || speaks_of_itself(head)
        || lines.iter().any(|l| is_heading_with_anchor(l))
        || sections.len() >= 2
        || lines.iter().any(|l| is_table_of_contents(l))
}

/// Headings whose permalink a copy of a docs site kept as a line of its own (`Reasons
/// to use the memory view`, then `#`): a heading is words. A lone `#` under code, a
/// config's line or HotSpot's banner (`SIGBUS (0x7) at pc=0x…`) is a comment's: those
/// lines hold figures and symbols, or end in punctuation.
fn permalinks_below_headings(lines: &[&str]) -> usize {
    let written: Vec<&str> = lines.iter().copied().filter(|l| !l.is_empty()).collect();
    written
        .windows(2)
        .filter(|pair| {
            let (heading, mark) = (pair[0], pair[1]);
            mark == "#"
                && heading.contains(' ')
                && heading.chars().count() <= 80
                && heading.starts_with(|c: char| c.is_uppercase())
                && !heading.ends_with(|c: char| c.is_ascii_punctuation())
                && heading
                    .chars()
                    .all(|c| c.is_alphabetic() || c == ' ' || c == '-' || c == '\'')
        })
        .count()
}

/// `This post explains how to analyse the segfault message`, `Dieser Artikel ist Ihr
/// umfassender Leitfaden`: a page names itself. A report links one in the first
/// person (`I followed this article`).
fn speaks_of_itself(head: &str) -> bool {
    const SELF: &[&str] = &[
        "this article",
        "this guide",
        "this tutorial",
        "this post explains",
        "in this post",
        "dieser artikel",
        "in diesem artikel",
        "cet article",
        "este artículo",
        "este artigo",
        "neste artigo",
        "эта статья",
        "в этой статье",
        "この記事",
        "本文将",
        "이 글에서",
    ];
    let lowercase = head.to_lowercase();
    !first_person(head) && SELF.iter().any(|p| lowercase.contains(p))
}

/// `Problem Definition#`: a docs site's heading, whose permalink (`#`) the copy kept
/// glued to its last word. A shell's prompt ends so too (`[root@node ~]#`), but after
/// a bracket, a path or a host, never after a title's words.
pub(super) fn is_heading_with_anchor(line: &str) -> bool {
    static ANCHORED: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &ANCHORED,
        r"^[A-Z][A-Za-z'’-]*(?: [A-Za-z'’()-]+){0,5}[a-z]#$",
        line,
    )
}

/// A page's table of contents, alone on its line (`Table of Contents`, `目次`,
/// `Quick Navigation:`): no program prints one above its output.
fn is_table_of_contents(line: &str) -> bool {
    static CONTENTS: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &CONTENTS,
        r"(?i)^\**(?:table of contents|contents|quick navigation|in this article|on this page|目次|目录|目錄|содержание|inhaltsverzeichnis|índice|sommaire|목차)\**\s*:?$",
        line,
    )
}

/// The first sections of a manual page, in the languages its translations are kept in.
const MAN_PAGE_SECTIONS: &[&str] = &[
    "NAME",
    "SYNOPSIS",
    "DESCRIPTION",
    "NAZWA",
    "SKŁADNIA",
    "OPIS",
    "BEZEICHNUNG",
    "ÜBERSICHT",
    "BESCHREIBUNG",
    "NOM",
    "NOMBRE",
    "SINOPSIS",
    "DESCRIPCIÓN",
    "NOME",
    "SINTASSI",
    "DESCRIZIONE",
    "SINOPSE",
    "DESCRIÇÃO",
    "ИМЯ",
    "ОБЗОР",
    "ОПИСАНИЕ",
    "名前",
    "書式",
    "説明",
];

/// An article's title: how to fix an error, a guide to it, what it means. A page so
/// titled quotes the errors it is about; a failing job's output has no title.
pub(super) fn is_article_title(line: &str) -> bool {
    static TITLE: OnceLock<Option<Regex>> = OnceLock::new();
    // A question about what follows (`What is the correct interpretation of the
    // following segfault messages?`) asks about the poster's own output.
    let lowercase = line.to_lowercase();
    // So does a plea for a fix (`how to fix it?`) over the poster's own output.
    let asks_about_what_follows = line.trim_end().ends_with('?')
        && (lowercase.contains("the following")
            || first_person(line)
            || lowercase.trim_start().starts_with("how to "));
    // A question the writer goes on from in the same line (`What is the memory
    // requirement for …? I am getting Memory Error even after …`) opens a report.
    let asks_and_goes_on = first_person(line)
        && line
            .trim_end()
            .find('?')
            .is_some_and(|i| i + 1 < line.trim_end().len());
    // An issue template's heading (`### What is the issue?`) asks the reporter.
    let template_heading = [
        "what is the issue",
        "what is the problem",
        "what is the bug",
        "what is the expected",
        "what is the current",
        "what is the actual",
    ]
    .iter()
    .any(|h| lowercase.contains(h))
        // `### What is the hardware spec (RAM, OS)?`: a form's heading asks for the
        // reporter's setup.
        || (lowercase.trim_start().starts_with("###")
            && line.trim_end().ends_with('?')
            && lowercase
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| ["hardware", "version", "spec", "specs", "environment", "platform", "setup"].contains(&w)))
        // `### What is your operating system?`: a form asks the reporter about theirs,
        // also without the mark (`> What is your rclone version (eg output from …)`).
        || ((line.trim_end().ends_with('?')
            || lowercase
                .trim_start_matches(['#', '>', '*', ' '])
                .starts_with("what is your"))
            && lowercase.contains("your "));
    // A package manager's progress (`Resolving dependencies...`, conda's `Solving
    // environment: done`, git's `Resolving deltas: 100%`) is output, not a title.
    let trimmed = line.trim_end();
    let progress = trimmed.ends_with("...")
        || trimmed.ends_with('\u{2026}')
        || [
            "resolving dependencies",
            "solving environment",
            "resolving deltas",
        ]
        .iter()
        .any(|p| lowercase.trim_start().starts_with(p));
    !asks_about_what_follows
        && !asks_and_goes_on
        && !template_heading
        && !progress
        && (names_a_kind_of_error(trimmed)
            || matches(
                &TITLE,
                r"(?i)^\s*(?:#+\s*)?(?:\[(?:howto|how-to|tutorial|guide|faq)\]|how to (?:fix|solve|resolve|handle|avoid|debug|troubleshoot)\b|fix(?:ing)?:?\s|solved?:|troubleshooting\b|understanding\b|(?:resolving|solving|avoiding|preventing|dealing with) \S|what (?:is|does|causes)\b|как (?:исправить|решить|устранить)|что (?:такое|означает)|如何|怎么|解决|修复|.*(?:の対処|の解決|対処法)|.*해결)|(?i:.*(?:\bqué (?:es|significa|lo causa|causa)\b|\bcómo (?:solucionar|arreglar|reparar|corregir|identificar|resolver)\b|\bcomo (?:resolver|corrigir|consertar)\b|\bcomment (?:résoudre|corriger|réparer)\b|\bqu['’]est-ce que\b|\bwie (?:man )?(?:behebt|beheben|löst)\b|\bcome risolvere\b))|(?i:\s[-–—:]\s*(?:diagnosing|troubleshooting|debugging|fixing|resolving|understanding)\s\S.*)|(?i:troubleshooting guide|complete guide|explained|causes and (?:fixes|solutions)|what it means|how to fix it|解决方案|解决方法|深入解析|原因分析|的原因|する理由|の原因|の理由|の対策|対処法)\s*$",
                line,
            ))
}

/// `Out of Memory Errors`, `Common Exceptions`: a page's title in title case over the
/// kind of errors it is about (an issue's title names the one the poster got).
fn names_a_kind_of_error(title: &str) -> bool {
    const SMALL: &[&str] = &[
        "of", "the", "and", "in", "on", "for", "to", "a", "an", "with",
    ];
    let words: Vec<&str> = title.split_whitespace().collect();
    (2..=6).contains(&words.len())
        && words
            .last()
            .is_some_and(|w| *w == "Errors" || *w == "Exceptions")
        && words
            .iter()
            .all(|w| SMALL.contains(w) || w.chars().next().is_some_and(|c| c.is_uppercase()))
}
