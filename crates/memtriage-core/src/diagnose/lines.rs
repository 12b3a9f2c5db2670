//! Where a job's memory went, line by line: each line the startup hook measured is
//! told a leak, a peak, copy-on-write or memory held, and the lines that explain a
//! process's memory become evidence, and the fix, of the finding about it.

use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::lines::{HeldAt, LineGrowth, LineKind, ProcessLines, PythonStart};
use crate::model::run::RunReport;
use crate::model::units::iec;

/// Less than this under a line is not worth a kind: allocator noise, imports.
pub const SIGNIFICANT: u64 = 16 << 20;
/// A leak is still rising in the second half of the line's life: at least this share
/// of what it holds came then.
const LATE_SHARE: f64 = 0.25;
/// A leak grows again and again: a line that grew in fewer episodes is one long
/// call (a working set read in at once), however long it took.
const MIN_EPISODES: u64 = 4;
/// Lines shown per process.
pub const SHOWN: usize = 3;

/// Tells each line's kind, and orders the lines by it.
pub fn classify(processes: &mut [ProcessLines]) {
    for p in processes {
        let end = p.last_seconds.unwrap_or(0.0);
        let forked = p.started == PythonStart::Fork;
        // Killed (or still running): its last figures are from just before the end.
        let cut_short = !p.complete;
        let process = p.held_series.clone();
        for line in &mut p.lines {
            line.kind = kind_of(line, end, forked, cut_short);
            if line.kind == Some(LineKind::Leak) && !process_rose_with(line, &process) {
                line.kind = Some(LineKind::Held);
            }
        }
        // The report's order: the lines told a kind, weightiest first, then the rest.
        p.lines.sort_by_key(|l| {
            std::cmp::Reverse((
                l.kind.is_some(),
                l.kind == Some(LineKind::Leak),
                l.user_code,
                l.weight(),
            ))
        });
    }
}

fn kind_of(line: &LineGrowth, end: f64, forked: bool, cut_short: bool) -> Option<LineKind> {
    if line.at.line == 0 || is_import(line) {
        // A thread's growth placed only by where it waited, or a module's import
        // (however long it ran, even until a kill): shown, never blamed.
        return (line.held() >= SIGNIFICANT).then_some(LineKind::Held);
    }
    if !line.user_code {
        // A library's line (no frame of the job's own was running): its memory is
        // often the next step's, reused at the same addresses, which reads as kept.
        // Shown as what it holds or takes, never blamed as a leak.
        let grown = line.anon.grown + line.shmem.grown;
        if grown >= SIGNIFICANT && (line.anon.kept + line.shmem.kept) * 2 < grown {
            return Some(LineKind::Peak);
        }
        return (line.held() >= SIGNIFICANT).then_some(LineKind::Held);
    }
    let kept = most_kept(line);
    let grown = line.anon.grown + line.shmem.grown;
    // Touching a parent's Python objects copies their pages and also grows the
    // child's resident memory (page tables filled, refcounts written): a line whose
    // copies are at least half of what it kept is the copy's.
    if forked && line.copied_after_fork >= SIGNIFICANT && line.copied_after_fork * 2 >= kept {
        return Some(LineKind::CopyOnWrite);
    }
    if kept >= SIGNIFICANT
        && kept * 2 >= grown
        && line.episodes >= MIN_EPISODES
        && still_rising(line, end, cut_short)
    {
        return Some(LineKind::Leak);
    }
    if grown >= SIGNIFICANT && kept * 2 < grown {
        return Some(LineKind::Peak);
    }
    (line.held() >= SIGNIFICANT).then_some(LineKind::Held)
}

/// Whether the process itself grew, from the line's first growth to its most, by at
/// least half of what the line claims to keep then. Memory freed and taken again at
/// the same addresses reads as kept by the line that had it first; a steady
/// process, whose memory does not rise, has no leak whatever its lines read.
fn process_rose_with(line: &LineGrowth, process: &[HeldAt]) -> bool {
    // Copies after a fork are not the process's growth: RSS had them already.
    let most = most_kept(line) as i64;
    if process.is_empty() {
        return true; // a hook that did not write it: nothing to hold it against
    }
    let at = |t: f64| {
        process
            .iter()
            .take_while(|p| p.0 <= t)
            .last()
            .or(process.first())
            .map_or(0, |p| p.1)
    };
    let top = process
        .iter()
        .filter(|p| p.0 >= line.first_seconds)
        .map(|p| p.1)
        .max()
        .unwrap_or(0);
    top - at(line.first_seconds) >= most / 2
}

/// What the line kept at its most (anonymous and shared memory): a process that ended
/// well gave back at its exit what it had kept.
fn most_kept(line: &LineGrowth) -> u64 {
    let most = line.series.iter().map(|p| p.1).max().unwrap_or(0).max(0) as u64;
    (line.anon.kept + line.shmem.kept).max(most.saturating_sub(line.copied_after_fork))
}

