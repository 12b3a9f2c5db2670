//! A name from the system (a file name, a command line) made safe for a terminal: a
//! file may be called `$'\e[2J'` or hold a newline, which printed raw would clear the
//! screen or break a table. Control characters are written as the kernel writes them
//! in `/proc/PID/maps` (`\012` for a newline, `\033` for escape), so they read alike.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character (C0, DEL, C1) as `\NNN` in octal.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |_| true)
}

/// The same for a message of several lines: its own line ends and tabs stay.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c != '\n' && c != '\t')
}

fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    let needs = |c: char| c.is_control() && (c as u32) < 0x100 && escape(c);
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs(c) {
            let _ = write!(out, "\\{:03o}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_written_as_the_kernel_writes_them() {
        assert_eq!(printable("/data/model.bin"), "/data/model.bin");
        assert_eq!(printable("/tmp/a\nb"), "/tmp/a\\012b");
        assert_eq!(printable("/tmp/\u{1b}[2Jx"), "/tmp/\\033[2Jx");
        assert_eq!(printable("/tmp/\u{9b}31m"), "/tmp/\\23331m");
        assert_eq!(printable("/tmp/café"), "/tmp/café");
        assert_eq!(
            printable_lines("bad /tmp/\u{1b}[2J\nsecond line"),
            "bad /tmp/\\033[2J\nsecond line"
        );
    }
}
