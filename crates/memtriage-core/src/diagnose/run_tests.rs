use super::*;
use crate::model::killers::{KillerKind, OomKiller, Trigger, VictimRule};
use crate::model::run::{EnclosingCgroup, LowestAvailable, Outcome};

/// torchrun (pid 10) whose rank 1 (pid 12) the kernel killed at the job's limit;
/// rank 0 (pid 11) was ended by SIGTERM when its peer died.
fn torchrun_report() -> RunReport {
    let process = |pid: i32, rank: Option<u32>, rss: u64, signal: Option<i32>| {
        serde_json::json!({
            "pid": pid, "ppid": 10, "comm": "python3", "exe": null,
            "rank": rank.map(|r| serde_json::json!({"rank": r, "local_rank": r, "world_size": 2})),
            "first_seen_seconds": 0.1, "last_seen_seconds": 2.0,
            "peak_rss": {"bytes": rss, "at_seconds": 1.9},
            "peak_pss": null, "peak_uss": null, "peak_uss_estimate": null,
            "private_dirty_at_peak_uss": null, "shared_at_peak_uss": null,
            "anonymous": null, "anon_huge_pages": null,
            "minor_faults": 0, "major_faults": 0,
            "outcome": signal.map(|s| serde_json::json!({"exit_code": null, "signal": s, "core_dumped": false})),
        })
    };
    serde_json::from_value(serde_json::json!({
        "schema": "memtriage.run/v1",
        "command": ["torchrun", "train.py"],
        "pid": 10,
        "wall_seconds": 2.1,
        "outcome": {"exit_code": 1, "signal": null, "core_dumped": false},
        "peak_tree_rss": {"bytes": 600u64 << 20, "at_seconds": 1.9},
        "faults": {"minor": 0, "major": 0, "peak_minor_per_second": 0.0,
                   "peak_major_per_second": 0.0, "peak_major_at_seconds": 0.0},
        "cgroup_oom_kills": 1,
        "processes": [
            process(11, Some(0), 200 << 20, Some(libc::SIGTERM)),
            process(12, Some(1), 400 << 20, Some(libc::SIGKILL)),
        ],
        "limit": null,
        "sampling": {"interval_ms": 100, "ticks": 20, "pss_readings": 0,
                     "pss_read_seconds": 0.0, "pss_read_max_ms": 0.0,
                     "peak_pss_max_age_seconds": 0.0},
        "findings": [],
        "notes": [],
    }))
    .unwrap()
}

fn kill_of(pid: i32) -> OomKill {
    OomKill {
        pid,
        comm: "python3".into(),
        total_vm: None,
        anon_rss: Some(400 << 20),
        file_rss: None,
        shmem_rss: None,
        uid: None,
        oom_score_adj: None,
        constraint: crate::model::system::OomConstraint::Cgroup,
        memcg: None,
        oom_memcg: Some("/job".into()),
        timestamp: None,
        wall_time: None,
    }
}

/// A job (pid 10) ended by `signal` with no kernel OOM record, run with `killers`,
/// MemAvailable at its lowest at `available`.
fn signalled(signal: i32, killers: Vec<OomKiller>, available: u64) -> RunReport {
    let mut r = torchrun_report();
    r.outcome.exit_code = None;
    r.outcome.signal = Some(signal);
    r.processes.clear();
    r.cgroup_oom_kills = None;
    r.killers = killers;
    r.lowest_available = Some(LowestAvailable {
        bytes: available,
        at_seconds: 1.5,
        node_available: None,
    });
    r.enclosing_cgroup = Some(EnclosingCgroup {
        dir: "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"
            .into(),
        limit: None,
        other_processes: Some(0),
    });
    r
}

fn with_logged(report: &RunReport, logged: &[LoggedKill]) -> Vec<Finding> {
    diagnose(Inputs {
        logged_kills: logged,
        report,
        kernel_oom_kills: &[],
        text_findings: Vec::new(),
        python_frames: false,
        crash_line: None,
        kernel_crash: None,
    })
}

