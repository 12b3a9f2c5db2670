//! Command lines shown as a shell would read them back: an argument with a space,
//! a quote or a newline is quoted, so one argument never looks like two and a
//! newline never breaks a summary line or a table row.

use std::borrow::Cow;

/// Characters that need no quoting in any POSIX shell.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c)
}

/// One argument, quoted where a shell would need it: `'two words'`, `'it'\''s'`,
/// and `$'line\nbreak'` (bash's ANSI-C quoting) where it holds control characters.
pub fn quote(arg: &str) -> Cow<'_, str> {
    if !arg.is_empty() && arg.chars().all(is_plain) {
        return Cow::Borrowed(arg);
    }
    if arg.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in arg.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        return Cow::Owned(out);
    }
    Cow::Owned(format!("'{}'", arg.replace('\'', r"'\''")))
}

/// A command line, each argument quoted as [`quote`] does, joined by spaces.
pub fn join<S: AsRef<str>>(args: &[S]) -> String {
    args.iter()
        .map(|a| quote(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{join, quote};

    #[test]
    fn plain_arguments_stay_as_they_are() {
        assert_eq!(
            join(&["python", "-m", "train.py", "--lr=0.1"]),
            "python -m train.py --lr=0.1"
        );
    }

    #[test]
    fn spaces_quotes_and_empty_arguments_are_quoted() {
        assert_eq!(quote("two words"), "'two words'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(join(&["sh", "-c", "exit 3"]), "sh -c 'exit 3'");
    }

    #[test]
    fn control_characters_never_reach_the_output_raw() {
        let shown = join(&["sh", "-c", "echo a\nexit 3\t#\x1b[31m'"]);
        assert_eq!(shown, r"sh -c $'echo a\nexit 3\t#\x1b[31m\''");
        assert!(!shown.contains('\n') && !shown.contains('\x1b'));
    }
}
