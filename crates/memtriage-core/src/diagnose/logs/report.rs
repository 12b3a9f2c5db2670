//! From matches to findings: one per class, its evidence quoted from the log.
//!
//! Most classes need nothing beyond the table: the best evidence (the match of the
//! most specific rule, first in table order) fills the title, and the class (or that
//! rule) gives why and fix. Three need numbers worked out: OOM kills (joined across
//! lines by the kernel-log parser), CUDA OOM (is the allocator fragmented?) and Xid
//! (what the number means).

use std::collections::BTreeMap;

use super::growth_series::{growth_evidence, memory_growth};
use super::rules::cuda::{CACHING_ALLOCATOR_OOM, PIN_MEMORY_THREAD_CAUGHT};
use super::rules::dataloader::SHM_SIZE_ADVICE;
use super::rules::{oom as oom_rules, FailureClass, Rule, RULES};
use super::{LogMatch, RuleCount, INNERMOST_FRAME, INNERMOST_USER_FRAME, MAPPED_FILE_READER};
use crate::diagnose::oom;
use crate::diagnose::xid;
use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::system::{OomConstraint, OomKill};
use crate::model::units::{self, iec};
use crate::parse::kmsg;

/// Quoted lines per finding: the first few and the last.
const QUOTE_FIRST: usize = 3;
const QUOTE_LAST: usize = 2;
/// Frames shown; the rest are counted.
const SHOW_FRAMES: usize = 12;
/// Reserved-but-unallocated memory above this share of allocated memory is
/// fragmentation worth fixing before anything else.
const FRAGMENTED_SHARE: f64 = 0.2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    User,
    Library,
    Stdlib,
}

/// Whose code a faulthandler frame (`path:line in func`) is.
pub(super) fn frame_origin(frame: &str) -> Origin {
    if frame.contains("site-packages/") || frame.contains("dist-packages/") {
        Origin::Library
    } else if frame.starts_with("<frozen ")
        || frame.contains("/lib/python3")
        || frame.contains("/lib64/python3")
    {
        Origin::Stdlib
    } else {
        Origin::User
    }
}

fn rule_index(id: &str) -> usize {
    RULES.iter().position(|r| r.id == id).unwrap_or(usize::MAX)
}

fn rule_of(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id).copied()
}

/// The class a match is reported under: its own, or the class it echoes when that
/// class has evidence of its own (`strong`).
fn effective_class(m: &LogMatch, strong: &[FailureClass]) -> FailureClass {
    match rule_of(m.rule).and_then(|r| r.absorbed_by) {
        Some(c) if strong.contains(&c) => c,
        _ => m.class,
    }
}

fn severity_of(m: &LogMatch) -> Severity {
    if m.class == FailureClass::GpuXid {
        let xid = m
            .capture("caused_by_xid")
            .or_else(|| m.capture("xid"))
            .and_then(|x| x.parse().ok());
        return xid
            .and_then(xid::lookup)
            .map_or(Severity::Warn, |x| x.severity);
    }
    rule_of(m.rule).map_or(Severity::Warn, |r| r.severity)
}

/// Who the text shows sent a plain SIGKILL (`Killed`, exit code 137, `signal 9`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum KillSender {
    /// The kernel's or a cgroup's OOM killer (its own lines, `OOMKilled`).
    OomKiller,
    /// A userspace killer (earlyoom, systemd-oomd, a kubelet eviction).
    UserspaceKiller,
    /// Nobody: the kill is a SIGKILL of unknown cause. Most are the OOM killer's, but a
    /// timeout, a preemption and `kill -9` end a process the same way, and a report
    /// that only guesses at memory does not tell them apart.
    Unknown,
}

impl KillSender {
    fn of(matches: &[&LogMatch]) -> KillSender {
        let shown = |class| {
            matches
                .iter()
                .any(|m| m.class == class && !is_plain_sigkill(m.rule))
        };
        if matches.iter().any(|m| m.class == FailureClass::Sigkill) {
            KillSender::Unknown
        } else if shown(FailureClass::OomKill) {
            KillSender::OomKiller
        } else if shown(FailureClass::UserspaceOomKill) {
            KillSender::UserspaceKiller
        } else {
            KillSender::Unknown
        }
    }
}

