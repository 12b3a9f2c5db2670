//! `why` on records written for it.

use super::before::copying_workers;
use super::kill::growth_before_death;
use super::*;
use crate::history::store::Store;
use crate::model::history::{
    CgroupRow, Interval, JobPoint, JobRow, KillRow, KillSource, MachineRow, ProcessBrief,
};
use crate::model::ids;
use crate::model::system::OomConstraint;
use crate::model::why::WhyReport;

fn series(values: &[u64]) -> Vec<JobPoint> {
    values
        .iter()
        .enumerate()
        .map(|(i, &mib)| JobPoint {
            t_ms: 1_000_000 + i as i64 * 10_000,
            processes: 1,
            rss: mib << 20,
            pss: None,
            major_faults: None,
        })
        .collect()
}

#[test]
fn the_growth_starts_at_the_last_point_of_its_base_and_its_slope_is_the_line() {
    // Flat at 100 MiB (with noise), then 50 MiB per 10 s interval.
    let s = series(&[100, 101, 100, 100, 150, 200, 250, 300, 350]);
    let g = growth_before_death(&s).unwrap();
    assert_eq!(g.started_ms, s[3].t_ms, "{g:?}");
    assert_eq!(g.points, 6);
    let per_second = (50u64 << 20) as f64 / 10.0;
    assert!(
        (g.bytes_per_second - per_second).abs() < per_second * 0.05,
        "{g:?}"
    );
    assert!(g.r_squared > 0.98);
}

/// A kill the kernel logged, as the recorder keeps it.
fn logged_kill(t_ms: i64, pid: i32, victim: &str) -> KillRow {
    KillRow {
        t_ms,
        pid: Some(pid),
        victim: Some(victim.into()),
        killer: "kernel".into(),
        source: KillSource::KernelLog,
        ..KillRow::default()
    }
}

/// `why` of the latest death in the record at `path`.
fn latest_death(path: &std::path::Path) -> WhyReport {
    let reader = Store::open_read(path).unwrap();
    why(&reader, &WhyRequest::default()).unwrap().unwrap()
}

#[test]
fn stalls_and_a_fault_storm_before_a_kill_give_runs_findings_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    // 20,000 major faults in 10 s (2,000/s), and all tasks stalled 30% of the time.
    for (i, (major, stall)) in [(0u64, 0.0), (1_000, 2.0), (21_000, 30.0)]
        .into_iter()
        .enumerate()
    {
        let t_ms = 600_000 + i as i64 * 10_000;
        let mut interval = Interval {
            machine: MachineRow {
                t_ms,
                psi_full: Some(stall),
                swap_used: Some(3 << 30),
                ..MachineRow::default()
            },
            jobs: vec![JobRow {
                job: "python3[7]".into(),
                processes: 1,
                rss: 100 << 20,
                pss: None,
                swap: None,
                minor_faults: 0,
                major_faults: major,
            }],
            processes: vec![ProcessBrief {
                forked_without_exec: None,
                pid: 7,
                ppid: 1,
                comm: "python3".into(),
                cmdline: "python3 serve.py".into(),
                cgroup: None,
                job: "python3[7]".into(),
                rss: 100 << 20,
                pss: None,
                swap: None,
            }],
            ..Interval::default()
        };
        if i == 2 {
            interval.kills.push(KillRow {
                constraint: Some(OomConstraint::Global),
                ..logged_kill(t_ms + 1_000, 7, "python3")
            });
        }
        store.write(&interval).unwrap();
    }
    let report = latest_death(&path);
    let ids: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            ids::RUN_OOM_KILLED,
            ids::RUN_MAJOR_FAULT_STORM,
            ids::RUN_SWAP_THRASHING
        ]
    );
    let storm = &report.findings[1];
    assert!(storm.title.contains("2000 page reads"), "{}", storm.title);
    let stall = &report.findings[2];
    assert!(
        stall.evidence[0].value.starts_with("30.0%"),
        "{:?}",
        stall.evidence
    );
}

