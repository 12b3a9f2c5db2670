//! Text that reads as documentation, not as a failing program's output: a page that
//! quotes an error as an example, a sentence addressed to the reader about it, a
//! section title, values that were made up for the page.

use std::sync::OnceLock;

use regex::Regex;

#[cfg(test)]
use super::document::is_heading_with_anchor;
use super::document::{is_article_title, reads_as_document, DOCUMENT_HEAD};
use super::engine::{lazy_regex, normalize};
use crate::parse::kmsg;

/// `## CUDA out of memory`: a document's section title names an error, it is not one.
/// A JVM's fatal-error banner also opens its lines with `# `, but its lines are
/// sentences (`…failed to protect 16384 bytes.`) and figures (`pid=4242`); a title is
/// neither.
pub(super) fn is_markdown_heading(msg: &str) -> bool {
    let hashes = msg.bytes().take_while(|b| *b == b'#').count();
    let title = msg[hashes..].trim_end();
    (1..=6).contains(&hashes)
        && msg.as_bytes().get(hashes) == Some(&b' ')
        && !title.ends_with('.')
        && !title.contains('=')
        && !names_an_exception(title.trim_start())
        && !is_issue_title(title.trim_start())
        && !is_v8_banner(title.trim_start())
}

/// V8 frames its fatal errors in `#` lines too: `# Fatal error in …, line 0`, `# Fatal
/// process out of memory: Zone`.
fn is_v8_banner(title: &str) -> bool {
    title.starts_with("Fatal error in ") || title.starts_with("Fatal process ")
}

/// `[Bug]: Segmentation fault: 11`, `BUG: …`: an issue's title carries its tracker's
/// tag; a title holding an address (`… for non-canonical address 0x25b5f6bb1a24827e`)
/// was copied from the failure. Neither is a section of a page.
fn is_issue_title(title: &str) -> bool {
    static TAGGED: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &TAGGED,
        r"(?i)^(?:\[\s*(?:bug|bug report|question|help|issue|crash|error)\s*\]|bug\s*:)|\b0x[0-9a-f]{8,}\b",
        title,
    )
}

/// The line under an issue's title where a thread is pasted: its author and date
/// (`mxsurui · description · 2023-10-30`, `alice commented on May 14, 2025`).
pub(super) fn is_issue_byline(line: &str) -> bool {
    static BYLINE: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &BYLINE,
        r"^\S.{0,60} · (?:description|comment) · \d{4}-\d{2}-\d{2}\b|^\S+ (?:commented|opened this issue)(?: on)? (?:[A-Z][a-z]{2,8} \d{1,2}, \d{4}|\d{4}-\d{2}-\d{2})",
        line.trim(),
    )
}

/// The first heading of an issue form under its title (`### Description of the bug`,
/// `## Steps to reproduce`): the heading above is the issue's title.
fn is_issue_form_heading(line: &str) -> bool {
    static FORM: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &FORM,
        r"(?i)^#{1,6}\s*(?:\W\s*)?(?:description of the bug|describe the bug|bug description|bug report|what happened\??|steps to reproduce|expected behaviou?r|current behaviou?r|actual behaviou?r|issue description|problem description)\s*:?\s*$",
        line,
    )
}

/// How the input's head reads.
pub(super) struct Head {
    /// It opens with an article's title, or carries the marks of a document
    /// ([`reads_as_document`]): the errors it quotes are examples.
    pub article: bool,
    /// Its writer never speaks of themselves (`I`, `my`, `我`): a page, not a report.
    pub impersonal: bool,
    /// A pasted issue thread's title (a heading over the author's byline): the error
    /// the poster got, no section of a page.
    pub issue_title: Option<String>,
}

