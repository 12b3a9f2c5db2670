//! `inspect` for people: a block per process, a table for many, a tree, regions.

use std::io::{self, Write};

use comfy_table::Table;
use memtriage_core::model::gpu::{GpuReport, PidJoin};
use memtriage_core::model::killers::KillerReach;
use memtriage_core::model::maps::MapsReport;
use memtriage_core::model::process::{CgroupMemory, CgroupVersion, ProcessSnapshot};
use memtriage_core::model::tree::TreeSnapshot;

use super::style::Style;
use super::table;
use super::units::{iec_opt, percent};
use memtriage_core::model::units::iec;
use memtriage_core::usecase::inspect::InspectReport;

/// More processes than this are shown as a table rather than as blocks.
const BLOCKS_UP_TO: usize = 3;
/// Files listed per process under `--maps`.
const FILES_SHOWN: usize = 20;

/// `every_process`: the listing of the whole machine, always a table; `width`: the
/// columns a table's line may take, where bounded.
pub fn write(
    out: &mut dyn Write,
    style: &Style,
    every_process: bool,
    sorted_by_faults: bool,
    width: Option<usize>,
    c: &InspectReport,
) -> io::Result<()> {
    let gpu = gpu_known(c.gpu.as_ref());
    for t in &c.trees {
        write_tree(out, style, t, gpu)?;
    }
    if every_process || c.processes.len() > BLOCKS_UP_TO {
        write_table(out, &c.processes, sorted_by_faults, gpu, width)?;
    } else {
        for p in &c.processes {
            write_block(out, style, p)?;
            if let Some(m) = c.maps.iter().find(|m| m.pid == p.pid) {
                write_maps(out, style, m)?;
            }
        }
    }
    if c.processes.len() > BLOCKS_UP_TO {
        for m in &c.maps {
            write_maps(out, style, m)?;
        }
    }
    if !every_process {
        write_gpu_note(out, style, c.gpu.as_ref())?;
    }
    Ok(())
}

/// Whether per-process GPU figures are known (NVML read and its pids joined).
fn gpu_known(gpu: Option<&GpuReport>) -> bool {
    gpu.is_some_and(|g| g.available && g.pids.as_ref().is_some_and(PidJoin::joinable))
}

/// Once, why GPU memory is not shown: no GPU, NVML refused, or a container's pids.
fn write_gpu_note(out: &mut dyn Write, style: &Style, gpu: Option<&GpuReport>) -> io::Result<()> {
    let Some(g) = gpu else { return Ok(()) };
    let note = match (&g.reason, &g.pids) {
        (Some(reason), _) => reason.clone(),
        (None, Some(PidJoin::Impossible { reason })) => reason.clone(),
        _ => return Ok(()),
    };
    writeln!(out, "{}", style.dim(&format!("GPU: {note}")))
}

/// `GPU 0 2.0 GiB, GPU 1 512 MiB`, `none`, or `-` when unknown.
fn gpu_cell(p: &ProcessSnapshot) -> String {
    match &p.gpu {
        None => "-".into(),
        Some(g) => match g.total {
            Some(0) => "0 B".into(),
            Some(total) => iec(total),
            None => "unknown".into(),
        },
    }
}

/// `faults`: rows sorted by faults show them (minor and major), or the order would
/// follow a figure nobody sees.
fn write_table(
    out: &mut dyn Write,
    processes: &[ProcessSnapshot],
    faults: bool,
    gpu: bool,
    width: Option<usize>,
) -> io::Result<()> {
    let mut header = vec!["PID", "USER", "RSS", "PSS", "USS", "SWAP"];
    if gpu {
        header.push("GPU");
    }
    if faults {
        header.extend(["MINFLT", "MAJFLT"]);
    }
    header.push("COMMAND");
    let mut rows = Vec::with_capacity(processes.len());
    for p in processes {
        let mut row = vec![
            p.pid.to_string(),
            user(p),
            iec_opt(p.rss()),
            iec_opt(p.pss()),
            iec_opt(p.uss()),
            iec_opt(p.swap()),
        ];
        if gpu {
            row.push(gpu_cell(p));
        }
        if faults {
            row.extend(fault_cells(p));
        }
        row.push(p.command());
        rows.push(row);
    }
    let command_width = width.map_or(80, |w| table::room_for_last(&header, &rows, w));
    let mut t = table::new(&header, 2);
    for mut row in rows {
        if let Some(command) = row.last_mut() {
            *command = truncate(command, command_width);
        }
        t.add_row(row);
    }
    left_align_last(&mut t);
    writeln!(out, "{}", table::to_string(&t))?;
    write_sums(out, processes, width)
}