#[test]
fn a_small_worker_never_among_the_largest_gets_its_cgroups_growth() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    // The cgroup flat at 200 MiB for 4 intervals, then 50 MiB per 10 s interval.
    for i in 0..10i64 {
        let usage = if i < 4 {
            200
        } else {
            200 + (i as u64 - 3) * 50
        } << 20;
        let mut interval = Interval {
            machine: MachineRow {
                t_ms: i * 10_000,
                ..MachineRow::default()
            },
            cgroups: vec![CgroupRow {
                cgroup: "/pod/train".into(),
                usage: Some(usage),
                limit: Some(512 << 20),
                ..CgroupRow::default()
            }],
            ..Interval::default()
        };
        if i == 9 {
            interval.kills.push(KillRow {
                cgroup: Some("/pod/train".into()),
                limit_cgroup: Some("/pod/train".into()),
                ..logged_kill(95_000, 11, "pt_data_worker")
            });
        }
        store.write(&interval).unwrap();
    }
    let report = latest_death(&path);
    assert_eq!(report.job, None);
    let g = report.growth.expect("the cgroup's growth");
    assert_eq!(g.started_ms, 30_000);
    let per_second = (5u64 << 20) as f64;
    assert!(
        (g.bytes_per_second - per_second).abs() < per_second * 0.05,
        "{g:?}"
    );
    let f = &report.findings[0];
    assert!(
        f.evidence
            .iter()
            .any(|e| e.label == "growth of cgroup /pod/train before it died"
                && e.source == "the record's cgroup usage, one point per interval"),
        "{:?}",
        f.evidence
    );
    assert!(report
        .notes
        .iter()
        .any(|n| n.contains("the growth shown is its cgroup's")));
}

#[test]
fn a_recorded_kill_is_explained_with_its_limit_growth_and_what_else_held_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    let process = |pid: i32, comm: &str, job: &str, rss: u64| ProcessBrief {
        forked_without_exec: None,
        pid,
        ppid: 1,
        comm: comm.into(),
        cmdline: format!("{comm} --flag"),
        cgroup: Some("/train".into()),
        job: job.into(),
        rss,
        pss: None,
        swap: None,
    };
    // 5 flat intervals at 50 MiB, then 10 MiB/s (100 MiB per 10 s interval).
    for i in 0..12i64 {
        let rss = if i < 5 { 50 } else { 50 + (i as u64 - 4) * 100 } << 20;
        let mut interval = Interval {
            machine: MachineRow {
                t_ms: i * 10_000,
                ..MachineRow::default()
            },
            jobs: vec![JobRow {
                job: "python3[7]".into(),
                processes: 1,
                rss,
                pss: None,
                swap: None,
                minor_faults: 0,
                major_faults: 0,
            }],
            cgroups: vec![CgroupRow {
                cgroup: "/train".into(),
                usage: Some(rss),
                limit: Some(800 << 20),
                oom_kill: Some(0),
                ..CgroupRow::default()
            }],
            processes: vec![
                process(7, "python3", "python3[7]", rss),
                process(9, "redis", "redis[9]", 30 << 20),
            ],
            kills: Vec::new(),
            faults: Vec::new(),
            crashes: Vec::new(),
        };
        if i == 11 {
            interval.kills.push(KillRow {
                t_ms: 115_000,
                pid: Some(7),
                victim: Some("python3".into()),
                cmdline: Some("python3 train.py".into()),
                cgroup: Some("/train".into()),
                limit_cgroup: Some("/train".into()),
                constraint: Some(OomConstraint::Cgroup),
                anon_rss: Some(790 << 20),
                killer: "kernel".into(),
                source: KillSource::Both,
                ..KillRow::default()
            });
        }
        store.write(&interval).unwrap();
    }
    let reader = Store::open_read(&path).unwrap();
    let report = why(&reader, &WhyRequest::default()).unwrap().unwrap();
    assert_eq!(report.death.pid, Some(7));
    assert_eq!(report.death.limit_bytes, Some(800 << 20));
    assert_eq!(report.job.as_deref(), Some("python3[7]"));
    let g = report.growth.unwrap();
    assert_eq!(g.started_ms, 40_000);
    let per_second = (10u64 << 20) as f64;
    assert!(
        (g.bytes_per_second - per_second).abs() < per_second * 0.05,
        "{g:?}"
    );
    let f = &report.findings[0];
    assert_eq!(f.id, ids::RUN_OOM_KILLED);
    assert_eq!(
        f.title,
        "out of memory: the kernel killed python3 (pid 7) at its cgroup's memory limit \
         (/train, 800 MiB)"
    );
    assert!(
        f.evidence.iter().any(|e| e.label.contains("redis[9]")),
        "{:?}",
        f.evidence
    );
    assert!(why(
        &reader,
        &WhyRequest {
            pid: Some(8),
            ..WhyRequest::default()
        }
    )
    .unwrap()
    .is_none());
    assert!(why(
        &reader,
        &WhyRequest {
            since_ms: Some(200_000),
            ..WhyRequest::default()
        }
    )
    .unwrap()
    .is_none());
}

