//! `memtriage report --html`: a recorded run as one self-contained HTML page with
//! SVG charts (no scripts, no fonts or files from elsewhere). `charts` draws memory
//! and page faults on one time axis, `markers` puts the run's events on it, `ticks`
//! rounds the axes' labels, `lines` shows where a Python job's memory went, line by
//! line.

mod charts;
#[cfg(test)]
pub(crate) mod fixture;
mod lines;
mod markers;
mod ticks;

use std::fmt::Write;

use memtriage_core::model::finding::Severity;
use memtriage_core::model::run::Timeline;

use memtriage_core::model::units::iec;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Every marker in words, under the charts: the labels a crowded chart had to cut or
/// leave to a tooltip are here whole.
fn events_list(markers: &[markers::Marker]) -> String {
    if markers.is_empty() {
        return String::new();
    }
    let mut list = String::from("<h2>Events</h2><table class=\"events\">");
    for m in markers {
        let _ = write!(
            list,
            "<tr><td class=\"t\">{:.1} s</td><td><i style=\"background:{}\"></i>{}</td></tr>",
            m.t,
            m.tone.color(),
            esc(&m.label)
        );
    }
    list.push_str("</table>");
    list
}

pub fn page(r: &Timeline) -> String {
    page_with(r, None)
}

/// A window of the machine's history (`report --db`), said in `heading` where a
/// run's page says how the job ended.
pub fn history_page(r: &Timeline, heading: &str) -> String {
    page_with(r, Some(heading))
}

fn page_with(r: &Timeline, heading: Option<&str>) -> String {
    // A run is its command line; a window of history is named in words.
    let (title, h1) = match heading {
        None => {
            let command = esc(&memtriage_core::model::shell::join(&r.command));
            (command.clone(), format!("memtriage run -- {command}"))
        }
        Some(_) => {
            let words = esc(&r.command.join(" "));
            (words.clone(), format!("memtriage record: {words}"))
        }
    };
    let mut body = String::new();
    match &r.summary {
        _ if heading.is_some() => {
            let _ = write!(
                body,
                "<p class=\"outcome\">{}</p>",
                esc(heading.unwrap_or_default())
            );
        }
        Some(s) => {
            let _ = write!(
                body,
                "<p class=\"outcome\">{} after {:.1} s · {}{}</p>",
                esc(&s.outcome.describe()),
                s.wall_seconds,
                s.peak_tree_rss
                    .map_or("peak RSS not measured".to_string(), |p| format!(
                        "peak RSS {} at {:.1} s",
                        iec(p.bytes),
                        p.at_seconds
                    )),
                s.peak_tree_pss
                    .map(|p| format!(" · peak PSS {}", iec(p.bytes)))
                    .unwrap_or_default()
            );
        }
        None => body.push_str(&format!(
            "<p class=\"outcome\">{}</p>",
            esc(r.cut_short_reason().unwrap_or_default())
        )),
    }
    let time = charts::TimeAxis::of(r);
    let marks = markers::markers(r, time.end(), time.merge_seconds());
    let _ = write!(body, "<h2>Memory</h2>{}", charts::memory(r, &time, &marks));
    if let Some(gpu) = charts::gpu(r, &time, &marks) {
        let _ = write!(body, "<h2>GPU memory</h2>{gpu}");
    }
    let _ = write!(
        body,
        "<h2>Page faults</h2>{}",
        charts::faults(r, &time, &marks)
    );
    body.push_str(&events_list(&marks));
    if let Some(s) = &r.summary {
        body.push_str(&lines::section(s, &time));
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
.mlabel {{ font-size: 11px; paint-order: stroke; stroke: #fff; stroke-width: 3px; }}
table.events {{ border-collapse: collapse; }}
table.events td {{ padding: 1px 0.8em 1px 0; vertical-align: top; }}
table.events td.t {{ text-align: right; color: #666; white-space: nowrap; }}
table.events i {{ display: inline-block; width: 3px; height: 0.9em; margin-right: 6px; }}
.legend span {{ margin-right: 1em; white-space: nowrap; }}
.legend i {{ display: inline-block; width: 12px; height: 10px; margin-right: 4px; }}
.finding {{ border-left: 4px solid #999; padding: 0 1em; margin: 1em 0; }}
.finding.error {{ border-color: #c00; }} .finding.warn {{ border-color: #e90; }}
small {{ color: #777; }}
table.lines {{ border-collapse: collapse; width: 100%; font-size: 13px; table-layout: fixed; }}
table.lines th {{ text-align: left; font-weight: 600; color: #555; border-bottom: 1px solid #ccc; }}
table.lines th, table.lines td {{ padding: 3px 0.5em 3px 0; vertical-align: top; overflow-wrap: anywhere; }}
table.lines th:first-child {{ width: 32%; }} table.lines th:last-child {{ width: 16%; }}
table.lines tr + tr td {{ border-top: 1px solid #eee; }}
table.lines td.t {{ white-space: nowrap; }}
table.lines code.src {{ color: #333; background: #f4f4f4; padding: 0 3px; }}
table.lines td.kind.leak {{ color: #c00; font-weight: 600; }}
svg.held {{ width: 100%; height: 36px; }}
</style></head>
<body><h1>{h1}</h1>{body}</body></html>
"#
    )
}
