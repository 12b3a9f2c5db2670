//! A kernel crash (an oops, BUG, GPF, panic) the kernel logged while a job ran, or
//! that the recorder kept: the log rules' own reading of the report (the faulting
//! module, the process that was running, the taint flags, the verdict by culprit),
//! confirmed because the kernel's log is the system's evidence, not pasted text, and
//! told whether the process the kernel names was the job's.

use crate::model::finding::{Certainty, Evidence, Finding, Severity};
use crate::model::ids;
use crate::parse::kmsg::LogLine;

use super::logs::{FailureClass, LogScanner};

/// A kernel crash as `run` and `why` say it.
#[derive(Debug, Clone)]
pub struct KernelCrash {
    pub finding: Finding,
    /// The job's process the kernel named as running when it crashed, if it was one
    /// of the job's: that process's death (a signal, a hang) follows from the crash.
    pub job_pid: Option<i32>,
    /// The process the kernel named first (`Comm:`, `PID:`), job's or not.
    pub process: Option<(String, i32)>,
    /// The line (from 1) of the text where the first report's headline is.
    pub first_line: u64,
}

impl KernelCrash {
    /// An oops, BUG, GPF or panic; not a WARN, after which the kernel went on (said
    /// at severity warn, never a death).
    pub fn crashed(&self) -> bool {
        self.finding.severity == Severity::Error
    }
}

/// The kernel's lines as `dmesg` prints them (`[  12.345678] message`), so the log
/// rules read them as any kernel log.
pub fn as_dmesg<'a>(lines: impl IntoIterator<Item = &'a LogLine>) -> String {
    let mut text = String::new();
    for l in lines {
        if let Some(t) = l.timestamp {
            text.push_str(&format!("[{t:12.6}] "));
        }
        text.push_str(&l.message);
        text.push('\n');
    }
    text
}

/// The crash the kernel log `text` reports (named `source` in the evidence); `is_job`
/// tells whether a pid was one of the job's processes.
pub fn explain(text: &str, source: &str, is_job: impl Fn(i32) -> bool) -> Option<KernelCrash> {
    let mut scanner = LogScanner::live(source);
    scanner.feed(text.as_bytes());
    scanner.finish();
    let mut finding = scanner
        .findings()
        .into_iter()
        .find(|f| f.id == ids::LOG_KERNEL_OOPS)?;
    let reports = scanner
        .matches()
        .iter()
        .filter(|m| m.class == FailureClass::KernelOops);
    let first_line = reports.clone().map(|m| m.line_no).min().unwrap_or(1);
    let named: Vec<(String, i32)> = reports
        .filter_map(|m| {
            let pid = m.capture("oops_pid")?.trim().parse().ok()?;
            Some((m.capture("oops_process").unwrap_or("?").to_string(), pid))
        })
        .collect();
    let job_named = named.iter().find(|(_, pid)| is_job(*pid));
    let what = match finding.severity {
        Severity::Error => "faulted",
        _ => "warned",
    };
    let relation = match (job_named, named.first()) {
        (Some((comm, pid)), _) => Some(format!(
            "{comm} (pid {pid}) was the job's: the kernel {what} in its system call or \
             its driver's work, not in the job's own code"
        )),
        (None, Some((comm, pid))) => Some(format!(
            "{comm} (pid {pid}) was not one of the job's processes: the crash happened \
             beside the job, whose driver or memory it may have left broken"
        )),
        (None, None) => None,
    };
    if let Some(relation) = relation {
        finding.evidence.insert(
            0,
            Evidence::text("the process the kernel names", relation, source),
        );
    }
    finding.id = ids::RUN_KERNEL_CRASH.into();
    if let Some(a) = finding.assessment.as_mut() {
        a.certainty = Certainty::Confirmed;
        a.confirm.clear();
    }
    Some(KernelCrash {
        finding,
        job_pid: job_named.map(|(_, pid)| *pid),
        process: named.first().cloned(),
        first_line,
    })
}