/// The class a plain SIGKILL is reported under: the killer's the text shows, else a
/// SIGKILL of unknown cause.
fn sigkill_class(rule: &str, class: FailureClass, sender: KillSender) -> FailureClass {
    if !is_plain_sigkill(rule) {
        return class;
    }
    match sender {
        KillSender::OomKiller => FailureClass::OomKill,
        KillSender::UserspaceKiller => FailureClass::UserspaceOomKill,
        KillSender::Unknown => FailureClass::Sigkill,
    }
}

/// A bus error, read as shared memory's or a mapping's, other than the advice to grow
/// /dev/shm itself.
fn holds_a_bus_error(every: &[&LogMatch]) -> bool {
    every.iter().any(|m| {
        m.class == FailureClass::MmapBusError
            || (m.class == FailureClass::DataloaderShm && m.rule != SHM_SIZE_ADVICE)
    })
}

/// Which rules' matches stand, given all the log's (`every`): a thread's word that
/// memory ran out stands beside the plain SIGKILL it names the sender of (alone it is
/// no failure); so does the advice to grow /dev/shm beside a bus error. The pin memory
/// thread's wrapper says where an error was raised (a pinning failure is a CUDA error
/// there too); beside the caching allocator's own report (`CUDA out of memory. Tried
/// to allocate …`), the device's memory is what ran out.
fn kept_rules(every: &[&LogMatch], oom_sender: bool) -> impl Fn(&str) -> bool {
    let told_kept = oom_sender && every.iter().any(|m| is_plain_sigkill(m.rule));
    let bus_error = holds_a_bus_error(every);
    let device_oom = every.iter().any(|m| m.rule == CACHING_ALLOCATOR_OOM);
    move |rule: &str| {
        rule != oom_rules::NOT_OOM_MARKER
            && (rule != super::rules::claims::OUT_OF_MEMORY_TOLD || told_kept)
            && (rule != SHM_SIZE_ADVICE || bus_error)
            && (rule != PIN_MEMORY_THREAD_CAUGHT || !device_oom)
    }
}