/// An import statement, or a line that grew mostly while importing (the first
/// `torch.optim.SGD(...)` or `model.compile()` loads modules and their libraries).
fn is_import(line: &LineGrowth) -> bool {
    let statement = line.at.text.as_deref().is_some_and(|t| {
        t.starts_with("import ") || (t.starts_with("from ") && t.contains(" import "))
    });
    statement || line.grown_importing * 2 >= line.grown().max(1)
}

/// Whether what the line holds kept rising: it was growing when its process was
/// killed, or in the second half of its life (from its first growth to the process's
/// last measurement) it took a real share. A working set taken at the start does not.
fn still_rising(line: &LineGrowth, end: f64, cut_short: bool) -> bool {
    let Some(last) = line.series.last() else {
        return false;
    };
    if line.ticks < 4 || last.1 <= 0 {
        return false;
    }
    // Growing when the process was killed: it grew until the kill.
    if cut_short && end - line.last_seconds <= 0.5 {
        return true;
    }
    let start = line.first_seconds;
    if line.last_seconds - start < 1.0 || end - start < 1.0 {
        return false;
    }
    let middle = start + (end - start) / 2.0;
    let at_middle = line
        .series
        .iter()
        .take_while(|p| p.0 <= middle)
        .last()
        .map_or(0, |p| p.1);
    (last.1 - at_middle) as f64 >= LATE_SHARE * last.1 as f64
}

/// The lines worth naming in a process, weightiest first.
pub fn shown(p: &ProcessLines) -> Vec<&LineGrowth> {
    let mut lines = p.told();
    lines.truncate(SHOWN);
    lines
}

/// What a line did, in a sentence's middle: `a leak: kept 540 MiB (of 545 MiB grown)
/// from 0.4 s to 12.5 s`. Shared memory is called pinned where the process's torch
/// held pinned host memory: it is not /dev/shm.
pub fn describe_in(p: &ProcessLines, l: &LineGrowth) -> String {
    let text = describe(l);
    match p.pinned_host.filter(|h| h.peak > 0) {
        Some(h) => text.replace(
            "of it shared memory (/dev/shm or pinned)",
            &format!(
                "of it pinned host memory (cudaHostAlloc; torch's pinned allocator peaked at {})",
                iec(h.peak)
            ),
        ),
        None => text,
    }
}

/// [`describe_in`] without the process: shared memory is /dev/shm or pinned.
pub fn describe(l: &LineGrowth) -> String {
    let span = format!("from {:.1} s to {:.1} s", l.first_seconds, l.last_seconds);
    let faults = match l.major_faults {
        0 => String::new(),
        n => format!("; {n} major faults"),
    };
    let body = match l.kind {
        Some(LineKind::Leak) => format!(
            "a leak: kept {} of {} it took, {span}",
            iec(l.anon.kept + l.shmem.kept),
            iec(l.anon.grown + l.shmem.grown)
        ),
        Some(LineKind::Peak) => format!(
            "a peak: took {} and gave back {}, {span}",
            iec(l.anon.grown + l.shmem.grown),
            iec((l.anon.grown + l.shmem.grown).saturating_sub(l.anon.kept + l.shmem.kept))
        ),
        Some(LineKind::CopyOnWrite) => format!(
            "copy-on-write: about {} of its parent's pages copied where it touched them, {span}",
            iec(l.copied_after_fork)
        ),
        _ => format!("holds {}, taken {span}", iec(l.held())),
    };
    let file = match l.file.kept {
        0 => String::new(),
        b => format!("; {} of mapped files", iec(b)),
    };
    let shm = match l.shmem.kept {
        0 => String::new(),
        b => format!("; {} of it shared memory (/dev/shm or pinned)", iec(b)),
    };
    let text =
        l.at.text
            .as_deref()
            .map(|t| format!(": `{t}`"))
            .unwrap_or_default();
    format!("{body}{file}{shm}{faults}{text}")
}

/// Evidence of the lines that explain the memory of the processes `pids` (every
/// Python process when empty), most held first.
pub fn evidence(report: &RunReport, pids: &[i32]) -> Vec<Evidence> {
    let mut lines: Vec<(&ProcessLines, &LineGrowth)> = report
        .memory_by_line
        .iter()
        .filter(|p| pids.is_empty() || pids.contains(&p.pid))
        .flat_map(|p| shown(p).into_iter().map(move |l| (p, l)))
        .collect();
    // A leak first: it is what the finding is about; then what holds the most.
    lines.sort_by_key(|(_, l)| std::cmp::Reverse((l.kind == Some(LineKind::Leak), l.weight())));
    lines
        .into_iter()
        .map(|(p, l)| {
            let mut value = describe_in(p, l);
            if let Some(path) = l.path_text() {
                value.push_str(&format!(" (via {path})"));
            }
            Evidence::text(
                format!("{}: {}", report.label_of_lines(p), l.at.short()),
                value,
                "memtriage's Python hook",
            )
            .with_quantity(Quantity::Bytes(l.weight()))
        })
        .collect()
}

/// The most telling line of the processes `pids` (all when empty): a leak before
/// anything else, then what holds the most.
pub fn headline<'a>(
    report: &'a RunReport,
    pids: &[i32],
) -> Option<(&'a ProcessLines, &'a LineGrowth)> {
    most_telling(
        report
            .memory_by_line
            .iter()
            .filter(|p| pids.is_empty() || pids.contains(&p.pid)),
    )
}

