//! `/proc/PID/status`: the lines a memory snapshot needs, in one pass.
//!
//! Not procfs's `Status`: that builds a map of every line and costs ~180k
//! instructions a process, the largest user-space cost of listing every process.

use crate::model::process::StatusMemory;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusFields {
    /// Real uid (first of the four on the `Uid:` line).
    pub uid: Option<u32>,
    pub threads: Option<u64>,
    /// `None` when the process has no address space (kernel thread, zombie, exiting):
    /// the kernel then prints no `Vm*` lines.
    pub memory: Option<StatusMemory>,
    /// The effective capability set (`CapEff:`, a hex mask); `None` where the line is
    /// missing or malformed: unknown, not "no capabilities".
    pub cap_eff: Option<u64>,
    /// The pid in the innermost pid namespace (the last of `NSpid:`, Linux 4.1+);
    /// the same as the pid outside a container.
    pub innermost_pid: Option<i32>,
    /// Who the process is, when every line of it was printed (`Kthread:` is Linux
    /// 6.x): then `stat` need not be read for it.
    pub identity: Option<Identity>,
}

/// The lines of `status` that `stat` also has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// As `stat`'s comm: the kernel's escapes undone, non-UTF-8 bytes as `\xNN`.
    pub name: String,
    pub state: char,
    pub ppid: i32,
    pub kernel_thread: bool,
}

#[derive(Default)]
struct IdentityLines<'a> {
    name: Option<&'a [u8]>,
    state: Option<char>,
    ppid: Option<i32>,
    kernel_thread: Option<bool>,
}

impl IdentityLines<'_> {
    fn complete(self) -> Option<Identity> {
        Some(Identity {
            name: unescape_name(self.name?),
            state: self.state?,
            ppid: self.ppid?,
            kernel_thread: self.kernel_thread?,
        })
    }
}

/// `Name:` escapes a newline as `\n` and a backslash as `\\` (`stat` prints the
/// bytes as they are); `\t` is undone too, for kernels that escaped it.
fn unescape_name(escaped: &[u8]) -> String {
    let mut bytes = Vec::with_capacity(escaped.len());
    let mut rest = escaped.iter();
    while let Some(&b) = rest.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match rest.as_slice().first() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'\\') => bytes.push(b'\\'),
            _ => {
                bytes.push(b'\\');
                continue;
            }
        }
        rest.next();
    }
    crate::parse::text::escape_bytes(&bytes)
}

pub fn parse(text: &[u8]) -> StatusFields {
    let mut f = StatusFields::default();
    let mut m = StatusMemory::default();
    let mut who = IdentityLines::default();
    // Lines are found with memchr and each key is matched as bytes before anything
    // else is looked at: ~45 of the ~57 lines are not wanted (signal masks, cpu
    // lists), and splitting them byte by byte, checking their UTF-8 and their words
    // was most of this parser's time.
    for line in lines(text) {
        let Some(colon) = memchr::memchr(b':', line) else {
            continue;
        };
        let (key, rest) = (&line[..colon], &line[colon + 1..]);
        let value = || rest.strip_prefix(b"\t").unwrap_or(rest);
        let size = match key {
            b"Name" => {
                who.name = Some(value());
                continue;
            }
            b"State" => {
                who.state = value().first().map(|b| *b as char);
                continue;
            }
            b"PPid" => {
                who.ppid = number(value());
                continue;
            }
            b"Kthread" => {
                who.kernel_thread = number::<u8>(value()).map(|n| n != 0);
                continue;
            }
            b"Uid" | b"Threads" | b"CapEff" | b"NSpid" => None,
            b"VmPeak" => Some(&mut m.vm_peak),
            b"VmSize" => Some(&mut m.vm_size),
            b"VmLck" => Some(&mut m.locked),
            b"VmHWM" => Some(&mut m.vm_hwm),
            b"VmRSS" => Some(&mut m.rss),
            b"RssAnon" => Some(&mut m.rss_anon),
            b"RssFile" => Some(&mut m.rss_file),
            b"RssShmem" => Some(&mut m.rss_shmem),
            b"VmSwap" => Some(&mut m.swap),
            b"VmPTE" => Some(&mut m.page_tables),
            b"HugetlbPages" => Some(&mut m.hugetlb),
            _ => continue,
        };
        let Ok(rest) = std::str::from_utf8(rest) else {
            continue;
        };
        let mut words = rest.split_ascii_whitespace();
        let first = words.next();
        match key {
            b"Uid" => {
                f.uid = first.and_then(|w| w.parse().ok());
                continue;
            }
            b"CapEff" => {
                f.cap_eff = first.and_then(|w| u64::from_str_radix(w, 16).ok());
                continue;
            }
            b"NSpid" => {
                f.innermost_pid = words.last().or(first).and_then(|w| w.parse().ok());
                continue;
            }
            _ => {}
        }
        let Some(n) = first.and_then(|w| w.parse::<u64>().ok()) else {
            continue;
        };
        match size {
            None => f.threads = Some(n),
            Some(slot) if words.next() == Some("kB") => *slot = Some(n.saturating_mul(1024)),
            Some(_) => {}
        }
    }
    if m.rss.is_some() {
        f.memory = Some(m);
    }
    f.identity = who.complete();
    f
}

