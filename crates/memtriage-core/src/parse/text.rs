//! Turning kernel bytes into text without losing any of them.

use std::fmt::Write;

/// UTF-8 as is; every byte of an invalid sequence as `\xNN`, so nothing is lost or
/// replaced by `�`. Backslashes stay as they are: the kernel's own escapes
/// (`\012` for a newline in a mapped path) must read as the kernel wrote them.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// `/proc/PID/cmdline`: NUL-separated arguments. A process may rewrite its argv
/// (setproctitle) into one space-separated string without NULs; that is kept as one.
pub fn split_cmdline(bytes: &[u8]) -> Vec<String> {
    let trimmed = bytes.strip_suffix(b"\0").unwrap_or(bytes);
    if trimmed.is_empty() {
        return Vec::new();
    }
    trimmed.split(|b| *b == 0).map(escape_bytes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_bytes_are_escaped_not_replaced() {
        assert_eq!(escape_bytes(b"/data/caf\xe9.bin"), "/data/caf\\xe9.bin");
        assert_eq!(escape_bytes("/data/café.bin".as_bytes()), "/data/café.bin");
    }

    #[test]
    fn cmdline_splits_on_nul_and_keeps_empty_arguments() {
        assert_eq!(
            split_cmdline(b"python\0-c\0\0x y\0"),
            vec!["python", "-c", "", "x y"]
        );
        assert!(split_cmdline(b"").is_empty());
        assert_eq!(
            split_cmdline(b"nginx: worker process"),
            vec!["nginx: worker process"]
        );
    }
}
