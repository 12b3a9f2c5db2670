//! Drawing `top`: the header of machine figures, the process table with a sparkline
//! of the sorted figure, the detail pane of the selected process, and the keys. Reads
//! only the frame and the view's state; what could not be read shows as `-`.

use memtriage_core::model::units::iec;
use memtriage_core::watch::{LiveFrame, ProcessRow};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line as TextLine, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::app::{App, JobTotal, Line, SortKey};
use crate::render::units::iec_opt;

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    let detail_height = if app.detail {
        9.min(area.height / 3)
    } else {
        0
    };
    let [header, table, detail, footer] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Min(3),
        Constraint::Length(detail_height),
        Constraint::Length(1),
    ])
    .areas(area);
    match &app.frame {
        Some(frame) => {
            f.render_widget(Paragraph::new(header_lines(frame)), header);
            draw_table(f, table, app);
            if app.detail {
                if let Some(row) = app.selected_row() {
                    f.render_widget(
                        Paragraph::new(detail_lines(row)).block(
                            Block::default()
                                .borders(Borders::TOP)
                                .title(format!(" {} ({}) ", row.comm, row.pid)),
                        ),
                        detail,
                    );
                }
            }
        }
        None => f.render_widget(
            Paragraph::new("memtriage top: reading every process…"),
            header,
        ),
    }
    f.render_widget(Paragraph::new(footer_line(app)), footer);
}

fn opt_f(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

fn header_lines(frame: &LiveFrame) -> Vec<TextLine<'static>> {
    let h = &frame.header;
    let mem = match (h.mem_available, h.mem_total) {
        (Some(a), Some(t)) => format!("MemAvailable {} of {}", iec(a), iec(t)),
        _ => "MemAvailable -".into(),
    };
    let swap = match (h.swap_used, h.swap_total) {
        (Some(_), Some(0)) => "swap off".into(),
        (Some(u), Some(t)) => format!("swap {} of {}", iec(u), iec(t)),
        _ => "swap -".into(),
    };
    let psi = format!(
        "PSI some {}% full {}%",
        opt_f(h.psi_some, 1),
        opt_f(h.psi_full, 1)
    );
    let faults = format!(
        "faults {}/s major {}/s",
        opt_f(h.faults_per_second, 0),
        opt_f(h.major_faults_per_second, 0)
    );
    let shm = match (h.shm_used, h.shm_size) {
        (Some(u), Some(s)) => format!("/dev/shm {} of {}", iec(u), iec(s)),
        _ => "/dev/shm -".into(),
    };
    let thp = format!("THP {}", h.thp.as_deref().unwrap_or("-"));
    let oom = match (&h.oom_kills_since_boot, &h.last_oom_kill) {
        (Some(n), Some(k)) => format!("OOM kills {n} (last: {} pid {})", k.comm, k.pid),
        (Some(n), None) => format!("OOM kills {n}"),
        (None, _) => "OOM kills -".into(),
    };
    let gpus = match &h.gpus {
        Some(devices) if !devices.is_empty() => devices
            .iter()
            .map(|d| format!("GPU{} {} of {}", d.index, iec_opt(d.used), iec_opt(d.total)))
            .collect::<Vec<_>>()
            .join("  "),
        _ => String::new(),
    };
    vec![
        TextLine::from(format!("{mem}  {swap}  {psi}")),
        TextLine::from(format!("{faults}  {shm}  {thp}  {oom}")),
        TextLine::from(gpus),
    ]
}

/// The last `width` points of `values`, scaled to their own maximum.
pub fn sparkline(values: &[f64], width: usize) -> String {
    let tail = &values[values.len().saturating_sub(width)..];
    let max = tail.iter().copied().fold(0.0, f64::max);
    let min = tail.iter().copied().fold(f64::INFINITY, f64::min);
    tail.iter()
        .map(|&v| {
            if max <= 0.0 || !v.is_finite() {
                SPARKS[0]
            } else if (max - min).abs() < f64::EPSILON {
                SPARKS[3]
            } else {
                SPARKS[(((v - min) / (max - min)) * 7.0).round() as usize]
            }
        })
        .collect()
}

fn rate(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 10_000.0 => format!("{:.0}k", v / 1000.0),
        Some(v) => format!("{v:.0}"),
    }
}

fn growth(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v < 0.0 => format!("-{}", iec(v.abs() as u64)),
        Some(v) => format!("+{}", iec(v as u64)),
    }
}

fn process_cells(row: &ProcessRow, depth: usize, sort: SortKey) -> Vec<String> {
    let name = format!("{}{}", "  ".repeat(depth.min(8)), row.comm);
    let mark = if row.findings.is_empty() { " " } else { "!" };
    vec![
        format!("{mark}{}", row.pid),
        row.user.clone().unwrap_or_else(|| "-".into()),
        rate(row.major_rate),
        rate(row.minor_rate),
        iec(row.rss),
        iec_opt(row.pss),
        iec_opt(row.uss),
        iec_opt(row.swap),
        iec_opt(row.gpu),
        growth(row.growth),
        sparkline(&sort.history(row), 8),
        name,
    ]
}