/// The finding of the signal that ended the process the kernel crashed in
/// ([`KernelCrash::job_pid`]): the crash is the cause, and the native stack the
/// signal's fix asks for will not show it.
pub fn defer_to_crash(signal_end: &mut Finding, crash: &KernelCrash) {
    let cause = crash.finding.assessment.as_ref().map(|a| a.cause);
    if let (Some(a), Some(cause)) = (signal_end.assessment.as_mut(), cause) {
        a.cause = cause;
    }
    signal_end.fix = format!(
        "The kernel crashed in this process first (the kernel crash above): its end follows \
         from that crash, not from the job's code. Fix the crash; a native stack of the job \
         will not show the fault.\n{}",
        signal_end.fix
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::kmsg::parse_line;

    const OOPS: &str = "\
6,900,1234567890,-;BUG: unable to handle page fault for address: ffffb8a1c0e3f000
1,901,1234567915,-;#PF: supervisor read access in kernel mode
1,902,1234567916,-;#PF: error_code(0x0000) - not-present page
4,903,1234567920,-;Oops: 0000 [#1] PREEMPT SMP NOPTI
4,904,1234567921,-;CPU: 3 PID: 4242 Comm: python Tainted: P           OE     6.5.0-14-generic #14-Ubuntu
4,905,1234567925,-;RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]
4,906,1234567926,-;Call Trace:
4,907,1234567927,-; <TASK>
4,908,1234567928,-; ? _nv012345rm+0x1c/0x30 [nvidia]
4,909,1234567929,-; </TASK>
4,910,1234567930,-;---[ end trace 0000000000000000 ]---
";

    fn text() -> String {
        let lines: Vec<LogLine> = OOPS.lines().map(parse_line).collect();
        as_dmesg(&lines)
    }

    #[test]
    fn an_oops_in_the_jobs_process_names_the_driver_and_the_job() {
        let crash = explain(&text(), "kernel log", |pid| pid == 4242).expect("a finding");
        assert_eq!(crash.job_pid, Some(4242));
        assert!(crash.crashed());
        let f = crash.finding;
        assert_eq!(f.id, ids::RUN_KERNEL_CRASH);
        assert_eq!(f.severity, Severity::Error);
        assert!(f.title.contains("nvidia"), "{}", f.title);
        let relation = f.evidence_value("the process the kernel names").unwrap();
        assert!(relation.contains("was the job's"), "{relation}");
        let certainty = f.assessment.as_ref().map(|a| a.certainty);
        assert_eq!(certainty, Some(Certainty::Confirmed));
    }

    /// Seen under `why` on this machine: the OOM kill of a job that faulted in user
    /// space dumps its `Code:` line, which alone reads as an oops cut from its headline.
    #[test]
    fn an_oom_kills_code_line_is_no_kernel_crash() {
        let report = "[22321.484422] memtriage-testh invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[22321.484439] CPU: 0 UID: 0 PID: 5738 Comm: memtriage-testh Not tainted 6.18.44-fc-v782 #1 PREEMPT(none)
[22321.484553] RIP: 0033:0x55c064ca36e9
[22321.484558] Code: f0 88 44 24 17 48 89 7c 24 18 88 44 24 27 48 8b 14 24 48 8b 7c 24 08 be 01 00 00 00 e8 60 7f 00 00 48 8b 44 24 08 8a 4c 24 17 <88> 08 48 83 c4 28 c3 48 83 ec 58
[22321.484561] RSP: 002b:00007ffeed6e9930 EFLAGS: 00010206
[22321.484578] memory: usage 655360kB, limit 655360kB, failcnt 0
[22321.484690] Memory cgroup out of memory: Killed process 5738 (memtriage-testh) total-vm:662336kB, anon-rss:652288kB, file-rss:1536kB, shmem-rss:0kB, UID:0 pgtables:1324kB oom_score_adj:0
";
        let lines: Vec<LogLine> = report.lines().map(parse_line).collect();
        assert!(explain(&as_dmesg(&lines), "kernel log", |pid| pid == 5738).is_none());
    }

    #[test]
    fn an_oops_in_another_process_is_said_to_be_beside_the_job() {
        let crash = explain(&text(), "kernel log", |pid| pid == 7).unwrap();
        assert_eq!(crash.job_pid, None);
        let f = crash.finding;
        let relation = f.evidence_value("the process the kernel names").unwrap();
        assert!(relation.contains("not one of the job's"), "{relation}");
    }

    /// A WARN is the kernel's own check failing: said at severity warn, not a crash.
    #[test]
    fn a_kernel_warning_is_said_as_one_and_is_no_crash() {
        let warn = "[    3.294587] WARNING: CPU: 3 PID: 295 at drivers/gpu/drm/i915/display/intel_bw.c:125 icl_get_bw_info+0x48e/0x540 [i915]\n";
        let crash = explain(warn, "kernel log", |pid| pid == 295).expect("a finding");
        assert!(!crash.crashed());
        assert_eq!(crash.finding.severity, Severity::Warn);
        let relation = crash
            .finding
            .evidence_value("the process the kernel names")
            .unwrap();
        assert!(relation.contains("the kernel warned"), "{relation}");
    }

    #[test]
    fn a_kernel_log_without_a_crash_has_no_finding() {
        let quiet = "[    1.000000] usb 1-1: new high-speed USB device\n\
                     [    2.000000] python[77]: segfault at 0 ip 0 sp 0 error 4\n";
        assert!(explain(quiet, "kernel log", |_| true).is_none());
    }
}