#[test]
fn a_sigterm_at_earlyooms_floor_is_its_kill_and_far_above_it_a_request_to_stop() {
    const GIB: u64 = 1 << 30;
    let earlyoom = crate::diagnose::killers::earlyoom_for_tests(17 * GIB);
    let near = signalled(libc::SIGTERM, vec![earlyoom.clone()], 17 * GIB);
    let f = with_logged(&near, &[]);
    assert_eq!(f[0].id, ids::RUN_USERSPACE_OOM_KILL, "{f:#?}");
    assert_eq!(
        f[0].assessment.as_ref().unwrap().certainty,
        Certainty::Likely
    );
    let far = signalled(libc::SIGTERM, vec![earlyoom], 21 * GIB);
    let f = with_logged(&far, &[]);
    assert!(f.iter().any(|f| f.id == ids::RUN_TERMINATED), "{f:#?}");
    assert!(!f.iter().any(|f| f.id == ids::RUN_USERSPACE_OOM_KILL));
}

#[test]
fn systemd_oomd_killing_the_cgroup_above_the_job_is_its_kill_confirmed() {
    let oomd = OomKiller {
        kind: KillerKind::SystemdOomd,
        pid: Some(727),
        running: true,
        settings_from: "/etc/systemd/oomd.conf".into(),
        settings: "defaults".into(),
        trigger: Some(Trigger::Pressure {
            percent: 50.0,
            seconds: 20.0,
            swap_used_percent: 90.0,
            cgroups: vec![],
        }),
        victim: VictimRule::WholeCgroup,
        poll_seconds: Some(1.0),
    };
    let report = signalled(libc::SIGKILL, vec![oomd], 20 << 30);
    let line = "Killed /user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope due to memory pressure for /user.slice/user-1000.slice/user@1000.service being 73.71% > 50.00% for > 20s with reclaim activity";
    let logged = LoggedKill {
        kind: KillerKind::SystemdOomd,
        pid: None,
        comm: Some("run-r1.scope".into()),
        cgroup: Some("/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope".into()),
        line: line.into(),
        source: "journalctl -t systemd-oomd".into(),
    };
    let f = with_logged(&report, std::slice::from_ref(&logged));
    assert_eq!(f[0].id, ids::RUN_USERSPACE_OOM_KILL, "{f:#?}");
    assert_eq!(
        f[0].assessment.as_ref().unwrap().certainty,
        Certainty::Confirmed
    );
    assert!(
        f[0].title.contains("systemd-oomd (pid 727)"),
        "{}",
        f[0].title
    );
    // Another cgroup's kill is not the job's: a bare SIGKILL stays unexplained.
    let other = LoggedKill {
        cgroup: Some(
            "/user.slice/user-1000.slice/user@1000.service/app.slice/firefox.scope".into(),
        ),
        ..logged
    };
    let f = with_logged(&report, &[other]);
    assert_eq!(f[0].id, ids::RUN_KILLED, "{f:#?}");
}

#[test]
fn rays_victim_is_named_as_ray_names_it_not_as_last_sampled() {
    let ray = OomKiller {
        kind: KillerKind::Ray,
        pid: Some(700),
        running: true,
        settings_from: "/proc/700/environ".into(),
        settings: "RAY_memory_usage_threshold=0.5".into(),
        trigger: Some(Trigger::UsedShare {
            share: 0.5,
            mem_total: 24 << 30,
        }),
        victim: VictimRule::WholeCgroup,
        poll_seconds: Some(0.25),
    };
    let mut report = signalled(libc::SIGKILL, vec![ray], 10 << 30);
    report.outcome.signal = None;
    report.outcome.exit_code = Some(1);
    // The worker was sampled idle, before the task reached it.
    let mut worker = ProcessSummary::new(21, 0.5);
    worker.comm = "ray::IDLE".into();
    worker.outcome = Some(Outcome {
        exit_code: None,
        signal: Some(libc::SIGKILL),
        core_dumped: false,
    });
    report.processes.push(worker);
    let logged = LoggedKill {
        kind: KillerKind::Ray,
        pid: Some(21),
        comm: Some("grow".into()),
        cgroup: None,
        line: "Selected to kill: (Task: task name=grow, pid=21, actual memory used=2.73GB)".into(),
        source: "the job's stderr".into(),
    };
    let f = with_logged(&report, &[logged]);
    let kill = f
        .iter()
        .find(|f| f.id == ids::RUN_USERSPACE_OOM_KILL)
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert!(kill.title.contains("pid 21 (ray::grow)"), "{}", kill.title);
    // Without Ray's words the sampled name stands.
    let f = with_logged(&report, &[]);
    assert!(
        f.iter().any(|f| f.title.contains("pid 21 (ray::IDLE)")),
        "{f:#?}"
    );
}

