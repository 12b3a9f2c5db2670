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
    /// Where exec placed the stack, heap and arguments; `None` where the kernel shows
    /// zeros (no ptrace read access, no address space) or is older than 3.5.
    pub layout: Option<MemoryLayout>,
}

/// Addresses the kernel chooses at exec and a fork copies unchanged (proc(5) fields
/// 28 `startstack`, 47 `start_brk`, 48-51 `arg_start`..`env_end`). Exec randomises
/// the stack and the heap's start and lays the arguments out anew, so a child with
/// its parent's layout has not exec'd since it was forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLayout {
    pub start_stack: u64,
    pub start_brk: u64,
    pub arg_start: u64,
    pub arg_end: u64,
    pub env_start: u64,
    pub env_end: u64,
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
    let layout = layout(&fields);
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
        layout,
    })
}

/// Proc(5)'s fields 28 and 47-51, counted from field 3 (state) as index 0. A field
/// missing or zero leaves the layout unknown: the kernel prints 0 to readers without
/// ptrace access, and a layout of zeros would match every other unreadable one.
fn layout(fields: &[&str]) -> Option<MemoryLayout> {
    const START_STACK: usize = 28 - 3;
    const START_BRK: usize = 47 - 3;
    let at = |i: usize| -> Option<u64> {
        let v: u64 = fields.get(i)?.parse().ok()?;
        (v != 0).then_some(v)
    };
    Some(MemoryLayout {
        start_stack: at(START_STACK)?,
        start_brk: at(START_BRK)?,
        arg_start: at(START_BRK + 1)?,
        arg_end: at(START_BRK + 2)?,
        env_start: at(START_BRK + 3)?,
        env_end: at(START_BRK + 4)?,
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

    /// Captured from `cat /proc/self/stat`, the name changed to hold a space and a ')'.
    const WITH_LAYOUT: &[u8] =
        b"25783 (c) t) R 25781 25781 20963 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 \
965276 3133440 390 18446744073709551615 94363411546112 94363411565993 140720818972000 0 0 0 0 \
0 0 0 0 0 17 1 0 0 0 0 0 94363411582000 94363411583616 94363884531712 140720818973411 \
140720818973431 140720818973431 140720818974699 0\n";

    #[test]
    fn reads_the_layout_exec_chose_from_fields_28_and_47_to_51() {
        let s = parse(WITH_LAYOUT).unwrap();
        assert_eq!(s.comm, "c) t");
        assert_eq!(
            s.layout,
            Some(MemoryLayout {
                start_stack: 140720818972000,
                start_brk: 94363884531712,
                arg_start: 140720818973411,
                arg_end: 140720818973431,
                env_start: 140720818973431,
                env_end: 140720818974699,
            })
        );
    }

    #[test]
    fn a_layout_of_zeros_or_cut_short_is_unknown() {
        // Without ptrace access the kernel prints 0 for every address.
        assert_eq!(parse(LINE).unwrap().layout, None);
        let text = std::str::from_utf8(WITH_LAYOUT).unwrap();
        let zeroed = text.replace("140720818972000", "0");
        assert_eq!(parse(zeroed.as_bytes()).unwrap().layout, None);
        // A kernel before 3.5 stops at field 44.
        let fields: Vec<&str> = text.split(' ').collect();
        let old = fields[..44].join(" ");
        let s = parse(old.as_bytes()).unwrap();
        assert_eq!((s.rss_pages, s.layout), (390, None));
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