/// One figure summed over the processes where it was readable, and how many it left
/// out: a sum that silently skipped other users' processes would read as the total.
fn sum_line(
    processes: &[ProcessSnapshot],
    name: &str,
    note: &str,
    figure: fn(&ProcessSnapshot) -> Option<u64>,
) -> String {
    let known: Vec<u64> = processes.iter().filter_map(figure).collect();
    let left_out = processes.len() - known.len();
    let total = iec(known.iter().sum());
    if left_out == 0 {
        format!("{name} {total}{note}")
    } else {
        format!(
            "{name} {total} of {} ({left_out} unreadable, left out)",
            known.len()
        )
    }
}

/// The sums under the table, and why some are partial, fitted to `width` where known.
fn write_sums(
    out: &mut dyn Write,
    processes: &[ProcessSnapshot],
    width: Option<usize>,
) -> io::Result<()> {
    let fit = |text: String| match width {
        Some(w) => super::wrap::wrap(&text, w, "  "),
        None => text,
    };
    let sums = format!(
        "{} {}: {}, {}, {}, {}",
        processes.len(),
        plural(processes.len(), "process", "processes"),
        sum_line(
            processes,
            "RSS",
            " (sum; shared pages counted in each)",
            |p| p.rss()
        ),
        sum_line(processes, "PSS", " (true total)", |p| p.pss()),
        sum_line(processes, "USS", "", |p| p.uss()),
        sum_line(processes, "swap", "", |p| p.swap()),
    );
    writeln!(out, "\n{}", fit(sums))?;
    let unreadable: Vec<&ProcessSnapshot> =
        processes.iter().filter(|p| p.rollup.is_none()).collect();
    if !unreadable.is_empty() {
        let why = format!(
            "PSS/USS of {} {} unreadable ({}), shown as -; RSS and swap from /proc/PID/status, \
             which anyone may read (`inspect PID` says why)",
            unreadable.len(),
            plural(unreadable.len(), "process", "processes"),
            rollup_refusal(&unreadable)
        );
        writeln!(out, "{}", fit(why))?;
    }
    Ok(())
}

