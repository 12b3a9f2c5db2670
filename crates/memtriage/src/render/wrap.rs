//! Prose fitted to a terminal's width: a line broken at spaces, words kept whole.

/// `text` broken at spaces into lines of at most `width` characters where a word allows
/// (a longer word stays whole on its own line), continuation lines indented by `indent`.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = word.chars().count();
        if line_len > 0 && line_len + 1 + len > width {
            out.push('\n');
            out.push_str(indent);
            line_len = indent.chars().count();
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn lines_fit_the_width_and_words_stay_whole() {
        let text = "PSS 3.3 GiB of 17 (1 unreadable, left out), USS 3.2 GiB of 17, swap 0 B";
        let wrapped = wrap(text, 30, "  ");
        assert!(
            wrapped.lines().all(|l| l.chars().count() <= 30),
            "{wrapped}"
        );
        assert_eq!(wrapped.replace("\n  ", " "), text);
        assert_eq!(
            wrap("a-very-long-word short", 5, ""),
            "a-very-long-word\nshort"
        );
    }
}