pub(super) fn findings(
    matches: &[LogMatch],
    open: &[LogMatch],
    counts: &[RuleCount],
    largest_kills: &[LogMatch],
    source: &str,
) -> Vec<Finding> {
    let every: Vec<&LogMatch> = matches.iter().chain(open).collect();
    let kernel_kill = every
        .iter()
        .any(|m| m.class == FailureClass::OomKill && m.rule.starts_with("kernel."));
    // Only the rules that say a kill was no OOM kill are informational; Ray's report
    // of a worker that died of an unknown cause is no such word.
    let told_not_oom = every
        .iter()
        .any(|m| m.class == FailureClass::Sigkill && severity_of(m) == Severity::Info);
    // The kernel's own kill line outweighs a runtime's `OOMKilled: false`.
    let sender = match KillSender::of(&every) {
        KillSender::Unknown if kernel_kill => KillSender::OomKiller,
        sender => sender,
    };
    let kept = kept_rules(&every, sender == KillSender::OomKiller);
    let relabelled: Vec<LogMatch> = matches
        .iter()
        .chain(open)
        .filter(|m| kept(m.rule))
        .map(|m| LogMatch {
            class: sigkill_class(m.rule, m.class, sender),
            ..m.clone()
        })
        .collect();
    let counts: Vec<RuleCount> = counts
        .iter()
        .filter(|c| kept(c.rule))
        .map(|c| RuleCount {
            class: sigkill_class(c.rule, c.class, sender),
            ..*c
        })
        .collect();
    let counts = &counts[..];
    // How a failure surfaced (a C++ exception's terminate, the abort after it) is not a
    // cause of its own when the failure itself is in the log.
    let has_primary = relabelled
        .iter()
        .any(|m| !SECONDARY.contains(&m.rule) && severity_of(m) >= Severity::Warn);
    let relabelled: Vec<LogMatch> = relabelled
        .into_iter()
        .filter(|m| !(has_primary && SECONDARY.contains(&m.rule)))
        .collect();
    let counts: Vec<RuleCount> = counts
        .iter()
        .filter(|c| !(has_primary && SECONDARY.contains(&c.rule)))
        .copied()
        .collect();
    let counts = &counts[..];
    let open_lines: Vec<u64> = open.iter().map(|m| m.line_no).collect();
    let all: Vec<&LogMatch> = relabelled.iter().collect();
    // Classes with evidence beyond absorbable echoes: only those absorb, so two
    // echoes never swallow each other.
    let mut strong: Vec<FailureClass> = all
        .iter()
        .filter(|m| rule_of(m.rule).is_none_or(|r| r.absorbed_by.is_none()))
        .map(|m| m.class)
        .collect();
    strong.sort();
    strong.dedup();
    let mut groups: BTreeMap<FailureClass, Vec<&LogMatch>> = BTreeMap::new();
    for m in &all {
        groups
            .entry(effective_class(m, &strong))
            .or_default()
            .push(m);
    }
    let mut out: Vec<(Severity, u64, Finding)> = groups
        .into_iter()
        .filter_map(|(class, group)| {
            let mut n = 0;
            let mut first = u64::MAX;
            let mut last = 0;
            for c in counts {
                let probe = LogMatch {
                    class: c.class,
                    rule: c.rule,
                    line_no: 0,
                    line: String::new(),
                    captures: Vec::new(),
                };
                if effective_class(&probe, &strong) == class {
                    n += c.count;
                    first = first.min(c.first_line);
                    last = last.max(c.last_line);
                }
            }
            // An open faulthandler block or table is not counted yet.
            for m in all
                .iter()
                .filter(|m| open_lines.contains(&m.line_no) && effective_class(m, &strong) == class)
                .filter(|m| {
                    !counts.iter().any(|c| {
                        c.rule == m.rule && c.first_line <= m.line_no && m.line_no <= c.last_line
                    })
                })
            {
                n += 1;
                first = first.min(m.line_no);
                last = last.max(m.line_no);
            }
            let kills = KillCounts {
                total: counts
                    .iter()
                    .filter(|c| c.rule == oom_rules::KILLED_PROCESS)
                    .map(|c| c.count)
                    .sum(),
                largest: largest_kills,
                told_not_oom,
            };
            let f = build(class, &group, source, (n, first, last), &kills)?;
            let sev = f.severity;
            let first_line = group.iter().map(|m| m.line_no).min().unwrap_or(0);
            Some((sev, first_line, f))
        })
        .collect();
    let certainty = |f: &Finding| f.assessment.as_ref().map(|a| a.certainty);
    // Memory that grew is the cause of what it led to (swap, a kill): told as
    // surely, the consequence is the verdict. A SIGKILL nobody is shown sending is
    // no such consequence: the growth told beside it is what explains it.
    let rank = |f: &Finding| match f.id.as_str() {
        ids::LOG_MEMORY_GROWTH => 1,
        ids::LOG_SIGKILL => 2,
        _ => 0,
    };
    out.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(certainty(&b.2).cmp(&certainty(&a.2)))
            .then(rank(&a.2).cmp(&rank(&b.2)))
            .then(a.1.cmp(&b.1))
    });
    out.into_iter().map(|(_, _, f)| f).collect()
}

/// Whether rule `id` sees a SIGKILL without knowing who sent it.
pub(super) fn is_plain_sigkill(id: &str) -> bool {
    PLAIN_SIGKILL.contains(&id)
}

/// Rules that see a SIGKILL without knowing who sent it.
const PLAIN_SIGKILL: &[&str] = &[
    oom_rules::EXIT_SIGKILL,
    "shell.killed",
    oom_rules::SHELL_KILLED_ELSEWHERE,
    "gunicorn.perhaps-oom",
    super::rules::signals::KILL,
    super::rules::signals::KILL_STATUS,
    super::rules::claims::RETOLD_KILLED,
    super::rules::kill_claims::PROCESS_KILLED,
];

