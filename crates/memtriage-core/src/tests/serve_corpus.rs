//! The exporter's parsers on real text users' machines printed, kept with their
//! sources in `tests/fixtures/serve/` (SOURCES.md): cgroup paths of every container
//! runtime and scheduler layout, OOM kill reports of every kernel era, and userspace
//! killers' log lines.

use std::collections::HashMap;

use crate::parse::kmsg::oom_kills;
use crate::parse::userspace_oom::{parse_line, Killer};
use crate::parse::workload::from_cgroup_path;

use crate::tests::support::fixtures;

fn fixture(name: &str) -> std::path::PathBuf {
    fixtures().join(name)
}

fn dash(v: &str) -> Option<String> {
    (v != "-").then(|| v.to_string())
}

#[test]
fn cgroup_paths_name_their_pod_container_slurm_job_and_unit() {
    let text = std::fs::read_to_string(fixture("serve/cgroup-paths.tsv")).unwrap();
    let mut wrong = Vec::new();
    let mut rows = 0;
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        rows += 1;
        let w = from_cgroup_path(cols[0]);
        let got = [
            w.pod_uid,
            w.container_id,
            w.slurm_job,
            w.slurm_step,
            w.systemd_unit,
        ];
        let want: Vec<Option<String>> = cols[1..6].iter().map(|c| dash(c)).collect();
        if got.as_slice() != want.as_slice() {
            wrong.push(format!("{}\n  got  {got:?}\n  want {want:?}", cols[0]));
        }
    }
    assert!(rows >= 80, "{rows} rows");
    assert!(
        wrong.is_empty(),
        "{} of {rows} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// `### source | era | expect: k=v k=v …` then the block's lines.
fn blocks(name: &str) -> Vec<(String, HashMap<String, String>, Vec<String>)> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut out: Vec<(String, HashMap<String, String>, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("### ") {
            let parts: Vec<&str> = head.split(" | ").collect();
            let expect = parts
                .last()
                .and_then(|e| e.strip_prefix("expect: "))
                .unwrap_or("");
            // Values may hold spaces (`comm=Web Content`): a key starts each field.
            let mut fields = HashMap::new();
            let mut key: Option<String> = None;
            for word in expect.split(' ') {
                match word.split_once('=') {
                    Some((k, v))
                        if !k.is_empty()
                            && k.chars().all(|c| c.is_ascii_lowercase() || c == '_') =>
                    {
                        fields.insert(k.to_string(), v.to_string());
                        key = Some(k.to_string());
                    }
                    _ => {
                        if let Some(k) = &key {
                            let v = fields.get_mut(k).unwrap();
                            v.push(' ');
                            v.push_str(word);
                        }
                    }
                }
            }
            out.push((head.to_string(), fields, Vec::new()));
        } else if let Some(block) = out.last_mut() {
            block.2.push(line.to_string());
        }
    }
    out
}

#[test]
fn oom_kill_reports_of_every_kernel_era_name_the_victim_and_its_memory() {
    let mut wrong = Vec::new();
    let all = blocks("serve/oom-kill-lines.txt");
    assert!(all.len() >= 20);
    for (head, expect, lines) in &all {
        let kills = oom_kills(lines.iter().map(String::as_str));
        let Some(pid) = expect.get("pid").filter(|p| *p != "?") else {
            continue;
        };
        let Some(kill) = kills.iter().find(|k| k.pid.to_string() == *pid) else {
            wrong.push(format!("{head}: no kill of pid {pid} in {kills:?}"));
            continue;
        };
        if let Some(comm) = expect.get("comm").filter(|c| *c != "?") {
            if &kill.comm != comm {
                wrong.push(format!("{head}: comm {:?}", kill.comm));
            }
        }
        if let Some(kb) = expect.get("anon_rss_kb").filter(|c| *c != "?") {
            let want: u64 = kb.parse::<u64>().unwrap() * 1024;
            if kill.anon_rss != Some(want) {
                wrong.push(format!("{head}: anon_rss {:?}", kill.anon_rss));
            }
        }
        if let Some(memcg) = expect.get("memcg").filter(|c| *c != "?") {
            if kill.memcg.as_deref() != Some(memcg.as_str()) {
                wrong.push(format!("{head}: memcg {:?}", kill.memcg));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn userspace_killers_logs_count_each_kill_once_and_reports_never() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (head, expect, lines) in blocks("serve/userspace-killers.txt") {
        let killer = head.split(" | ").nth(1).unwrap_or("");
        let claimed = if killer.starts_with("systemd-oomd") {
            Killer::SystemdOomd
        } else if killer.starts_with("earlyoom") {
            Killer::Earlyoom
        } else {
            // Reports of a kernel kill (Slurm, Flux, systemd) must not read as kills.
            let kills: Vec<_> = lines.iter().filter_map(|l| parse_line(l)).collect();
            if matches!(
                expect.get("action").map(String::as_str),
                Some("report" | "none")
            ) && !kills.is_empty()
            {
                wrong.push(format!("{head}: a report read as {kills:?}"));
            }
            continue;
        };
        let mut kills: Vec<_> = lines.iter().filter_map(|l| parse_line(l)).collect();
        // earlyoom signals SIGTERM, then SIGKILL to the same process: one kill.
        kills.dedup_by_key(|k| {
            k.pid
                .or(Some(-1))
                .zip(k.cgroup.clone().or(Some(String::new())))
        });
        let action = expect.get("action").map(String::as_str).unwrap_or("?");
        checked += 1;
        match action {
            "none" | "report" => {
                if !kills.is_empty() {
                    wrong.push(format!("{head}: no kill, read {kills:?}"));
                }
            }
            _ => {
                if kills.len() != 1 || kills[0].killer != claimed {
                    wrong.push(format!("{head}: one kill, read {kills:?}"));
                    continue;
                }
                let k = &kills[0];
                if let Some(pid) = expect.get("pid").filter(|p| *p != "?") {
                    if claimed == Killer::Earlyoom
                        && k.pid.map(|p| p.to_string()).as_deref() != Some(pid)
                    {
                        wrong.push(format!("{head}: pid {:?}", k.pid));
                    }
                }
                if let Some(comm) = expect.get("comm").filter(|c| *c != "?") {
                    if k.comm.as_deref() != Some(comm.as_str()) {
                        wrong.push(format!("{head}: comm {:?}", k.comm));
                    }
                }
                if let Some(mib) = expect.get("vmrss_mib") {
                    let want = mib.parse::<u64>().unwrap() << 20;
                    if k.rss != Some(want) {
                        wrong.push(format!("{head}: rss {:?}", k.rss));
                    }
                }
                if let Some(cg) = expect.get("cgroup") {
                    // A reporter shortened one path with `/.../`.
                    let shortened = k.cgroup.as_deref().is_some_and(|c| c.contains("/.../"));
                    if claimed == Killer::SystemdOomd
                        && !shortened
                        && k.cgroup.as_deref() != Some(cg.as_str())
                    {
                        wrong.push(format!("{head}: cgroup {:?}", k.cgroup));
                    }
                }
            }
        }
    }
    assert!(checked >= 14, "{checked} blocks checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
