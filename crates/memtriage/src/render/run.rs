//! The end-of-run summary for people, live (`run`) or read back (`report`).

use std::io::{self, Write};
use std::path::Path;

use memtriage_core::model::run::RunReport;

use super::style::Style;
use memtriage_core::model::units::{counted, iec};

pub fn write(
    out: &mut dyn Write,
    style: &Style,
    r: &RunReport,
    last_stderr: &[String],
) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{} {} {} after {:.1} s",
        style.bold("memtriage:"),
        memtriage_core::model::shell::join(&r.command),
        r.outcome.describe(),
        r.wall_seconds
    )?;
    let row = |out: &mut dyn Write, key: &str, value: String| writeln!(out, "  {key:<10} {value}");
    row(out, "memory", memory_row(r))?;
    if let Some(text) = processes_row(r) {
        row(out, "processes", text)?;
    }
    let f = &r.faults;
    row(
        out,
        "faults",
        format!(
            "{} minor, {} major; peak {:.0}/s minor, {:.0}/s major",
            f.minor, f.major, f.peak_minor_per_second, f.peak_major_per_second
        ),
    )?;
    if let Some(text) = perf_row(r) {
        row(out, "perf", text)?;
    }
    if let Some(text) = system_row(r) {
        row(out, "system", text)?;
    }
    if let Some(text) = gpu_row(r) {
        row(out, "gpu", text)?;
    }
    if let Some(adj) = r.oom_score_adj {
        row(
            out,
            "oom score",
            format!("oom_score_adj {adj} (inherited by the job's workers)"),
        )?;
    }
    if let Some(text) = left_row(r) {
        row(out, "left", text)?;
    }
    if let Some((key, text)) = cgroup_row(r) {
        row(out, key, text)?;
    }
    let s = &r.sampling;
    row(
        out,
        "sampling",
        format!(
            "{} every {} ms; {} took {:.0} ms in all (longest {:.1} ms)",
            counted(s.ticks, "sample", "samples"),
            s.interval_ms,
            counted(s.pss_readings, "PSS reading", "PSS readings"),
            s.pss_read_seconds * 1000.0,
            s.pss_read_max_ms
        ),
    )?;
    for n in &r.notes {
        row(out, "note", n.clone())?;
    }
    super::lines::write_rows(out, r)?;
    writeln!(out)?;
    write_verdict(out, style, r, last_stderr)
}

/// The findings, or what is said when there are none.
fn write_verdict(
    out: &mut dyn Write,
    style: &Style,
    r: &RunReport,
    last_stderr: &[String],
) -> io::Result<()> {
    if !r.findings.is_empty() {
        return super::findings::write(out, style, &r.findings);
    }
    if r.outcome.shell_code() == 0 {
        writeln!(
            out,
            "{} no memory problem found",
            style.severity(memtriage_core::model::finding::Severity::Ok)
        )?;
    } else if last_stderr.is_empty() {
        writeln!(
            out,
            "no known memory failure explains the exit (the job printed nothing on stderr)"
        )?;
    } else {
        writeln!(
            out,
            "no known memory failure explains the exit; the job's last lines on stderr:"
        )?;
        for l in last_stderr {
            writeln!(out, "  | {l}")?;
        }
    }
    Ok(())
}

/// The tree's peaks (RSS, PSS) and the kernel's high-water mark.
fn memory_row(r: &RunReport) -> String {
    let mut memory = match r.peak_tree_rss {
        _ if r.sampling.ticks == 0 => {
            "not sampled (the job ended before the first sample)".to_string()
        }
        None => "peak RSS not measured (the job ended before a sample read its memory)".to_string(),
        Some(peak) => format!(
            "peak RSS {} at {:.1} s (all processes, sampled)",
            iec(peak.bytes),
            peak.at_seconds
        ),
    };
    if let Some(p) = r.peak_tree_pss {
        memory.push_str(&format!(
            ", peak PSS {} at {:.1} s",
            iec(p.bytes),
            p.at_seconds
        ));
    }
    if let Some(max) = r.kernel_max_rss {
        memory.push_str(&format!(
            "; kernel high-water mark {} (pid {} or a child it waited for)",
            iec(max),
            r.pid
        ));
    }
    memory
}