/// Rules whose lines only say how another failure surfaced.
const SECONDARY: &[&str] = &[
    "cxx.terminate",
    "cxx.what",
    "shell.aborted",
    "signal.sigabrt-reported",
    "exit.status-134",
    "exit.status-139",
];

/// The kernel's `Killed process` lines in all the log, kept or not.
struct KillCounts<'a> {
    total: u64,
    /// The kills that freed the most memory.
    largest: &'a [LogMatch],
    /// The text says a SIGKILL was no OOM kill (a runtime's `OOMKilled: false`, a
    /// time limit).
    told_not_oom: bool,
}

/// How sure the group makes the class, and whom it points at.
fn assess(class: FailureClass, group: &[&LogMatch], best_rule: Option<&Rule>) -> Assessment {
    let info = class.info();
    let mut certainty = group
        .iter()
        .filter_map(|m| rule_of(m.rule))
        .map(|r| r.certainty)
        .max()
        .unwrap_or(Certainty::Possible);
    if class == FailureClass::Sigkill {
        certainty = Certainty::Possible;
    }
    let mut cause = best_rule.and_then(|r| r.cause).unwrap_or(info.cause);
    match class {
        FailureClass::GpuXid | FailureClass::GpuEcc => {
            if let Some(xid) = group
                .iter()
                .filter_map(|m| m.capture("xid")?.parse::<u32>().ok())
                .max_by_key(|x| xid::lookup(*x).map(|i| i.severity))
            {
                cause = xid_cause(xid);
            }
        }
        FailureClass::WindowsMemoryFault => {
            if let Some(whose) = group.iter().find_map(|m| m.capture("whose")) {
                cause = if whose.contains("driver") {
                    CauseKind::Driver
                } else if whose.starts_with("RAM") {
                    CauseKind::Hardware
                } else {
                    CauseKind::UserCode
                };
            }
        }
        _ => {}
    }
    Assessment {
        certainty,
        cause,
        confirm: if certainty == Certainty::Confirmed {
            String::new()
        } else {
            info.confirm.to_string()
        },
    }
}

/// Whom an Xid points at, as NVIDIA's catalogue tags them.
fn xid_cause(xid: u32) -> CauseKind {
    xid::lookup(xid).map_or(CauseKind::Driver, xid::Xid::cause_kind)
}

fn fill(template: &str, m: &LogMatch) -> Option<String> {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}')?;
        let value = m.capture(&after[..close])?;
        if value.is_empty() {
            return None;
        }
        out.push_str(value);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

