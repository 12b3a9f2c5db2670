//! `diagnose::logs` on log excerpts in the forms people paste them: plain dmesg,
//! `dmesg -T`, journalctl, syslog, `kubectl describe`, Slurm output, shells and Python
//! tracebacks; healthy training logs that must yield nothing; and the streaming
//! contract (any chunking gives the same answer, bounded memory, odd bytes).
//!
//! One file per family of rules, as in `diagnose::logs::rules`, and `streaming` for the
//! streaming contract; this module holds the helpers they share and the tests across
//! every rule: healthy logs, and one finding per class, most severe first.

use crate::diagnose::logs::{FailureClass, LogMatch, LogScanner};
use crate::model::finding::Finding;

use crate::tests::support::fixtures;

mod allocators_and_debuggers;
mod builds_vms_and_servers;
mod bus;
mod claims_and_services;
mod clouds_streams_and_hpc;
mod crash;
mod creative_tools_and_korean_threads;
mod cuda;
mod dataloader;
mod desktop_science_and_nodes;
mod firmware_and_desktops;
mod forms;
mod frameworks_databases_and_notebooks;
mod fuzzers_brokers_and_games;
mod games_databases_and_edge;
mod gpu;
mod imaging_and_trading;
mod kernel;
mod kills_and_rises_in_words;
mod leaks_told;
mod limits;
mod locales_and_tools;
mod nodes_storage_and_vendors;
mod observability_ci_and_miners;
mod oom;
mod phones_vms_and_engines;
mod pipelines_and_trackers;
mod queues_quantum_and_jvm;
mod real_world;
mod retrieval_serving_and_media;
mod runtimes;
mod runtimes_and_crash_tools;
mod runtimes_and_services;
mod runtimes_and_storage;
mod schedulers;
mod servers_and_boards;
mod services_and_tools;
mod signals;
mod sixth_batch;
mod speech_vms_and_arrays;
mod statistics_audio_and_security;
mod stats_eda_and_observability;
mod streaming;
mod symptoms;
mod tools_and_solvers;

fn fixture(name: &str) -> Vec<u8> {
    let p = fixtures().join("logs").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn all_fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = fixtures().join("logs");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn scan(bytes: &[u8]) -> LogScanner {
    let mut s = LogScanner::with_source("test.log");
    s.feed(bytes);
    s.finish();
    s
}

fn scan_fixture(name: &str) -> LogScanner {
    scan(&fixture(name))
}

fn only_finding(s: &LogScanner, class: FailureClass) -> Finding {
    let f = s.findings();
    let id = format!("log.{}", class.as_str().replace('_', "-"));
    assert_eq!(
        f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
        vec![id.as_str()],
        "findings: {f:#?}"
    );
    f.into_iter().next().unwrap()
}

fn evidence<'a>(f: &'a Finding, label: &str) -> &'a str {
    f.evidence
        .iter()
        .find(|e| e.label == label)
        .map(|e| e.value.as_str())
        .unwrap_or_else(|| panic!("no evidence {label:?} in {:#?}", f.evidence))
}

fn first_match<'a>(s: &'a LogScanner, rule: &str) -> &'a LogMatch {
    s.matches()
        .iter()
        .find(|m| m.rule == rule)
        .unwrap_or_else(|| panic!("no match of {rule}: {:#?}", s.matches()))
}

fn quoted(f: &Finding, line_no: u64) -> &str {
    evidence(f, &format!("line {line_no}"))
}

// ---- healthy logs ---------------------------------------------------------------------------

#[test]
fn healthy_logs_yield_no_finding() {
    for name in [
        "healthy-tqdm.log",
        "healthy-ddp-torchrun.log",
        "healthy-dmesg-boot.log",
        "healthy-kubectl-describe.txt",
    ] {
        let s = scan_fixture(name);
        assert!(s.matches().is_empty(), "{name}: {:#?}", s.matches());
        assert!(s.findings().is_empty(), "{name}");
        assert!(s.lines() > 5, "{name}");
    }
}

#[test]
fn innocent_mentions_are_not_failures() {
    for line in [
        "loss=0.3 killed_frac=0.1",
        "Killed 3 stale checkpoints older than 7 days",
        "step 10 | mem 3.2 GiB | oom_retries 0 | Out of memory errors: none",
        "Segmentation fault handler installed",
        "Aborted!",
        "the exit code 1370 is not ours",
        "warning: bus error rate 0",
        "NCCL INFO Channel 00/08 :    0   1   2   3",
        "ProcessGroupNCCL initialization options: TIMEOUT(ms): 600000",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "Exit Code:    0",
        "pin_memory: True",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        assert!(s.matches().is_empty(), "{line}: {:#?}", s.matches());
    }
}

// ---- mixed and ordering ---------------------------------------------------------------------------

#[test]
fn one_finding_per_class_most_severe_first() {
    let mut log = Vec::new();
    log.extend_from_slice(&fixture("memory-pressure-dmesg.log"));
    log.extend_from_slice(&fixture("healthy-tqdm.log"));
    log.extend_from_slice(&fixture("oom-dmesg.log"));
    log.extend_from_slice(&fixture("oom-shell-killed.log"));
    let s = scan(&log);
    let f = s.findings();
    let ids: Vec<&str> = f.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["log.oom-kill", "log.memory-pressure"]);
    // The kernel's own kill line is the best evidence, whatever came first.
    assert!(f[0]
        .title
        .starts_with("The kernel's OOM killer killed python (pid 48213)"));
}

/// The ids of the findings `bytes` yields, in the order given.
fn classes(bytes: &[u8]) -> Vec<String> {
    scan(bytes).findings().into_iter().map(|f| f.id).collect()
}

/// Each whole text (several lines: a report with its context) yields its finding id
/// first.
fn texts_named_first(cases: &[(&str, &str)]) {
    for (text, id) in cases {
        assert_eq!(
            classes(text.as_bytes()).first().map(String::as_str),
            Some(*id),
            "{text}"
        );
    }
}

/// Each line, alone, yields its finding id first.
fn each_named_first(cases: &[(&str, &str)]) {
    // Every line that fails is told, not only the first.
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(line, id)| {
            let found = classes(format!("{line}\n").as_bytes());
            (found.first().map(String::as_str) != Some(*id))
                .then(|| format!("WRONG\t{id}\t{found:?}\t{line}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each line, alone, yields no finding.
fn lines_raise_nothing(lines: &[&str]) {
    for line in lines {
        assert_eq!(
            classes(format!("{line}\n").as_bytes()),
            Vec::<String>::new(),
            "{line}"
        );
    }
}
