//! The kernel log as the OOM watch follows it: each read's OOM reports (every era's,
//! with their task tables), processes dying of a fault, and kernel crashes (an oops,
//! BUG, GPF, panic: their lines kept for `why`). A report whose lines span two reads
//! waits, a few reads at most, for its `Killed process` line; a crash for its end.

use std::time::SystemTime;

use crate::diagnose::kernel_crash;
use crate::model::system::OomKill;
use crate::parse::fatal_signal::{self, FatalSignal};
use crate::parse::kmsg::{oom_kills, parse_line};
use crate::parse::oom_task_table::task_tables;
use crate::probe::kmsg::{LogFollower, Start};
use crate::probe::root::Root;

/// Reads a report missing its `Killed process` line waits before it is taken as cut.
const CARRY_READS: u32 = 3;

pub(super) struct KernelLog {
    /// Why the kernel log cannot be followed, if it cannot.
    follower: Result<LogFollower, String>,
    /// A report's lines may span reads: the tail since its `oom-kill:` line waits.
    carry: Vec<String>,
    carry_reads: u32,
    /// Whether crash reports are looked for.
    crashes: bool,
    /// A crash report's lines read so far, waiting for its end.
    crash_carry: Vec<String>,
    crash_carry_reads: u32,
}

/// A crash's lines kept for `why` at most: a report with its call trace.
const CRASH_LINES: usize = 200;
/// Lines above a crash's headline kept with it (a WARN's own line, 2.6's `Pid:`).
const CRASH_LINES_BEFORE: usize = 8;

/// A kernel crash as the log printed it, and the process it names.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashText {
    pub pid: Option<i32>,
    pub comm: Option<String>,
    /// The report's lines as `dmesg` prints them: `why` reads them again.
    pub text: String,
}

/// What one read found.
pub(super) struct LogRead {
    /// When the lines were read.
    pub at: SystemTime,
    /// Each kill with its report's task table (empty where the report had none).
    pub kills: Vec<(OomKill, Vec<String>)>,
    pub faults: Vec<FatalSignal>,
    pub crash: Option<CrashText>,
}

impl KernelLog {
    /// Follows from now: what was logged before is not read. `crashes`: look for the
    /// kernel's crash reports too.
    pub fn follow(root: &Root, crashes: bool) -> Self {
        KernelLog {
            follower: LogFollower::kmsg(root, Start::Now).map_err(|e| e.to_string()),
            carry: Vec::new(),
            carry_reads: 0,
            crashes,
            crash_carry: Vec::new(),
            crash_carry_reads: 0,
        }
    }

    /// Why the kernel log cannot be followed, if it cannot.
    pub fn error(&self) -> Option<&String> {
        self.follower.as_ref().err()
    }

    /// What is new since the last read; `None` where nothing is (or the log cannot be
    /// read: [`KernelLog::error`] says why from then on).
    pub fn read(&mut self) -> Option<LogRead> {
        let Ok(follower) = &mut self.follower else {
            return None;
        };
        let lines = match follower.read_new() {
            Ok(l) => l,
            Err(e) => {
                self.follower = Err(e.to_string());
                return None;
            }
        };
        if lines.is_empty() && self.carry.is_empty() && self.crash_carry.is_empty() {
            return None;
        }
        let crash = match self.crashes {
            true => self.read_crash(&lines),
            false => None,
        };
        // Only new lines: a carried report is read again.
        let at = SystemTime::now();
        let faults = lines
            .iter()
            .filter_map(|l| fatal_signal::parse(&parse_line(l).message))
            .collect();
        let had_carry = !self.carry.is_empty();
        let mut all = std::mem::take(&mut self.carry);
        all.extend(lines);
        self.carry_incomplete_report(&mut all, had_carry);
        let kills = oom_kills(all.iter().map(String::as_str));
        let mut tables = task_tables(&all);
        // One table per report; where they do not pair up, the last table is the last
        // kill's (a report cut before its table was carried and read in full).
        let tables: Vec<Vec<String>> = if tables.len() == kills.len() {
            tables
        } else {
            let last = tables.pop();
            let mut t = vec![Vec::new(); kills.len()];
            if let (Some(slot), Some(last)) = (t.last_mut(), last) {
                *slot = last;
            }
            t
        };
        Some(LogRead {
            at,
            kills: kills.into_iter().zip(tables).collect(),
            faults,
            crash,
        })
    }

    /// The crash in what is new, if one is (the first, where a read holds several): a
    /// report whose end (`---[ end trace`, `---[ end Kernel panic`) is not read yet
    /// waits a read or two for the rest.
    fn read_crash(&mut self, new: &[String]) -> Option<CrashText> {
        let mut all = std::mem::take(&mut self.crash_carry);
        all.extend(new.iter().cloned());
        // Each line as `dmesg` prints it, `\n` ended.
        let shown: Vec<String> = all
            .iter()
            .map(|l| kernel_crash::as_dmesg([&parse_line(l)]))
            .collect();
        let text = shown.concat();
        // A WARN is no death for `why` to explain: the kernel went on.
        let crash = kernel_crash::explain(&text, "kernel log", |_| false).filter(|c| c.crashed());
        let Some(crash) = crash else {
            self.crash_carry_reads = 0;
            return None;
        };
        let from = (crash.first_line as usize)
            .saturating_sub(1 + CRASH_LINES_BEFORE)
            .min(all.len());
        let ended = shown[from..].iter().any(|l| l.contains("---[ end "));
        if !ended && self.crash_carry_reads < 2 {
            self.crash_carry = all.split_off(from);
            self.crash_carry_reads += 1;
            return None;
        }
        self.crash_carry_reads = 0;
        let text = shown[from..(from + CRASH_LINES).min(all.len())].concat();
        Some(CrashText {
            pid: crash.process.as_ref().map(|(_, pid)| *pid),
            comm: crash.process.map(|(comm, _)| comm),
            text,
        })
    }

    /// A report whose `Killed process` line is not logged yet waits, a few reads at
    /// most (a cut report is then counted from its `oom-kill:` line alone): its lines
    /// move from `all` to the carry.
    fn carry_incomplete_report(&mut self, all: &mut Vec<String>, had_carry: bool) {
        let Some(last) = all.iter().rposition(|l| l.contains("oom-kill:")) else {
            return;
        };
        let complete = all[last..].iter().any(|l| l.contains("Killed process"));
        // The report from its first line: its task table comes before `oom-kill:`.
        let first = all[..=last]
            .iter()
            .rposition(|l| l.contains("invoked oom-killer"))
            .unwrap_or(last);
        let same_report = had_carry && first == 0;
        let reads = if same_report { self.carry_reads + 1 } else { 1 };
        if !complete && reads <= CARRY_READS {
            self.carry = all.split_off(first);
            self.carry_reads = reads;
        }
    }
}
