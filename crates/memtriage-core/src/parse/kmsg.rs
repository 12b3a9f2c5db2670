//! The kernel log's lines in the forms people have them (`/dev/kmsg` records,
//! `dmesg`, `dmesg -T`, journalctl and syslog `kernel:` lines), and the OOM kills
//! they report.
//!
//! Shared by the live reader of `/dev/kmsg` and by whatever explains saved logs, so a
//! line with any prefix it does not know still yields the kernel message in it.

use crate::model::gpu::KernelXid;
use crate::model::system::{OomConstraint, OomKill};

/// One kernel log line, split into what is known about it and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// Syslog priority (0 emerg .. 7 debug), from a `/dev/kmsg` record or `<N>`.
    pub priority: Option<u8>,
    /// Sequence number of a `/dev/kmsg` record.
    pub seq: Option<u64>,
    /// Seconds since boot (monotonic clock), where the line carried it.
    pub timestamp: Option<f64>,
    /// Wall-clock time as printed, where that is what the line carried.
    pub wall_time: Option<String>,
    /// The kernel's message, without any prefix.
    pub message: String,
}

/// What syslog and the journal put before the kernel's own line.
const KERNEL_IDENT: &[u8] = b"kernel: ";
const KERNEL_IDENT_EMPTY_PID: &[u8] = b"kernel[]: ";

/// Syslog's levels, as `logread` and syslog daemons print them.
const LEVELS: [&str; 9] = [
    "emerg", "alert", "crit", "err", "warn", "warning", "notice", "info", "debug",
];

/// Never fails: a line in no known form is all message.
pub fn parse_line(line: &str) -> LogLine {
    let line = line.trim_end_matches(['\n', '\r']);
    let mut out = LogLine {
        priority: None,
        seq: None,
        timestamp: None,
        wall_time: None,
        message: String::new(),
    };
    if let Some(rest) = parse_kmsg_record(line, &mut out) {
        out.message = rest.to_string();
        return out;
    }
    let mut rest = line.trim_start();
    // `dmesg -r` and syslog keep the priority as `<6>`.
    if let Some((pri, after)) = angle_priority(rest) {
        out.priority = Some(pri);
        rest = after;
    }
    rest = strip_brackets(rest, &mut out);
    // journalctl / syslog: `Nov 21 06:16:42 host kernel: [  123.4] message`, or
    // `[  123.4] host kernel: message` (short-monotonic). Only a prefix of that shape
    // counts, so a kernel message that itself says "kernel: " is left whole.
    // The ident in any case (a post retyped in capitals).
    // Some syslog daemons give the kernel an empty pid (`emerg kernel[]: [ 4591.69] …`).
    let ident = [KERNEL_IDENT, KERNEL_IDENT_EMPTY_PID]
        .into_iter()
        .filter_map(|ident| {
            rest.as_bytes()
                .windows(ident.len())
                .position(|w| w.eq_ignore_ascii_case(ident))
                .map(|i| (i, ident.len()))
        })
        .min_by_key(|&(i, _)| i);
    if let Some((i, ident_len)) = ident {
        let mut words: Vec<&str> = rest[..i].split_whitespace().collect();
        // BusyBox's and OpenWrt's `logread` put the facility and level last
        // (`Wed Sep 15 04:06:35 2021 kern.warn kernel: …`), or the level alone.
        if words.last().is_some_and(|w| is_facility_level(w))
            || (words.len() == 1 && LEVELS.contains(&words[0]))
        {
            words.pop();
        }
        let syslog_time = syslog_time_words(&words);
        let iso_time = words.len() == 2 && words[0].contains('T') && words[0].contains(':');
        let host_only = words.len() == 1 && out.timestamp.is_some();
        // `kernel: BUG: …` with nothing before it: a journal printed without its
        // time and host (`journalctl -k -o cat` with the identifier kept), or a line a
        // mail quotes after trimming them.
        let bare = words.is_empty();
        let at_start = i == 0 || rest[..i].ends_with(' ');
        if at_start && (syslog_time.is_some() || iso_time || host_only || bare) {
            if out.wall_time.is_none() && out.timestamp.is_none() {
                if let Some(time) = syslog_time {
                    out.wall_time = Some(time);
                } else if iso_time {
                    out.wall_time = Some(words[0].to_string());
                }
            }
            rest = &rest[i + ident_len..];
            if let Some((pri, after)) = angle_priority(rest) {
                out.priority.get_or_insert(pri);
                rest = after;
            }
            rest = strip_brackets(rest, &mut out);
        }
    }
    out.message = rest.to_string();
    out
}