fn number<T: std::str::FromStr>(value: &[u8]) -> Option<T> {
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr(b'\n', text) {
            Some(end) => {
                rest = Some(&text[end + 1..]);
                Some(&text[..end])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTHON: &[u8] = b"Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nPPid:\t1\n\
Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nVmPeak:\t 2097152 kB\nVmSize:\t 1048576 kB\n\
VmLck:\t       0 kB\nVmHWM:\t  524288 kB\nVmRSS:\t  262144 kB\nRssAnon:\t  200000 kB\nRssFile:\t   60000 kB\n\
RssShmem:\t    2144 kB\nVmPTE:\t     512 kB\nVmSwap:\t    1024 kB\nHugetlbPages:\t       0 kB\nThreads:\t17\n";

    #[test]
    fn reads_uid_threads_and_memory_lines_as_bytes() {
        let f = parse(PYTHON);
        assert_eq!(f.uid, Some(1000));
        assert_eq!(f.threads, Some(17));
        let m = f.memory.unwrap();
        assert_eq!(m.rss, Some(262144 * 1024));
        assert_eq!(m.rss_anon, Some(200000 * 1024));
        assert_eq!(m.rss_shmem, Some(2144 * 1024));
        assert_eq!(m.vm_hwm, Some(512 << 20));
        assert_eq!(m.swap, Some(1 << 20));
        assert_eq!(m.page_tables, Some(512 * 1024));
    }

    #[test]
    fn a_kernel_thread_or_zombie_has_no_memory_not_zero_memory() {
        let f = parse(b"Name:\tkthreadd\nState:\tS (sleeping)\nUid:\t0\t0\t0\t0\nThreads:\t1\n");
        assert_eq!(f.memory, None);
        assert_eq!(f.uid, Some(0));
    }

    #[test]
    fn an_old_kernel_without_the_rss_split_reads_the_rest() {
        let f = parse(b"Uid:\t0\t0\t0\t0\nVmRSS:\t  100 kB\nThreads:\t1\n");
        let m = f.memory.unwrap();
        assert_eq!(m.rss, Some(100 * 1024));
        assert_eq!(m.rss_anon, None, "unknown, not 0");
    }

    /// The parser before keys were matched as bytes: every line checked as UTF-8 and
    /// split into words first. The fast one must read the same.
    fn line_by_line(text: &[u8]) -> StatusFields {
        let mut f = StatusFields::default();
        let mut m = StatusMemory::default();
        for line in text.split(|b| *b == b'\n') {
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let mut words = rest.split_ascii_whitespace();
            let first = words.next();
            match key {
                "Uid" => f.uid = first.and_then(|w| w.parse().ok()),
                "CapEff" => f.cap_eff = first.and_then(|w| u64::from_str_radix(w, 16).ok()),
                "NSpid" => {
                    f.innermost_pid = rest
                        .split_ascii_whitespace()
                        .last()
                        .and_then(|w| w.parse().ok())
                }
                _ => {}
            }
            if matches!(key, "Uid" | "CapEff" | "NSpid") {
                continue;
            }
            let Some(n) = first.and_then(|w| w.parse::<u64>().ok()) else {
                continue;
            };
            if key == "Threads" {
                f.threads = Some(n);
                continue;
            }
            if words.next() != Some("kB") {
                continue;
            }
            let bytes = Some(n.saturating_mul(1024));
            match key {
                "VmPeak" => m.vm_peak = bytes,
                "VmSize" => m.vm_size = bytes,
                "VmLck" => m.locked = bytes,
                "VmHWM" => m.vm_hwm = bytes,
                "VmRSS" => m.rss = bytes,
                "RssAnon" => m.rss_anon = bytes,
                "RssFile" => m.rss_file = bytes,
                "RssShmem" => m.rss_shmem = bytes,
                "VmSwap" => m.swap = bytes,
                "VmPTE" => m.page_tables = bytes,
                "HugetlbPages" => m.hugetlb = bytes,
                _ => {}
            }
        }
        if m.rss.is_some() {
            f.memory = Some(m);
        }
        f
    }

    #[test]
    fn reads_what_a_line_by_line_parse_reads() {
        let live = std::fs::read("/proc/self/status").expect("read /proc/self/status");
        let odd: &[&[u8]] = &[
            PYTHON,
            &live,
            b"Name:\t\xff\xfe\nVmRSS:\t 12 kB\nThreads:\t3\n",
            b"VmRSS:\t 12 \xffB\nVmSwap:\t 5 MB\nVmPTE: 7\nUid:\tx\nVmRSS :\t 9 kB\n",
            b"Uid:\t5\t5\nUid:\tnope\nThreads:\t-1\nVmHWM:\t18446744073709551615 kB\nVmRSS:\t1 kB",
            b"",
            b":\n:::\nVmRSS:\n",
        ];
        for text in odd {
            let without_identity = StatusFields {
                identity: None,
                ..parse(text)
            };
            assert_eq!(
                without_identity,
                line_by_line(text),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn identity_only_when_every_line_of_it_is_there() {
        assert_eq!(
            parse(PYTHON).identity,
            None,
            "no Kthread: line (before Linux 6.x)"
        );
        let with = [PYTHON, b"Kthread:\t0\n"].concat();
        let who = parse(&with).identity.unwrap();
        assert_eq!(
            (who.name.as_str(), who.state, who.ppid),
            ("python3", 'S', 1)
        );
        assert!(!who.kernel_thread);
        let kthread = parse(b"Name:\tkworker/0:1\nState:\tI (idle)\nPPid:\t2\nKthread:\t1\n");
        assert!(kthread.identity.unwrap().kernel_thread);
    }

    #[test]
    fn the_name_reads_as_stat_prints_it() {
        // What Linux 6.18 prints for the comm `a\b<newline>c<tab>d"e<0xff>`.
        let text = b"Name:\ta\\\\b\\nc\td\"e\xff\nState:\tR (running)\nPPid:\t9\nKthread:\t0\n";
        assert_eq!(parse(text).identity.unwrap().name, "a\\b\nc\td\"e\\xff");
        let live = parse(&std::fs::read("/proc/self/status").unwrap());
        let stat = crate::parse::stat::parse(&std::fs::read("/proc/self/stat").unwrap()).unwrap();
        if let Some(who) = live.identity {
            assert_eq!((who.name, who.ppid), (stat.comm, stat.ppid));
        }
    }

    #[test]
    fn truncated_status_keeps_what_it_has() {
        let f = parse(b"Uid:\t12\nVmRSS:\t  1");
        assert_eq!(f.uid, Some(12));
        assert_eq!(f.memory, None, "a value without its unit is not read");
    }

    #[test]
    fn effective_capabilities() {
        let cap_eff = |text: &str| parse(text.as_bytes()).cap_eff;
        let text = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t0000000000004000\n";
        assert_eq!(cap_eff(text), Some(1 << 14));
        assert_eq!(cap_eff("CapEff:\tzz\n"), None);
        assert_eq!(cap_eff("CapEff:\n"), None);
        assert_eq!(cap_eff("Name:\tx\n"), None, "missing is unknown, not none");
    }

    #[test]
    fn the_innermost_pid_is_the_last_of_nspid() {
        let pid = |text: &str| parse(text.as_bytes()).innermost_pid;
        assert_eq!(pid("Pid:\t4242\nNSpid:\t4242\t17\t1\n"), Some(1));
        assert_eq!(pid("NSpid:\t4242\n"), Some(4242));
        assert_eq!(pid("Pid:\t4242\n"), None, "before Linux 4.1: unknown");
    }
}
