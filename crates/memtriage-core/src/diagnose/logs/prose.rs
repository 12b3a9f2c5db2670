//! Text that reads as documentation, not as a failing program's output: a page that
//! quotes an error as an example, a sentence addressed to the reader about it, a
//! section title, values that were made up for the page.

use std::sync::OnceLock;

use regex::Regex;

use super::engine::{normalize, Engine};

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

/// Documentation quotes an error after telling the reader they may meet it; a user
/// reporting one says what they got. Such a quote is not a failure. The lines are read
/// without the prefix a tool or a quote put on each (a page pasted through `kubectl
/// logs` or into a markdown quote is still a page).
pub(super) fn quoted_as_example(engine: &Engine, before: &[u8]) -> bool {
    let text = String::from_utf8_lossy(before);
    // A code fence (```` ```text ````: the fence and a language at most) is no line.
    let messages: Vec<String> = text
        .lines()
        .map(|l| (l, normalize(engine, l)))
        .filter(|(raw, msg)| !raw.contains("```") || msg.trim().contains(' '))
        .map(|(_, msg)| msg)
        .collect();
    let sentences: Vec<&str> = messages
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    // The sentence just before the quote: its last line, and the one above when that
    // line goes on from it (a wrapped sentence: `… when the GPU runs out of` / `memory is:`).
    let continued = sentences
        .last()
        .is_some_and(|l| l.starts_with(|c: char| c.is_ascii_lowercase()));
    let lines: Vec<String> = sentences.iter().map(|l| l.to_lowercase()).collect();
    let recent = &lines[lines.len().saturating_sub(if continued { 2 } else { 1 })..];
    const DOC_PHRASES: &[&str] = &[
        // A page showing what the reader will meet, in the languages of the pages
        // that quote these errors most.
        "typical message",
        "typical error",
        "for example",
        "for instance",
        "an example",
        "example output",
        "типичное сообщение",
        "например",
        "пример",
        "例如",
        "比如",
        "示例",
        "例えば",
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
        "you may get",
        "you might get",
        "you may run into",
        "you might run into",
        "the following error",
        "something like",
        "looks like this",
    ];
    // A page's table or section of examples: the heading may stand a few rows above.
    const EXAMPLES_HEADING: &[&str] = &["log examples", "error examples", "sample output"];
    recent
        .iter()
        .any(|l| DOC_PHRASES.iter().any(|p| l.contains(p)))
        || lines
            .iter()
            .any(|l| EXAMPLES_HEADING.iter().any(|p| l.contains(p)))
}

/// A line of documentation that names the error while telling the reader about it
/// (`If you encounter the error \`[Errno 24] Too many open files\`, this indicates…`,
/// `The PAGE_FAULT_IN_NONPAGED_AREA bug check has a value of 0x00000050.`): a program
/// that fails prints the error, never a sentence addressed to its reader about it.
pub(super) fn explains_the_error(msg: &str) -> bool {
    let text = msg
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    const CONDITIONS: &[&str] = &["if you ", "when you ", "whenever you ", "in case you "];
    const MEETING: &[&str] = &[
        "encounter",
        "get ",
        "see ",
        "hit ",
        "run into",
        "receive",
        "experience",
        "face ",
    ];
    let addressed = CONDITIONS.iter().any(|c| {
        text.strip_prefix(c)
            .is_some_and(|rest| MEETING.iter().any(|m| rest.trim_start().starts_with(m)))
    });
    // Vendors' and other languages' pages: `XID 48: This XID indicates …`, `可能会遇到"…"这样的错误`.
    const ABOUT_THE_ERROR: &[&str] = &[
        "bug check has a value of",
        "this xid indicates",
        "可能会遇到",
        "可能遇到",
        "这样的错误",
        "のようなエラー",
    ];
    addressed || ABOUT_THE_ERROR.iter().any(|p| text.contains(p))
}