fn build(
    class: FailureClass,
    group: &[&LogMatch],
    source: &str,
    (seen, first, last): (u64, u64, u64),
    kills: &KillCounts<'_>,
) -> Option<Finding> {
    let info = class.info();
    // Figures are evidence only as a series; what the text says in words stands alone.
    let said = group.iter().any(|m| m.capture("series").is_none());
    let growth = if class == FailureClass::MemoryGrowth {
        match memory_growth(group) {
            Some(g) => Some(g),
            None if said => None,
            None => return None,
        }
    } else {
        None
    };
    let group: Vec<&LogMatch> = if growth.is_none() && said {
        group
            .iter()
            .filter(|m| m.capture("series").is_none())
            .copied()
            .collect()
    } else {
        group.to_vec()
    };
    let group = &group[..];
    let best = group
        .iter()
        .min_by_key(|m| (rule_index(m.rule), m.line_no))
        .copied();
    let best_rule = best
        .and_then(|m| rule_of(m.rule))
        .filter(|r| r.class == class);
    // A SIGKILL the text says was no OOM kill (a runtime's `OOMKilled: false`, a time
    // limit) claims no failure of its own; one of unknown cause is a warning.
    let severity = if class == FailureClass::Sigkill && kills.told_not_oom {
        Severity::Info
    } else if class == FailureClass::Sigkill {
        Severity::Warn
    } else {
        group
            .iter()
            .map(|m| severity_of(m))
            .max()
            .unwrap_or(Severity::Warn)
    };
    let mut title = best
        .zip(best_rule)
        .and_then(|(m, r)| fill(r.title, m))
        .unwrap_or_else(|| info.title.to_string());
    let why = best_rule
        .and_then(|r| r.why)
        .unwrap_or(info.why)
        .to_string();
    let mut fix = best_rule
        .and_then(|r| r.fix)
        .unwrap_or(info.fix)
        .to_string();
    let at = |m: &LogMatch| format!("{source}:{}", m.line_no);

    let mut evidence = Vec::new();
    let mut oops_cause = None;
    // The crash site leads: the Python frames, innermost first.
    if let Some(fh) = group
        .iter()
        .find(|m| m.captures_named("frame").next().is_some())
    {
        frame_evidence(fh, &at(fh), &mut evidence);
    }
    match class {
        FailureClass::OomKill => {
            if let Some((t, oom_fix)) = oom_evidence(group, source, kills, &mut evidence) {
                title = t;
                fix = oom_fix.to_string();
            }
            report_evidence(group, source, &mut title, &mut evidence);
        }
        FailureClass::MemoryGrowth => {
            if let Some((name, readings)) = &growth {
                let as_printed = group.iter().any(|m| m.capture("as_printed").is_some());
                title = growth_evidence(name, readings, as_printed, source, &mut evidence);
            }
        }
        FailureClass::CudaOom => {
            if let Some(m) = best {
                if let Some(extra) = cuda_oom_evidence(m, &at(m), &mut evidence) {
                    fix = format!("{extra}\n{fix}");
                }
            }
        }
        FailureClass::KernelOops | FailureClass::WindowsMemoryFault => {
            if let Some(v) = super::oops::crash_verdict(class, group, source) {
                (title, fix) = (v.title, v.fix);
                evidence.extend(v.evidence);
                oops_cause = Some(v.cause);
            }
        }
        FailureClass::GpuXid | FailureClass::GpuEcc => {
            if let Some((t, xfix)) = xid_evidence(group, source, &mut evidence) {
                title = t;
                fix = format!("{xfix}\n{fix}");
            }
        }
        _ => {}
    }
    if let Some(m) = best {
        if !matches!(
            class,
            FailureClass::OomKill
                | FailureClass::CudaOom
                | FailureClass::GpuXid
                | FailureClass::GpuEcc
                | FailureClass::MemoryGrowth
        ) || evidence.is_empty()
        {
            for (k, v) in &m.captures {
                if matches!(k.as_str(), "frame" | "site" | "meaning" | "whose")
                    || k.ends_with("_bytes")
                    || k.starts_with("oops_")
                    || k.starts_with("bugcheck_")
                {
                    continue;
                }
                evidence.push(Evidence::text(k.replace('_', " "), v.clone(), at(m)));
            }
        }
    }
    lines_evidence(group, source, (seen, first, last), &mut evidence);
    let mut assessment = assess(class, group, best_rule);
    if let Some(cause) = oops_cause {
        assessment.cause = cause;
    }
    if class == FailureClass::WindowsMemoryFault {
        if let Some(whose) = group.iter().find_map(|m| m.capture("whose")) {
            evidence.push(Evidence::text("points at", whose, source));
        }
    }
    Some(Finding {
        assessment: Some(assessment),
        id: info.id.to_string(),
        severity,
        title,
        evidence,
        why,
        fix,
    })
}

/// How many lines matched, where, and the first and last of them quoted.
fn lines_evidence(
    group: &[&LogMatch],
    source: &str,
    (seen, first, last): (u64, u64, u64),
    evidence: &mut Vec<Evidence>,
) {
    if seen > 0 {
        let value = if seen == 1 {
            format!("1 line (line {first})")
        } else {
            format!("{seen} lines (first at line {first}, last at line {last})")
        };
        evidence.push(
            Evidence::text("matching lines", value, source).with_quantity(Quantity::Count(seen)),
        );
    }
    let mut quoted: Vec<&LogMatch> = group.iter().take(QUOTE_FIRST).copied().collect();
    let tail_from = group.len().saturating_sub(QUOTE_LAST).max(QUOTE_FIRST);
    quoted.extend(group.iter().skip(tail_from).copied());
    for m in quoted {
        evidence.push(Evidence::text(
            format!("line {}", m.line_no),
            m.line.clone(),
            source,
        ));
    }
}

