//! `memtriage report --html`: a recorded run as one self-contained HTML page with
//! SVG charts (no scripts, no fonts or files from elsewhere).

use std::collections::HashMap;
use std::fmt::Write;

use memtriage_core::model::finding::Severity;
use memtriage_core::model::run::Record;

use memtriage_core::model::units::iec;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 40.0;
/// Processes drawn separately; the rest are stacked as "other".
const SERIES: usize = 8;
const COLORS: [&str; 9] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#bab0ac",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

struct Axes {
    t_max: f64,
    y_max: f64,
}

impl Axes {
    fn x(&self, t: f64) -> f64 {
        LEFT + (WIDTH - LEFT - RIGHT)
            * if self.t_max > 0.0 {
                t / self.t_max
            } else {
                0.0
            }
    }
    fn y(&self, v: f64) -> f64 {
        TOP + (HEIGHT - TOP - BOTTOM)
            * (1.0
                - if self.y_max > 0.0 {
                    v / self.y_max
                } else {
                    0.0
                })
    }
}

fn axes_svg(out: &mut String, a: &Axes, label: impl Fn(f64) -> String) {
    for i in 0..=4 {
        let v = a.y_max * i as f64 / 4.0;
        let y = a.y(v);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end" class="tick">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            esc(&label(v))
        );
    }
    for i in 0..=5 {
        let t = a.t_max * i as f64 / 5.0;
        let x = a.x(t);
        let _ = write!(
            out,
            r##"<text x="{x:.1}" y="{}" text-anchor="middle" class="tick">{t:.1} s</text>"##,
            HEIGHT - BOTTOM + 18.0
        );
    }
}

