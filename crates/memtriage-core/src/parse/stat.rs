//! `/proc/PID/stat` (proc(5)): `pid (comm) state ppid …` on one line.
//!
//! Over bytes rather than with procfs's `Stat`: a comm is up to 15 arbitrary bytes
//! (prctl PR_SET_NAME), may hold spaces and parentheses, and need not be UTF-8.
//! procfs's parser replaces such bytes with `�` and panics on a cut-short line,
//! both found by this crate's property tests.

use super::text::escape_bytes;
use super::ParseError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    /// Non-UTF-8 bytes as `\xNN`.
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    /// `PF_*` flags (`PF_KTHREAD` = 0x00200000 marks kernel threads).
    pub flags: u32,
    pub minflt: u64,
    pub cminflt: u64,
    pub majflt: u64,
    pub cmajflt: u64,
    pub num_threads: i64,
    /// Clock ticks after boot when the process started.
    pub starttime: u64,
    /// Resident pages (a cheap RSS, updated lazily by the kernel).
    pub rss_pages: u64,
}

pub fn parse(bytes: &[u8]) -> Result<Stat, ParseError> {
    let bad = |detail: String| ParseError::new("stat", detail);
    let open = bytes
        .iter()
        .position(|b| *b == b'(')
        .ok_or_else(|| bad("no '(' before the command name".into()))?;
    // The name may itself contain ')': the last one closes it.
    let close = bytes
        .iter()
        .rposition(|b| *b == b')')
        .ok_or_else(|| bad("no ')' after the command name".into()))?;
    if close < open {
        return Err(bad("')' before '('".into()));
    }
    let pid = std::str::from_utf8(&bytes[..open])
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| bad("bad pid".into()))?;
    let comm = escape_bytes(&bytes[open + 1..close]);
    let rest = std::str::from_utf8(&bytes[close + 1..])
        .map_err(|_| bad("non-ASCII after the command name".into()))?;
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // Fields after the name, counted from proc(5)'s field 3 (state) as index 0.
    const NUM_THREADS: usize = 17;
    const STARTTIME: usize = 19;
    const RSS: usize = 21;
    if fields.len() <= RSS {
        return Err(bad(format!(
            "truncated: {} fields after the command name, expected at least {}",
            fields.len(),
            RSS + 1
        )));
    }
    fn num<T: std::str::FromStr>(fields: &[&str], i: usize, name: &str) -> Result<T, ParseError> {
        fields[i]
            .parse()
            .map_err(|_| ParseError::new("stat", format!("bad {name} {:?}", fields[i])))
    }
    let mut state_chars = fields[0].chars();
    let state = match (state_chars.next(), state_chars.next()) {
        (Some(c), None) => c,
        _ => return Err(bad(format!("bad state {:?}", fields[0]))),
    };
    Ok(Stat {
        pid,
        comm,
        state,
        ppid: num(&fields, 1, "ppid")?,
        flags: num(&fields, 6, "flags")?,
        minflt: num(&fields, 7, "minflt")?,
        cminflt: num(&fields, 8, "cminflt")?,
        majflt: num(&fields, 9, "majflt")?,
        cmajflt: num(&fields, 10, "cmajflt")?,
        num_threads: num(&fields, NUM_THREADS, "num_threads")?,
        starttime: num(&fields, STARTTIME, "starttime")?,
        rss_pages: num(&fields, RSS, "rss")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &[u8] =
        b"4242 (my (odd) job) S 1 4242 4242 0 -1 4194560 5000 120 3 1 10 5 0 0 20 0 3 0 100 \
1073741824 65536 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    #[test]
    fn reads_fields_around_a_name_with_spaces_and_parentheses() {
        let s = parse(LINE).unwrap();
        assert_eq!(s.pid, 4242);
        assert_eq!(s.comm, "my (odd) job");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 1);
        assert_eq!(s.flags, 4194560);
        assert_eq!(
            (s.minflt, s.cminflt, s.majflt, s.cmajflt),
            (5000, 120, 3, 1)
        );
        assert_eq!(s.num_threads, 3);
        assert_eq!(s.starttime, 100);
        assert_eq!(s.rss_pages, 65536);
    }

    #[test]
    fn a_name_that_is_not_utf8_is_escaped_not_replaced() {
        let line = [&b"7 (caf\xe9) R 1 "[..], &b"0 ".repeat(30)].concat();
        assert_eq!(parse(&line).unwrap().comm, "caf\\xe9");
    }

    #[test]
    fn truncated_and_garbled_lines_are_errors() {
        assert!(parse(b"4242 (python) S 1 42")
            .unwrap_err()
            .detail
            .contains("truncated"));
        assert!(parse(b"4242 python S").is_err());
        assert!(parse(b") 4242 (").is_err());
        assert!(parse(b"").is_err());
        assert!(
            parse(&LINE[..60]).is_err(),
            "cut before the fields it needs"
        );
    }
}