/// What the kernel's report says beyond the kill: the memory cgroup's limit that was
/// hit (cgroup v1's `memory: usage … limit … failcnt`), and who held the memory at the
/// kill (its task table, summed by command).
fn report_evidence(group: &[&LogMatch], source: &str, title: &mut String, out: &mut Vec<Evidence>) {
    if let Some(m) = group.iter().find(|m| m.rule == oom_rules::MEMCG_USAGE) {
        let at = format!("{source}:{}", m.line_no);
        if let Some(limit) = m.capture("limit") {
            let e = Evidence::text("memory cgroup limit hit", limit, at.clone());
            out.push(
                match m.capture("limit_bytes").and_then(|b| b.parse().ok()) {
                    Some(b) => e.with_quantity(Quantity::Bytes(b)),
                    None => e,
                },
            );
            if !title.contains("limit") {
                title.push_str(&format!(
                    ": its memory cgroup's limit of {limit} was reached"
                ));
            }
        }
        if let Some(f) = m.capture("failcnt") {
            out.push(Evidence::text("times the limit was hit (failcnt)", f, at));
        }
    }
    if let Some(m) = group.iter().rev().find(|m| m.rule == oom_rules::TASK_TABLE) {
        let at = format!("{source}:{}", m.line_no);
        if let Some(h) = m.capture("holders") {
            out.push(Evidence::text(
                "largest holders at the kill (rss by command)",
                h,
                at.clone(),
            ));
        }
        if let Some(t) = m.capture("tasks") {
            out.push(Evidence::text("tasks in the kernel's table", t, at));
        }
    }
}

fn frame_evidence(m: &LogMatch, at: &str, out: &mut Vec<Evidence>) {
    let frames: Vec<&str> = m.captures_named("frame").collect();
    let src = format!("{at} (faulthandler)");
    for (i, f) in frames.iter().take(SHOW_FRAMES).enumerate() {
        let label = if i == 0 {
            INNERMOST_FRAME.to_string()
        } else {
            format!("frame {}", i + 1)
        };
        let whose = match frame_origin(f) {
            Origin::User => "your code",
            Origin::Library => "library, site-packages",
            Origin::Stdlib => "Python standard library",
        };
        out.push(Evidence::text(
            label,
            format!("{f}  [{whose}]"),
            src.clone(),
        ));
    }
    if frames.len() > SHOW_FRAMES {
        out.push(Evidence::text(
            "more frames",
            format!("{} outer frames not shown", frames.len() - SHOW_FRAMES),
            src.clone(),
        ));
    }
    if let Some(user) = frames.iter().find(|f| frame_origin(f) == Origin::User) {
        out.push(Evidence::text(INNERMOST_USER_FRAME, *user, src.clone()));
    }
    if m.capture("error")
        .is_some_and(|e| e.starts_with("Bus error"))
    {
        if let Some(f) = frames.iter().find(|f| is_mapped_file_reader(f)) {
            out.push(Evidence::text(MAPPED_FILE_READER, *f, src.clone()));
        }
    }
}

fn is_mapped_file_reader(frame: &str) -> bool {
    [
        "mmap",
        "memmap",
        "safetensors",
        "torch/serialization.py",
        "numpy/lib/format.py",
    ]
    .iter()
    .any(|k| frame.contains(k))
}