/// The head of the input, `None` while it has no non-empty line yet.
pub(super) fn read_head(region: &[u8]) -> Option<Head> {
    let text = &region[..region.len().min(super::MAX_LINE * 3)];
    // The title opens the page, or opens the fence a user quotes it in (after
    // their line that says what it is). A second line of the user's own (`어떻게
    // 해결하나요?`, how do I fix it?) is no title.
    let lines: Vec<String> = text
        .split(|b| *b == b'\n')
        .map(|l| {
            // A page quoted in markdown is still the page.
            let l = String::from_utf8_lossy(l);
            l.trim_start_matches(['>', ' ']).trim().to_string()
        })
        .filter(|l| !l.is_empty())
        .take(4)
        .collect();
    let first = lines.first()?;
    let mut firsts = vec![first.clone()];
    if let Some(fence) = lines.iter().take(2).position(|l| l.starts_with("```")) {
        firsts.extend(lines.get(fence + 1).cloned());
    }
    let head = String::from_utf8_lossy(&region[..region.len().min(DOCUMENT_HEAD)]);
    let issue_title = issue_title(&lines);
    // An issue's title over its byline that names work to do (`# Fix heroku memory
    // issue`) heads the poster's own log, not an article about the error.
    let names_work_to_do = |l: &String| {
        issue_title.as_ref() == Some(l)
            && l.trim_start_matches(['#', ' '])
                .get(..4)
                .is_some_and(|w| w.eq_ignore_ascii_case("fix "))
    };
    let titles_an_article = |l: &String| is_article_title(l) && !names_work_to_do(l);
    Some(Head {
        article: firsts
            .iter()
            .any(|l| titles_an_article(l) || is_numbered_section(l))
            || reads_as_document(&head),
        // An issue form's heading (`## Describe the bug`) or an issue's byline heads a
        // report, whoever it speaks of and in whatever language.
        impersonal: !first_person(&head)
            && !head
                .lines()
                .any(|l| is_issue_form_heading(l) || is_issue_byline(l)),
        issue_title,
    })
}

/// An issue's title as a thread is pasted: its heading under the tracker's line naming
/// the issue and its labels where those were kept (`zhu30844/MotionSense · issue #4 ·
/// open · C`, `labels: bug`), or above its byline or its form's first heading.
fn issue_title(lines: &[String]) -> Option<String> {
    static TRACKER: OnceLock<Option<Regex>> = OnceLock::new();
    let tracker = lines.first().is_some_and(|l| {
        matches(
            &TRACKER,
            r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+ · (?:issue|pull request|discussion) #[0-9]+(?: |$)",
            l,
        )
    });
    let labels = tracker && lines.get(1).is_some_and(|l| l.starts_with("labels: "));
    // Each line skipped was there to be read: the slice stays in bounds.
    let lines = &lines[usize::from(tracker) + usize::from(labels)..];
    let first = lines.first()?;
    (first.starts_with('#')
        && (tracker
            || lines
                .get(1)
                .is_some_and(|l| is_issue_byline(l) || is_issue_form_heading(l))))
    .then(|| first.clone())
}

/// `7.4.5. Pod エビクションについて`: a manual's section, numbered to its third level,
/// opens the page (a version, `2.1.0` or `22.04.4 LTS`, and a log's dotted date before
/// its level, `14.03.22 INFO`, are followed by no title of words).
fn is_numbered_section(line: &str) -> bool {
    static NUMBERED: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &NUMBERED,
        r"^\d{1,2}\.\d{1,2}\.\d{1,2}\.?\s+(?:[A-Z][a-z]|[\x{80}-\x{10FFFF}])",
        line,
    )
}

/// `RuntimeError: …`, `torch.OutOfMemoryError: …`: an issue's title that is the
/// error the poster got, not a section of a page.
fn names_an_exception(title: &str) -> bool {
    let name_end = title
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(title.len());
    let name = &title[..name_end];
    (name.ends_with("Error") || name.ends_with("Exception")) && title[name_end..].starts_with(':')
}

/// Words of a page before the example it shows (see [`quoted_as_example`]).
const DOC_PHRASES: &[&str] = &[
    // A page showing what the reader will meet, in the languages of the pages
    // that quote these errors most.
    "typical message",
    "typical error",
    "for example",
    "for instance",
    "an example",
    "example output",
    "example log output",
    "log output:",
    "типичное сообщение",
    "например",
    "пример",
    "例如",
    "比如",
    "示例",
    "例えば",
    "の例",
    "以下のような",
    "예를 들어",
    "zum beispiel",
    "por ejemplo",
    "par exemple",
    "you may encounter",
    "you might encounter",
    "you may see",
    "you might see",
    "you will see",
    "you'll see",
    "you often see",
    "you usually see",
    "you typically see",
    "you may get",
    "you might get",
    "you may run into",
    "you might run into",
    "the following error",
    "something like",
    "looks like this",
    "look like one of",
    "as shown below",
    "shown below",
    "like the following",
    "a message like",
    "messages like",
    "sont enregistrés",
    "are logged in",
    // The modal of a page: what may happen to anyone, not what happened.
    "may appear",
    "might appear",
    "can appear",
    "may occur",
    "can occur",
    // A page's list of what brings it on (`This happens when:` above its bullets;
    // a runner's `This can happen when the runner service is stopped` is no list).
    "this happens when:",
    "this can happen when:",
    "可能出现",
    "可能会出现",
    "如下错误",
    "如下报错",
    "以下错误",
    "вы увидите",
    "может появиться",
    "similares a los siguientes",
    "mensajes similares",
    "como los siguientes",
    "seperti berikut",
    "sebagai berikut",
    // A change's description shows the message it adds.
    "we now report",
    "now reports",
    "now prints",
    "will now report",
    "will now print",
    "this pr ",
    "this pull request",
];