#[test]
fn workers_whose_pss_nears_their_rss_copied_their_parent_and_shared_ones_did_not() {
    let p = |pid: i32, ppid: i32, rss_mib: u64, pss_mib: u64, forked: Option<bool>| ProcessBrief {
        pid,
        ppid,
        comm: if pid == 10 {
            "python3"
        } else {
            "pt_data_worker"
        }
        .into(),
        cmdline: String::new(),
        cgroup: None,
        job: "python3[10]".into(),
        rss: rss_mib << 20,
        pss: Some(pss_mib << 20),
        swap: None,
        forked_without_exec: forked,
    };
    let copying = vec![
        p(10, 1, 2048, 1200, None),
        p(11, 10, 1500, 1300, Some(true)),
        p(12, 10, 1500, 1250, Some(true)),
    ];
    let f = copying_workers(&copying, "python3[10]", Some(11)).unwrap();
    assert_eq!(f.id, ids::FORK_COPY_ON_WRITE);
    assert!(
        f.title.starts_with("2 forked workers of python3[10]"),
        "{}",
        f.title
    );
    assert!(f.evidence[0].label.ends_with(", the victim"));
    let sharing = vec![
        p(10, 1, 2048, 700, None),
        p(11, 10, 1500, 300, Some(true)),
        p(12, 10, 1500, 300, Some(true)),
    ];
    assert!(copying_workers(&sharing, "python3[10]", None).is_none());
    let execed = vec![
        p(10, 1, 2048, 1200, None),
        p(11, 10, 1500, 1400, Some(false)),
    ];
    assert!(copying_workers(&execed, "python3[10]", None).is_none());
    assert!(copying_workers(&copying, "other[1]", None).is_none());
}