/// An article's title: how to fix an error, a guide to it, what it means. A page so
/// titled quotes the errors it is about; a failing job's output has no title.
pub(super) fn is_article_title(line: &str) -> bool {
    static TITLE: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &TITLE,
        r"(?i)^\s*(?:#+\s*)?(?:how to (?:fix|solve|resolve|handle|avoid|debug|troubleshoot)\b|fix(?:ing)?:?\s|solved?:|troubleshooting\b|understanding\b|what (?:is|does|causes)\b|как (?:исправить|решить|устранить)|что (?:такое|означает)|如何|怎么|解决|修复|.*(?:の対処|の解決|対処法)|.*해결)|(?i:troubleshooting guide|complete guide|explained|causes and (?:fixes|solutions)|what it means|how to fix it)\s*$",
        line,
    )
}

/// Values no system gave: the pid 1234 that pages put in their example lines (not an
/// uptime of 12345.678: a machine up three and a half hours has that one). A user who
/// hides theirs writes `XXX` or `<pid>` (read as placeholders, the line still counts).
pub(super) fn has_invented_values(line: &str) -> bool {
    static INVENTED: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &INVENTED,
        r"(?i)\b(?:pid|process|task|tgid)\b\s*[=:]?\s*\(?(?:1234|12345|123456|1234567)\b|\b0x(?:1234|deadbeef)\b",
        line,
    )
}

/// `pattern` (compiled once into `cell`) matches `text`; a pattern that does not
/// compile matches nothing (the tests compile both).
fn matches(cell: &OnceLock<Option<Regex>>, pattern: &str, text: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).ok())
        .as_ref()
        .is_some_and(|re| re.is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documentation_explaining_an_error_is_told_from_the_error() {
        assert!(explains_the_error(
            "+    If you encounter the error `[Errno 24] Too many open files`, this indicates"
        ));
        assert!(explains_the_error(
            "The PAGE_FAULT_IN_NONPAGED_AREA bug check has a value of 0x00000050."
        ));
        assert!(explains_the_error(
            "When you get CUDA out of memory, lower the batch"
        ));
        for error in [
            "OSError: [Errno 24] Too many open files",
            "*** STOP: 0x00000050 (PAGE_FAULT_IN_NONPAGED_AREA)",
            "If the process gets killed: Killed",
        ] {
            assert!(!explains_the_error(error), "{error}");
        }
    }

    #[test]
    fn a_jvm_banner_is_no_heading() {
        assert!(is_markdown_heading("## CUDA out of memory"));
        assert!(!is_markdown_heading(
            "# Native memory allocation (mprotect) failed to protect 16384 bytes."
        ));
        assert!(!is_markdown_heading(
            "#  SIGSEGV (0xb) at pc=0x00007f3a, pid=4242, tid=4243"
        ));
    }

    #[test]
    fn an_articles_title_is_told_from_a_log_line() {
        for title in [
            "CUDA Out of Memory: Complete Troubleshooting Guide",
            "Как исправить RuntimeError: CUDA out of Memory",
            "How to fix 'Killed' when training",
            "## Fix: DataLoader worker killed by signal: Bus error",
        ] {
            assert!(is_article_title(title), "{title}");
        }
        for line in [
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
            "Out of memory: Killed process 4242 (python)",
            "Why does my job get Killed?",
        ] {
            assert!(!is_article_title(line), "{line}");
        }
    }

    #[test]
    fn made_up_values_are_told_from_real_and_hidden_ones() {
        assert!(has_invented_values(
            "[12345.679] Killed process 1234 (python3) total-vm:204800kB"
        ));
        assert!(has_invented_values(
            "Out of memory: Kill process 1234 (java)"
        ));
        assert!(!has_invented_values(
            "[612301.112750] Killed process 48213 (python) total-vm:281018368kB"
        ));
        assert!(!has_invented_values("Killed process XXX (python)"));
        // A seed of 1234 is a real run's.
        assert!(!has_invented_values(
            "main.py --seed 1234 exits with return code = -9"
        ));
    }
}