/// Why smaps_rollup was refused, as the readings said: the one reason they share (as
/// root that is the kernel's ptrace check, not a missing privilege), or the usual one.
fn rollup_refusal(unreadable: &[&ProcessSnapshot]) -> String {
    let mut reasons = unreadable.iter().filter_map(|p| {
        p.unreadable
            .iter()
            .find(|u| u.field == "smaps_rollup")
            .map(|u| u.reason.as_str())
    });
    let first = reasons.next();
    match first {
        Some(r) if reasons.all(|other| other == r) => format!("smaps_rollup: {r}"),
        _ => "smaps_rollup refused: other users' processes need root or CAP_SYS_PTRACE".into(),
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Minor and major faults, `-` where they were not read.
fn fault_cells(p: &ProcessSnapshot) -> [String; 2] {
    match p.faults {
        Some(f) => [f.minor.to_string(), f.major.to_string()],
        None => ["-".into(), "-".into()],
    }
}

fn left_align_last(t: &mut Table) {
    let last = t.column_count() - 1;
    if let Some(col) = t.column_mut(last) {
        col.set_cell_alignment(comfy_table::CellAlignment::Left);
    }
}

fn user(p: &ProcessSnapshot) -> String {
    p.user
        .clone()
        .or_else(|| p.uid.map(|u| u.to_string()))
        .unwrap_or_else(|| "-".into())
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

fn state_name(c: char) -> &'static str {
    match c {
        'R' => "running",
        'S' => "sleeping",
        'D' => "disk sleep",
        'Z' => "zombie",
        'T' => "stopped",
        't' => "tracing stop",
        'I' => "idle",
        'X' => "dead",
        _ => "unknown",
    }
}

fn write_block(out: &mut dyn Write, style: &Style, p: &ProcessSnapshot) -> io::Result<()> {
    writeln!(
        out,
        "{} {}",
        style.bold(&format!("pid {}", p.pid)),
        truncate(&p.command(), 200)
    )?;
    let row =
        |out: &mut dyn Write, key: &str, value: String| writeln!(out, "  {:<11} {}", key, value);
    row(
        out,
        "process",
        format!(
            "{} ({}), {} thread{}, user {}, parent {}{}",
            p.state,
            state_name(p.state),
            p.threads,
            if p.threads == 1 { "" } else { "s" },
            user(p),
            p.ppid,
            if p.kernel_thread {
                ", kernel thread"
            } else {
                ""
            }
        ),
    )?;
    if let Some(m) = &p.memory {
        row(
            out,
            "rss",
            format!(
                "{} (anon {}, file {}, shmem {}), peak {}",
                iec_opt(m.rss),
                iec_opt(m.rss_anon),
                iec_opt(m.rss_file),
                iec_opt(m.rss_shmem),
                iec_opt(m.vm_hwm)
            ),
        )?;
    }
    if let Some(r) = &p.rollup {
        row(
            out,
            "pss",
            format!(
                "{} (anon {}, file {}, shmem {})",
                iec(r.pss),
                iec_opt(r.pss_anon),
                iec_opt(r.pss_file),
                iec_opt(r.pss_shmem)
            ),
        )?;
        row(
            out,
            "uss",
            format!(
                "{} (private clean {}, dirty {}); shared clean {}, dirty {}",
                iec(r.uss()),
                iec(r.private_clean),
                iec(r.private_dirty),
                iec(r.shared_clean),
                iec(r.shared_dirty)
            ),
        )?;
        row(
            out,
            "swap",
            format!(
                "{} (swap PSS {}), locked {}",
                iec(r.swap),
                iec(r.swap_pss),
                iec(r.locked)
            ),
        )?;
        let hugetlb = r.shared_hugetlb + r.private_hugetlb;
        row(
            out,
            "huge pages",
            format!(
                "THP {} of {} anon ({}), shmem PMD {}, file PMD {}, hugetlb {}",
                iec(r.anon_huge_pages),
                iec(r.anonymous),
                percent(r.anon_huge_pages, r.anonymous),
                iec(r.shmem_pmd_mapped),
                iec(r.file_pmd_mapped),
                iec(hugetlb)
            ),
        )?;
    }
    if let Some(m) = &p.memory {
        row(
            out,
            "virtual",
            format!(
                "{}, peak {}, page tables {}",
                iec_opt(m.vm_size),
                iec_opt(m.vm_peak),
                iec_opt(m.page_tables)
            ),
        )?;
    }
    if let Some(f) = &p.faults {
        row(
            out,
            "faults",
            format!(
                "minor {}, major {} (reaped children: minor {}, major {})",
                f.minor, f.major, f.children_minor, f.children_major
            ),
        )?;
    }
    if let Some(o) = &p.oom {
        row(
            out,
            "oom",
            format!("score {}, adj {}", o.score, o.score_adj),
        )?;
    }
    if let Some(cg) = &p.cgroup {
        row(out, "cgroup", cgroup_text(cg))?;
    }
    if let Some(g) = &p.gpu {
        let text = if g.devices.is_empty() {
            "none held".to_string()
        } else {
            g.devices
                .iter()
                .map(|d| format!("GPU {} {}", d.index, iec_opt(d.used)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        row(out, "gpu", text)?;
    }
    for u in &p.unreadable {
        row(out, "unreadable", format!("{}: {}", u.field, u.reason))?;
    }
    writeln!(out)
}

/// The process's memory cgroup: its path, usage, limit (and who set it), headroom,
/// peak and OOM kills.
fn cgroup_text(cg: &CgroupMemory) -> String {
    let version = match cg.version {
        CgroupVersion::V1 => "v1",
        CgroupVersion::V2 => "v2",
    };
    let limit = match (cg.limit, &cg.limit_set_by) {
        (Some(l), Some(by)) if *by != cg.path => format!("limit {} (set by {by})", iec(l)),
        (Some(l), _) => format!("limit {}", iec(l)),
        (None, _) => "no limit".into(),
    };
    let mut text = format!(
        "{version} {}: usage {}, {limit}",
        cg.path,
        iec_opt(cg.usage)
    );
    if let Some(h) = cg.headroom {
        text.push_str(&format!(", headroom {}", iec(h)));
    }
    if let Some(peak) = cg.peak {
        text.push_str(&format!(", peak {}", iec(peak)));
    }
    if let Some(k) = cg.oom_kills {
        text.push_str(&format!(", OOM kills {k}"));
    }
    text
}

fn write_tree(out: &mut dyn Write, style: &Style, t: &TreeSnapshot, gpu: bool) -> io::Result<()> {
    let mut header = vec!["PID", "RSS", "PSS", "USS", "SWAP"];
    if gpu {
        header.push("GPU");
    }
    header.extend(["MINFLT", "MAJFLT", "COMMAND"]);
    let mut tab = table::new(&header, 1);
    for n in &t.nodes {
        let p = &n.process;
        let mut row = vec![
            p.pid.to_string(),
            iec_opt(p.rss()),
            iec_opt(p.pss()),
            iec_opt(p.uss()),
            iec_opt(p.swap()),
        ];
        if gpu {
            row.push(gpu_cell(p));
        }
        row.extend(fault_cells(p));
        row.extend([format!(
            "{}{}",
            "  ".repeat(n.depth),
            truncate(&p.command(), 70)
        )]);
        tab.add_row(row);
    }
    left_align_last(&mut tab);
    writeln!(out, "{}", table::to_string(&tab))?;
    let s = &t.totals;
    // A sum over some processes is not the tree's footprint: said as the part it is.
    let read = s.processes.saturating_sub(s.unreadable);
    let (pss, uss) = match (s.pss, s.uss_sum) {
        (Some(pss), Some(uss)) if s.unreadable == 0 => (
            format!("total PSS {} (the true footprint)", iec(pss)),
            format!("sum of USS {}", iec(uss)),
        ),
        (Some(pss), Some(uss)) => (
            format!(
                "PSS {} of {read} ({} unreadable, left out)",
                iec(pss),
                s.unreadable
            ),
            format!("USS {} of {read}", iec(uss)),
        ),
        _ => (
            "PSS unknown (unreadable)".to_string(),
            "USS unknown".to_string(),
        ),
    };
    writeln!(
        out,
        "\n{} {} {}: sum of RSS {} (shared pages counted again in every process), {pss}, {uss}, swap {}",
        style.bold("tree"),
        s.processes,
        plural(s.processes, "process", "processes"),
        iec(s.rss_sum),
        iec(s.swap)
    )?;
    if let Some(g) = s.gpu {
        writeln!(out, "  GPU memory held by the tree: {}", iec(g))?;
    }
    write_killers(out, style, &t.killers)?;
    writeln!(out)?;
    super::findings::write(out, style, &t.findings)
}

/// The OOM killers that may end the tree, first to act first.
fn write_killers(out: &mut dyn Write, style: &Style, killers: &[KillerReach]) -> io::Result<()> {
    for (i, k) in killers.iter().enumerate() {
        let when = match (k.killer.running, k.room) {
            (false, _) => "installed, not running".to_string(),
            (true, Some(room)) => format!("when {}: {} from now", k.threshold, iec(room)),
            (true, None) => format!("when {}", k.threshold),
        };
        let label = if i == 0 {
            style.bold("killers")
        } else {
            "       ".to_string()
        };
        writeln!(out, "{label} {}: {when}", k.killer.label())?;
    }
    Ok(())
}

fn write_maps(out: &mut dyn Write, style: &Style, m: &MapsReport) -> io::Result<()> {
    if m.regions.is_empty() {
        // A kernel thread (or a process gone to zombie) has no user address space.
        return writeln!(
            out,
            "pid {} maps no memory regions (a kernel thread or an exited process has no user address space)\n",
            m.pid
        );
    }
    writeln!(
        out,
        "{}",
        style.bold(&format!("regions of pid {} by kind", m.pid))
    )?;
    let mut t = table::new(
        &[
            "KIND", "REGIONS", "MAPPED", "RESIDENT", "PSS", "PRIVATE", "SWAP", "HUGE",
        ],
        1,
    );
    for g in &m.by_kind {
        let s = &g.sizes;
        t.add_row(vec![
            g.kind.label().to_string(),
            g.regions.to_string(),
            iec(s.size),
            iec(s.resident()),
            iec(s.pss),
            iec(s.private),
            iec(s.swap),
            iec(s.anon_huge + s.file_pmd_mapped + s.hugetlb),
        ]);
    }
    writeln!(out, "{}\n", table::to_string(&t))?;
    if m.by_file.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        style.bold(&format!("mapped files of pid {}", m.pid))
    )?;
    let mut t = table::new(&["RESIDENT", "OF MAPPED", "%", "PSS", "KIND", "FILE"], 0);
    for f in m.by_file.iter().take(FILES_SHOWN) {
        let s = &f.sizes;
        t.add_row(vec![
            iec(s.resident()),
            iec(s.size),
            percent(s.resident(), s.size),
            iec(s.pss),
            f.kind.label().to_string(),
            format!("{}{}", f.path, if f.deleted { " (deleted)" } else { "" }),
        ]);
    }
    left_align_last(&mut t);
    if let Some(col) = t.column_mut(4) {
        col.set_cell_alignment(comfy_table::CellAlignment::Left);
    }
    writeln!(out, "{}", table::to_string(&t))?;
    if m.by_file.len() > FILES_SHOWN {
        writeln!(
            out,
            "  … {} more files (--json lists all)",
            m.by_file.len() - FILES_SHOWN
        )?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtriage_core::model::process::Unreadable;
    use memtriage_core::usecase::inspect::{read_many, Detail};
    use memtriage_core::Root;

    /// This process as `inspect` reads it, its smaps_rollup then refused for `reason`.
    fn refused(reason: &str) -> ProcessSnapshot {
        let me = std::process::id() as i32;
        let mut p = read_many(&Root::host(), Detail::full(), &[me], 1)
            .pop()
            .unwrap()
            .unwrap();
        p.rollup = None;
        p.unreadable = vec![Unreadable {
            field: "smaps_rollup".into(),
            reason: reason.into(),
        }];
        p
    }

    /// Issue 28, defect 15: as root, the footer blamed "other users' processes need
    /// root" for pid 1's refusal by the kernel's ptrace check: it gives the readings'
    /// own reason when they share one.
    #[test]
    fn regression_the_footer_gives_the_refusal_the_readings_had() {
        let as_root = "permission denied even as root: the kernel's ptrace access check refused";
        let mut out = Vec::new();
        write_sums(&mut out, &[refused(as_root)], None).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(&format!("(smaps_rollup: {as_root})")) && !text.contains("need root"),
            "{text}"
        );
        let mut out = Vec::new();
        write_sums(
            &mut out,
            &[refused(as_root), refused("permission denied")],
            None,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("need root or CAP_SYS_PTRACE"), "{text}");
    }
}