#[test]
fn a_recorded_bus_error_is_runs_finding_shared_memory_when_dev_shm_was_full() {
    use crate::model::history::FaultRow;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    for (t_ms, shm_used) in [(10_000, 30u64 << 20), (20_000, 63 << 20)] {
        let mut interval = Interval {
            machine: MachineRow {
                t_ms,
                shm_used: Some(shm_used),
                shm_size: Some(64 << 20),
                ..MachineRow::default()
            },
            ..Interval::default()
        };
        interval.faults.push(FaultRow {
            t_ms: t_ms + 1_000,
            pid: 9,
            comm: "pt_data_worker".into(),
            signal: libc::SIGBUS,
            object: None,
            cmdline: None,
            cgroup: None,
        });
        store.write(&interval).unwrap();
    }
    let latest = latest_death(&path);
    assert_eq!(latest.death.at_ms, 21_000);
    let f = &latest.findings[0];
    assert_eq!(f.id, ids::RUN_BUS_ERROR_SHM);
    assert_eq!(
        f.title,
        "bus error: /dev/shm was full (pt_data_worker (pid 9))"
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e.label == "/dev/shm at the last interval before"
                && e.value == "63.0 MiB used of 64.0 MiB"),
        "{:?}",
        f.evidence
    );
    // /dev/shm half empty: a mapped file's bus error.
    let mut only_first = Store::open(&dir.path().join("first.db")).unwrap();
    only_first
        .write(&Interval {
            machine: MachineRow {
                t_ms: 10_000,
                shm_used: Some(30 << 20),
                shm_size: Some(64 << 20),
                ..MachineRow::default()
            },
            faults: vec![FaultRow {
                t_ms: 11_000,
                pid: 9,
                comm: "python3".into(),
                signal: libc::SIGBUS,
                object: Some("libtorch_cpu.so".into()),
                cmdline: None,
                cgroup: None,
            }],
            ..Interval::default()
        })
        .unwrap();
    let f = latest_death(&dir.path().join("first.db"))
        .findings
        .remove(0);
    assert_eq!(f.id, ids::RUN_BUS_ERROR_MMAP);
    // The kernel's line names the object, not a mapped file being read: likely, not
    // confirmed.
    assert_eq!(
        f.title,
        "bus error, most likely on a memory-mapped file (python3 (pid 9))"
    );
}

fn brief(pid: i32, comm: &str, cgroup: Option<&str>, mib: u64) -> ProcessBrief {
    ProcessBrief {
        forked_without_exec: None,
        pid,
        ppid: 1,
        comm: comm.into(),
        cmdline: comm.into(),
        cgroup: cgroup.map(str::to_string),
        job: format!("{comm}[{pid}]"),
        rss: mib << 20,
        pss: None,
        swap: None,
    }
}

/// Issue 28, defect 8: a kill at a cgroup's limit listed processes of other cgroups as
/// "also holding memory"; only those in that cgroup (or below it) counted against it.
#[test]
fn regression_a_cgroup_kill_names_only_processes_that_counted_against_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    let limited = "/memtriage-run-40";
    let mut interval = Interval {
        machine: MachineRow {
            t_ms: 600_000,
            ..MachineRow::default()
        },
        processes: vec![
            brief(9, "postgres", Some("/system.slice/postgres.service"), 900),
            brief(41, "python3", Some(limited), 90),
            brief(43, "python3", Some("/memtriage-run-40/worker"), 30),
            brief(50, "unknown", None, 500),
        ],
        ..Interval::default()
    };
    interval.kills.push(KillRow {
        limit_cgroup: Some(limited.into()),
        cgroup: Some(limited.into()),
        constraint: Some(OomConstraint::Cgroup),
        ..logged_kill(601_000, 42, "python3")
    });
    store.write(&interval).unwrap();
    let report = latest_death(&path);
    let also: Vec<&str> = report.findings[0]
        .evidence
        .iter()
        .filter(|e| e.label.starts_with("also holding memory"))
        .map(|e| e.label.as_str())
        .collect();
    assert_eq!(
        also,
        vec![
            "also holding memory: python3[41]",
            "also holding memory: python3[43]"
        ]
    );
}