/// How many processes were seen, and the largest.
fn processes_row(r: &RunReport) -> Option<String> {
    if r.processes.is_empty() {
        return None;
    }
    let mut top: Vec<_> = r
        .processes
        .iter()
        .filter_map(|p| Some((p, p.peak_rss?)))
        .collect();
    top.sort_by_key(|(_, peak)| std::cmp::Reverse(peak.bytes));
    let shown: Vec<String> = top
        .iter()
        .take(4)
        .map(|(p, peak)| {
            let mut s = format!("{} {}", p.label(), iec(peak.bytes));
            if let Some(u) = p.peak_uss {
                s.push_str(&format!(" (private {})", iec(u.bytes)));
            }
            s
        })
        .collect();
    let mut text = format!("{} seen", r.processes.len());
    let unsampled = r.processes.len() - top.len();
    if unsampled > 0 {
        text.push_str(&format!(" ({unsampled} lived between samples)"));
    }
    if !shown.is_empty() {
        text.push_str(&format!("; largest: {}", shown.join(", ")));
    }
    Some(text)
}

/// The perf counters, where they were asked for.
fn perf_row(r: &RunReport) -> Option<String> {
    let p = r.perf.as_ref()?;
    let n = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    let mut text = format!(
        "{} page faults ({} minor, {} major), {} context switches",
        n(p.page_faults),
        n(p.minor_faults),
        n(p.major_faults),
        n(p.context_switches)
    );
    if p.dtlb_load_misses.is_some() || p.dtlb_store_misses.is_some() {
        text.push_str(&format!(
            "; dTLB misses {} loads, {} stores",
            n(p.dtlb_load_misses),
            n(p.dtlb_store_misses)
        ));
        if let Some(i) = p.instructions.filter(|i| *i > 0) {
            let per_k = (p.dtlb_load_misses.unwrap_or(0) + p.dtlb_store_misses.unwrap_or(0)) as f64
                * 1000.0
                / i as f64;
            text.push_str(&format!(" ({per_k:.2} per 1000 instructions)"));
        }
    }
    if let Some(c) = r.huge_page_coverage() {
        text.push_str(&format!(
            "; {:.0}% of anonymous memory in huge pages (fewer TLB misses the higher it is)",
            c * 100.0
        ));
    }
    Some(text)
}

/// The machine while the job ran: /dev/shm, swap, memory stalls.
fn system_row(r: &RunReport) -> Option<String> {
    let mut system = Vec::new();
    if let (Some(used), Some(size)) = (r.peak_shm_used, r.shm_size) {
        system.push(format!(
            "/dev/shm peak {} of {}",
            iec(used.bytes),
            iec(size)
        ));
    }
    if let Some(swap) = r.peak_swap_used {
        system.push(format!("swap used up to {}", iec(swap.bytes)));
    }
    if let Some(stall) = r.peak_memory_stall_percent.filter(|s| *s > 0.0) {
        system.push(format!("memory stalls up to {stall:.1}%"));
    }
    (!system.is_empty()).then(|| system.join(", "))
}