/// The time of a syslog line's prefix, from its words before `kernel:`: `Nov 21
/// 06:16:42 host` (syslog, journalctl), or with the weekday and the year and without
/// a host (`Wed Sep 15 04:06:35 2021`, `logread`).
fn syslog_time_words(words: &[&str]) -> Option<String> {
    const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let date = match words.first() {
        Some(day) if WEEKDAYS.contains(day) => &words[1..],
        _ => words,
    };
    if date.len() < 3 || !date[2].contains(':') || !date[1].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let year = date
        .get(3)
        .is_some_and(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()));
    let time_words = 3 + usize::from(year);
    // After the time, at most the host.
    if date.len() > time_words + 1 || (words.len() == date.len() && !year && date.len() != 4) {
        return None;
    }
    Some(words[..words.len() - date.len() + time_words].join(" "))
}

/// `kern.warn`, `daemon.err`: syslog's facility and level, as `logread` prints them.
fn is_facility_level(word: &str) -> bool {
    const FACILITIES: [&str; 12] = [
        "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
        "authpriv", "ftp",
    ];
    word.split_once('.').is_some_and(|(facility, level)| {
        let local = facility
            .strip_prefix("local")
            .is_some_and(|n| n.len() == 1 && n.bytes().all(|b| (b'0'..=b'7').contains(&b)));
        (local || FACILITIES.contains(&facility)) && LEVELS.contains(&level)
    })
}

/// `pri,seq,ts_usec,flags[,more];message` (Documentation/ABI/testing/dev-kmsg).
fn parse_kmsg_record<'a>(line: &'a str, out: &mut LogLine) -> Option<&'a str> {
    let (head, message) = line.split_once(';')?;
    let mut fields = head.split(',');
    let pri: u32 = fields.next()?.parse().ok()?;
    let seq: u64 = fields.next()?.parse().ok()?;
    let ts_usec: u64 = fields.next()?.parse().ok()?;
    let flags = fields.next()?;
    if flags.len() > 1 && !flags.contains('=') {
        return None;
    }
    // The low 3 bits are the level; the rest is the facility.
    out.priority = u8::try_from(pri & 7).ok();
    out.seq = Some(seq);
    out.timestamp = Some(ts_usec as f64 / 1e6);
    Some(message)
}

fn angle_priority(s: &str) -> Option<(u8, &str)> {
    let rest = s.strip_prefix('<')?;
    let (n, after) = rest.split_once('>')?;
    let n: u32 = n.parse().ok()?;
    Some((u8::try_from(n & 7).ok()?, after))
}

/// Leading `[  123.456789]`, `[Sat Nov 21 06:16:42 2026]` and caller-id brackets
/// (`[ T1234]`, `[ C3]`, printed with CONFIG_PRINTK_CALLER).
fn strip_brackets<'a>(mut s: &'a str, out: &mut LogLine) -> &'a str {
    loop {
        let Some(inner_start) = s.strip_prefix('[') else {
            return s;
        };
        let Some((inner, after)) = inner_start.split_once(']') else {
            return s;
        };
        let inner = inner.trim();
        // The kernel's timestamps always have a fraction; `[ 1201]` opening a line is
        // a task table's pid column (kernels before 4.19), part of the message.
        if let Some(t) = inner
            .contains('.')
            .then(|| inner.parse::<f64>().ok())
            .flatten()
        {
            if t.is_finite() && t >= 0.0 {
                out.timestamp = Some(t);
            }
        } else if is_caller_id(inner) {
        } else if looks_like_wall_time(inner) {
            out.wall_time = Some(inner.to_string());
        } else {
            return s;
        }
        s = after.strip_prefix(' ').unwrap_or(after);
    }
}

