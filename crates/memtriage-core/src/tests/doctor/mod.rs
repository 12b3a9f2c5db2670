//! `doctor` on captured trees: a baseline of a real machine's files
//! (fixtures/system, see fixtures/capture.sh), one file overridden per test, so each
//! finding is seen in its ok and its not-ok form for each profile where they differ.
//! Plus unreadable, missing and malformed files, and one run on this machine.
//!
//! One file per family of checks, as in `diagnose::doctor`; this module holds the
//! fixture ([`Fake`]) and the rules every finding keeps, which they share, and the tests
//! that span every family: the baseline, unreadable input, and this machine's snapshot.

use std::fs;
use std::path::{Path, PathBuf};

use crate::diagnose::doctor::{audit, Profile};
use crate::model::finding::{Finding, Severity};
use crate::model::system::{SystemSnapshot, SYSTEM_SCHEMA};
use crate::parse::kmsg;
use crate::probe::system::read;
use crate::Root;

use crate::tests::support::{copy_tree, fixtures};

mod cgroup;
mod hugepages;
mod kills;
mod limits;
mod memory;
mod numa;
mod overcommit;
mod reclaim;
mod shm;
mod vm;

const GIB: u64 = 1 << 30;
const PROFILES: [Profile; 3] = [Profile::Training, Profile::Inference, Profile::Shared];
/// MemTotal of the captured baseline.
const BASE_TOTAL: u64 = 24684092 * 1024;
const MEMCG: &str = "/sys/fs/cgroup/memory/process_api/07afd68cbce1aa66c50d7d9e121cda54";

/// A copy of the baseline root that a test may change.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&fixtures().join("system"), dir.path());
        Fake { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel.trim_start_matches('/'))
    }

    fn write(&self, rel: &str, text: impl AsRef<[u8]>) -> &Self {
        crate::tests::support::write(self.dir.path(), rel, text);
        self
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap()
    }

    /// Replaces `from` by `to` in a file, failing if `from` is not there.
    fn edit(&self, rel: &str, from: &str, to: &str) -> &Self {
        let text = self.read(rel);
        assert!(text.contains(from), "{rel} has no {from:?}");
        self.write(rel, text.replace(from, to))
    }

    fn meminfo(&self, key: &str, kb: u64) -> &Self {
        let text = self.read("/proc/meminfo");
        let out: Vec<String> = text
            .lines()
            .map(|l| {
                if l.split(':').next() == Some(key) {
                    format!("{key}:{kb:>16} kB")
                } else {
                    l.to_string()
                }
            })
            .collect();
        assert!(text.lines().any(|l| l.starts_with(&format!("{key}:"))));
        self.write("/proc/meminfo", out.join("\n") + "\n")
    }

    fn remove(&self, rel: &str) -> &Self {
        let p = self.path(rel);
        if p.is_dir() {
            fs::remove_dir_all(p).unwrap();
        } else {
            fs::remove_file(p).unwrap();
        }
        self
    }

    fn snapshot(&self) -> SystemSnapshot {
        read(&Root::at(self.dir.path()))
    }

    fn audit(&self, profile: Profile) -> Vec<Finding> {
        audit(&self.snapshot(), profile)
    }
}

fn ids(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.id.as_str()).collect()
}

#[track_caller]
fn get<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no {id} in {:?}", ids(findings)))
}

#[track_caller]
fn severity(findings: &[Finding], id: &str) -> Severity {
    get(findings, id).severity
}

#[track_caller]
fn absent(findings: &[Finding], id: &str) {
    assert!(
        !findings.iter().any(|f| f.id == id),
        "{id} should not be in {:?}",
        ids(findings)
    );
}

fn evidence<'a>(f: &'a Finding, label: &str) -> &'a str {
    f.evidence
        .iter()
        .find(|e| e.label == label)
        .map(|e| e.value.as_str())
        .unwrap_or_else(|| panic!("no evidence {label} in {f:#?}"))
}