/// Documentation quotes an error after telling the reader they may meet it; a user
/// reporting one says what they got. Such a quote is not a failure. The lines are read
/// without the prefix a tool or a quote put on each (a page pasted through `kubectl
/// logs` or into a markdown quote is still a page).
pub(super) fn quoted_as_example(before: &[u8]) -> bool {
    let text = String::from_utf8_lossy(before);
    // A code fence (```` ```text ````: the fence and a language at most) is no line.
    // Each line's message, and whether it reads as a program's line: by its message,
    // or by the wall-clock time a syslog or journal prefix put on it (`Sep 1 23:04:12
    // host kernel:`), unless it introduces what follows (a page read through a journal
    // has that prefix on its sentences too).
    let messages: Vec<(String, bool)> = text
        .lines()
        .map(|l| (l, normalize(l)))
        .filter(|(raw, msg)| !raw.contains("```") || msg.trim().contains(' '))
        .map(|(raw, msg)| {
            let dated = kmsg::parse_line(raw.trim()).wall_time.is_some();
            let logged = is_log_line(msg.trim()) || (dated && !msg.trim_end().ends_with(':'));
            (msg, logged)
        })
        .collect();
    let mut sentences: Vec<(&str, bool)> = messages
        .iter()
        .map(|(l, logged)| (l.trim(), *logged))
        .filter(|(l, _)| !l.is_empty())
        .collect();
    // A list of examples (`* \`NCCL error … internal error\``, one per bullet) is
    // introduced once, by the sentence above its first item.
    while sentences.len() > 1 && sentences.last().is_some_and(|(l, _)| is_list_item(l)) {
        sentences.pop();
    }
    // So is a block of log lines (`[…] NVRM: GPU at …` above `[…] NVRM: Xid …`): the
    // sentence above the block's first line introduces it.
    let mut block = 0;
    while block < MAX_QUOTED_BLOCK
        && sentences.len() > 1
        && sentences.last().is_some_and(|&(_, logged)| logged)
    {
        sentences.pop();
        block += 1;
    }
    let sentences: Vec<&str> = sentences.into_iter().map(|(l, _)| l).collect();
    // The sentence just before the quote: its last line, and the one above when that
    // line goes on from it (a wrapped sentence: `… when the GPU runs out of` / `memory is:`).
    let continued = sentences
        .last()
        .is_some_and(|l| l.starts_with(|c: char| c.is_ascii_lowercase()));
    let lines: Vec<String> = sentences.iter().map(|l| l.to_lowercase()).collect();
    let recent = &lines[lines.len().saturating_sub(if continued { 2 } else { 1 })..];
    // A page's table or section of examples: the heading may stand a few rows above.
    const EXAMPLES_HEADING: &[&str] = &[
        "log examples",
        "error examples",
        "sample output",
        "エラー例",
        "错误示例",
    ];
    // Words a user's report shares with a page (`We are getting the following error`):
    // an example only where the writer does not say it happened to them.
    const SHARED_WITH_REPORTS: &[&str] = &[
        "the following error",
        "an example",
        "something like",
        "looks like this",
        // `… which runs to completion but then crashes as shown below.`
        "as shown below",
        "shown below",
        "如下错误",
        "如下报错",
        "以下错误",
        "以下のような",
    ];
    let reported = sentences[sentences.len().saturating_sub(recent.len())..]
        .iter()
        .any(|l| first_person(l));
    let readers = !reported && recent.iter().any(|l| about_the_readers(l));
    // `When starting an example sketch, I get the following exception:` reports it,
    // whatever words of a page the sentence also has.
    let met = recent
        .iter()
        .any(|l| writer_met_it(l) || appeared_unaddressed(l));
    readers
        || recent.iter().any(|l| {
            DOC_PHRASES
                .iter()
                .any(|p| l.contains(p) && !met && !(reported && SHARED_WITH_REPORTS.contains(p)))
        })
        || lines
            .iter()
            .any(|l| EXAMPLES_HEADING.iter().any(|p| l.contains(p)))
}