fn most_telling<'a>(
    processes: impl Iterator<Item = &'a ProcessLines>,
) -> Option<(&'a ProcessLines, &'a LineGrowth)> {
    processes
        .flat_map(|p| shown(p).into_iter().map(move |l| (p, l)))
        .max_by_key(|(_, l)| (l.kind == Some(LineKind::Leak), l.weight()))
}

/// `frames.py:17 in __getitem__ (pid 4412, DataLoader worker 1 of 2: a leak, 386 MiB)`,
/// for a line written while the job runs (no report yet).
pub fn headline_text(processes: &[ProcessLines]) -> Option<String> {
    let (p, l) = most_telling(processes.iter())?;
    let role = p
        .role
        .as_deref()
        .map(|r| format!(", {r}"))
        .unwrap_or_default();
    let kind = l.kind.map_or("grew", LineKind::as_str);
    Some(format!(
        "{} (pid {}{role}: {kind}, {})",
        l.at.short(),
        p.pid,
        iec(l.weight())
    ))
}

/// The fix a line's kind calls for.
pub fn fix(l: &LineGrowth) -> String {
    let at = l.at.short();
    match l.kind {
        Some(LineKind::Leak) => format!(
            "{at} keeps what it allocates: memory taken there is never given back and rises with \
             every item or step. Stop keeping it: a list or dict that grows per item, a cache \
             without a bound, tensors logged with their graph (log `loss.item()`, keep \
             `t.detach().cpu()`)."
        ),
        Some(LineKind::Peak) => format!(
            "{at} takes {} at a time and gives it back: the step's peak, not a leak. Lower the \
             peak: a smaller batch (batch_size), fewer activations kept (torch.utils.checkpoint; \
             `torch.no_grad()` outside training), or free a step's buffers before the next.",
            iec(l.rise())
        ),
        Some(LineKind::CopyOnWrite) => format!(
            "{at} touches Python objects the worker inherited from its parent, and each touch \
             copies their page into the worker. Keep the dataset out of Python objects: numpy \
             arrays, Arrow tables or a memory-mapped file (np.memmap) that every worker shares, \
             instead of lists of dicts."
        ),
        _ => format!(
            "{at} holds {}: the job's working set. More memory, or less of it resident (a smaller \
             model or dataset in memory, a memory-mapped file), is the lever.",
            iec(l.held())
        ),
    }
}

/// Adds to a finding about processes `pids` (all when empty, or when none of them has
/// a line worth naming) the lines that explain their memory; where one leaks, the
/// fix names it and the cause is the code.
pub fn sharpen(finding: &mut Finding, report: &RunReport, pids: &[i32]) {
    let mut evidence = evidence(report, pids);
    let pids = if evidence.is_empty() && !pids.is_empty() {
        evidence = self::evidence(report, &[]);
        &[]
    } else {
        pids
    };
    if evidence.is_empty() {
        return;
    }
    finding.evidence.append(&mut evidence);
    if let Some((_, line)) = headline(report, pids) {
        if line.kind == Some(LineKind::Leak) || line.kind == Some(LineKind::CopyOnWrite) {
            finding.fix = format!("{}\n{}", fix(line), finding.fix);
            // What happened stays as sure as it was; why it happened is the code.
            let certainty = finding
                .assessment
                .as_ref()
                .map_or(Certainty::Likely, |a| a.certainty);
            finding.assessment = Some(Assessment {
                certainty,
                cause: CauseKind::UserCode,
                confirm: "Run it again under memtriage run: the same line grows first.".into(),
            });
        }
    }
}

/// `run.python-leak`: a job that did not die of it, but whose Python lines leaked.
pub fn leak_without_kill(report: &RunReport) -> Option<Finding> {
    let (p, line) = headline(report, &[])?;
    if line.kind != Some(LineKind::Leak) {
        return None;
    }
    let mut evidence = Vec::new();
    for q in &report.memory_by_line {
        for l in q.of_kind(LineKind::Leak).take(SHOWN) {
            evidence.push(
                Evidence::text(
                    format!("{}: {}", report.label_of_lines(q), l.at.short()),
                    describe_in(q, l),
                    "memtriage's Python hook",
                )
                .with_quantity(Quantity::Bytes(l.anon.kept + l.shmem.kept)),
            );
        }
    }
    Some(Finding {
        id: ids::RUN_PYTHON_LEAK.into(),
        severity: Severity::Warn,
        title: format!(
            "{} grew {} under {} and never gave it back",
            report.label_of_lines(p),
            iec(most_kept(line)),
            line.at.short()
        ),
        evidence,
        why: "Memory that rises with every item or step and is never given back ends in an OOM \
              kill on a longer run or a larger dataset."
            .into(),
        fix: fix(line),
        assessment: Some(Assessment {
            certainty: Certainty::Likely,
            cause: CauseKind::UserCode,
            confirm: "A longer run: the same line keeps growing.".into(),
        }),
    })
}