/// The job's processes still running after it ended.
fn left_row(r: &RunReport) -> Option<String> {
    if r.left_running.is_empty() {
        return None;
    }
    let shown: Vec<String> = r
        .left_running
        .iter()
        .take(5)
        .map(|p| {
            format!(
                "{} {}",
                p.pid,
                memtriage_core::model::shell::join(&p.command)
            )
        })
        .collect();
    let more = r.left_running.len().saturating_sub(shown.len());
    Some(format!(
        "{} still running after the job ended: {}{}",
        counted(r.left_running.len() as u64, "process", "processes"),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// The job's own cgroup under `--limit` (row "limit"), or the one it ran in (row
/// "cgroup"), with whom it shared it.
fn cgroup_row(r: &RunReport) -> Option<(&'static str, String)> {
    if let Some(l) = &r.limit {
        return Some((
            "limit",
            format!(
                "{} (cgroup {}), peak {}, OOM kills {}",
                iec(l.limit),
                l.dir,
                l.peak.map(iec).unwrap_or_else(|| "-".into()),
                l.oom_kills
                    .map(|k| k.to_string())
                    .unwrap_or_else(|| "-".into())
            ),
        ));
    }
    let (u, cg) = (r.peak_cgroup_usage?, r.enclosing_cgroup.as_ref()?);
    let limit = cg
        .limit
        .map(|l| format!(" of its {} limit", iec(l)))
        .unwrap_or_default();
    let whose = match cg.other_processes {
        Some(0) => "the job's alone, with its page cache".to_string(),
        Some(n) => format!(
            "shared with {} and page cache, not the job's alone",
            counted(n as u64, "other process", "other processes")
        ),
        None => "who else it holds could not be listed".to_string(),
    };
    Some((
        "cgroup",
        format!("{}: peak usage {}{limit} ({whose})", cg.dir, iec(u.bytes)),
    ))
}

/// Each device's peak and the job's share, the largest holders of the job, and what
/// reading NVML cost; or why GPUs were not read, unless there simply are none.
fn gpu_row(r: &RunReport) -> Option<String> {
    let g = r.gpu.as_ref()?;
    if !g.available {
        let reason = g.reason.as_deref()?;
        return (!reason.starts_with("no NVIDIA GPU found")).then(|| format!("not read: {reason}"));
    }
    if g.devices.is_empty() {
        return g
            .reason
            .as_ref()
            .map(|why| format!("not attributed to the job: {why}"));
    }
    let mut parts: Vec<String> = g
        .devices
        .iter()
        .map(|d| {
            let total = d.total.map_or("?".to_string(), iec);
            let all = d.peak_used.map_or("?".to_string(), |p| iec(p.bytes));
            match d.peak_job.filter(|p| p.bytes > 0) {
                Some(job) => format!(
                    "GPU {} peak {all} of {total} (the job {} at {:.1} s)",
                    d.index,
                    iec(job.bytes),
                    job.at_seconds
                ),
                None => format!("GPU {} peak {all} of {total} (none by the job)", d.index),
            }
        })
        .collect();
    let mut holders: Vec<_> = r
        .processes
        .iter()
        .filter_map(|p| Some((p, p.peak_gpu.filter(|g| g.bytes > 0)?)))
        .collect();
    holders.sort_by_key(|(_, peak)| std::cmp::Reverse(peak.bytes));
    if !holders.is_empty() {
        let shown: Vec<String> = holders
            .iter()
            .take(4)
            .map(|(p, peak)| format!("{} {}", p.label(), iec(peak.bytes)))
            .collect();
        parts.push(format!("largest: {}", shown.join(", ")));
    }
    if g.reads > 0 {
        parts.push(format!(
            "NVML read {:.2} ms per sample (longest {:.2} ms)",
            g.read_seconds * 1000.0 / g.reads as f64,
            g.read_max_ms
        ));
    }
    if let Some(why) = &g.events_unavailable {
        parts.push(format!("Xid events not followed: {why}"));
    }
    Some(parts.join("; "))
}

/// `report --html`: where the page went.
pub fn write_html_written(out: &mut dyn Write, page: &Path, samples: usize) -> io::Result<()> {
    writeln!(
        out,
        "wrote {} ({})",
        page.display(),
        counted(samples as u64, "sample", "samples")
    )
}

/// `report` of a recording with no final report: memtriage was stopped between two
/// lines, or the file was cut short mid-line (a full disk, a write that failed).
pub fn write_cut_short(
    out: &mut dyn Write,
    recording: &Path,
    samples: usize,
    why: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "{}: {}; no final report: {why}",
        recording.display(),
        counted(samples as u64, "sample", "samples")
    )
}