/// A sentence, in lower case, in which the writer says they met what follows (`I get
/// the following exception:`, `we keep seeing`, `I'm getting this`, or without the
/// subject, `Seeing intermittent errors like the following`), or that their program
/// did (`master process show the following error`), or shows their own log (`Here is
/// error logs`, `Here is the syslog output`); a page's reader only may.
fn writer_met_it(lowercase: &str) -> bool {
    static MET: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &MET,
        r"^here(?: is|'s| are) (?:the |my |our )?(?:(?:full|complete|whole|relevant|error|crash|server|console|kernel|syslog|dmesg|journal|journalctl|system|gdb|valgrind|terminal|backtrace) ){0,3}(?:logs?|output|stack ?traces?|tracebacks?)\b|^(?:keep |still |now |also )?(?:seeing|getting|receiving|hitting|encountering|experiencing)\b|\b(?:i|we|i'm|i've|we're|we've|i am|we are)\s+(?:(?:also|still|always|now|then|just|keep|kept|have|had|was|were|sometimes|often|randomly|suddenly)\s+){0,2}(?:get|got|getting|gotten|see|saw|seeing|receive|received|receiving|hit|hitting|encounter(?:ed|ing)?|run into|ran into|running into|observe[ds]?|observing|notice[ds]?|noticing)\b|\b(?:shows?|showed|throws?|threw|gives?|gave|returns?|returned|prints?|printed|raises?|raised|reports?|reported|logs?|logged|emits?|emitted|(?:fails?|failed|crash(?:es|ed)?|dies|died|exits?|exited|stops?|stopped|aborts?|aborted)(?: \w+){0,3} with) (?:the |this |these )?following (?:error|errors|exception|message|messages|output)\b",
        lowercase,
    )
}

/// A sentence, in lower case, that says what follows appeared (`When running the CRM
/// wing tutorial the following error appears:`), speaking to no reader: a page says
/// what appears when *you* run it.
fn appeared_unaddressed(lowercase: &str) -> bool {
    static APPEARED: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &APPEARED,
        r"\bthe following (?:error|errors|exception|message|output) (?:appears|appeared|occurs|occurred|shows up|showed up|comes up|came up|pops up|popped up|is shown|was shown|is thrown|was thrown)\b",
        lowercase,
    ) && !lowercase
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| ["you", "your", "you're", "you'll"].contains(&w))
}

/// A sentence, in lower case, that starts with what happens to the reader's own
/// (`If your process gets killed with exit code 137, …`, `… . If your node fails to
/// start, …`): a page's, never a report's.
fn about_the_readers(lowercase: &str) -> bool {
    ["if your ", "when your ", "whenever your "]
        .iter()
        .any(|c| lowercase.starts_with(c) || lowercase.contains(&format!(". {c}")))
}

/// A line naming the error in a sentence that opens on any one case, in the present
/// (`When a task process is terminated with exit code -9 (sigkill) then …`), or on
/// meeting the error with no one who met it, to say what it means (`Encountering the
/// error message “…” typically indicates …`): what happens in general, which a page
/// tells, where the writer does not speak of themselves (`When a model is loaded on GPU
/// 0, I get …` reports). Read on the error's own line only: a sentence that introduces
/// the lines below it (`When a container dies due to OOMKill, there are these types of
/// logs generated:`) is how a report shows its own.
fn about_any_case(lowercase: &str) -> bool {
    static ANY_CASE: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &ANY_CASE,
        r"^(?:(?:when|whenever|if|once) an? (?:[\w-]+ ){0,3}?(?:is|gets|receives|exits|dies|hits|fails|crashes|runs out)\b|(?:encountering|receiving|getting|seeing) (?:the|this|an?) (?:error|message|exception)\b[^?]*\b(?:indicates|means that)\b)",
        lowercase,
    )
}

/// The lines of one quoted log block read back to the sentence that introduces it.
const MAX_QUOTED_BLOCK: usize = 12;