/// OOM kills from the kernel's own lines, joined as the kernel-log parser joins them,
/// and the fix for the limit the first one hit.
fn oom_evidence(
    group: &[&LogMatch],
    source: &str,
    counts: &KillCounts<'_>,
    out: &mut Vec<Evidence>,
) -> Option<(String, &'static str)> {
    let mut kernel: Vec<&LogMatch> = group
        .iter()
        .filter(|m| m.rule == oom_rules::KILLED_PROCESS || m.rule == oom_rules::KILL_CONSTRAINT)
        .copied()
        .collect();
    let kills = kmsg::oom_kills(kernel.iter().map(|m| m.line.as_str()));
    let first = kills.first()?.clone();
    let total = (counts.total as usize).max(kills.len());
    // The largest kills lead the evidence, whichever lines were kept.
    kernel.extend(counts.largest.iter());
    kernel.sort_by_key(|m| m.line_no);
    kernel.dedup_by_key(|m| m.line_no);
    let mut shown = kmsg::oom_kills(kernel.iter().map(|m| m.line.as_str()));
    shown.sort_by_key(|k| std::cmp::Reverse(k.anon_rss));
    shown.dedup_by(|a, b| a.pid == b.pid && a.comm == b.comm);
    let kills = shown;
    let line_of = |k: &OomKill| {
        let pid = k.pid.to_string();
        let of_pid = |m: &&&LogMatch| m.capture("pid") == Some(pid.as_str());
        kernel
            .iter()
            .find(|m| m.rule == oom_rules::KILLED_PROCESS && of_pid(m))
            .or_else(|| kernel.iter().find(of_pid))
            .map_or_else(|| source.to_string(), |m| format!("{source}:{}", m.line_no))
    };
    for k in kills.iter().take(4) {
        out.extend(oom::evidence(k, &line_of(k), None));
    }
    if total > 4.min(kills.len()) {
        out.push(Evidence::count(
            "OOM kills in the log",
            total as u64,
            source,
        ));
        out.push(Evidence::text(
            "kills not listed",
            format!(
                "{} more (the four that freed the most are listed)",
                total - 4.min(kills.len())
            ),
            source,
        ));
    }
    let first = &first;
    let size = first
        .anon_rss
        .map(|a| format!(" holding {} of anonymous memory", iec(a)))
        .unwrap_or_default();
    let limit = match first.constraint {
        OomConstraint::Cgroup => match &first.oom_memcg {
            Some(cg) => format!(": cgroup {cg} hit its memory limit"),
            None => ": its memory cgroup hit its limit".to_string(),
        },
        _ => String::new(),
    };
    let title = if total == 1 {
        format!(
            "The kernel's OOM killer killed {}{size}{limit}",
            oom::victim(first)
        )
    } else {
        format!(
            "The kernel's OOM killer killed {total} processes, first {}{size}{limit}",
            oom::victim(first)
        )
    };
    Some((title, oom::fix(oom::Limit::of(first))))
}

/// `2.00 GiB` as PyTorch prints it, in bytes.
pub fn pytorch_size(s: &str) -> Option<f64> {
    let (number, unit) = s.trim().split_once(' ')?;
    units::bytes_of(number.parse().ok()?, unit).map(|b| b as f64)
}

