//! A line of a diff pasted into a thread (```` ```diff ```` above it, or a hunk's `@@ -12,7
//! +12,9 @@`): text a change adds or removes, a page's or a program's source, never
//! output a failing program printed. A pull request that rewrites a troubleshooting
//! page (`+with SIGTERM (exit code -9). Depending on configuration …`) quotes the
//! failure it documents.

/// Added lines that, all of the context being a diff's, show one where its opening is
/// out of reach: markdown's lists rarely take `+` for their bullet.
const ADDED_WITHOUT_OPENING: usize = 3;

/// Whether `line` is an added, removed or unchanged line of a diff that opens in `before`
/// (the input's bytes just before it): every line between the diff's opening and
/// `line` is a diff's too. A long hunk's opening may lie before `before`: then its
/// added lines tell it.
pub(super) fn is_a_diff_line(line: &str, before: &[u8]) -> bool {
    if !line.starts_with(['+', '-', ' ']) || line.starts_with("+++") || line.starts_with("---") {
        return false;
    }
    let before = String::from_utf8_lossy(before);
    let mut added = 0;
    for earlier in before.lines().rev() {
        let fence = earlier.trim();
        if fence == "```diff" || fence == "```patch" || earlier.starts_with("@@ -") {
            return true;
        }
        // Not a shell's trace of a command (`bash -x`: `+ make`, `++ cd build`).
        let traced = earlier.trim_start_matches('+').starts_with(' ');
        added += usize::from(earlier.starts_with('+') && !traced);
        let in_a_hunk = earlier.is_empty()
            || earlier.starts_with(['+', '-', ' ', '\\'])
            || earlier.starts_with("diff --git ")
            || earlier.starts_with("index ");
        if !in_a_hunk {
            return false;
        }
    }
    added >= ADDED_WITHOUT_OPENING
}

#[cfg(test)]
mod tests {
    use super::is_a_diff_line;

    #[test]
    fn a_line_under_a_diff_fence_or_a_hunk_is_a_change() {
        let fenced = b"review thread\n```diff\n-  old text\n+Dag run timeout\n";
        assert!(is_a_diff_line("+with SIGTERM (exit code -9).", fenced));
        let hunk = b"@@ -50,7 +50,9 @@\n context\n";
        assert!(is_a_diff_line("-Killed", hunk));
        let opening_out_of_reach = b"+Dag run timeout\n+\n+A dag run timeout can be set.\n";
        assert!(is_a_diff_line(
            "+with SIGTERM (exit code -9).",
            opening_out_of_reach
        ));
    }

    #[test]
    fn a_list_or_a_log_is_no_diff() {
        assert!(!is_a_diff_line(
            "- Error: CUDA out of memory",
            b"Things I tried:\n- one\n"
        ));
        assert!(!is_a_diff_line(
            "+with SIGTERM (exit code -9).",
            b"```\n+x\n"
        ));
        assert!(!is_a_diff_line("Killed", b"```diff\n"));
        assert!(!is_a_diff_line("+x", b"```diff\n+a\nnot a diff's line\n"));
        // A shell's trace is no diff's lines.
        assert!(!is_a_diff_line(
            "+ make",
            b"+ cd build\n+ cmake ..\n+ make -j8\n"
        ));
    }
}