fn is_caller_id(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('T' | 'C'))
        && chars.clone().next().is_some()
        && chars.all(|c| c.is_ascii_digit())
}

/// A time of day with words around it (`Sat Nov 21 06:16:42 2026`, a program's own
/// stamp); not a bracketed message with fields (Go's `[signal SIGBUS: bus error
/// code=0x2 addr=0x7f25fb57a000 pc=0x46c58e]`).
fn looks_like_wall_time(s: &str) -> bool {
    let b = s.as_bytes();
    let time_of_day = (1..b.len().saturating_sub(2)).any(|i| {
        b[i] == b':'
            && b[i - 1].is_ascii_digit()
            && b[i + 1].is_ascii_digit()
            && b[i + 2].is_ascii_digit()
    });
    time_of_day && !s.contains('=') && s.chars().any(|c| c.is_ascii_alphabetic())
}

/// OOM kills in a stream of log lines (any of the forms [`parse_line`] reads),
/// oldest first. The `oom-kill:` line (≥ 4.19) that precedes a `Killed process` line
/// gives its constraint and cgroups; a constraint line whose kill line is missing
/// (a cut log) still yields a kill with the sizes unknown.
pub fn oom_kills<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<OomKill> {
    let mut out = Vec::new();
    let mut pending: Option<OomKill> = None;
    // Kernels before 4.19 only say `Memory cgroup out of memory: Kill process`
    // before the `Killed process` line.
    let mut memcg_selection = false;
    // Before 4.19: `Task in /X killed as a result of limit of /Y` names the cgroups.
    let mut task_in: Option<(String, String)> = None;
    for raw in lines {
        let line = parse_line(raw);
        let msg = line.message.as_str();
        if let Some(spec) = find_after(msg, "oom-kill:") {
            if let Some(p) = pending.take() {
                out.push(p);
            }
            pending = parse_constraint(spec, &line);
        } else if let Some(rest) = find_after(msg, "Killed process ") {
            let Some(mut kill) = parse_killed(rest, &line) else {
                continue;
            };
            if msg.contains("Memory cgroup out of memory") || memcg_selection {
                kill.constraint = OomConstraint::Cgroup;
            }
            // The `oom-kill:` line names the task chosen; before 5.1 the kernel could
            // then kill a child of it instead ("or sacrifice child"): one kill, the
            // `Killed process` line's, in the chosen task's cgroup.
            if let Some(p) = pending.take() {
                kill.constraint = p.constraint;
                kill.memcg = p.memcg;
                kill.oom_memcg = p.oom_memcg;
                if p.pid == kill.pid {
                    kill.uid = kill.uid.or(p.uid);
                }
            } else if let Some((task, limit)) = task_in.take() {
                kill.constraint = OomConstraint::Cgroup;
                kill.memcg = Some(task);
                kill.oom_memcg = Some(limit);
            }
            memcg_selection = false;
            task_in = None;
            out.push(kill);
        } else if msg.contains("Memory cgroup out of memory: Kill process") {
            memcg_selection = true;
        } else if let Some(rest) = find_after(msg, "Task in ") {
            task_in = rest
                .split_once(" killed as a result of limit of ")
                .map(|(task, limit)| (task.trim().to_string(), limit.trim().to_string()));
        }
    }
    if let Some(p) = pending {
        out.push(p);
    }
    out
}

fn find_after<'a>(s: &'a str, marker: &str) -> Option<&'a str> {
    s.find(marker).map(|i| &s[i + marker.len()..])
}

