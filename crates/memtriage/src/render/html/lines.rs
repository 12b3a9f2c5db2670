//! The page's "Where the memory went": a table per Python process of the lines the
//! diagnosis told a kind, with their growth by kind, faults, when they grew, the path
//! that led there, their source text, and a small chart of what each held over time.
//! Everything from the job (file names, functions, source text, roles) is escaped.

use std::fmt::Write;

use memtriage_core::model::lines::{KindGrowth, LineGrowth, ProcessLines, PythonStart};
use memtriage_core::model::run::RunReport;
use memtriage_core::model::units::iec;

use super::charts::{self, TimeAxis};
use super::esc;
use crate::render::lines::{amount, shown};

/// Processes the page shows, and lines of each (the JSON has every one).
const PROCESSES: usize = 8;
const LINES: usize = 6;

/// The section, or nothing when no line has a kind.
pub fn section(r: &RunReport, time: &TimeAxis) -> String {
    let (shown, more) = shown(r, PROCESSES, LINES);
    if shown.is_empty() {
        return String::new();
    }
    let mut html = String::from(
        "<h2>Where the memory went</h2><p class=\"lines-about\">The Python lines each \
         process's memory grew under, as memtriage's hook measured them: <i>kept</i> is \
         what a line took and never gave back; copies after a fork are estimated from \
         the faults. Each chart is what the line held, on the charts' time axis.</p>",
    );
    for (p, lines) in &shown {
        process_table(&mut html, r, p, lines, time);
    }
    if more > 0 {
        let _ = write!(
            html,
            "<p><small>{more} more {} with lines of a kind: `memtriage report FILE --json` has them all.</small></p>",
            if more == 1 { "process" } else { "processes" }
        );
    }
    html
}

/// How the process's figures were measured, where that changes how they read.
fn process_about(p: &ProcessLines) -> String {
    let mut about = vec![format!(
        "Python {}, {}",
        esc(&p.python),
        match p.started {
            PythonStart::Exec => "started",
            PythonStart::Fork => "forked from its parent",
        }
    )];
    if !p.complete {
        about.push("killed: its figures end at its last write".into());
    }
    if let Some(why) = &p.fault_signals_unavailable {
        about.push(format!("lines charged by time alone: {}", esc(why)));
    }
    if let Some(why) = &p.failed {
        about.push(format!("measurement stopped early: {}", esc(why)));
    }
    about.join("; ")
}

fn process_table(
    html: &mut String,
    r: &RunReport,
    p: &ProcessLines,
    lines: &[&LineGrowth],
    time: &TimeAxis,
) {
    let _ = write!(
        html,
        "<h3 class=\"lines-process\">{} <small>{}</small></h3><table class=\"lines\" data-pid=\"{}\">\
         <tr><th>line</th><th>kind</th><th>anon kept / grown</th><th>file kept / grown</th>\
         <th>shmem kept / grown</th><th>copied after fork</th><th>faults major / minor</th>\
         <th>grew</th><th>held over time</th></tr>",
        esc(&r.label_of_lines(p)),
        process_about(p),
        p.pid
    );
    for l in lines {
        line_row(html, p, l, time);
    }
    html.push_str("</table>");
}

fn kept_grown(k: KindGrowth) -> String {
    if k.grown == 0 {
        return "-".into();
    }
    format!("{} / {}", iec(k.kept), iec(k.grown))
}

fn line_row(html: &mut String, p: &ProcessLines, l: &LineGrowth, time: &TimeAxis) {
    let until = p.last_seconds;
    let name = l.at.file.rsplit('/').next().unwrap_or(&l.at.file);
    let _ = write!(
        html,
        "<tr><td class=\"at\"><code title=\"{}\">{}:{}</code> in <code>{}</code>",
        esc(&l.at.file),
        esc(name),
        l.at.line,
        esc(&l.at.function)
    );
    if let Some(text) = &l.at.text {
        let _ = write!(html, "<br><code class=\"src\">{}</code>", esc(text.trim()));
    }
    if let Some(path) = l.path_text() {
        let _ = write!(html, "<br><small class=\"path\">{}</small>", esc(&path));
    }
    let kind = l.kind.map_or("", |k| k.as_str());
    let _ = write!(
        html,
        "</td><td class=\"kind {kind}\" title=\"{}\">{kind}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td><td class=\"t\">{:.1}–{:.1} s</td><td class=\"spark\">{}</td></tr>",
        esc(&amount(p, l)),
        kept_grown(l.anon),
        kept_grown(l.file),
        kept_grown(l.shmem),
        match l.copied_after_fork {
            0 => "-".to_string(),
            b => format!("~{}", iec(b)),
        },
        l.major_faults,
        l.minor_faults,
        l.first_seconds,
        l.last_seconds,
        charts::held(&l.series, until, time)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::html::fixture::oom_recording;
    use crate::render::lines::fixture::{line, process};
    use memtriage_core::model::lines::{CodeLocation, HeldAt, LineKind};

    #[test]
    fn the_section_shows_each_told_line_with_its_figures_path_and_escaped_text() {
        let rec = oom_recording();
        let mut r = rec.summary.clone().unwrap();
        let mut leak = line(
            17,
            Some(LineKind::Leak),
            540,
            "seen.append(x) if a < b and c > d else \"&\"",
        );
        leak.at.file = "/srv/<job>/frames.py".into();
        leak.path.insert(
            0,
            CodeLocation {
                file: "/srv/job/train.py".into(),
                line: 40,
                function: "<module>".into(),
                text: None,
            },
        );
        leak.file = KindGrowth {
            grown: 3 << 20,
            kept: 1 << 20,
        };
        leak.series = vec![HeldAt(0.5, 10 << 20), HeldAt(2.0, 540 << 20)];
        r.memory_by_line = vec![
            process(
                31,
                Some("DataLoader worker 0 of 1"),
                vec![leak, line(5, None, 900, "untold = 1")],
            ),
            process(32, None, vec![line(2, None, 900, "x = 1")]),
        ];
        let html = section(&r, &TimeAxis::of(&rec));
        assert!(html.starts_with("<h2>Where the memory went</h2>"), "{html}");
        assert_eq!(html.matches("<table class=\"lines\"").count(), 1, "{html}");
        assert!(
            html.contains("pid 31 (python, DataLoader worker 0 of 1)"),
            "{html}"
        );
        assert!(html.contains(
            "<code class=\"src\">seen.append(x) if a &lt; b and c &gt; d else &quot;&amp;&quot;</code>"
        ));
        assert!(html.contains("title=\"/srv/&lt;job&gt;/frames.py\">frames.py:17</code> in <code>__getitem__</code>"), "{html}");
        assert!(
            html.contains("train.py:40 in &lt;module&gt; → frames.py:17 in __getitem__"),
            "{html}"
        );
        assert!(html.contains(">leak</td><td>540 MiB / 540 MiB</td><td>1.0 MiB / 3.0 MiB</td><td>-</td><td>-</td><td>0 / 10</td><td class=\"t\">0.5–2.0 s</td>"), "{html}");
        assert_eq!(html.matches("<svg class=\"held\"").count(), 1);
        assert!(
            !html.contains("untold"),
            "a line without a kind is not shown"
        );
    }

    #[test]
    fn no_section_without_a_told_line() {
        let rec = oom_recording();
        let mut r = rec.summary.clone().unwrap();
        r.memory_by_line = vec![process(32, None, vec![line(2, None, 900, "x = 1")])];
        assert_eq!(section(&r, &TimeAxis::of(&rec)), "");
    }
}