/// Issue 29: a kill earlyoom made while the recorder ran is earlyoom's, with the
/// threshold it acted at and how the machine stood against it, not the kernel's.
#[test]
fn a_recorded_earlyoom_kill_names_its_threshold_and_the_machine_against_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    const GIB: u64 = 1 << 30;
    let earlyoom = crate::diagnose::killers::earlyoom_for_tests(17 * GIB);
    let snapshot = crate::model::history::KillSnapshot {
        signal: Some("SIGTERM".into()),
        killer_settings: Some(earlyoom),
        ..Default::default()
    };
    for (i, available) in [20 * GIB, 17 * GIB - (10 << 20)].into_iter().enumerate() {
        let t_ms = 1_000_000 + i as i64 * 1_000;
        let mut interval = Interval {
            machine: MachineRow {
                t_ms,
                mem_available: Some(available),
                ..MachineRow::default()
            },
            ..Interval::default()
        };
        if i == 1 {
            interval.kills.push(KillRow {
                killer: "earlyoom".into(),
                source: KillSource::KillerLog,
                snapshot_json: serde_json::to_string(&snapshot).ok(),
                ..logged_kill(t_ms + 1_000, 4242, "python3")
            });
        }
        store.write(&interval).unwrap();
    }
    let report = latest_death(&path);
    assert_eq!(report.death.signal, "SIGTERM");
    let f = &report.findings[0];
    assert_eq!(f.id, ids::RUN_USERSPACE_OOM_KILL, "{f:?}");
    assert!(
        f.title.contains("SIGTERM from earlyoom (pid 812, -m 72)"),
        "{}",
        f.title
    );
    let values: Vec<&str> = f.evidence.iter().map(|e| e.value.as_str()).collect();
    assert!(
        values.iter().any(|v| v.starts_with(
            "MemAvailable 17.0 GiB 1 s before the kill; earlyoom acts under 17.0 GiB"
        )),
        "{values:?}"
    );
    assert!(f.fix.contains("EARLYOOM_ARGS"), "{}", f.fix);
}

/// A kernel oops the recorder kept is read again as `run` reads one: the driver named,
/// the process it names tied to its recorded job. The segfault the kernel logged for
/// that process at the same moment follows from the crash and is not the verdict.
#[test]
fn a_recorded_kernel_crash_names_the_driver_and_the_job_of_its_process() {
    use crate::model::history::{CrashRow, FaultRow};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    let text = "\
[  100.000001] BUG: unable to handle page fault for address: ffffb8a1c0e3f000
[  100.000002] Oops: 0000 [#1] PREEMPT SMP NOPTI
[  100.000003] CPU: 3 PID: 7 Comm: python3 Tainted: P           OE     6.5.0-14-generic
[  100.000004] RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]
[  100.000005] ---[ end trace 0000000000000000 ]---
";
    store
        .write(&Interval {
            machine: MachineRow {
                t_ms: 10_000,
                ..MachineRow::default()
            },
            processes: vec![brief(7, "python3", Some("/train"), 300)],
            faults: vec![FaultRow {
                t_ms: 11_000,
                pid: 7,
                comm: "python3".into(),
                signal: libc::SIGSEGV,
                object: None,
                cmdline: None,
                cgroup: None,
            }],
            crashes: vec![CrashRow {
                t_ms: 11_000,
                pid: Some(7),
                comm: Some("python3".into()),
                text: text.into(),
                cmdline: Some("python3 train.py".into()),
                cgroup: Some("/train".into()),
            }],
            ..Interval::default()
        })
        .unwrap();
    let latest = latest_death(&path);
    assert_eq!(latest.death.kind, crate::model::why::DeathKind::KernelCrash);
    assert_eq!(
        latest.death.headline(),
        "the kernel crashed while python3 (pid 7) ran"
    );
    let f = &latest.findings[0];
    assert_eq!(f.id, ids::RUN_KERNEL_CRASH);
    assert!(f.title.contains("nvidia module"), "{}", f.title);
    let relation = f.evidence_value("the process the kernel names").unwrap();
    assert!(relation.contains("was the job's"), "{relation}");
    assert_eq!(
        f.evidence_value("the named process's command line"),
        Some("python3 train.py")
    );
    // Asked for that pid, the same answer; a left-out count includes the crash.
    let reader = Store::open_read(&path).unwrap();
    let of_pid = WhyRequest {
        pid: Some(7),
        ..WhyRequest::default()
    };
    let by_pid = why(&reader, &of_pid).unwrap().unwrap();
    assert_eq!(by_pid.death.kind, crate::model::why::DeathKind::KernelCrash);
}