/// A line a program printed, by its first characters: a bracketed prefix (a kernel
/// timestamp, `[…]`, `[ERROR]`), a date, or valgrind's pid (`==29== `).
fn is_log_line(line: &str) -> bool {
    let b = line.as_bytes();
    let valgrind = line
        .strip_prefix("==")
        .and_then(|rest| rest.split_once("=="))
        .is_some_and(|(pid, _)| !pid.is_empty() && pid.bytes().all(|c| c.is_ascii_digit()));
    line.starts_with('[')
        || valgrind
        || (b.len() > 10 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[7] == b'-')
}

/// An item of a bulleted list (`* `, `- `, `• `).
fn is_list_item(line: &str) -> bool {
    ["* ", "- ", "• "].iter().any(|b| line.starts_with(b))
}

/// A line of documentation that names the error while telling the reader about it
/// (`If you encounter the error \`[Errno 24] Too many open files\`, this indicates…`,
/// `The PAGE_FAULT_IN_NONPAGED_AREA bug check has a value of 0x00000050.`): a program
/// that fails prints the error, never a sentence addressed to its reader about it.
/// Only words up to the error's end can address the reader about it: a program's hint
/// after its error (`Couldn't set RLIMIT_MEMLOCK for bpftrace. If your program is not
/// loading, you can try …`) is the program's.
pub(super) fn explains_the_error(msg: &str, matched: std::ops::Range<usize>) -> bool {
    let text = msg
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    let upto_error = msg.get(..matched.end).unwrap_or(msg);
    // A list's number (`1. if you got page crash with BUS_ADRERR …`) opens no sentence.
    let upto_error_lowercase = upto_error
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(['.', ')'])
        .trim_start()
        .to_lowercase();
    const CONDITIONS: &[&str] = &[
        "if you ",
        "if you're ",
        "when you ",
        "when you're ",
        "whenever you ",
        "in case you ",
    ];
    const MEETING: &[&str] = &[
        "encounter",
        "get ",
        "got ",
        "are getting",
        "are seeing",
        "getting ",
        "seeing ",
        "see ",
        "hit ",
        "run into",
        "receive",
        "experience",
        "face ",
    ];
    let addressed = CONDITIONS.iter().any(|c| {
        upto_error_lowercase
            .strip_prefix(c)
            .is_some_and(|rest| MEETING.iter().any(|m| rest.trim_start().starts_with(m)))
    }) || about_the_readers(&upto_error_lowercase)
        || (about_any_case(&text) && !first_person(upto_error))
        || tells_the_reader_they_will_meet_it(upto_error);
    // Vendors' and other languages' pages: `XID 48: This XID indicates …`, `可能会遇到"…"这样的错误`.
    const ABOUT_THE_ERROR: &[&str] = &[
        "bug check has a value of",
        "means that your ",
        "look for ",
        "this means your ",
        "this xid indicates",
        "可能会遇到",
        "可能遇到",
        "这样的错误",
        "のようなエラー",
        "log examples",
        "error examples",
        "appears in your ",
    ];
    // Russian pages: `Если во время дефрагментации возникнет ошибка «…»` (if the error
    // arises during …).
    const RUSSIAN_MEETING: &[&str] = &[
        "возникнет",
        "возникает",
        "появится",
        "появляется",
        "получите",
        "увидите",
    ];
    let russian_condition =
        text.starts_with("если ") && RUSSIAN_MEETING.iter().any(|m| text.contains(m));
    addressed
        || russian_condition
        || ABOUT_THE_ERROR.iter().any(|p| text.contains(p))
        || states_a_policy(&text)
}

/// `Jobs which exceed the requested memory will be automatically killed`, `Jobs are
/// evicted unconditionally if they exceed 30%`: a cluster's or a platform's rule for
/// all jobs, which its documentation states and no failing job prints.
fn states_a_policy(lowercase: &str) -> bool {
    static POLICY: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &POLICY,
        r"\b(?:jobs|pods|processes|containers|tasks|workers|applications)\s+(?:(?:that|which|who)\b[^.]{0,80}?\b(?:will be|are|get|may be|can be)\s+(?:\w+\s+)?(?:killed|evicted|terminated|held|removed|preempted)\b|(?:are|will be|may be|get)\s+(?:\w+\s+)?(?:killed|evicted|terminated|held|removed|preempted)\b[^.]{0,40}?\b(?:if|when|once)\b)",
        lowercase,
    )
}