/// Rules every finding keeps whatever the input.
#[track_caller]
fn well_formed(findings: &[Finding]) {
    assert!(!findings.is_empty());
    for w in findings.windows(2) {
        assert!(
            w[0].severity >= w[1].severity,
            "not most severe first: {:?}",
            ids(findings)
        );
    }
    for f in findings {
        let (area, rest) =
            f.id.split_once('.')
                .unwrap_or_else(|| panic!("id {} not dotted", f.id));
        assert!(!area.is_empty() && !rest.is_empty(), "{}", f.id);
        assert!(
            f.id.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-'),
            "{}",
            f.id
        );
        assert!(!f.title.is_empty() && !f.why.is_empty(), "{f:#?}");
        assert!(!f.evidence.is_empty(), "a finding without evidence: {f:#?}");
        for e in &f.evidence {
            assert!(
                !e.label.is_empty() && !e.value.is_empty() && !e.source.is_empty(),
                "{f:#?}"
            );
        }
        if f.severity >= Severity::Warn {
            assert!(!f.fix.is_empty(), "a problem without a fix: {f:#?}");
        }
        if f.id.ends_with(".ok") {
            assert!(f.severity <= Severity::Info, "{f:#?}");
        }
    }
}

// ---------------------------------------------------------------- baseline

#[test]
fn baseline_reads_every_value_from_the_captured_files() {
    let s = Fake::new().snapshot();
    assert_eq!(s.schema, SYSTEM_SCHEMA);
    assert_eq!(s.kernel_release.as_deref(), Some("6.18.44-fc-v657"));
    assert_eq!(s.uptime_seconds, Some(578.24));
    let m = s.memory.as_ref().unwrap();
    assert_eq!(m.total, Some(BASE_TOTAL));
    assert_eq!(m.available, Some(24020172 * 1024));
    assert_eq!((m.swap_total, m.swap_free), (Some(0), Some(0)));
    assert_eq!(m.commit_limit, Some(12342044 * 1024));
    assert_eq!(s.swaps.as_deref(), Some(&[][..]));
    let p = s.pressure.as_ref().unwrap();
    assert_eq!(p.some.as_ref().unwrap().avg10, 0.0);
    assert!(p.full.is_some());
    assert_eq!(s.thp.enabled.as_deref(), Some("madvise"));
    assert_eq!(s.thp.defrag.as_deref(), Some("madvise"));
    assert_eq!(s.thp.shmem_enabled.as_deref(), Some("never"));
    let pools = s.hugepages.as_ref().unwrap();
    assert_eq!(
        pools.iter().map(|p| p.page_size).collect::<Vec<_>>(),
        vec![2 << 20, GIB]
    );
    assert!(pools.iter().all(|p| p.total == 0 && p.free == 0));
    assert_eq!(s.vm.overcommit_memory, Some(0));
    assert_eq!(s.vm.overcommit_ratio, Some(50));
    assert_eq!(s.vm.overcommit_bytes, Some(0));
    assert_eq!(s.vm.swappiness, Some(60));
    assert_eq!(s.vm.dirty_ratio, Some(20));
    assert_eq!(s.vm.dirty_background_ratio, Some(10));
    assert_eq!(s.vm.max_map_count, Some(65530));
    assert_eq!(s.vm.zone_reclaim_mode, Some(0));
    assert_eq!(s.vm.panic_on_oom, Some(0));
    assert_eq!(s.numa_balancing, Some(0));
    assert_eq!(s.numa_nodes, Some(1));
    let shm = s.shm.as_ref().unwrap();
    assert_eq!(shm.fs_type, "tmpfs");
    assert_eq!(shm.size_option, Some(BASE_TOTAL));
    assert_eq!(
        (shm.total, shm.used),
        (None, None),
        "statvfs is not taken under a captured root"
    );
    assert_eq!(s.limits.memlock.unwrap().soft, Some(8 << 20));
    assert_eq!(s.limits.nofile.unwrap().soft, Some(20000));
    let cg = s.cgroup.as_ref().unwrap();
    assert_eq!(cg.path, "/process_api/07afd68cbce1aa66c50d7d9e121cda54");
    assert_eq!(cg.limit, None);
    assert_eq!(cg.oom_kills, Some(0));
    assert_eq!(s.oom_kill_count, Some(0));
    assert_eq!(
        s.oom_kills.as_deref(),
        Some(&[][..]),
        "the baseline log has no OOM kill"
    );
    let fields: Vec<&str> = s.unreadable.iter().map(|u| u.field.as_str()).collect();
    assert_eq!(fields, vec!["shm.used"], "{:#?}", s.unreadable);
}

