//! The story of a run on its time axis: each recorded event (a process's death, the
//! early OOM warning, a failure line seen in the output, the OOM kill) as a marker
//! with a label, and the placement of those labels in rows so none covers another.

use std::collections::HashMap;

use memtriage_core::model::ids;
use memtriage_core::model::run::{Outcome, Timeline, TimelineEvent};

/// How a marker is coloured: a quiet end, something to watch, or a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Quiet,
    Warn,
    Bad,
}

impl Tone {
    pub fn color(self) -> &'static str {
        match self {
            Tone::Quiet => "#888",
            Tone::Warn => "#d97a00",
            Tone::Bad => "#c00",
        }
    }
}

/// One thing that happened at `t` seconds into the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub t: f64,
    /// The recording's event kind (`exit`, `warning`, …) or `oom-kill`.
    pub kind: String,
    pub label: String,
    pub tone: Tone,
}

/// Labels longer than this are cut on the chart; the whole text is in its tooltip and
/// in the list of events under the charts.
const LABEL_CHARS: usize = 80;

/// The text of a label as drawn.
pub fn shown_label(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        label.to_string()
    } else {
        let cut: String = label.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// What one event says before merging with its neighbours.
struct Item {
    t: f64,
    kind: String,
    label: String,
    tone: Tone,
    /// Events that merge when close: the same kind and the same ending (for exits).
    group: String,
    /// For exits, the ending alone ("exited with code 0"), to say "3 processes …".
    ending: Option<String>,
}

fn exit_tone(outcome: Option<&Outcome>) -> Tone {
    match outcome {
        Some(o) if o.signal.is_some() => Tone::Bad,
        Some(o) if o.exit_code != Some(0) => Tone::Warn,
        Some(_) => Tone::Quiet,
        None => Tone::Warn,
    }
}

fn kind_tone(kind: &str) -> Tone {
    match kind {
        "warning" => Tone::Warn,
        "failure-line" | "oom-kill" => Tone::Bad,
        _ => Tone::Quiet,
    }
}

/// The first "pid N" a finding's title names: the process the kernel killed.
fn pid_named_in(text: &str) -> Option<i32> {
    let rest = &text[text.find("pid ")? + 4..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn item_of(e: &TimelineEvent, labels: &HashMap<i32, String>) -> Item {
    let who = labels
        .get(&e.pid)
        .cloned()
        .unwrap_or_else(|| format!("pid {}", e.pid));
    if e.event == "exit" {
        let ending = e
            .outcome
            .map(|o| o.describe())
            .unwrap_or_else(|| "ended in an unknown way".into());
        return Item {
            t: e.t,
            kind: e.event.clone(),
            label: e.label.clone().unwrap_or_else(|| format!("{who} {ending}")),
            tone: exit_tone(e.outcome.as_ref()),
            group: format!("exit {ending}"),
            ending: e.label.is_none().then_some(ending),
        };
    }
    let label = e
        .label
        .clone()
        .unwrap_or_else(|| format!("{} {who}", e.event));
    Item {
        t: e.t,
        kind: e.event.clone(),
        group: format!("{} {label}", e.event),
        label,
        tone: kind_tone(&e.event),
        ending: None,
    }
}

/// The run's markers in time order. Events closer than `merge_seconds` with the same
/// kind and ending merge into one ("8 processes exited with code 0"), so a pool of
/// workers ending together is one marker, not eight stacked labels. An OOM kill the
/// final report found but the recording has no event for is drawn at the killed
/// process's death (or the end of the run) with the finding's title.
pub fn markers(r: &Timeline, end: f64, merge_seconds: f64) -> Vec<Marker> {
    // Each process as last sampled: its name then is the program it ran when it ended.
    let mut labels: HashMap<i32, String> = HashMap::new();
    for s in &r.samples {
        for p in &s.processes {
            labels.insert(p.pid, p.label());
        }
    }
    let mut items: Vec<Item> = r
        .events
        .iter()
        // Every run starts at 0: a marker there tells nothing.
        .filter(|e| e.event != "start")
        .map(|e| item_of(e, &labels))
        .collect();
    let recorded_oom = r.events.iter().any(|e| e.event == "oom-kill");
    let oom_finding = r
        .summary
        .iter()
        .flat_map(|s| &s.findings)
        .find(|f| f.id == ids::RUN_OOM_KILLED || f.id == ids::LOG_OOM_KILL);
    if let (Some(f), false) = (oom_finding, recorded_oom) {
        let victim = pid_named_in(&f.title);
        let killed_by_sigkill =
            |e: &&TimelineEvent| e.event == "exit" && e.outcome.and_then(|o| o.signal) == Some(9);
        let death = r
            .events
            .iter()
            .filter(killed_by_sigkill)
            .find(|e| Some(e.pid) == victim)
            .or_else(|| r.events.iter().find(killed_by_sigkill));
        let t = death.map_or(end, |e| e.t);
        // The kill explains that death: one marker saying why, not two at one place.
        if let Some(d) = death {
            items.retain(|i| !(i.kind == "exit" && i.t == d.t && i.tone == Tone::Bad));
        }
        items.push(Item {
            t,
            kind: "oom-kill".into(),
            label: f.title.clone(),
            tone: Tone::Bad,
            group: format!("oom-kill {}", f.title),
            ending: None,
        });
    }
    items.sort_by(|a, b| a.t.total_cmp(&b.t));
    let mut out: Vec<(Marker, usize, Option<String>, String)> = Vec::new();
    for i in items {
        let t = i.t.clamp(0.0, end.max(0.0));
        // Any marker of the same group within the window, also behind one of another
        // kind (a worker's crash among its siblings' clean ends).
        let close = out
            .iter_mut()
            .rev()
            .take_while(|(m, ..)| t - m.t <= merge_seconds)
            .find(|(_, _, _, group)| *group == i.group);
        if let Some((m, n, ending, _)) = close {
            *n += 1;
            if let Some(ending) = ending {
                m.label = format!("{n} processes {ending}");
            }
            continue;
        }
        out.push((
            Marker {
                t,
                kind: i.kind,
                label: i.label,
                tone: i.tone,
            },
            1,
            i.ending,
            i.group,
        ));
    }
    out.into_iter().map(|(m, ..)| m).collect()
}

/// Where one marker's label goes: its row (0 is the top) and its left edge, or `None`
/// when every row is taken there (the label is then only in the tooltip and the list).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelSpot {
    pub row: usize,
    pub left: f64,
    pub width: f64,
}

/// Width of a label in user units at the charts' 11px font: generous, so an estimate
/// that is short never lets a label run past the drawing.
pub fn label_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.6
}

/// Gap between two labels in one row, and between a marker's line and its label.
const GAP: f64 = 8.0;
const PAD: f64 = 4.0;

/// Places each label beside its marker's line (`xs`), right of it where it fits within
/// `[min_x, max_x]`, else left of it, in the first of `max_rows` rows where it covers no
/// other label.
pub fn place_labels(
    labels: &[String],
    xs: &[f64],
    min_x: f64,
    max_x: f64,
    max_rows: usize,
) -> Vec<Option<LabelSpot>> {
    let mut wanted: Vec<(usize, f64, f64)> = labels
        .iter()
        .zip(xs)
        .enumerate()
        .map(|(i, (label, x))| {
            let width = label_width(label).min(max_x - min_x);
            let left = if x + PAD + width <= max_x {
                x + PAD
            } else {
                x - PAD - width
            };
            (i, left.clamp(min_x, (max_x - width).max(min_x)), width)
        })
        .collect();
    wanted.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut row_ends: Vec<f64> = Vec::new();
    let mut spots = vec![None; labels.len()];
    for (i, left, width) in wanted {
        let row = match row_ends.iter().position(|end| end + GAP <= left) {
            Some(row) => row,
            None if row_ends.len() < max_rows => {
                row_ends.push(f64::NEG_INFINITY);
                row_ends.len() - 1
            }
            None => continue,
        };
        row_ends[row] = left + width;
        spots[i] = Some(LabelSpot { row, left, width });
    }
    spots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(
        t: f64,
        kind: &str,
        pid: i32,
        signal: Option<i32>,
        label: Option<&str>,
    ) -> TimelineEvent {
        TimelineEvent {
            t,
            event: kind.into(),
            pid,
            outcome: (kind == "exit").then_some(Outcome {
                exit_code: if signal.is_some() { None } else { Some(0) },
                signal,
                core_dumped: false,
            }),
            label: label.map(str::to_string),
        }
    }

    #[test]
    fn every_event_kind_gets_its_label_or_says_what_it_is() {
        let r = Timeline {
            events: vec![
                event(0.0, "start", 10, None, None),
                event(
                    1.0,
                    "warning",
                    10,
                    None,
                    Some("the 64 MiB limit is reached in ~1 min"),
                ),
                event(2.0, "failure-line", 10, None, Some("CUDA out of memory")),
                event(2.5, "something-new", 11, None, None),
                event(3.0, "exit", 10, Some(9), None),
            ],
            ..Timeline::default()
        };
        let m = markers(&r, 3.0, 0.01);
        let labels: Vec<&str> = m.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "the 64 MiB limit is reached in ~1 min",
                "CUDA out of memory",
                "something-new pid 11",
                "pid 10 killed by signal 9 (SIGKILL)"
            ]
        );
        let tones: Vec<Tone> = m.iter().map(|m| m.tone).collect();
        assert_eq!(tones, [Tone::Warn, Tone::Bad, Tone::Quiet, Tone::Bad]);
    }

    #[test]
    fn a_ranks_death_is_labelled_with_its_rank() {
        let sample: memtriage_core::model::run::TimelineSample = serde_json::from_str(
            r#"{"t":1.0,"processes":[
                {"pid":12,"ppid":10,"comm":"python3","rank":{"rank":1,"local_rank":1,"world_size":2},"rss":1,"minflt":0,"majflt":0},
                {"pid":13,"ppid":12,"comm":"pt_data_worker","rank":{"rank":1,"worker":true},"rss":1,"minflt":0,"majflt":0},
                {"pid":10,"ppid":1,"comm":"python3","rss":1,"minflt":0,"majflt":0}],
              "tree_rss":3,"tree_pss":null,"shm_used":null,"swap_used":null,"cgroup_usage":null}"#,
        )
        .unwrap();
        let r = Timeline {
            samples: vec![sample],
            events: vec![
                event(2.0, "exit", 13, Some(9), None),
                event(3.0, "exit", 12, Some(9), None),
                event(4.0, "exit", 10, None, None),
            ],
            ..Timeline::default()
        };
        let labels: Vec<String> = markers(&r, 4.0, 0.01)
            .into_iter()
            .map(|m| m.label)
            .collect();
        assert_eq!(
            labels,
            [
                "pid 13 (pt_data_worker, rank 1 worker) killed by signal 9 (SIGKILL)",
                "pid 12 (python3, rank 1) killed by signal 9 (SIGKILL)",
                "pid 10 (python3) exited with code 0",
            ]
        );
    }

    #[test]
    fn workers_ending_together_are_one_marker() {
        let mut events: Vec<TimelineEvent> = (0..8)
            .map(|i| event(5.0 + i as f64 * 0.001, "exit", 20 + i, None, None))
            .collect();
        events.push(event(5.004, "exit", 99, Some(9), None));
        let r = Timeline {
            events,
            ..Timeline::default()
        };
        let m = markers(&r, 6.0, 0.05);
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(m[0].label, "8 processes exited with code 0");
        assert_eq!(m[1].label, "pid 99 killed by signal 9 (SIGKILL)");
    }

    #[test]
    fn the_oom_kill_found_in_the_report_replaces_the_victims_bare_death() {
        let r = crate::render::html::fixture::oom_recording();
        let m = markers(&r, 2.3, 0.01);
        let kinds: Vec<&str> = m.iter().map(|m| m.kind.as_str()).collect();
        assert_eq!(kinds, ["exit", "warning", "oom-kill"], "{m:?}");
        assert_eq!(m[2].t, 2.2, "at the victim's death");
        assert!(m[2].label.contains("killed pid 31"), "{}", m[2].label);
        assert_eq!(m[0].label, "pid 40 exited with code 0");

        // Without the victim's death in the recording, at the end of the run.
        let mut cut = r.clone();
        cut.events.retain(|e| e.pid != 31);
        let m = markers(&cut, 2.3, 0.01);
        assert_eq!(
            m.last().map(|m| (m.kind.as_str(), m.t)),
            Some(("oom-kill", 2.3))
        );

        // A recording with its own oom-kill event is not marked twice.
        let mut own = r.clone();
        own.events.push(TimelineEvent {
            t: 2.19,
            event: "oom-kill".into(),
            pid: 31,
            outcome: None,
            label: Some("the kernel killed pid 31".into()),
        });
        let m = markers(&own, 2.3, 0.001);
        assert_eq!(
            m.iter().filter(|m| m.kind == "oom-kill").count(),
            1,
            "{m:?}"
        );
    }

    #[test]
    fn labels_that_would_overlap_go_to_the_next_row_and_stay_inside() {
        let labels: Vec<String> = ["first event", "second event", "third", "far away"]
            .map(String::from)
            .to_vec();
        let spots = place_labels(&labels, &[100.0, 105.0, 110.0, 900.0], 80.0, 940.0, 2);
        let s: Vec<Option<usize>> = spots.iter().map(|s| s.map(|s| s.row)).collect();
        assert_eq!(s, [Some(0), Some(1), None, Some(0)]);
        let far = spots[3].unwrap();
        // Near the right edge: left of its line, so it ends before the drawing does.
        assert!(far.left + far.width <= 900.0 - PAD + 0.01, "{far:?}");
        let long = vec!["x".repeat(500)];
        let s = place_labels(&long, &[500.0], 80.0, 940.0, 1)[0].unwrap();
        assert!(s.left >= 80.0 && s.left + s.width <= 940.0, "{s:?}");
        assert_eq!(shown_label(&"y".repeat(200)).chars().count(), LABEL_CHARS);
    }
}