/// `constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/x,
/// task_memcg=/x,task=python,pid=1234,uid=0`
fn parse_constraint(spec: &str, line: &LogLine) -> Option<OomKill> {
    let mut kill = empty_kill(line);
    let mut pid = None;
    for field in spec.trim().split(',') {
        let Some((k, v)) = field.split_once('=') else {
            continue;
        };
        match k {
            "constraint" => {
                kill.constraint = match v {
                    "CONSTRAINT_MEMCG" => OomConstraint::Cgroup,
                    "CONSTRAINT_CPUSET" => OomConstraint::Cpuset,
                    "CONSTRAINT_MEMORY_POLICY" => OomConstraint::MemoryPolicy,
                    _ => OomConstraint::Global,
                }
            }
            "oom_memcg" => kill.oom_memcg = Some(v.to_string()),
            "task_memcg" => kill.memcg = Some(v.to_string()),
            "task" => kill.comm = v.to_string(),
            "pid" => pid = v.parse().ok(),
            "uid" => kill.uid = v.parse().ok(),
            _ => {}
        }
    }
    kill.pid = pid?;
    Some(kill)
}

/// `1234 (python) total-vm:123kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0
/// pgtables:4kB oom_score_adj:0`
fn parse_killed(rest: &str, line: &LogLine) -> Option<OomKill> {
    let (pid, after) = rest.split_once(' ')?;
    let pid: i32 = pid.parse().ok()?;
    let after = after.strip_prefix('(')?;
    // comm may itself hold `)` or spaces: take the `)` before the fields.
    let end = after
        .find(") total-vm:")
        .or_else(|| after.find(") anon-rss:"))
        .or_else(|| after.rfind(')'))?;
    let mut kill = empty_kill(line);
    kill.pid = pid;
    kill.comm = after[..end].to_string();
    for field in after[end + 1..].split([' ', ',']).filter(|f| !f.is_empty()) {
        let Some((k, v)) = field.split_once(':') else {
            continue;
        };
        match k {
            "total-vm" => kill.total_vm = kb(v),
            "anon-rss" => kill.anon_rss = kb(v),
            "file-rss" => kill.file_rss = kb(v),
            "shmem-rss" => kill.shmem_rss = kb(v),
            "UID" => kill.uid = v.parse().ok(),
            "oom_score_adj" => kill.oom_score_adj = v.parse().ok(),
            _ => {}
        }
    }
    Some(kill)
}

fn kb(v: &str) -> Option<u64> {
    v.strip_suffix("kB")?.parse::<u64>().ok()?.checked_mul(1024)
}

fn empty_kill(line: &LogLine) -> OomKill {
    OomKill {
        pid: 0,
        comm: String::new(),
        total_vm: None,
        anon_rss: None,
        file_rss: None,
        shmem_rss: None,
        uid: None,
        oom_score_adj: None,
        constraint: OomConstraint::Global,
        memcg: None,
        oom_memcg: None,
        timestamp: line.timestamp,
        wall_time: line.wall_time.clone(),
    }
}

/// The NVIDIA driver's Xid reports in a stream of log lines, oldest first:
/// `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.`
/// (`pid=` and `name=` only on drivers that print them).
pub fn xid_events<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<KernelXid> {
    lines
        .into_iter()
        .filter_map(|raw| {
            let line = parse_line(raw);
            let mut xid = parse_xid(&line.message)?;
            xid.timestamp = line.timestamp;
            xid.wall_time = line.wall_time;
            Some(xid)
        })
        .collect()
}

