//! Reading a `--record` timeline back (JSON lines, `memtriage.record/v1`).

use serde::Deserialize;

use crate::model::run::{RunReport, Timeline, TimelineEvent, TimelineSample, TIMELINE_SCHEMA};
use crate::parse::ParseError;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line {
    Header {
        schema: String,
        command: Vec<String>,
        interval_ms: u64,
    },
    Sample(TimelineSample),
    Event(TimelineEvent),
    Summary {
        report: Box<RunReport>,
    },
}

/// A last line cut short (a failed write, or a writer killed mid-write) is dropped
/// and the record marked truncated; any other bad line is an error naming its number.
pub fn parse(text: &str) -> Result<Timeline, ParseError> {
    let bad = |detail: String| ParseError::new("run timeline", detail);
    let mut record = Timeline::default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut saw_header = false;
    for (i, raw) in lines.iter().enumerate() {
        let line: Line = match serde_json::from_str(raw) {
            Ok(l) => l,
            Err(_) if i + 1 == lines.len() && i > 0 && !text.ends_with('\n') => {
                record.truncated = true;
                break;
            }
            Err(e) => {
                return Err(bad(format!(
                    "line {}: not a line of a run timeline: {e}",
                    i + 1
                )))
            }
        };
        match line {
            Line::Header {
                schema,
                command,
                interval_ms,
            } => {
                if schema != TIMELINE_SCHEMA {
                    return Err(bad(format!(
                        "line {}: schema {schema:?}, expected {TIMELINE_SCHEMA:?}",
                        i + 1
                    )));
                }
                saw_header = true;
                record.command = command;
                record.interval_ms = interval_ms;
            }
            Line::Sample(s) => record.samples.push(s),
            Line::Event(e) => record.events.push(e),
            Line::Summary { report } => record.summary = Some(*report),
        }
    }
    if !saw_header {
        return Err(bad("no header line: not a recording of `run`".into()));
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::parse;

    const HEADER: &str = r#"{"type":"header","schema":"memtriage.record/v1","command":["python","train.py"],"interval_ms":500,"limit":null,"started_unix_ms":1}"#;
    const SAMPLE: &str = r#"{"type":"sample","t":0.5,"processes":[{"pid":7,"ppid":1,"comm":"python","rss":1048576,"minflt":10,"majflt":0}],"tree_rss":1048576,"tree_pss":null,"shm_used":0,"swap_used":0,"cgroup_usage":null,"psi_some_avg10":0.0,"minor_faults_per_second":3.0,"major_faults_per_second":0.0}"#;

    #[test]
    fn reads_header_samples_and_events() {
        let text = format!("{HEADER}\n{SAMPLE}\n{{\"type\":\"event\",\"t\":0.9,\"event\":\"exit\",\"pid\":7,\"outcome\":{{\"exit_code\":0,\"signal\":null,\"core_dumped\":false}}}}\n");
        let r = parse(&text).unwrap();
        assert_eq!(r.command, vec!["python", "train.py"]);
        assert_eq!(r.samples.len(), 1);
        assert_eq!(r.samples[0].processes[0].comm, "python");
        assert_eq!(r.events[0].outcome.unwrap().exit_code, Some(0));
        assert!(r.summary.is_none(), "a run cut short has no summary");
    }

    #[test]
    fn a_truncated_last_line_is_dropped() {
        let text = format!("{HEADER}\n{SAMPLE}\n{}", &SAMPLE[..40]);
        let r = parse(&text).unwrap();
        assert_eq!(r.samples.len(), 1);
        assert!(r.truncated);
        let whole = format!("{HEADER}\n{SAMPLE}\n");
        assert!(
            !parse(&whole).unwrap().truncated,
            "ends between lines: stopped, not cut"
        );
    }

    #[test]
    fn other_files_are_errors_that_say_why() {
        assert!(parse("").unwrap_err().detail.contains("no header"));
        assert!(parse("hello\n").unwrap_err().detail.contains("line 1"));
        let bad_middle = format!("{HEADER}\nnot json\n{SAMPLE}\n");
        assert!(parse(&bad_middle).unwrap_err().detail.contains("line 2"));
    }
}