#[test]
fn baseline_audit_for_each_profile() {
    let fake = Fake::new();
    for profile in PROFILES {
        let f = fake.audit(profile);
        well_formed(&f);
        assert!(
            f.iter().all(|f| f.severity < Severity::Error),
            "{profile:?}: {f:#?}"
        );
        for id in [
            "memory.ok",
            "oom.ok",
            "cgroup.ok",
            "pressure.ok",
            "shm.ok",
            "hugepages.ok",
            "dirty.ok",
            "numa.ok",
            "panic-on-oom.ok",
            "proactive-reclaim.ok",
        ] {
            assert_eq!(severity(&f, id), Severity::Ok, "{profile:?} {id}");
        }
        // Where the baseline differs by profile, each profile sees its own finding.
        let thp = if profile == Profile::Inference {
            "thp.defrag-madvise"
        } else {
            "thp.ok"
        };
        get(&f, thp);
        let swap = if profile == Profile::Shared {
            "swap.disabled"
        } else {
            "swap.ok"
        };
        get(&f, swap);
    }
}

#[test]
fn snapshot_round_trips_through_json() {
    let mut s = Fake::new().snapshot();
    s.oom_kills = Some(kmsg::oom_kills(
        fs::read_to_string(fixtures().join("kmsg-oom"))
            .unwrap()
            .lines(),
    ));
    let json = serde_json::to_string(&s).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schema"], SYSTEM_SCHEMA);
    assert_eq!(v["memory"]["total"], BASE_TOTAL);
    let back: SystemSnapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
}

// ---------------------------------------------------------------- unreadable input

#[test]
fn missing_meminfo_is_unreadable_not_zero() {
    let fake = Fake::new();
    fake.remove("/proc/meminfo");
    let s = fake.snapshot();
    assert!(s.memory.is_none());
    assert!(s.unreadable_reason("memory").unwrap().contains("meminfo"));
    for profile in PROFILES {
        let f = audit(&s, profile);
        well_formed(&f);
        assert_eq!(severity(&f, "memory.unreadable"), Severity::Info);
        absent(&f, "memory.ok");
    }
}

#[test]
fn meminfo_without_memavailable_is_lenient() {
    let fake = Fake::new();
    let text: String = fake
        .read("/proc/meminfo")
        .lines()
        .filter(|l| !l.starts_with("MemAvailable"))
        .map(|l| format!("{l}\n"))
        .collect();
    fake.write("/proc/meminfo", text);
    let s = fake.snapshot();
    let m = s.memory.as_ref().unwrap();
    assert_eq!((m.total, m.available), (Some(BASE_TOTAL), None));
    assert!(s.unreadable_reason("memory.available").is_some());
    let f = audit(&s, Profile::Training);
    assert_eq!(severity(&f, "memory.unreadable"), Severity::Info);
    // The rest still reads.
    assert_eq!(severity(&f, "swap.ok"), Severity::Ok);
}

#[test]
fn malformed_sysctls_are_unreadable_with_the_value_shown() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/overcommit_memory", "banana\n");
    fake.write("/proc/sys/vm/max_map_count", "");
    let s = fake.snapshot();
    assert_eq!(s.vm.overcommit_memory, None);
    assert!(s
        .unreadable_reason("vm.overcommit_memory")
        .unwrap()
        .contains("\"banana\""));
    let f = audit(&s, Profile::Training);
    assert_eq!(severity(&f, "overcommit.unreadable"), Severity::Info);
    assert_eq!(severity(&f, "max-map-count.unreadable"), Severity::Info);
    assert!(evidence(get(&f, "overcommit.unreadable"), "vm.overcommit_memory").contains("banana"));
}