fn job_cells(job: &JobTotal) -> Vec<String> {
    let saving = job
        .shared_saving()
        .map(|s| format!(" shares {}", iec(s)))
        .unwrap_or_default();
    vec![
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        iec(job.rss),
        iec_opt(job.pss),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        format!("{} [{} processes]{saving}", job.root.comm, job.processes),
    ]
}

const HEADERS: [&str; 12] = [
    "PID", "USER", "MAJ/s", "MIN/s", "RSS", "PSS", "USS", "SWAP", "GPU", "GROW/m", "HISTORY",
    "COMMAND",
];

fn column_key(i: usize) -> Option<SortKey> {
    match i {
        2 => Some(SortKey::MajorFaults),
        3 => Some(SortKey::MinorFaults),
        4 => Some(SortKey::Rss),
        5 => Some(SortKey::Pss),
        6 => Some(SortKey::Uss),
        7 => Some(SortKey::Swap),
        8 => Some(SortKey::Gpu),
        9 => Some(SortKey::Growth),
        _ => None,
    }
}

fn draw_table(f: &mut Frame, area: Rect, app: &App) {
    let lines = app.lines();
    let header = Row::new(HEADERS.iter().enumerate().map(|(i, h)| {
        let cell = Cell::from(*h);
        if column_key(i) == Some(app.sort) {
            cell.style(Style::default().add_modifier(Modifier::REVERSED))
        } else {
            cell
        }
    }))
    .style(Style::default().add_modifier(Modifier::BOLD));
    let rows = lines.iter().map(|line| match line {
        Line::Process { row, depth } => {
            let style = if row.findings.is_empty() {
                Style::default()
            } else {
                Style::default().add_modifier(Modifier::BOLD)
            };
            Row::new(process_cells(row, *depth, app.sort)).style(style)
        }
        Line::Job(job) => {
            Row::new(job_cells(job)).style(Style::default().add_modifier(Modifier::UNDERLINED))
        }
    });
    let widths = [
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(8),
        Constraint::Min(10),
    ];
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default();
    if !lines.is_empty() {
        state.select(Some(app.selected.min(lines.len() - 1)));
    }
    f.render_stateful_widget(table, area, &mut state);
}

fn detail_lines(row: &ProcessRow) -> Vec<TextLine<'static>> {
    let mut out = vec![TextLine::from(format!(
        "RSS {}  PSS {} (read {} s ago)  USS {}  swap {}  user {}",
        iec(row.rss),
        iec_opt(row.pss),
        opt_f(row.pss_age, 0),
        iec_opt(row.uss),
        iec_opt(row.swap),
        row.user.as_deref().unwrap_or("-"),
    ))];
    let faults: Vec<String> = row
        .fault_history
        .iter()
        .rev()
        .take(6)
        .map(|(minor, major)| format!("{minor:.0}/{major:.0}"))
        .collect();
    out.push(TextLine::from(format!(
        "faults per second, minor/major, newest first: {}",
        if faults.is_empty() {
            "-".into()
        } else {
            faults.join("  ")
        }
    )));
    out.push(TextLine::from(match &row.cgroup {
        Some(cg) => format!(
            "cgroup {}  usage {}  limit {}  headroom {}{}",
            cg.path,
            iec_opt(cg.usage),
            iec_opt(cg.limit),
            iec_opt(cg.headroom),
            row.minutes_to_limit
                .map(|m| format!("  (limit in {m:.0} min at this growth)"))
                .unwrap_or_default()
        ),
        None => "cgroup -".into(),
    }));
    if row.forked_worker {
        out.push(TextLine::from(format!(
            "forked worker: copied {} of its parent's memory",
            iec_opt(row.copied_after_fork)
        )));
    }
    for id in &row.findings {
        out.push(TextLine::from(Span::styled(
            format!("! {id}: {}", finding_text(id)),
            Style::default().add_modifier(Modifier::BOLD),
        )));
    }
    out.push(TextLine::from(format!(
        "more: memtriage inspect {} --maps",
        row.pid
    )));
    out
}

fn finding_text(id: &str) -> &'static str {
    match id {
        "fork.copy-on-write" => {
            "this worker has copied much of what it shared with its parent (copy-on-write)"
        }
        "live.growth-to-limit" => {
            "at its current growth it reaches its cgroup's limit within 30 minutes"
        }
        "live.major-fault-storm" => "a storm of major faults: it is reading its memory from disk",
        _ => "",
    }
}

fn footer_line(app: &App) -> TextLine<'static> {
    if app.typing {
        return TextLine::from(format!("filter: {}▏ (Enter keeps, Esc clears)", app.filter));
    }
    let state = if app.paused { " PAUSED" } else { "" };
    let filter = if app.filter.is_empty() {
        String::new()
    } else {
        format!(" filter:{}", app.filter)
    };
    TextLine::from(format!(
        "q quit  s/1-8 sort:{}  t tree{}  / filter{}  space pause{}  +/- interval:{}ms  enter detail  - = unreadable",
        app.sort.name(),
        if app.tree { ":on" } else { "" },
        filter,
        state,
        app.interval_ms
    ))
}