/// The figures of the message, and the fix that leads when the allocator is
/// fragmented (returned, to go before the class's fix).
fn cuda_oom_evidence(m: &LogMatch, at: &str, out: &mut Vec<Evidence>) -> Option<String> {
    let size = |k: &str| m.capture(k).and_then(pytorch_size);
    for (k, label) in [
        ("asked", "tried to allocate"),
        ("gpu", "GPU"),
        ("total", "total capacity"),
        ("free", "free"),
        ("in_use", "in use by this process (PyTorch and not)"),
        ("allocated", "allocated by PyTorch"),
        ("reserved", "reserved by PyTorch in total"),
    ] {
        if let Some(v) = m.capture(k) {
            // The GPU's index is not a size; the rest are PyTorch's printed sizes.
            let e = Evidence::text(label, v, at);
            out.push(match (k, pytorch_size(v)) {
                ("gpu", _) | (_, None) => e,
                (_, Some(b)) => e.with_quantity(Quantity::Bytes(b as u64)),
            });
        }
    }
    let allocated = size("allocated");
    let unallocated = size("reserved_unallocated").or_else(|| {
        let r = size("reserved")?;
        Some((r - allocated?).max(0.0))
    });
    let (Some(unalloc), Some(alloc)) = (unallocated, allocated) else {
        return None;
    };
    let share = if alloc > 0.0 { unalloc / alloc } else { 0.0 };
    let shown = m
        .capture("reserved_unallocated")
        .map_or_else(|| iec(unalloc as u64), str::to_string);
    out.push(
        Evidence::text(
            "reserved by PyTorch but unallocated",
            format!("{shown} ({:.0}% of allocated)", share * 100.0),
            at,
        )
        .with_quantity(Quantity::Bytes(unalloc as u64)),
    );
    if let (Some(in_use), Some(_)) = (size("in_use"), size("reserved_unallocated")) {
        let other = in_use - alloc - unalloc;
        if other > 0.0 {
            out.push(Evidence::bytes(
                "non-PyTorch memory of this process (CUDA context, NCCL, cuBLAS workspaces)",
                other as u64,
                at,
            ));
        }
    }
    (share > FRAGMENTED_SHARE).then(|| {
        format!(
            "The caching allocator is fragmented: {shown} is reserved but unallocated. First try:\n\
             export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   (before starting python)"
        )
    })
}

fn xid_evidence(
    group: &[&LogMatch],
    source: &str,
    out: &mut Vec<Evidence>,
) -> Option<(String, String)> {
    let mut shown: Vec<u32> = Vec::new();
    let mut worst: Option<(&LogMatch, Severity)> = None;
    for m in group {
        let Some(xid) = m.capture("xid").and_then(|x| x.parse::<u32>().ok()) else {
            continue;
        };
        let sev = severity_of(m);
        if worst.is_none_or(|(_, s)| sev > s) {
            worst = Some((m, sev));
        }
        if shown.contains(&xid) || shown.len() >= 6 {
            continue;
        }
        shown.push(xid);
        let meaning = m.capture("meaning").unwrap_or("");
        let mut value = format!("{meaning} on {}", m.capture("pci").unwrap_or("?"));
        if let Some(pid) = m.capture("pid") {
            value.push_str(&format!(", pid {pid}"));
        }
        if let Some(name) = m.capture("name") {
            value.push_str(&format!(" ({name})"));
        }
        out.push(Evidence::text(
            format!("Xid {xid}"),
            value,
            format!("{source}:{}", m.line_no),
        ));
    }
    let (m, _) = worst?;
    let xid: u32 = m.capture("xid")?.parse().ok()?;
    let pci = m.capture("pci").unwrap_or("?");
    Some(match xid::lookup(xid) {
        Some(x) => (format!("GPU Xid {xid} on {pci}: {}", x.meaning), x.fix()),
        None => (
            format!("GPU Xid {xid} on {pci}"),
            format!("Xid {xid} is not in memtriage's table: look it up in NVIDIA's Xid catalog."),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_pytorch_prints_them() {
        assert_eq!(
            pytorch_size("2.00 GiB"),
            Some(2.0 * 1024.0 * 1024.0 * 1024.0)
        );
        assert_eq!(pytorch_size("20.00 MiB"), Some(20.0 * 1024.0 * 1024.0));
        assert_eq!(pytorch_size("512 B"), Some(512.0));
        assert_eq!(pytorch_size("x GiB"), None);
        assert_eq!(pytorch_size("1.0 parsecs"), None);
    }

    #[test]
    fn frame_origins() {
        assert_eq!(
            frame_origin("/opt/venv/lib/python3.11/site-packages/torch/nn/functional.py:1 in f"),
            Origin::Library
        );
        assert_eq!(
            frame_origin("/usr/lib/python3.11/threading.py:1 in run"),
            Origin::Stdlib
        );
        assert_eq!(
            frame_origin("<frozen importlib._bootstrap>:1 in x"),
            Origin::Stdlib
        );
        assert_eq!(frame_origin("/home/a/model.py:12 in forward"), Origin::User);
        assert_eq!(frame_origin("train.py:40 in <module>"), Origin::User);
    }
}