fn memory_chart(r: &Record) -> String {
    let mut peak: HashMap<i32, (u64, String)> = HashMap::new();
    for s in &r.samples {
        for p in &s.processes {
            let e = peak.entry(p.pid).or_insert((0, p.comm.clone()));
            e.0 = e.0.max(p.rss);
            e.1.clone_from(&p.comm);
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
    let t_max = r
        .samples
        .last()
        .map(|s| s.t)
        .unwrap_or(0.0)
        .max(r.summary.as_ref().map(|s| s.wall_seconds).unwrap_or(0.0));
    let y_max = r
        .samples
        .iter()
        .map(|s| s.tree_rss.max(s.tree_pss.unwrap_or(0)))
        .max()
        .unwrap_or(0)
        .max(limit.unwrap_or(0)) as f64
        * 1.05;
    let a = Axes { t_max, y_max };
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="memory over time">"#
    );
    axes_svg(&mut svg, &a, |v| iec(v as u64));
    // Stacked areas, bottom series first.
    let mut base = vec![0u64; r.samples.len()];
    let layers = shown.len() + 1;
    for layer in 0..layers {
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
            let _ = write!(points, "{:.1},{:.1} ", a.x(s.t), a.y(*v as f64));
        }
        for (s, v) in r.samples.iter().zip(&base).rev() {
            let _ = write!(points, "{:.1},{:.1} ", a.x(s.t), a.y(*v as f64));
        }
        let _ = write!(
            svg,
            r#"<polygon points="{}" fill="{}" fill-opacity="0.75"/>"#,
            points.trim_end(),
            COLORS[layer.min(COLORS.len() - 1)]
        );
        base = top;
    }
    // Tree PSS is known only once every live process has a reading: draw each known
    // stretch on its own rather than bridging the gaps.
    let mut stretch: Vec<String> = Vec::new();
    for s in r.samples.iter().map(Some).chain(std::iter::once(None)) {
        match s.and_then(|s| s.tree_pss.map(|p| (s.t, p))) {
            Some((t, p)) => stretch.push(format!("{:.1},{:.1}", a.x(t), a.y(p as f64))),
            None => {
                if stretch.len() > 1 {
                    let _ = write!(
                        svg,
                        r##"<polyline points="{}" fill="none" stroke="#000" stroke-width="1.5"/>"##,
                        stretch.join(" ")
                    );
                }
                stretch.clear();
            }
        }
    }
    if let Some(l) = limit {
        let y = a.y(l as f64);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#c00" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" text-anchor="end" class="limit">limit {}</text>"##,
            WIDTH - RIGHT,
            WIDTH - RIGHT,
            y - 4.0,
            iec(l)
        );
    }
    events_svg(&mut svg, r, &a);
    svg.push_str("</svg>");
    let mut legend = String::from(r#"<p class="legend">"#);
    for (i, (pid, comm)) in shown.iter().enumerate() {
        let _ = write!(
            legend,
            r#"<span><i style="background:{}"></i>{} {}</span> "#,
            COLORS[i],
            pid,
            esc(comm)
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
    legend.push_str(r#"<span><i style="background:#000;height:2px"></i>tree PSS</span></p>"#);
    format!("{svg}{legend}")
}

fn events_svg(svg: &mut String, r: &Record, a: &Axes) {
    for e in r.events.iter().filter(|e| e.event == "exit") {
        let x = a.x(e.t);
        let bad = e.outcome.is_some_and(|o| o.signal.is_some());
        let label = e.outcome.map(|o| o.describe()).unwrap_or_default();
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{}" stroke="{}" stroke-width="1"><title>pid {} {}</title></line>"##,
            HEIGHT - BOTTOM,
            if bad { "#c00" } else { "#999" },
            e.pid,
            esc(&label)
        );
    }
}

fn fault_chart(r: &Record) -> String {
    let t_max = r.samples.last().map(|s| s.t).unwrap_or(0.0);
    let y_max = r
        .samples
        .iter()
        .map(|s| s.minor_faults_per_second.max(s.major_faults_per_second))
        .fold(0.0, f64::max)
        * 1.05;
    let a = Axes { t_max, y_max };
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="page faults per second">"#
    );
    axes_svg(&mut svg, &a, |v| format!("{v:.0}/s"));
    for (pick, color) in [(0, "#4e79a7"), (1, "#e15759")] {
        let pts: Vec<String> = r
            .samples
            .iter()
            .map(|s| {
                let v = if pick == 0 {
                    s.minor_faults_per_second
                } else {
                    s.major_faults_per_second
                };
                format!("{:.1},{:.1}", a.x(s.t), a.y(v))
            })
            .collect();
        let _ = write!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.5"/>"#,
            pts.join(" ")
        );
    }
    events_svg(&mut svg, r, &a);
    svg.push_str("</svg>");
    svg.push_str(r##"<p class="legend"><span><i style="background:#4e79a7"></i>minor faults/s</span> <span><i style="background:#e15759"></i>major faults/s (disk reads)</span></p>"##);
    svg
}

pub fn page(r: &Record) -> String {
    let title = esc(&r.command.join(" "));
    let mut body = String::new();
    match &r.summary {
        Some(s) => {
            let _ = write!(
                body,
                "<p class=\"outcome\">{} after {:.1} s · peak RSS {} at {:.1} s{}</p>",
                esc(&s.outcome.describe()),
                s.wall_seconds,
                iec(s.peak_tree_rss.bytes),
                s.peak_tree_rss.at_seconds,
                s.peak_tree_pss.map(|p| format!(" · peak PSS {}", iec(p.bytes))).unwrap_or_default()
            );
        }
        None => body.push_str("<p class=\"outcome\">the recording ends before the job did (memtriage was stopped)</p>"),
    }
    let _ = write!(body, "<h2>Memory</h2>{}", memory_chart(r));
    let _ = write!(body, "<h2>Page faults</h2>{}", fault_chart(r));
    if let Some(s) = &r.summary {
        body.push_str("<h2>Diagnosis</h2>");
        if s.findings.is_empty() {
            body.push_str("<p>No memory problem found.</p>");
        }
        for f in &s.findings {
            let class = match f.severity {
                Severity::Error => "error",
                Severity::Warn => "warn",
                _ => "info",
            };
            let _ = write!(
                body,
                "<div class=\"finding {class}\"><h3>{}</h3><ul>",
                esc(&f.title)
            );
            for e in &f.evidence {
                let _ = write!(
                    body,
                    "<li>{}: {} <small>({})</small></li>",
                    esc(&e.label),
                    esc(&e.value),
                    esc(&e.source)
                );
            }
            let _ = write!(body, "</ul><p><b>Why:</b> {}</p>", esc(&f.why));
            if !f.fix.is_empty() {
                let _ = write!(body, "<p><b>Fix:</b> {}</p>", esc(&f.fix));
            }
            body.push_str("</div>");
        }
    }
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>memtriage: {title}</title>
<style>
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }}
h1 {{ font-size: 18px; font-family: ui-monospace, monospace; word-break: break-all; }}
h2 {{ font-size: 16px; margin-top: 1.6em; }}
svg {{ width: 100%; height: auto; }}
.tick {{ font-size: 11px; fill: #666; }}
.limit {{ font-size: 11px; fill: #c00; }}
.legend span {{ margin-right: 1em; white-space: nowrap; }}
.legend i {{ display: inline-block; width: 12px; height: 10px; margin-right: 4px; }}
.finding {{ border-left: 4px solid #999; padding: 0 1em; margin: 1em 0; }}
.finding.error {{ border-color: #c00; }} .finding.warn {{ border-color: #e90; }}
small {{ color: #777; }}
</style></head>
<body><h1>memtriage run -- {title}</h1>{body}</body></html>
"#
    )
}