/// `you'll eventually hit the kernel limit and start seeing ENOMEM errors`: the reader
/// is told what they will meet, anywhere in the sentence. Not a writer showing their
/// own output (`as you can see`, `I get …`).
fn tells_the_reader_they_will_meet_it(msg: &str) -> bool {
    static TOLD: OnceLock<Option<Regex>> = OnceLock::new();
    let lowercase = msg.to_lowercase();
    !lowercase.contains("as you can see")
        && !first_person(msg)
        && matches(
            &TOLD,
            r"\byou(?:['’]ll|['’]re| will| may| might| can| could| are)?\s+(?:\w+\s+){0,2}(?:start seeing|see|get|hit|encounter|run into|receive)\b",
            &lowercase,
        )
}

/// The error named inside a sentence, not printed: quoted (`` `Killed process <pid>` ``,
/// 「CUDA out of memory」, “…”, «…») with words around the quote, or a cell of a
/// results table (`| 16 | 2.59 | CUDA out of memory |`). A program prints its error as
/// the line (at most after a prefix); a page or a write-up talks about it. The caller
/// asks only of a text whose writer never speaks of themselves: a user's report
/// (`This is failing with \`ENOMEM\``, `I'm running this within NixOS`) quotes what
/// they got.
pub(super) fn mentioned_not_printed(msg: &str, matched: std::ops::Range<usize>) -> bool {
    in_quote_within_prose(msg, &matched)
        || is_table_cell(msg, &matched)
        || inside_cjk_sentence(msg, &matched)
}

/// An error named without quotes inside a sentence of Chinese, Japanese or Korean
/// prose, which goes on on both sides of it (`가장 많이 겪는 문제는 RuntimeError: CUDA
/// out of memory 오류입니다`, the commonest problem is the … error): a program prints
/// its error as the line, with at most a prefix before it.
fn inside_cjk_sentence(msg: &str, matched: &std::ops::Range<usize>) -> bool {
    const WORDS: usize = 8;
    let cjk = |text: &str| text.chars().filter(|c| is_cjk(*c)).count();
    // A label in the prose's language and a colon before it (`显存不足：CUDA out of
    // memory…`) introduce the error a program prints (an exception's name before its
    // colon, `RuntimeError: …`, is the error's own).
    let before = &msg[..matched.start];
    let labelled = before
        .trim_end()
        .strip_suffix([':', '\u{ff1a}'])
        .and_then(|label| label.trim_end().chars().last())
        .is_some_and(is_cjk);
    // One quoted after a verb that reports it (`训练时报\`MXNetError: …\`错误`, got
    // the … error while training) is the writer's.
    let reported = before
        .rfind(['`', '「', '『', '“'])
        .is_some_and(|open| reports_before_quote(before[..open].trim_end()));
    // A match in the prose's own language is the writer's words (`内存一直在涨`,
    // memory keeps rising), not an error they name.
    cjk(&msg[matched.clone()]) == 0
        && !labelled
        && !reported
        && cjk(before) >= WORDS
        && cjk(&msg[matched.end..]) >= WORDS
}

fn in_quote_within_prose(msg: &str, matched: &std::ops::Range<usize>) -> bool {
    const PAIRS: &[(char, char)] = &[
        ('`', '`'),
        ('「', '」'),
        ('『', '』'),
        ('“', '”'),
        ('«', '»'),
    ];
    let before = &msg[..matched.start];
    let after = &msg[matched.end..];
    let quoted = PAIRS.iter().find_map(|&(open, close)| {
        let start = before.rfind(open)?;
        // Inside a quote: the last mark before the match opens one (a backtick that
        // closes `sar -S` does not open the text after it).
        let opens = if open == close {
            before.matches(open).count() % 2 == 1
        } else {
            before.rfind(close).is_none_or(|c| c < start)
        };
        let end = matched.end + after.find(close)?;
        (opens && !msg[start + open.len_utf8()..end].contains(close)).then(|| {
            let outside = format!("{} {}", &msg[..start], &msg[end + close.len_utf8()..]);
            (start, outside)
        })
    });
    let Some((start, outside)) = quoted else {
        return false;
    };
    if reports_before_quote(&msg[..start]) {
        return false;
    }
    // The words of a sentence around the quote, not of other quotes beside it (two
    // lines of a C++ abort joined into one, each in its own backticks).
    let outside = without_quotes(&outside, PAIRS);
    let words = outside
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
        .count();
    let cjk = outside.chars().filter(|c| is_cjk(*c)).count();
    words >= 4 || cjk >= 6
}