#[test]
fn every_file_garbage_or_missing_never_panics() {
    let garbage: [&[u8]; 5] = [
        b"",
        b"\n\n\n",
        b"\xff\xfe\x00garbage",
        b"[[[ ]]] :: ,,, ;;; 9999999999999999999999",
        b"-1",
    ];
    let base = fixtures().join("system");
    let mut files = Vec::new();
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.push(format!("/{}", p.strip_prefix(base).unwrap().display()));
            }
        }
    }
    walk(&base, &base, &mut files);
    assert!(files.len() > 30);
    for content in garbage {
        let fake = Fake::new();
        for f in &files {
            fake.write(f, content);
        }
        let s = fake.snapshot();
        assert!(s.memory.as_ref().is_none_or(|m| m.total.is_none()));
        for profile in PROFILES {
            let f = audit(&s, profile);
            well_formed(&f);
            assert!(
                f.iter().all(|f| f.severity < Severity::Error),
                "{:?}",
                ids(&f)
            );
        }
    }
    // Nothing at all under the root.
    let empty = tempfile::tempdir().unwrap();
    let s = read(&Root::at(empty.path()));
    assert!(s.unreadable.len() >= 20, "{:#?}", s.unreadable);
    for profile in PROFILES {
        well_formed(&audit(&s, profile));
    }
    // A directory where a file should be.
    let fake = Fake::new();
    fake.remove("/proc/meminfo");
    fs::create_dir(fake.path("/proc/meminfo")).unwrap();
    assert!(fake.snapshot().unreadable_reason("memory").is_some());
}

// ---------------------------------------------------------------- this machine

#[test]
fn live_host_snapshot_is_sane() {
    let s = read(&Root::host());
    let m = s
        .memory
        .as_ref()
        .expect("/proc/meminfo is readable on Linux");
    let total = m.total.unwrap();
    let avail = m.available.unwrap();
    assert!(total > 64 << 20, "MemTotal {total}");
    assert!(avail <= total);
    assert!(m.commit_limit.unwrap() > 0);
    assert!(s.uptime_seconds.unwrap() > 0.0);
    assert!(matches!(s.vm.overcommit_memory, Some(0..=2)));
    assert!(s.vm.max_map_count.unwrap() > 0);
    assert!(s.vm.swappiness.unwrap() <= 200);
    assert!(s.limits.nofile.is_some() && s.limits.memlock.is_some());
    let swaps = s.swaps.as_ref().unwrap();
    assert_eq!(
        swaps.iter().map(|d| d.size).sum::<u64>(),
        m.swap_total.unwrap()
    );
    if let Some(shm) = &s.shm {
        if let (Some(t), Some(u)) = (shm.total, shm.used) {
            assert!(u <= t);
            assert!(t > 0);
        }
    }
    for pool in s.hugepages.iter().flatten() {
        assert!(pool.free <= pool.total && pool.page_size >= 2 << 20);
    }
    if let Some(p) = s.pressure.as_ref().and_then(|p| p.some.as_ref()) {
        assert!((0.0..=100.0).contains(&p.avg10));
    }
    // Root reads the kernel log; others get the reason why not.
    match &s.oom_kills {
        Some(kills) => assert!(kills.iter().all(|k| k.pid > 0)),
        None => assert!(!s.unreadable_reason("oom_kills").unwrap().is_empty()),
    }
    for profile in PROFILES {
        let f = audit(&s, profile);
        well_formed(&f);
        assert!(f.iter().any(|f| f.id.starts_with("memory.")));
        assert!(f.iter().any(|f| f.id.starts_with("overcommit.")));
    }
}
