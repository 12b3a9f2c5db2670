//! The page's two SVG charts, memory and page faults, on one time axis: the same
//! width, margins and domain (0 to the run's wall time), so a moment sits at the same
//! x in both, and the run's events are drawn at it in both.

use std::collections::HashMap;
use std::fmt::Write;

use memtriage_core::model::lines::HeldAt;
use memtriage_core::model::run::Timeline;

use super::esc;
use super::markers::{place_labels, shown_label, Marker};
use super::ticks::{self, Scale, Tick};

const WIDTH: f64 = 960.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
/// Above the plot when no label band is needed: room for the limit's label.
const TOP: f64 = 20.0;
const PLOT_HEIGHT: f64 = 240.0;
/// Below the plot: the time ticks.
const BOTTOM: f64 = 30.0;
/// One row of event labels above the memory plot.
const ROW_HEIGHT: f64 = 15.0;
/// More rows than this and the labels would crowd out the chart; the rest are in the
/// tooltips and the list of events.
const MAX_LABEL_ROWS: usize = 6;
/// Markers closer than this many user units merge (workers ending together).
const MERGE_WIDTH: f64 = 6.0;
/// Processes drawn separately; the rest are stacked as "other".
const SERIES: usize = 8;
const COLORS: [&str; 9] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#bab0ac",
];

/// The time axis both charts share.
pub struct TimeAxis {
    end: f64,
    ticks: Vec<Tick>,
}

impl TimeAxis {
    /// The run's wall time, or the last thing recorded when the run was cut short; a
    /// sample or event stamped a hair after the end still lies inside.
    pub fn of(r: &Timeline) -> TimeAxis {
        let last_sample = r.samples.iter().map(|s| s.t).fold(0.0, f64::max);
        let last_event = r.events.iter().map(|e| e.t).fold(0.0, f64::max);
        let wall = r.summary.as_ref().map_or(0.0, |s| s.wall_seconds);
        let end = [wall, last_sample, last_event]
            .into_iter()
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max);
        TimeAxis {
            end,
            ticks: ticks::time(end),
        }
    }

    pub fn end(&self) -> f64 {
        self.end
    }

    pub fn x(&self, t: f64) -> f64 {
        let share = if self.end > 0.0 {
            (t / self.end).clamp(0.0, 1.0)
        } else {
            0.0
        };
        LEFT + (WIDTH - LEFT - RIGHT) * share
    }

    /// Seconds that `MERGE_WIDTH` user units stand for.
    pub fn merge_seconds(&self) -> f64 {
        self.end * MERGE_WIDTH / (WIDTH - LEFT - RIGHT)
    }
}

/// One chart's drawing area and value scale.
struct Frame<'a> {
    time: &'a TimeAxis,
    scale: Scale,
    top: f64,
}

