//! The encodings logs come in. Most are UTF-8 or ASCII-compatible (GBK, Latin-1: the
//! messages memtriage looks for are ASCII, and the bytes around them are kept as
//! `\xNN`). Windows tools write UTF-16 (PowerShell's `>` and `Out-File` by default),
//! where every ASCII character is followed or preceded by a NUL: that is turned into
//! UTF-8 as it comes. A byte-order mark is skipped.

/// Bytes looked at before deciding; a log shorter than this is decided at its end.
const SNIFF: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Undecided,
    Utf8,
    Utf16 { big_endian: bool },
}

#[derive(Debug, Clone)]
pub(super) struct Decoder {
    kind: Kind,
    /// Bytes held while undecided, or the odd byte of a UTF-16 unit cut by a chunk.
    held: Vec<u8>,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            kind: Kind::Undecided,
            held: Vec::new(),
            high: None,
        }
    }
}

pub(super) enum Decoded<'a> {
    Same(&'a [u8]),
    Converted(Vec<u8>),
}

impl Decoder {
    pub(super) fn decode<'a>(&mut self, chunk: &'a [u8]) -> Decoded<'a> {
        match self.kind {
            Kind::Utf8 => Decoded::Same(chunk),
            Kind::Utf16 { big_endian } => Decoded::Converted(self.utf16(chunk, big_endian)),
            Kind::Undecided => {
                self.held.extend_from_slice(chunk);
                // Most logs tell at once: no mark and no NUL in the first two bytes is
                // not UTF-16, so a live job's first line is not held back.
                let plainly_utf8 = self.held.len() >= 2
                    && !matches!(self.held[0], 0xEF | 0xFF | 0xFE | 0)
                    && self.held[1] != 0;
                if self.held.len() < SNIFF && !plainly_utf8 {
                    return Decoded::Converted(Vec::new());
                }
                Decoded::Converted(self.decide())
            }
        }
    }

    /// The end of the input: what was held undecided, or a cut unit (dropped).
    pub(super) fn finish(&mut self) -> Option<Vec<u8>> {
        match self.kind {
            Kind::Undecided if !self.held.is_empty() => Some(self.decide()),
            _ => None,
        }
    }

    fn decide(&mut self) -> Vec<u8> {
        let held = std::mem::take(&mut self.held);
        let (kind, skip) = sniff(&held);
        self.kind = kind;
        match kind {
            Kind::Utf16 { big_endian } => self.utf16(&held[skip..], big_endian),
            _ => held[skip..].to_vec(),
        }
    }

    fn utf16(&mut self, chunk: &[u8], big_endian: bool) -> Vec<u8> {
        let mut out = String::with_capacity(chunk.len() / 2 + 4);
        let mut bytes = std::mem::take(&mut self.held);
        bytes.extend_from_slice(chunk);
        let whole = bytes.len() / 2 * 2;
        for pair in bytes[..whole].chunks_exact(2) {
            let unit = if big_endian {
                u16::from_be_bytes([pair[0], pair[1]])
            } else {
                u16::from_le_bytes([pair[0], pair[1]])
            };
            match (self.high.take(), unit) {
                (None, 0xD800..=0xDBFF) => self.high = Some(unit),
                (Some(high), 0xDC00..=0xDFFF) => {
                    let c =
                        0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                }
                (high, unit) => {
                    if high.is_some() {
                        out.push('\u{FFFD}');
                    }
                    match unit {
                        0xD800..=0xDBFF => self.high = Some(unit),
                        _ => out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}')),
                    }
                }
            }
        }
        self.held = bytes[whole..].to_vec();
        out.into_bytes()
    }
}

/// The encoding of a log from its first bytes, and how many bytes of mark to skip.
fn sniff(head: &[u8]) -> (Kind, usize) {
    match head {
        [0xEF, 0xBB, 0xBF, ..] => return (Kind::Utf8, 3),
        [0xFF, 0xFE, ..] => return (Kind::Utf16 { big_endian: false }, 2),
        [0xFE, 0xFF, ..] => return (Kind::Utf16 { big_endian: true }, 2),
        _ => {}
    }
    // Without a mark: ASCII text in UTF-16 has a NUL in every other byte.
    let pairs = head.len() / 2;
    if pairs >= 4 {
        let zero_odd = head
            .chunks_exact(2)
            .filter(|p| p[1] == 0 && p[0] != 0)
            .count();
        let zero_even = head
            .chunks_exact(2)
            .filter(|p| p[0] == 0 && p[1] != 0)
            .count();
        if zero_odd * 10 >= pairs * 7 {
            return (Kind::Utf16 { big_endian: false }, 0);
        }
        if zero_even * 10 >= pairs * 7 {
            return (Kind::Utf16 { big_endian: true }, 0);
        }
    }
    (Kind::Utf8, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8], chunk: usize) -> Vec<u8> {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        for c in input.chunks(chunk) {
            match d.decode(c) {
                Decoded::Same(b) => out.extend_from_slice(b),
                Decoded::Converted(b) => out.extend(b),
            }
        }
        out.extend(d.finish().unwrap_or_default());
        out
    }

    #[test]
    fn utf16_with_and_without_a_mark_and_cut_anywhere() {
        let text = "Killed process 12 (python) — 😀\r\nok\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        for chunk in [1, 3, 7, 64, 4096] {
            let mut marked = vec![0xFF, 0xFE];
            marked.extend_from_slice(&le);
            assert_eq!(decode_all(&marked, chunk), text.as_bytes(), "{chunk}");
            assert_eq!(decode_all(&le, chunk), text.as_bytes(), "{chunk}");
            let mut marked = vec![0xFE, 0xFF];
            marked.extend_from_slice(&be);
            assert_eq!(decode_all(&marked, chunk), text.as_bytes(), "{chunk}");
        }
    }

    #[test]
    fn utf8_mark_is_skipped_and_other_bytes_pass_through() {
        assert_eq!(decode_all(b"\xEF\xBB\xBFKilled\n", 2), b"Killed\n");
        let gbk = b"\xd1\xb5\xc1\xb7 Killed\n\x00\x01 binary";
        assert_eq!(decode_all(gbk, 5), gbk);
        assert_eq!(decode_all(b"", 5), b"");
        assert_eq!(decode_all(b"ab", 1), b"ab");
    }
}