fn parse_xid(msg: &str) -> Option<KernelXid> {
    let rest = find_after(msg, "NVRM: Xid (")?;
    let (pci, rest) = rest.split_once("): ")?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let xid: u32 = rest[..digits].parse().ok()?;
    let mut rest = rest[digits..].trim_start_matches([',', ' ']);
    let mut pid = None;
    let mut name = None;
    if let Some(after) = rest.strip_prefix("pid=") {
        let (value, tail) = after.split_once(',').unwrap_or((after, ""));
        pid = value.trim().parse::<i32>().ok();
        rest = tail.trim_start();
    }
    if let Some(after) = rest.strip_prefix("name=") {
        let (value, tail) = after.split_once(',').unwrap_or((after, ""));
        name = Some(value.trim().to_string()).filter(|n| !n.is_empty() && n != "<unknown>");
        rest = tail.trim_start();
    }
    Some(KernelXid {
        xid,
        pci: pci.trim_start_matches("PCI:").to_string(),
        pid,
        name,
        detail: rest.trim().to_string(),
        timestamp: None,
        wall_time: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KILLED: &str =
        "Out of memory: Killed process 4242 (python) total-vm:10485760kB, anon-rss:8388608kB, \
         file-rss:1024kB, shmem-rss:2048kB, UID:1000 pgtables:16800kB oom_score_adj:0";

    #[test]
    fn raw_kmsg_record() {
        let l = parse_line(&format!("3,1534,612345678,-;{KILLED}"));
        assert_eq!(l.priority, Some(3));
        assert_eq!(l.seq, Some(1534));
        assert_eq!(l.timestamp, Some(612.345678));
        assert!(l.message.starts_with("Out of memory: Killed process 4242"));
    }

    #[test]
    fn raw_kmsg_record_with_caller_field_and_facility() {
        let l = parse_line("14,99,1000000,c,caller=T12;hello; world");
        assert_eq!(l.priority, Some(6));
        assert_eq!(l.timestamp, Some(1.0));
        assert_eq!(l.message, "hello; world");
    }

    #[test]
    fn dmesg_line() {
        let l = parse_line(
            "[  612.345678] oom-kill:constraint=CONSTRAINT_NONE,task=python,pid=1,uid=0",
        );
        assert_eq!(l.timestamp, Some(612.345678));
        assert!(l.message.starts_with("oom-kill:"));
        let l = parse_line("<6>[    1.000000][    T1] Linux version 6.1");
        assert_eq!(l.priority, Some(6));
        assert_eq!(l.timestamp, Some(1.0));
        assert_eq!(l.message, "Linux version 6.1");
    }

    #[test]
    fn dmesg_t_line() {
        let l = parse_line(&format!("[Sat Nov 21 06:16:42 2026] {KILLED}"));
        assert_eq!(l.timestamp, None);
        assert_eq!(l.wall_time.as_deref(), Some("Sat Nov 21 06:16:42 2026"));
        assert!(l.message.starts_with("Out of memory:"));
    }

    #[test]
    fn journalctl_and_syslog_lines() {
        let l = parse_line(&format!("Nov 21 06:16:42 gpu-node-3 kernel: {KILLED}"));
        assert_eq!(l.wall_time.as_deref(), Some("Nov 21 06:16:42"));
        assert!(l.message.starts_with("Out of memory:"));
        let l = parse_line(
            "Nov 21 06:16:42 gpu-node-3 kernel: [ 612.5] Memory cgroup out of memory: x",
        );
        assert_eq!(l.timestamp, Some(612.5));
        assert_eq!(l.message, "Memory cgroup out of memory: x");
        let l = parse_line("[ 7.25] gpu-node-3 kernel: hello");
        assert_eq!((l.timestamp, l.message.as_str()), (Some(7.25), "hello"));
        let l = parse_line("2026-11-21T06:16:42+0000 gpu-node-3 kernel: hello");
        assert_eq!(l.wall_time.as_deref(), Some("2026-11-21T06:16:42+0000"));
        assert_eq!(l.message, "hello");
    }

    #[test]
    fn logread_lines_with_the_year_and_the_level() {
        let l = parse_line(
            "Wed Sep 15 04:06:35 2021 kern.warn kernel: [ 9665.399682] WARNING: CPU: 3 PID: 4886 at x",
        );
        assert_eq!(l.timestamp, Some(9665.399682));
        assert_eq!(l.message, "WARNING: CPU: 3 PID: 4886 at x");
        let l = parse_line("Sep 15 04:06:35 router kern.err kernel: hello");
        assert_eq!(l.wall_time.as_deref(), Some("Sep 15 04:06:35"));
        assert_eq!(l.message, "hello");
        let l = parse_line("Wed Sep 15 04:06:35 2021 kernel: hello");
        assert_eq!(l.wall_time.as_deref(), Some("Wed Sep 15 04:06:35 2021"));
        assert_eq!(l.message, "hello");
        // More words than a host before `kernel:` are a message's.
        let line = "Wed Sep 15 04:06:35 2021 the module kern.warn said kernel: x";
        assert_eq!(parse_line(line).message, line);
        let line = "Wed Sep 15 04:06:35 2021 host the.warn kernel: x";
        assert_eq!(parse_line(line).message, line);
    }

    #[test]
    fn a_bare_kernel_ident_opening_the_line_is_a_prefix() {
        let l = parse_line("kernel: BUG: Bad page state in process kworker/0:3 pfn:10ac40");
        assert_eq!(
            l.message,
            "BUG: Bad page state in process kworker/0:3 pfn:10ac40"
        );
        let l = parse_line("emerg kernel[]: [ 4591.698432] Internal error: Oops: 5 [#1] SMP ARM");
        assert_eq!(l.message, "Internal error: Oops: 5 [#1] SMP ARM");
        // The ident that stands first is the prefix, whatever its message says later.
        let l = parse_line("emerg kernel[]: [ 9.5] Booting paravirtualized kernel: on KVM");
        assert_eq!(l.message, "Booting paravirtualized kernel: on KVM");
        let l = parse_line("kernel: [ 612.5] Out of memory: Killed process 1 (x)");
        assert_eq!(l.timestamp, Some(612.5));
        assert_eq!(l.message, "Out of memory: Killed process 1 (x)");
    }

    #[test]
    fn kernel_colon_inside_a_message_is_not_a_prefix() {
        let l = parse_line("[    0.1] Booting paravirtualized kernel: on KVM");
        assert_eq!(l.message, "Booting paravirtualized kernel: on KVM");
        let l = parse_line("[    0.1] mykernel: x");
        assert_eq!(l.message, "mykernel: x");
    }

    #[test]
    fn unknown_lines_are_all_message() {
        for s in [
            "",
            "[",
            "[]",
            "[abc] x",
            "1,2;x",
            "<x>",
            "<9999999999999>",
            "kernel: ",
            "[nan] x",
        ] {
            let l = parse_line(s);
            assert!(l.timestamp.is_none_or(f64::is_finite), "{s}");
        }
        assert_eq!(parse_line("[abc] x").message, "[abc] x");
    }

    #[test]
    fn global_kill_with_all_fields() {
        let kills = oom_kills([format!("[  612.3] {KILLED}").as_str()]);
        assert_eq!(kills.len(), 1);
        let k = &kills[0];
        assert_eq!((k.pid, k.comm.as_str()), (4242, "python"));
        assert_eq!(k.total_vm, Some(10485760 * 1024));
        assert_eq!(k.anon_rss, Some(8 << 30));
        assert_eq!(k.file_rss, Some(1 << 20));
        assert_eq!(k.shmem_rss, Some(2 << 20));
        assert_eq!(k.uid, Some(1000));
        assert_eq!(k.oom_score_adj, Some(0));
        assert_eq!(k.constraint, OomConstraint::Global);
        assert_eq!(k.timestamp, Some(612.3));
    }

    #[test]
    fn cgroup_kill_joins_its_constraint_line() {
        let lines = [
            "6,900,700000000,-;python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
            "6,901,700000100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods/pod1,task_memcg=/kubepods/pod1/ctr,task=pt_main_thread,pid=77,uid=0",
            "3,902,700000200,-;Memory cgroup out of memory: Killed process 77 (pt_main_thread) total-vm:2048kB, anon-rss:1024kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:8kB oom_score_adj:1000",
            "6,903,700000300,-;oom_reaper: reaped process 77 (pt_main_thread), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
        ];
        let kills = oom_kills(lines);
        assert_eq!(kills.len(), 1);
        let k = &kills[0];
        assert_eq!(k.constraint, OomConstraint::Cgroup);
        assert_eq!(k.memcg.as_deref(), Some("/kubepods/pod1/ctr"));
        assert_eq!(k.oom_memcg.as_deref(), Some("/kubepods/pod1"));
        assert_eq!(k.anon_rss, Some(1 << 20));
        assert_eq!(k.oom_score_adj, Some(1000));
        assert_eq!(k.timestamp, Some(700.0002));
    }

    #[test]
    fn old_kernel_memcg_kill_without_constraint_line() {
        let lines = [
            "[  10.0] Memory cgroup out of memory: Kill process 5 (python) score 990 or sacrifice child",
            "[  10.0] Killed process 5 (python) total-vm:100kB, anon-rss:10kB, file-rss:0kB",
        ];
        let kills = oom_kills(lines);
        assert_eq!(kills.len(), 1);
        assert_eq!(kills[0].constraint, OomConstraint::Cgroup);
        assert_eq!(kills[0].shmem_rss, None, "absent field must stay unknown");
    }

    #[test]
    fn constraint_line_without_its_kill_line_still_counts() {
        let kills =
            oom_kills(["oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),task=a,pid=9,uid=5"]);
        assert_eq!(kills.len(), 1);
        assert_eq!(
            (kills[0].pid, kills[0].uid, kills[0].anon_rss),
            (9, Some(5), None)
        );
    }

    #[test]
    fn comm_with_spaces_and_parens() {
        let kills =
            oom_kills(["Out of memory: Killed process 3 (my (job) x) total-vm:4kB, anon-rss:4kB"]);
        assert_eq!(kills[0].comm, "my (job) x");
    }

    #[test]
    fn every_truncation_of_real_lines_parses_without_panic() {
        let lines = [
            format!("3,1534,612345678,-;{KILLED}"),
            format!("[Sat Nov 21 06:16:42 2026] {KILLED}"),
            format!("Nov 21 06:16:42 gpu-node-3 kernel: [ 612.5] {KILLED}"),
            "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),oom_memcg=/a,task_memcg=/a/b,task=py thon,pid=77,uid=0"
                .to_string(),
            "<6>[    1.000000][    T1] Memory cgroup out of memory: Killed process 1 (é) total-vm:1kB".to_string(),
        ];
        for line in &lines {
            for (i, _) in line.char_indices() {
                let _ = parse_line(&line[..i]);
                let _ = parse_line(&line[i..]);
                let _ = oom_kills([&line[..i], &line[i..]]);
            }
        }
    }

    #[test]
    fn garbage_is_not_a_kill() {
        let kills = oom_kills([
            "Killed process",
            "Killed process x (y)",
            "Killed process 12",
            "oom-kill:constraint=CONSTRAINT_NONE",
            "Out of memory: Killed process 1 (a) anon-rss:99999999999999999999kB",
        ]);
        assert_eq!(kills.len(), 1);
        assert_eq!(kills[0].anon_rss, None);
    }

    #[test]
    fn xid_lines_of_each_driver_era() {
        let lines = [
            "[ 4242.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
            "<3>[  100.5] NVRM: Xid (0000:86:00): 48, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
            "Nov 21 06:16:42 gpu-7 kernel: NVRM: Xid (PCI:0000:b7:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x50da30=0x10000e 0x50da34=0x0",
            "NVRM: GPU at PCI:0000:3b:00: GPU-1c2e",
        ];
        let xids = xid_events(lines);
        assert_eq!(xids.len(), 3);
        assert_eq!(
            (xids[0].xid, xids[0].pci.as_str(), xids[0].pid),
            (79, "0000:3b:00", Some(1234))
        );
        assert_eq!(xids[0].name.as_deref(), Some("python3"));
        assert_eq!(xids[0].detail, "GPU has fallen off the bus.");
        assert_eq!(xids[0].timestamp, Some(4242.000001));
        assert_eq!(
            (xids[1].xid, xids[1].pid, xids[1].name.as_deref()),
            (48, None, None)
        );
        assert!(xids[1]
            .detail
            .starts_with("An uncorrectable double bit error"));
        assert_eq!(
            (xids[2].xid, xids[2].pid, xids[2].name.as_deref()),
            (13, None, None)
        );
        assert_eq!(xids[2].wall_time.as_deref(), Some("Nov 21 06:16:42"));
    }
}