impl Frame<'_> {
    fn bottom(&self) -> f64 {
        self.top + PLOT_HEIGHT
    }

    fn height(&self) -> f64 {
        self.bottom() + BOTTOM
    }

    fn y(&self, v: f64) -> f64 {
        let share = if self.scale.top > 0.0 {
            (v / self.scale.top).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.bottom() - PLOT_HEIGHT * share
    }

    /// The `<svg>` start, the plot's box, the grid and both axes' ticks.
    /// A dashed red line at `bytes` across the chart, labelled at its left.
    fn ceiling(&self, svg: &mut String, bytes: u64, label: &str) {
        let y = self.y(bytes as f64);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#c00" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" class="limit">{label} {}</text>"##,
            WIDTH - RIGHT,
            LEFT + 4.0,
            y - 4.0,
            memtriage_core::model::units::iec(bytes)
        );
    }

    fn open(&self, svg: &mut String, name: &str, aria: &str) {
        let (w, h) = (WIDTH, self.height());
        let _ = write!(
            svg,
            r##"<svg class="chart" data-chart="{name}" viewBox="0 0 {w} {h}" role="img" aria-label="{aria}"><rect class="plot" x="{LEFT}" y="{:.1}" width="{}" height="{PLOT_HEIGHT}" fill="none" stroke="#ccc"/>"##,
            self.top,
            WIDTH - LEFT - RIGHT,
        );
        for t in &self.scale.ticks {
            let y = self.y(t.value);
            let _ = write!(
                svg,
                r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" text-anchor="end" class="tick">{}</text>"##,
                WIDTH - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                esc(&t.label)
            );
        }
        for t in &self.time.ticks {
            let x = self.time.x(t.value);
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#999"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="tick xtick" data-t="{}">{}</text>"##,
                self.bottom(),
                self.bottom() + 4.0,
                self.bottom() + 18.0,
                t.value,
                esc(&t.label)
            );
        }
    }

    /// Each marker as a line across the plot, its label (where `spots` gave it a place)
    /// in the band above, and its whole text as a tooltip.
    fn markers(&self, svg: &mut String, markers: &[Marker], labelled: &[Option<(f64, f64)>]) {
        for (m, spot) in markers.iter().zip(labelled) {
            let x = self.time.x(m.t);
            let color = m.tone.color();
            let _ = write!(
                svg,
                r#"<g class="marker" data-kind="{}" data-t="{}"><title>{:.1} s: {}</title>"#,
                esc(&m.kind),
                m.t,
                m.t,
                esc(&m.label)
            );
            let line_top = spot.map_or(self.top, |(_, baseline)| baseline - 10.0);
            let _ = write!(
                svg,
                r#"<line x1="{x:.1}" x2="{x:.1}" y1="{line_top:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.2" stroke-dasharray="3 2"/>"#,
                self.bottom()
            );
            if let Some((left, baseline)) = spot {
                let _ = write!(
                    svg,
                    r#"<text x="{left:.1}" y="{baseline:.1}" class="mlabel" fill="{color}">{}</text>"#,
                    esc(&shown_label(&m.label))
                );
            }
            svg.push_str("</g>");
        }
    }
}

