//! Where the memory went, line by line (`RunReport::memory_by_line`): which Python
//! processes and lines are shown, and the compact rows of the run's summary, which
//! `run` prints and `report` repeats. The HTML page's tables are `html::lines`.

use std::io::{self, Write};

use memtriage_core::model::lines::{LineGrowth, LineKind, ProcessLines};
use memtriage_core::model::run::RunReport;
use memtriage_core::model::units::{counted, iec};

/// Processes the summary shows, and lines of each.
pub const SUMMARY_PROCESSES: usize = 4;
pub const SUMMARY_LINES: usize = 3;
/// A line's source text longer than this is cut in the summary (the page has it whole).
const TEXT_CHARS: usize = 60;

/// The processes with lines of a kind, those whose lines weigh most first (at most
/// `processes`), each with its told lines, weightiest first (at most `lines`), and how
/// many more processes had some.
pub fn shown(
    r: &RunReport,
    processes: usize,
    lines: usize,
) -> (Vec<(&ProcessLines, Vec<&LineGrowth>)>, usize) {
    let mut told: Vec<(&ProcessLines, Vec<&LineGrowth>)> = r
        .memory_by_line
        .iter()
        .map(|p| (p, p.told()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let weight = |l: &[&LineGrowth]| l.iter().map(|l| l.weight()).sum::<u64>();
    told.sort_by(|a, b| weight(&b.1).cmp(&weight(&a.1)).then(a.0.pid.cmp(&b.0.pid)));
    let more = told.len().saturating_sub(processes);
    told.truncate(processes);
    for (_, l) in &mut told {
        l.truncate(lines);
    }
    (told, more)
}

/// `leak, kept 540 MiB`: the kind and the figure that tells it, and how much of what
/// it holds is shared memory: pinned host memory where the process's torch pinned
/// some (cudaHostAlloc pages count as shared memory), never called /dev/shm then.
pub fn amount(p: &ProcessLines, l: &LineGrowth) -> String {
    let (kept, grown) = (l.anon.kept + l.shmem.kept, l.anon.grown + l.shmem.grown);
    let mut text = match l.kind {
        Some(LineKind::Leak) => format!("leak, kept {}", iec(kept)),
        // A peak is what it took each time, given back after.
        Some(LineKind::Peak) => format!("peak, took {}", iec(grown)),
        Some(LineKind::CopyOnWrite) => {
            format!("copy-on-write, about {} copied", iec(l.copied_after_fork))
        }
        Some(LineKind::Held) | None => format!(
            "{}, holds {}",
            l.kind.map_or("grew", LineKind::as_str),
            iec(l.held())
        ),
    };
    if l.shmem.kept > 0 {
        let pinned = p.pinned_host.is_some_and(|h| h.peak > 0);
        let what = if pinned { "pinned" } else { "shared" };
        text.push_str(&format!(" ({} {what})", iec(l.shmem.kept)));
    }
    if l.major_faults > 0 {
        text.push_str(&format!(
            ", {}",
            counted(l.major_faults, "major fault", "major faults")
        ));
    }
    text
}

/// The line's source text, cut to `TEXT_CHARS` characters.
fn text_cut(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(TEXT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The summary's rows, `lines      pid 4412 (DataLoader worker 1 of 2)  frames.py:17
/// in __getitem__  leak, kept 540 MiB  `self.seen.append(frame)``, the columns aligned;
/// nothing when no line has a kind.
pub fn write_rows(out: &mut dyn Write, r: &RunReport) -> io::Result<()> {
    let (shown, more) = shown(r, SUMMARY_PROCESSES, SUMMARY_LINES);
    let rows: Vec<[String; 4]> = shown
        .iter()
        .flat_map(|(p, lines)| {
            let name = r.label_of_lines(p);
            lines.iter().map(move |l| {
                let text =
                    l.at.text
                        .as_deref()
                        .map(|t| format!("`{}`", text_cut(t)))
                        .unwrap_or_default();
                [name.clone(), l.at.short(), amount(p, l), text]
            })
        })
        .collect();
    let width = |i: usize| rows.iter().map(|c| c[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    for [name, at, amount, text] in &rows {
        let line = format!("{name:<w0$}  {at:<w1$}  {amount:<w2$}  {text}");
        writeln!(out, "  {:<10} {}", "lines", line.trim_end())?;
    }
    if more > 0 {
        writeln!(
            out,
            "  {:<10} and {more} more {} with lines of a kind (all in --json)",
            "lines",
            if more == 1 { "process" } else { "processes" }
        )?;
    }
    Ok(())
}

/// Lines and processes for the unit tests, here and in `html::lines`.
#[cfg(test)]
pub(crate) mod fixture {
    use memtriage_core::model::lines::{
        CodeLocation, KindGrowth, LineGrowth, LineKind, ProcessLines, PythonStart,
    };
    use memtriage_core::model::run::RunReport;

    pub fn line(n: u32, kind: Option<LineKind>, kept_mib: u64, text: &str) -> LineGrowth {
        let at = CodeLocation {
            file: "/srv/job/frames.py".into(),
            line: n,
            function: "__getitem__".into(),
            text: Some(text.into()),
        };
        LineGrowth {
            user_code: true,
            at: at.clone(),
            path: vec![at],
            thread: None,
            kind,
            anon: KindGrowth {
                grown: kept_mib << 20,
                kept: kept_mib << 20,
            },
            file: KindGrowth::default(),
            shmem: KindGrowth::default(),
            copied_after_fork: 0,
            minor_faults: 10,
            major_faults: 0,
            ticks: 5,
            episodes: 1,
            grown_importing: 0,
            first_seconds: 0.5,
            last_seconds: 2.0,
            series: Vec::new(),
        }
    }

    pub fn process(pid: i32, role: Option<&str>, lines: Vec<LineGrowth>) -> ProcessLines {
        ProcessLines {
            pid,
            ppid: 1,
            started: PythonStart::Exec,
            role: role.map(str::to_string),
            python: "3.11.7".into(),
            interval_ms: 40,
            ticks: 50,
            first_seconds: Some(0.1),
            last_seconds: Some(2.0),
            hook_cpu_seconds: None,
            complete: true,
            fault_signals: 0,
            fault_period: None,
            fault_signals_unavailable: None,
            pinned_host: None,
            lines_not_kept: 0,
            held_series: Vec::new(),
            failed: None,
            lines,
        }
    }

    /// A run's report with no lines of its own.
    pub fn report() -> RunReport {
        let mut r = crate::render::html::fixture::oom_recording()
            .summary
            .expect("the fixture has a final report");
        r.memory_by_line.clear();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::{line, process, report};
    use super::*;

    fn rows(r: &RunReport) -> Vec<String> {
        let mut out = Vec::new();
        write_rows(&mut out, r).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn rows_name_the_process_the_line_its_kind_and_its_text_weightiest_first() {
        let mut r = report();
        r.memory_by_line = vec![
            process(
                10,
                None,
                vec![
                    line(3, Some(LineKind::Held), 20, "model = load()"),
                    line(4, None, 900, "x = 1"),
                ],
            ),
            process(
                11,
                Some("DataLoader worker 1 of 2"),
                vec![line(
                    17,
                    Some(LineKind::Leak),
                    540,
                    "self.seen.append(frame)",
                )],
            ),
        ];
        let rows = rows(&r);
        assert_eq!(
            rows,
            [
                "  lines      pid 11 (python, DataLoader worker 1 of 2)  frames.py:17 in __getitem__  leak, kept 540 MiB    `self.seen.append(frame)`",
                "  lines      pid 10 (python)                            frames.py:3 in __getitem__   held, holds 20.0 MiB  `model = load()`",
            ]
        );
    }

    #[test]
    fn rows_are_bounded_and_say_what_they_leave_out() {
        let mut r = report();
        r.memory_by_line = (0..6)
            .map(|i| {
                let lines = (1..=5)
                    .map(|n| line(n, Some(LineKind::Leak), 100 * (i + 1) + n as u64, "a"))
                    .collect();
                process(100 + i as i32, None, lines)
            })
            .collect();
        let rows = rows(&r);
        assert_eq!(rows.len(), 4 * 3 + 1, "{rows:#?}");
        assert!(rows[0].contains("pid 105 ") && rows[0].contains("frames.py:5 "));
        assert!(rows[11].contains("pid 102 ") && rows[11].contains("frames.py:3 "));
        assert!(rows[12].ends_with("and 2 more processes with lines of a kind (all in --json)"));
    }

    #[test]
    fn shared_memory_is_called_pinned_where_torch_pinned_host_memory() {
        use memtriage_core::model::lines::PinnedHost;
        let mut l = line(5, Some(LineKind::Held), 0, "bufs.append(pinned)");
        l.shmem.grown = 2 << 30;
        l.shmem.kept = 2 << 30;
        let mut p = process(10, None, vec![l.clone()]);
        assert_eq!(amount(&p, &l), "held, holds 2.0 GiB (2.0 GiB shared)");
        p.pinned_host = Some(PinnedHost {
            current: 2 << 30,
            peak: 2 << 30,
        });
        assert_eq!(amount(&p, &l), "held, holds 2.0 GiB (2.0 GiB pinned)");
    }

    #[test]
    fn a_real_pinned_run_on_a_gpu_says_pinned() {
        // `run` of 16 torch.empty(128 MiB, pin_memory=True) on an H200.
        let text = include_str!(
            "../../../memtriage-core/tests/fixtures/gpu-real/h200/pinned-run.report.json"
        );
        let r: RunReport = serde_json::from_str(text).unwrap();
        let rows = rows(&r);
        assert!(
            rows[0].contains("pin.py:5 in <module>") && rows[0].contains("GiB pinned)"),
            "{rows:#?}"
        );
    }

    #[test]
    fn no_rows_without_a_line_of_a_kind() {
        let mut r = report();
        r.memory_by_line = vec![process(10, None, vec![line(4, None, 900, "x = 1")])];
        assert!(rows(&r).is_empty());
    }

    #[test]
    fn a_long_source_line_is_cut_and_a_peak_says_what_it_took() {
        let mut l = line(9, Some(LineKind::Peak), 0, &"y".repeat(100));
        l.anon.grown = 300 << 20;
        l.major_faults = 2;
        let mut r = report();
        r.memory_by_line = vec![process(10, None, vec![l])];
        let rows = rows(&r);
        assert!(
            rows[0].contains("peak, took 300 MiB, 2 major faults"),
            "{rows:#?}"
        );
        assert!(
            rows[0].ends_with(&format!("`{}…`", "y".repeat(60))),
            "{rows:#?}"
        );
    }
}
