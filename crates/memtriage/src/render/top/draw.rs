//! Drawing `top`: the header of machine figures, the process table with a sparkline
//! of the sorted figure, the detail pane of the selected process, and the keys. Reads
//! only the frame and the view's state; what could not be read shows as `-`.

use memtriage_core::model::units::iec;
use memtriage_core::usecase::top::{mark_text, Focus, KillersNow, LiveFrame, ProcessRow};
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
    let header_text = app
        .frame
        .as_ref()
        .map(|frame| header_lines(frame, area.width))
        .unwrap_or_default();
    let header_height = (header_text.len() as u16).clamp(1, MAX_HEADER_LINES);
    let [header, table, detail, footer] = Layout::vertical([
        Constraint::Length(header_height),
        Constraint::Min(3),
        Constraint::Length(detail_height),
        Constraint::Length(1),
    ])
    .areas(area);
    match &app.frame {
        Some(frame) => {
            f.render_widget(Paragraph::new(header_text), header);
            draw_table(f, table, app);
            if app.detail {
                if let Some(row) = app.selected_row() {
                    let focus = frame.focus.as_ref().filter(|f| f.pid == row.pid);
                    f.render_widget(
                        Paragraph::new(detail_lines(row, focus)).block(
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

/// The header's lines: the machine's memory, then its faults and limits, then its
/// GPUs, each group flowed onto as many lines as `width` needs (a figure is never cut
/// in the middle, as an 80-column terminal would otherwise do).
fn header_lines(frame: &LiveFrame, width: u16) -> Vec<TextLine<'static>> {
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
    let gpus: Vec<String> = h
        .gpus
        .iter()
        .flatten()
        .map(|d| format!("GPU{} {} of {}", d.index, iec_opt(d.used), iec_opt(d.total)))
        .collect();
    [
        vec![mem, swap, psi],
        killers_items(&h.killers, width as usize),
        vec![faults, shm, thp, oom],
        gpus,
    ]
    .into_iter()
    .flat_map(|group| flow(&group, width as usize))
    .map(TextLine::from)
    .collect()
}

/// The first killer to act, in one line of at most `width`: how much more it allows,
/// when at the rate MemAvailable falls, whom it would pick; then the next one, where
/// the line has room.
fn killers_items(k: &KillersNow, width: usize) -> Vec<String> {
    let mut acting = k.reach.iter().filter(|r| r.room.is_some());
    let Some(first) = acting.next() else {
        return Vec::new();
    };
    // The name alone: its settings are in `inspect --tree` and doctor.
    let mut line = format!(
        "{} acts after {} more",
        first.killer.kind.name(),
        iec_opt(first.room)
    );
    // An hour away is no warning: MemAvailable drifts by that much.
    if let Some((_, seconds)) = k.first_acts_in().filter(|(_, s)| *s < 3600.0) {
        line.push_str(&format!(" (~{seconds:.0} s)"));
    }
    if let Some(v) = k
        .first_victim
        .as_ref()
        .filter(|_| k.victim_of == Some(first.killer.kind))
    {
        line.push_str(&format!(", picks {} (pid {})", v.comm, v.pid));
    }
    if let Some(next) = acting.next() {
        let then = format!(
            "; then {} after {}",
            next.killer.kind.name(),
            iec_opt(next.room)
        );
        if line.chars().count() + then.chars().count() <= width {
            line.push_str(&then);
        }
    }
    vec![line]
}

/// Lines the header may take; past them, the table keeps its room.
const MAX_HEADER_LINES: u16 = 6;

/// `items` joined by two spaces onto lines of at most `width` characters; an item
/// longer than a line has one to itself.
fn flow(items: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 2 + item.chars().count() <= width => {
                line.push_str("  ");
                line.push_str(item);
            }
            _ => lines.push(item.clone()),
        }
    }
    lines
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

/// The table's columns, besides COMMAND (always last, taking what is left).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Pid,
    User,
    Major,
    Minor,
    Rss,
    Pss,
    Uss,
    Swap,
    Gpu,
    Growth,
    History,
}

/// Left to right.
const ORDER: [Col; 11] = [
    Col::Pid,
    Col::User,
    Col::Major,
    Col::Minor,
    Col::Rss,
    Col::Pss,
    Col::Uss,
    Col::Swap,
    Col::Gpu,
    Col::Growth,
    Col::History,
];
/// Which columns a narrow terminal keeps first (80x24 over SSH keeps the first six).
const PRIORITY: [Col; 11] = [
    Col::Pid,
    Col::Major,
    Col::Minor,
    Col::Rss,
    Col::Pss,
    Col::History,
    Col::Swap,
    Col::Growth,
    Col::Uss,
    Col::User,
    Col::Gpu,
];
const COMMAND_MIN: u16 = 12;

impl Col {
    fn header(self) -> &'static str {
        match self {
            Col::Pid => "PID",
            Col::User => "USER",
            Col::Major => "MAJ/s",
            Col::Minor => "MIN/s",
            Col::Rss => "RSS",
            Col::Pss => "PSS",
            Col::Uss => "USS",
            Col::Swap => "SWAP",
            Col::Gpu => "GPU",
            Col::Growth => "GROW/m",
            Col::History => "HISTORY",
        }
    }

    fn width(self) -> u16 {
        match self {
            Col::Pid => 8,
            Col::User => 8,
            Col::Major | Col::Minor => 5,
            Col::Rss | Col::Pss | Col::Uss | Col::Swap | Col::Gpu => 10,
            Col::Growth => 10,
            Col::History => 8,
        }
    }

    fn sorts(self) -> Option<SortKey> {
        match self {
            Col::Major => Some(SortKey::MajorFaults),
            Col::Minor => Some(SortKey::MinorFaults),
            Col::Rss => Some(SortKey::Rss),
            Col::Pss => Some(SortKey::Pss),
            Col::Uss => Some(SortKey::Uss),
            Col::Swap => Some(SortKey::Swap),
            Col::Gpu => Some(SortKey::Gpu),
            Col::Growth => Some(SortKey::Growth),
            _ => None,
        }
    }

    fn cell(self, row: &ProcessRow, app: &App) -> String {
        match self {
            Col::Pid => {
                let mark = if row.findings.is_empty() { " " } else { "!" };
                format!("{mark}{}", row.pid)
            }
            Col::User => row.user.clone().unwrap_or_else(|| "-".into()),
            Col::Major => rate(row.major_rate),
            Col::Minor => rate(row.minor_rate),
            Col::Rss => iec(row.rss),
            Col::Pss => iec_opt(row.pss),
            Col::Uss => iec_opt(row.uss),
            Col::Swap => iec_opt(row.swap),
            Col::Gpu => iec_opt(row.gpu),
            Col::Growth => growth(row.growth),
            Col::History => sparkline(&app.history(row), 8),
        }
    }

    fn job_cell(self, job: &JobTotal) -> String {
        match self {
            Col::Rss => iec(job.rss),
            Col::Pss => iec_opt(job.pss),
            Col::Gpu => iec_opt(job.gpu),
            _ => String::new(),
        }
    }
}

/// The columns that fit `width`, the sorted one always among them.
fn columns(width: u16, sort: SortKey, gpus: bool) -> Vec<Col> {
    let mut chosen: Vec<Col> = vec![Col::Pid];
    if let Some(c) = ORDER.iter().find(|c| c.sorts() == Some(sort)) {
        chosen.push(*c);
    }
    let used = |cols: &[Col]| cols.iter().map(|c| c.width() + 1).sum::<u16>();
    for c in PRIORITY {
        if chosen.contains(&c) || (c == Col::Gpu && !gpus) {
            continue;
        }
        let mut with = chosen.clone();
        with.push(c);
        if used(&with) + COMMAND_MIN <= width {
            chosen = with;
        }
    }
    ORDER.into_iter().filter(|c| chosen.contains(c)).collect()
}

fn draw_table(f: &mut Frame, area: Rect, app: &App) {
    let lines = app.lines();
    let gpus = app
        .frame
        .as_ref()
        .is_some_and(|fr| fr.header.gpus.as_ref().is_some_and(|g| !g.is_empty()));
    let cols = columns(area.width, app.sort, gpus);
    let header = Row::new(
        cols.iter()
            .map(|c| {
                let cell = Cell::from(c.header());
                if c.sorts() == Some(app.sort) {
                    cell.style(Style::default().add_modifier(Modifier::REVERSED))
                } else {
                    cell
                }
            })
            .chain(std::iter::once(Cell::from("COMMAND"))),
    )
    .style(Style::default().add_modifier(Modifier::BOLD));
    // Only the lines on screen become rows: thousands of processes cost a screenful.
    let visible = usize::from(area.height.saturating_sub(1)).max(1);
    let selected = app.selected.min(lines.len().saturating_sub(1));
    let offset = selected.saturating_sub(visible - 1);
    let rows = lines
        .iter()
        .skip(offset)
        .take(visible)
        .map(|line| match line {
            Line::Process { row, depth } => {
                let style = if row.findings.is_empty() {
                    Style::default()
                } else {
                    Style::default().add_modifier(Modifier::BOLD)
                };
                let name = format!("{}{}", "  ".repeat((*depth).min(8)), row.comm);
                Row::new(
                    cols.iter()
                        .map(|c| c.cell(row, app))
                        .chain(std::iter::once(name)),
                )
                .style(style)
            }
            Line::Job(job) => {
                let saving = job
                    .shared_saving()
                    .map(|s| format!(" shares {}", iec(s)))
                    .unwrap_or_default();
                let name = format!("{} [{}]{saving}", job.root.comm, job.processes);
                Row::new(
                    cols.iter()
                        .map(|c| c.job_cell(job))
                        .chain(std::iter::once(name)),
                )
                .style(Style::default().add_modifier(Modifier::UNDERLINED))
            }
        });
    let widths: Vec<Constraint> = cols
        .iter()
        .map(|c| Constraint::Length(c.width()))
        .chain(std::iter::once(Constraint::Min(COMMAND_MIN)))
        .collect();
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default();
    if !lines.is_empty() {
        state.select(Some(selected - offset));
    }
    f.render_stateful_widget(table, area, &mut state);
}

fn detail_lines(row: &ProcessRow, focus: Option<&Focus>) -> Vec<TextLine<'static>> {
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
            format!("! {id}: {}", mark_text(id)),
            Style::default().add_modifier(Modifier::BOLD),
        )));
    }
    match focus {
        Some(f) if f.error.is_none() => {
            let kinds: Vec<String> = f
                .by_kind
                .iter()
                .filter(|k| k.sizes.resident() > 0)
                .take(5)
                .map(|k| format!("{} {}", k.kind.label(), iec(k.sizes.resident())))
                .collect();
            out.push(TextLine::from(format!(
                "resident by kind: {}",
                kinds.join("  ")
            )));
            for file in f.by_file.iter().filter(|g| !g.path.is_empty()).take(3) {
                out.push(TextLine::from(format!(
                    "  {} {} (PSS {}){}",
                    iec(file.sizes.resident()),
                    file.path,
                    iec(file.sizes.pss),
                    if file.deleted { " (deleted)" } else { "" }
                )));
            }
        }
        Some(f) => out.push(TextLine::from(format!(
            "regions: {}",
            f.error.as_deref().unwrap_or("-")
        ))),
        None => out.push(TextLine::from("regions: reading…")),
    }
    out
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
        "q quit  s sort:{}  t tree{}  / filter{}  spc pause{}  +/- {}ms  ⏎ detail",
        app.sort.name(),
        if app.tree { ":on" } else { "" },
        filter,
        state,
        app.interval_ms
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::top::app::tests::frame;
    use memtriage_core::usecase::top::MachineHeader;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn text(app: &App, width: u16, height: u16) -> Vec<String> {
        let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
        t.draw(|f| draw(f, app)).unwrap();
        let b = t.backend().buffer().clone();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| b[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_known_frame_draws_the_expected_screen_in_80_by_24() {
        let mut app = App::new(SortKey::Rss, true, String::new(), 1000);
        app.show(frame());
        app.detail = true;
        app.selected = 3;
        let screen = text(&app, 80, 24);
        assert_eq!(screen[0], "MemAvailable -  swap -  PSI some -% full -%");
        assert_eq!(
            screen[2], "PID      MAJ/s MIN/s RSS        PSS        SWAP       HISTORY  COMMAND",
            "80 columns keep the first columns: {screen:#?}"
        );
        assert!(
            screen[3].contains("2.7 GiB")
                && screen[3].contains("700 MiB")
                && screen[3].contains("python [3] shares"),
            "the job first, its totals: {screen:#?}"
        );
        assert!(
            screen[6].starts_with("!102"),
            "a worker with a finding is marked: {screen:#?}"
        );
        assert!(
            screen[7].contains("1.2 GiB") && screen[7].contains(" - "),
            "the server's PSS unknown: {screen:#?}"
        );
        let detail = screen.join("\n");
        assert!(
            detail.contains("copied 100 MiB of its parent's memory"),
            "{detail}"
        );
        assert!(detail.contains("! fork.copy-on-write"), "{detail}");
        assert_eq!(
            screen[23],
            "q quit  s sort:rss  t tree:on  / filter  spc pause  +/- 1000ms  ⏎ detail"
        );
    }

    /// The whole screen of `app` against `testdata/NAME`, character for character.
    /// A missing file is written for review (and fails); under CI it only fails.
    fn assert_screen(name: &str, screen: &[String]) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/render/top/testdata")
            .join(name);
        let got = screen.join("\n") + "\n";
        match std::fs::read_to_string(&path) {
            Ok(want) => assert!(
                want == got,
                "the screen differs from {}:\n--- expected\n{want}--- drawn\n{got}",
                path.display()
            ),
            Err(_) if std::env::var_os("CI").is_none() => {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &got).unwrap();
                panic!("wrote {}: review it and commit it", path.display());
            }
            Err(e) => panic!(
                "{}: {e} (snapshots are committed, never made in CI)",
                path.display()
            ),
        }
    }

    fn known_header() -> MachineHeader {
        use memtriage_core::model::gpu::GpuTick;
        use memtriage_core::model::system::{OomConstraint, OomKill};
        MachineHeader {
            mem_total: Some(64 << 30),
            mem_available: Some(12 << 30),
            swap_total: Some(8 << 30),
            swap_used: Some(1 << 30),
            psi_some: Some(3.25),
            psi_full: Some(0.5),
            faults_per_second: Some(120_000.0),
            major_faults_per_second: Some(42.0),
            shm_used: Some(60 << 20),
            shm_size: Some(64 << 20),
            thp: Some("madvise".into()),
            oom_kills_since_boot: Some(3),
            last_oom_kill: Some(OomKill {
                pid: 4242,
                comm: "pt_data_worker".into(),
                total_vm: None,
                anon_rss: Some(3 << 30),
                file_rss: None,
                shmem_rss: None,
                uid: Some(1000),
                oom_score_adj: Some(0),
                constraint: OomConstraint::Cgroup,
                memcg: Some("/train".into()),
                oom_memcg: Some("/train".into()),
                timestamp: Some(12.5),
                wall_time: None,
            }),
            gpus: Some(vec![GpuTick {
                index: 0,
                used: Some(30 << 30),
                total: Some(80 << 30),
                processes: Vec::new(),
            }]),
            killers: known_killers(),
        }
    }

    /// earlyoom 2 GiB away, falling 64 MiB a second, and the kernel's OOM killer.
    fn known_killers() -> KillersNow {
        use memtriage_core::model::killers::{
            KillerKind, KillerReach, OomKiller, PredictedVictim, Trigger, VictimRule,
        };
        let earlyoom = OomKiller {
            kind: KillerKind::Earlyoom,
            pid: Some(812),
            running: true,
            settings_from: "/proc/812/cmdline".into(),
            settings: "-m 10".into(),
            trigger: None,
            victim: VictimRule::HighestOomScore {
                prefer: None,
                avoid: None,
                by_rss: false,
            },
            poll_seconds: Some(1.0),
        };
        let kernel = OomKiller {
            kind: KillerKind::Kernel,
            pid: None,
            settings_from: String::new(),
            settings: String::new(),
            trigger: Some(Trigger::Limit {
                bytes: None,
                cgroup: None,
                group_kill: false,
            }),
            ..earlyoom.clone()
        };
        KillersNow {
            reach: vec![
                KillerReach {
                    killer: earlyoom,
                    room: Some(2 << 30),
                    threshold: "MemAvailable falls under 6.4 GiB (10% of 64.0 GiB)".into(),
                },
                KillerReach {
                    killer: kernel,
                    room: Some(20 << 30),
                    threshold: "the machine's memory and swap run out".into(),
                },
            ],
            first_victim: Some(PredictedVictim {
                pid: 100,
                comm: "python".into(),
                in_job: false,
            }),
            victim_of: Some(KillerKind::Earlyoom),
            available_falling: Some((64 << 20) as f64),
        }
    }

    #[test]
    fn a_known_frame_with_every_header_figure_matches_its_snapshot() {
        let mut known = frame();
        known.header = known_header();
        // NVML answers for every process: those holding nothing hold 0.
        for p in &mut known.processes {
            p.gpu = Some(0);
        }
        known.processes[1].gpu = Some(29 << 30);
        let mut app = App::new(SortKey::Rss, false, String::new(), 1000);
        app.show(known.clone());
        assert_screen("frame-rss-120x20.txt", &text(&app, 120, 20));
        let mut app = App::new(SortKey::Gpu, true, String::new(), 1000);
        app.show(known);
        assert_screen("frame-tree-gpu-80x24.txt", &text(&app, 80, 24));
    }

    #[test]
    fn sparklines_scale_to_their_own_range() {
        assert_eq!(
            sparkline(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 8),
            "▁▂▃▄▅▆▇█"
        );
        assert_eq!(sparkline(&[5.0, 5.0], 8), "▄▄");
        assert_eq!(sparkline(&[], 8), "");
    }
}