/// The memory chart: each process's RSS stacked, the tree's PSS as a line, the limit
/// dashed, and the run's events with their labels in a band above the plot.
pub fn memory(r: &Timeline, time: &TimeAxis, markers: &[Marker]) -> String {
    let mut peak: HashMap<i32, (u64, String)> = HashMap::new();
    for s in &r.samples {
        for p in &s.processes {
            let e = peak.entry(p.pid).or_default();
            e.0 = e.0.max(p.rss);
            e.1 = p.label();
        }
    }
    let mut order: Vec<(i32, u64, String)> =
        peak.into_iter().map(|(pid, (b, c))| (pid, b, c)).collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let shown: Vec<(i32, String)> = order
        .iter()
        .take(SERIES)
        .map(|(pid, _, c)| (*pid, c.clone()))
        .collect();
    let limit = r
        .summary
        .as_ref()
        .and_then(|s| s.limit.as_ref())
        .map(|l| l.limit);
    let stacked_max = r
        .samples
        .iter()
        .map(|s| s.processes.iter().map(|p| p.rss).sum::<u64>())
        .max()
        .unwrap_or(0);
    let y_max = r
        .samples
        .iter()
        .map(|s| s.tree_rss.max(s.tree_pss.unwrap_or(0)))
        .max()
        .unwrap_or(0)
        .max(stacked_max)
        .max(limit.unwrap_or(0));

    let labels: Vec<String> = markers.iter().map(|m| shown_label(&m.label)).collect();
    let xs: Vec<f64> = markers.iter().map(|m| time.x(m.t)).collect();
    let spots = place_labels(&labels, &xs, 4.0, WIDTH - 4.0, MAX_LABEL_ROWS);
    let rows = spots.iter().flatten().map(|s| s.row + 1).max().unwrap_or(0);
    const BAND_TOP: f64 = 6.0;
    let frame = Frame {
        time,
        scale: ticks::bytes(y_max as f64),
        top: TOP.max(BAND_TOP + rows as f64 * ROW_HEIGHT + 6.0),
    };
    let labelled: Vec<Option<(f64, f64)>> = spots
        .iter()
        .map(|s| s.map(|s| (s.left, BAND_TOP + (s.row + 1) as f64 * ROW_HEIGHT - 3.0)))
        .collect();

    let mut svg = String::new();
    frame.open(&mut svg, "memory", "memory over time");
    // Stacked areas, bottom series first.
    let mut base = vec![0u64; r.samples.len()];
    for layer in 0..=shown.len() {
        let values: Vec<u64> = r
            .samples
            .iter()
            .map(|s| {
                s.processes
                    .iter()
                    .filter(|p| match shown.get(layer) {
                        Some((pid, _)) => p.pid == *pid,
                        None => !shown.iter().any(|(pid, _)| *pid == p.pid),
                    })
                    .map(|p| p.rss)
                    .sum()
            })
            .collect();
        if values.iter().all(|v| *v == 0) {
            continue;
        }
        let top: Vec<u64> = base.iter().zip(&values).map(|(b, v)| b + v).collect();
        let mut points = String::new();
        for (s, v) in r.samples.iter().zip(&top) {
            let _ = write!(points, "{:.1},{:.1} ", time.x(s.t), frame.y(*v as f64));
        }
        for (s, v) in r.samples.iter().zip(&base).rev() {
            let _ = write!(points, "{:.1},{:.1} ", time.x(s.t), frame.y(*v as f64));
        }
        let _ = write!(
            svg,
            r#"<polygon points="{}" fill="{}" fill-opacity="0.75"/>"#,
            points.trim_end(),
            COLORS[layer.min(COLORS.len() - 1)]
        );
        base = top;
    }
    pss_line(&mut svg, r, &frame);
    // Its label at the left, where a job's memory is lowest and covers it least.
    if let Some(l) = limit {
        frame.ceiling(&mut svg, l, "limit");
    }
    frame.markers(&mut svg, markers, &labelled);
    svg.push_str("</svg>");

    let mut legend = String::from(r#"<p class="legend">"#);
    for (i, (_, label)) in shown.iter().enumerate() {
        let _ = write!(
            legend,
            r#"<span><i style="background:{}"></i>{}</span> "#,
            COLORS[i],
            esc(label)
        );
    }
    if order.len() > SERIES {
        let _ = write!(
            legend,
            r#"<span><i style="background:{}"></i>other ({})</span> "#,
            COLORS[SERIES],
            order.len() - SERIES
        );
    }
    // A record that never read PSS (another user's job) draws no line to name.
    if r.samples.iter().any(|s| s.tree_pss.is_some()) {
        legend.push_str(r#"<span><i style="background:#000;height:2px"></i>tree PSS</span>"#);
    }
    legend.push_str("</p>");
    format!("{svg}{legend}")
}

/// The tree's PSS through every sample that has it: a sample without it (a reading
/// missed that tick) is passed over, the line joining its neighbours, since PSS did
/// not drop to nothing there.
fn pss_line(svg: &mut String, r: &Timeline, frame: &Frame) {
    let points: Vec<(f64, f64)> = r
        .samples
        .iter()
        .filter_map(|s| Some((frame.time.x(s.t), frame.y(s.tree_pss? as f64))))
        .collect();
    match points.as_slice() {
        [] => {}
        [(x, y)] => {
            let _ = write!(
                svg,
                r##"<circle class="pss" cx="{x:.1}" cy="{y:.1}" r="2.5" fill="#000"/>"##
            );
        }
        _ => {
            let joined: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            let _ = write!(
                svg,
                r##"<polyline class="pss" points="{}" fill="none" stroke="#000" stroke-width="1.5"/>"##,
                joined.join(" ")
            );
        }
    }
}

/// Minor and major fault rates, on the memory chart's time axis, with the events'
/// lines (their labels are on the memory chart above).
pub fn faults(r: &Timeline, time: &TimeAxis, markers: &[Marker]) -> String {
    let y_max = r
        .samples
        .iter()
        .map(|s| s.minor_faults_per_second.max(s.major_faults_per_second))
        .fold(0.0, f64::max);
    let frame = Frame {
        time,
        scale: ticks::per_second(y_max),
        top: TOP,
    };
    let mut svg = String::new();
    frame.open(&mut svg, "faults", "page faults per second");
    for (major, color) in [(false, "#4e79a7"), (true, "#e15759")] {
        let pts: Vec<String> = r
            .samples
            .iter()
            .map(|s| {
                let v = if major {
                    s.major_faults_per_second
                } else {
                    s.minor_faults_per_second
                };
                format!("{:.1},{:.1}", time.x(s.t), frame.y(v))
            })
            .collect();
        let _ = write!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.5"/>"#,
            pts.join(" ")
        );
    }
    frame.markers(&mut svg, markers, &vec![None; markers.len()]);
    svg.push_str("</svg>");
    svg.push_str(r##"<p class="legend"><span><i style="background:#4e79a7"></i>minor faults/s</span> <span><i style="background:#e15759"></i>major faults/s (disk reads)</span></p>"##);
    svg
}

/// The job's GPU memory (NVML, summed over devices) against the devices' size, where
/// the recording has GPU readings; `None` otherwise.
pub fn gpu(r: &Timeline, time: &TimeAxis, markers: &[Marker]) -> Option<String> {
    let points: Vec<(f64, u64)> = r
        .samples
        .iter()
        .filter_map(|s| Some((s.t, s.gpu_used?)))
        .collect();
    if points.is_empty() {
        return None;
    }
    let capacity: Option<u64> = r.summary.as_ref().and_then(|s| {
        let g = s.gpu.as_ref()?;
        let used: Vec<_> = g
            .devices
            .iter()
            .filter(|d| d.peak_job.is_some_and(|p| p.bytes > 0))
            .collect();
        (!used.is_empty()).then(|| used.iter().filter_map(|d| d.total).sum())
    });
    let y_max = points
        .iter()
        .map(|(_, b)| *b)
        .max()
        .unwrap_or(0)
        .max(capacity.unwrap_or(0));
    let frame = Frame {
        time,
        scale: ticks::bytes(y_max as f64),
        top: TOP,
    };
    let mut svg = String::new();
    frame.open(&mut svg, "gpu", "GPU memory over time");
    let pts: Vec<String> = points
        .iter()
        .map(|(t, b)| format!("{:.1},{:.1}", time.x(*t), frame.y(*b as f64)))
        .collect();
    let _ = write!(
        svg,
        r##"<polyline class="gpu" points="{}" fill="none" stroke="#59a14f" stroke-width="2"/>"##,
        pts.join(" ")
    );
    if let Some(c) = capacity {
        frame.ceiling(&mut svg, c, "GPU memory");
    }
    frame.markers(&mut svg, markers, &vec![None; markers.len()]);
    svg.push_str("</svg>");
    svg.push_str(r##"<p class="legend"><span><i style="background:#59a14f"></i>the job's GPU memory (all its processes, all devices)</span></p>"##);
    Some(svg)
}

/// A line's small chart, in user units: the plot's width is the big charts' (the
/// same x for the same moment), its height this.
const SMALL_HEIGHT: f64 = 60.0;

/// What one Python line held over time (`series`), small, on the page's time axis:
/// the moment a line grew sits under the same moment of the memory chart. The last
/// point holds `until` the process's last measurement. Its scale is its own (the
/// table beside it has the figures); the tooltip says its top.
pub fn held(series: &[HeldAt], until: Option<f64>, time: &TimeAxis) -> String {
    let mut points: Vec<(f64, u64)> = series
        .iter()
        .filter(|p| p.0.is_finite())
        .map(|p| (p.0, p.1.max(0) as u64))
        .collect();
    if let (Some(&(t, v)), Some(until)) = (points.last(), until) {
        if until.is_finite() && until > t {
            points.push((until, v));
        }
    }
    let top = points.iter().map(|p| p.1).max().unwrap_or(0);
    let scale = ticks::bytes(top as f64);
    let y = |v: u64| {
        let share = if scale.top > 0.0 {
            (v as f64 / scale.top).clamp(0.0, 1.0)
        } else {
            0.0
        };
        SMALL_HEIGHT - 2.0 - (SMALL_HEIGHT - 4.0) * share
    };
    let plot_width = WIDTH - LEFT - RIGHT;
    let mut svg = format!(
        r##"<svg class="held" viewBox="{LEFT} 0 {plot_width} {SMALL_HEIGHT}" preserveAspectRatio="none" role="img" aria-label="held over time"><title>held up to {}</title><line x1="{LEFT}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#ccc" vector-effect="non-scaling-stroke"/>"##,
        memtriage_core::model::units::iec(top),
        WIDTH - RIGHT,
        y(0),
        y(0),
    );
    match points.as_slice() {
        [] => {}
        [(t, v)] => {
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#e15759" stroke-width="2" vector-effect="non-scaling-stroke"/>"##,
                y(0),
                y(*v),
                x = time.x(*t)
            );
        }
        [first, .., last] => {
            // The area down to the baseline under the line, each point held until the next.
            let mut area = format!("{:.1},{:.1}", time.x(first.0), y(0));
            for (t, v) in &points {
                let _ = write!(area, " {:.1},{:.1}", time.x(*t), y(*v));
            }
            let _ = write!(area, " {:.1},{:.1}", time.x(last.0), y(0));
            let line: Vec<String> = points
                .iter()
                .map(|(t, v)| format!("{:.1},{:.1}", time.x(*t), y(*v)))
                .collect();
            let _ = write!(
                svg,
                r##"<polygon points="{area}" fill="#e15759" fill-opacity="0.2"/><polyline points="{}" fill="none" stroke="#e15759" stroke-width="1.5" vector-effect="non-scaling-stroke"/>"##,
                line.join(" ")
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::html::fixture::oom_recording;
    use crate::render::html::markers::markers;

    /// The numbers of `attr="…"` in `svg`, in order.
    fn attrs(svg: &str, attr: &str) -> Vec<f64> {
        let key = format!(" {attr}=\"");
        svg.split(&key)
            .skip(1)
            .filter_map(|rest| rest.split('"').next()?.parse().ok())
            .collect()
    }

    fn drawn(r: &Timeline) -> (String, String) {
        let time = TimeAxis::of(r);
        let m = markers(r, time.end(), time.merge_seconds());
        (memory(r, &time, &m), faults(r, &time, &m))
    }

    /// Issue 28, defect 15: `report --db --html`'s legend named "tree PSS" for a record
    /// with no PSS reading, where no such line is drawn.
    #[test]
    fn regression_the_legend_names_tree_pss_only_when_its_line_is_drawn() {
        let mut r = oom_recording();
        let (with, _) = drawn(&r);
        assert!(with.contains("tree PSS</span>"), "{with}");
        for s in &mut r.samples {
            s.tree_pss = None;
        }
        let (without, _) = drawn(&r);
        assert!(!without.contains("tree PSS"), "{without}");
        assert!(without.ends_with("</p>"), "{without}");
    }

    #[test]
    fn regression_both_charts_share_the_run_s_time_axis() {
        let r = oom_recording();
        let time = TimeAxis::of(&r);
        assert_eq!(
            time.end(),
            2.3,
            "the wall time, past the last sample at 2.0 s"
        );
        let (mem, faults) = drawn(&r);
        let tick_xs = |svg: &str| -> Vec<String> {
            svg.split("class=\"tick xtick\"")
                .skip(1)
                .filter_map(|s| s.split('>').nth(1)?.split('<').next().map(str::to_string))
                .collect()
        };
        assert_eq!(tick_xs(&mem), tick_xs(&faults));
        assert_eq!(tick_xs(&mem)[..3], ["0 s", "0.5 s", "1.0 s"]);
        // The exit at 2.2 s, after the last sample, at the same x in both.
        let x_of_last_marker = |svg: &str| {
            let g = &svg[svg.rfind("<g class=\"marker\"").unwrap()..];
            attrs(g, "x1")[0]
        };
        assert_eq!(x_of_last_marker(&mem), x_of_last_marker(&faults));
        assert!(x_of_last_marker(&mem) < WIDTH - RIGHT);
    }

    #[test]
    fn the_legend_names_each_process_with_its_rank() {
        let mut r = oom_recording();
        let (mem, _) = drawn(&r);
        assert!(mem.contains("</i>pid 31 (python3)</span>"), "{mem}");
        for s in &mut r.samples {
            for p in &mut s.processes {
                p.rank = Some(memtriage_core::model::process::RankInfo {
                    rank: 0,
                    local_rank: Some(0),
                    world_size: Some(2),
                    worker: false,
                });
            }
        }
        let (mem, _) = drawn(&r);
        assert!(mem.contains("</i>pid 31 (python3, rank 0)</span>"), "{mem}");
    }

    #[test]
    fn regression_every_marker_lies_inside_the_drawing() {
        let (mem, faults) = drawn(&oom_recording());
        for svg in [&mem, &faults] {
            let height: f64 = svg
                .split("viewBox=\"0 0 ")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .and_then(|s| s.split(' ').nth(1))
                .and_then(|s| s.parse().ok())
                .unwrap();
            let markers = &svg[svg.find("<g class=\"marker\"").unwrap()..];
            for x in attrs(markers, "x1").into_iter().chain(attrs(markers, "x")) {
                assert!(
                    (LEFT..=WIDTH - RIGHT).contains(&x) || (0.0..WIDTH).contains(&x),
                    "{x}"
                );
            }
            for x in attrs(markers, "x1") {
                assert!((LEFT..=WIDTH - RIGHT).contains(&x), "marker line at {x}");
            }
            for y in attrs(markers, "y1").into_iter().chain(attrs(markers, "y2")) {
                assert!((0.0..=height).contains(&y), "{y} outside 0..{height}");
            }
        }
        assert!(mem.contains("limit is reached in ~1 s"));
        assert!(mem.contains("killed pid 31"));
    }

    #[test]
    fn regression_tree_pss_joins_across_a_missed_reading() {
        let (mem, _) = drawn(&oom_recording());
        assert_eq!(
            mem.matches("class=\"pss\"").count(),
            1,
            "one line, not stretches"
        );
        let line = mem.split("class=\"pss\" points=\"").nth(1).unwrap();
        let points = line.split('"').next().unwrap().split(' ').count();
        assert_eq!(
            points, 3,
            "the three samples with PSS, the missed one passed over"
        );
    }

    #[test]
    fn regression_value_axes_have_round_labels() {
        let (mem, faults) = drawn(&oom_recording());
        assert!(faults.contains(">30k/s<"), "{faults}");
        assert!(!faults.contains("31272"));
        assert!(
            mem.contains(">60 MiB<") || mem.contains(">64 MiB<"),
            "{mem}"
        );
    }

    #[test]
    fn a_line_s_held_chart_is_on_the_page_s_time_axis_with_its_own_scale() {
        let r = oom_recording();
        let time = TimeAxis::of(&r);
        let svg = held(&[HeldAt(0.5, 1 << 20), HeldAt(1.15, 40 << 20)], None, &time);
        let line = svg.split("<polyline points=\"").nth(1).unwrap();
        let points: Vec<(f64, f64)> = line
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
        assert_eq!(
            xs,
            [time.x(0.5), time.x(1.15)].map(|x| (x * 10.0).round() / 10.0)
        );
        assert_eq!(xs[1], 510.0, "1.15 s is the middle of 2.3 s, 80 to 940");
        assert!(points[1].1 < points[0].1, "higher held is drawn higher");
        assert!(points[1].1 >= 2.0, "40 MiB under a rounded top");
        assert!(svg.contains("<title>held up to 40.0 MiB</title>"), "{svg}");
        for nothing in [held(&[], None, &time), held(&[HeldAt(1.0, 0)], None, &time)] {
            assert!(
                !nothing.contains("NaN") && !nothing.contains("inf"),
                "{nothing}"
            );
        }
        // Held since 0.5 s until the process's end at 1.15 s: a flat line to there.
        let flat = held(&[HeldAt(0.5, 40 << 20)], Some(1.15), &time);
        let line = flat.split("<polyline points=\"").nth(1).unwrap();
        let line = line.split('"').next().unwrap();
        assert!(
            line.ends_with(&format!("510.0,{:.1}", points[1].1)),
            "{flat}"
        );
    }

    #[test]
    fn an_empty_recording_draws_empty_charts_without_dividing_by_zero() {
        let r = Timeline::default();
        let (mem, faults) = drawn(&r);
        for svg in [mem, faults] {
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        }
    }
}