/// The words before a quote say something failed with it (`This is failing with
/// \`ENOMEM\``, `it crashed with 「…」`, a Rust panic's `Model failed with error
/// \`…\``, `the terminal shows an error: \`…\``): a report of the error, not a mention.
fn reports_before_quote(before: &str) -> bool {
    static REPORT: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &REPORT,
        r"(?i)(?:\b(?:fail(?:s|ed|ing)?|crash(?:es|ed|ing)?|die[sd]|dying|abort(?:s|ed|ing)?|exit(?:s|ed|ing)|got|gets|getting|throws?|threw|raised?|returns?|returned)\b(?:\s+with)?(?:\s+(?:(?:an?|the)\s+)?\w+)?|\b(?:shows?|showed|showing|prints?|printed|printing|displays?|displayed)\s+(?:(?:an?|the|this|these|following)\s+)*(?:errors?|messages?|exceptions?))\s*:?\s*$|(?:报错?|报了|出现了?|遇到了?|提示|抛出了?)\s*[:：]?\s*$",
        before,
    )
}

/// `text` without the spans between each pair of quote marks.
fn without_quotes(text: &str, pairs: &[(char, char)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut closing: Option<char> = None;
    for c in text.chars() {
        match closing {
            Some(close) if c == close => closing = None,
            Some(_) => {}
            None => match pairs.iter().find(|(open, _)| *open == c) {
                Some(&(_, close)) => closing = Some(close),
                None => out.push(c),
            },
        }
    }
    out
}

/// A row of a markdown table whose cell is the matched error and nothing more.
fn is_table_cell(msg: &str, matched: &std::ops::Range<usize>) -> bool {
    let row = msg.trim();
    if !(row.starts_with('|') && row.ends_with('|')) || row.matches('|').count() < 5 {
        return false;
    }
    let cell_start = msg[..matched.start].rfind('|').map_or(0, |i| i + 1);
    let cell_end = msg[matched.end..]
        .find('|')
        .map_or(msg.len(), |i| matched.end + i);
    msg[cell_start..cell_end].trim().len() <= matched.len() + 2
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}')
}

/// The writer speaks of themselves: a report of what happened to them (Chinese and
/// Japanese blogs say `笔者`, the author, for I). A lower-case `i` counts before a
/// verb, as people type it (`Everytime when i make "geth" … i get kicked out`): alone it
/// is also Polish's and Croatian's `and`.
pub(super) fn first_person(text: &str) -> bool {
    static FIRST: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &FIRST,
        r"\b(?:I|I'm|I've|my|My|we|We|our|Our|me)\b|\bi (?:am|was|have|had|get|got|make|ran|tried|try|see|saw|can|did|use|used|think|need|want|just|also|then|keep|kept|installed|followed)\b|我|私は|私の|笔者|筆者|僕は|\b(?:저는|제가|저희|나는|내가)\b|\b(?:я|Я|мы|Мы|мне|ich|Ich|mein|eu|Eu|meu|je|Je)\b",
        text,
    )
}

/// Values no system gave: the pid 1234 that pages put in their example lines (not an
/// uptime of 12345.678: a machine up three and a half hours has that one). A user who
/// hides theirs writes `XXX` or `<pid>` (read as placeholders, the line still counts).
pub(super) fn has_invented_values(line: &str) -> bool {
    static INVENTED: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &INVENTED,
        // Also the names a page makes up for the reader's own (`yourscript.php`,
        // `[your-node-name]`), a second placeholder (`yyyy`), a made-up id (`abc-123`).
        r"(?i)\b(?:pid|process|task|tgid)\b\s*[=:]?\s*\(?(?:1234|12345|123456|1234567)\b|\b0x(?:1234|deadbeef)\b|=\[(?:\.\.\.|…)\]|\byour(?:script|file|app|[-_](?:node|cluster|script|file|app|user|host|project|service|container|pod)[\w-]*)\b|\byyyy\b|\babc-123\b",
        line,
    )
}

/// `pattern` (compiled once into `cell`) matches `text`; a pattern that does not
/// compile matches nothing (the tests compile both).
pub(super) fn matches(cell: &'static OnceLock<Option<Regex>>, pattern: &str, text: &str) -> bool {
    lazy_regex(cell, pattern).is_some_and(|re| re.is_match(text))
}

#[cfg(test)]
#[path = "prose_tests.rs"]
mod tests;