/// The findings of `report` from what the system measured alone.
fn system_findings(report: &RunReport, kills: &[OomKill]) -> Vec<Finding> {
    diagnose(Inputs {
        logged_kills: &[],
        report,
        kernel_oom_kills: kills,
        text_findings: Vec::new(),
        python_frames: false,
        crash_line: None,
        kernel_crash: None,
    })
}

#[test]
fn findings_name_the_rank_of_the_process_they_are_about() {
    let report = torchrun_report();
    let kills = [kill_of(12)];
    let findings = system_findings(&report, &kills);
    let oom = findings
        .iter()
        .find(|f| f.id == ids::RUN_OOM_KILLED)
        .expect("an OOM finding");
    assert_eq!(
        oom.title,
        "out of memory: the kernel killed pid 12 (python3, rank 1) at its cgroup's memory limit"
    );
    let labels: Vec<&str> = oom.evidence.iter().map(|e| e.label.as_str()).collect();
    assert!(
        labels.contains(&"kernel killed pid 12 (python3, rank 1)"),
        "{labels:?}"
    );
    assert!(labels.contains(&"pid 12 (python3, rank 1)"), "{labels:?}");
    assert!(
        labels.contains(&"largest process: pid 12 (python3, rank 1)"),
        "{labels:?}"
    );
    let terminated = findings
        .iter()
        .find(|f| f.id == ids::RUN_TERMINATED)
        .expect("rank 0's SIGTERM");
    assert!(
        terminated
            .title
            .ends_with("(a process of the job, pid 11 (python3, rank 0))"),
        "{}",
        terminated.title
    );
}

/// Issue 28, defect 12: the verdict's "largest process" was the samples' (bash, 3.2
/// MiB) while the kernel's line in the same finding said the victim held 63.8 MiB:
/// the kernel's figures at the kill win over a sample taken too late.
#[test]
fn regression_the_largest_process_is_the_kernels_victim_when_it_held_more() {
    let mut report = torchrun_report();
    for p in &mut report.processes {
        if let Some(peak) = &mut p.peak_rss {
            peak.bytes = 3 << 20;
        }
    }
    let kills = [kill_of(12)];
    let oom = system_findings(&report, &kills)
        .into_iter()
        .find(|f| f.id == ids::RUN_OOM_KILLED)
        .expect("an OOM finding");
    let largest = oom
        .evidence
        .iter()
        .find(|e| e.label.starts_with("largest process"))
        .expect("the largest process");
    assert_eq!(largest.label, "largest process: pid 12 (python3, rank 1)");
    assert_eq!(largest.value, "RSS 400 MiB when the kernel killed it");
}

#[test]
fn a_process_without_a_rank_is_named_as_before() {
    let mut report = torchrun_report();
    for p in &mut report.processes {
        p.rank = None;
    }
    let kills = [kill_of(12)];
    let findings = system_findings(&report, &kills);
    assert_eq!(
        findings[0].title,
        "out of memory: the kernel killed pid 12 (python3) at its cgroup's memory limit"
    );
    // A kill of a process the run never sampled keeps the kernel's name for it.
    assert_eq!(report.label_of(99, "python3"), "pid 99 (python3)");
}
