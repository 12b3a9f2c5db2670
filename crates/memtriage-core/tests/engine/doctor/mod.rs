//! `doctor` on captured trees: a baseline of a real machine's files
//! (fixtures/system, see fixtures/capture.sh), one file overridden per test, so each
//! finding is seen in its ok and its not-ok form for each profile where they differ.
//! Plus unreadable, missing and malformed files, and one run on this machine.

use std::fs;
use std::path::{Path, PathBuf};

use memtriage_core::diagnose::doctor::{audit, Profile};
use memtriage_core::model::finding::{Finding, Severity};
use memtriage_core::model::system::{OomConstraint, SystemSnapshot, SYSTEM_SCHEMA};
use memtriage_core::parse::kmsg;
use memtriage_core::probe::kmsg::read_kmsg;
use memtriage_core::probe::system::read;
use memtriage_core::Root;

use crate::support::{copy_tree, fixtures};

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
        crate::support::write(self.dir.path(), rel, text);
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

// ---------------------------------------------------------------- memory

#[test]
fn memory_available_low() {
    let fake = Fake::new();
    fake.meminfo("MemAvailable", 24684092 / 20);
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "memory.available-low"), Severity::Warn);
    fake.meminfo("MemAvailable", 24684092 / 100);
    let f = fake.audit(Profile::Shared);
    let finding = get(&f, "memory.available-low");
    assert_eq!(finding.severity, Severity::Error);
    assert_eq!(evidence(finding, "MemTotal"), "23.5 GiB");
    absent(&f, "memory.ok");
}

// ---------------------------------------------------------------- /dev/shm

#[test]
fn docker_default_shm_is_an_error_in_every_profile() {
    let fake = Fake::new();
    fake.edit("/proc/self/mountinfo", "size=24684092k", "size=65536k");
    for profile in PROFILES {
        let f = fake.audit(profile);
        let shm = get(&f, "shm.too-small");
        assert_eq!(shm.severity, Severity::Error, "{profile:?}");
        assert_eq!(f[0].severity, Severity::Error, "errors come first");
        assert!(shm.title.contains("64.0 MiB"), "{}", shm.title);
        assert_eq!(evidence(shm, "size= option"), "64.0 MiB");
        assert!(
            shm.fix.contains("mount -o remount,size=5G /dev/shm"),
            "{}",
            shm.fix
        );
        assert!(shm.fix.contains("--shm-size=5g"), "{}", shm.fix);
        assert!(shm.fix.contains("medium: Memory"), "{}", shm.fix);
        absent(&f, "shm.ok");
    }
}

#[test]
fn shm_below_a_quarter_of_ram_is_low_only_for_training() {
    let fake = Fake::new();
    fake.edit("/proc/self/mountinfo", "size=24684092k", "size=4G");
    assert_eq!(fake.snapshot().shm.unwrap().size_option, Some(4 * GIB));
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "shm.too-small"), Severity::Warn);
    for profile in [Profile::Inference, Profile::Shared] {
        let f = fake.audit(profile);
        absent(&f, "shm.too-small");
        assert_eq!(severity(&f, "shm.ok"), Severity::Ok);
    }
}

#[test]
fn shm_larger_than_ram_and_mostly_full() {
    let fake = Fake::new();
    fake.edit("/proc/self/mountinfo", "size=24684092k", "size=64G");
    let f = fake.audit(Profile::Inference);
    assert_eq!(severity(&f, "shm.larger-than-ram"), Severity::Info);

    // statvfs use is only taken on the host; the rule sees it in the snapshot.
    let mut s = Fake::new().snapshot();
    let shm = s.shm.as_mut().unwrap();
    shm.total = Some(8 * GIB);
    shm.used = Some(7 * GIB);
    let f = audit(&s, Profile::Shared);
    let full = get(&f, "shm.mostly-full");
    assert_eq!(full.severity, Severity::Warn);
    assert!(full.title.contains("88% full"), "{}", full.title);
    s.shm.as_mut().unwrap().used = Some(GIB);
    absent(&audit(&s, Profile::Shared), "shm.mostly-full");
}

#[test]
fn shm_not_mounted_or_not_tmpfs() {
    let fake = Fake::new();
    let mountinfo = fake.read("/proc/self/mountinfo");
    let without: String = mountinfo
        .lines()
        .filter(|l| !l.contains(" /dev/shm "))
        .map(|l| format!("{l}\n"))
        .collect();
    fake.write("/proc/self/mountinfo", &without);
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "shm.not-mounted"), Severity::Warn);
    assert!(get(&f, "shm.not-mounted")
        .fix
        .contains("mount -t tmpfs -o size=5G tmpfs /dev/shm"));

    fake.write(
        "/proc/self/mountinfo",
        mountinfo.replace("- tmpfs tmpfs rw,size=24684092k", "- ext4 /dev/vda rw"),
    );
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "shm.not-tmpfs"), Severity::Warn);
}

// ---------------------------------------------------------------- overcommit

#[test]
fn overcommit_always_is_right_for_training_and_wrong_for_shared() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/overcommit_memory", "1\n");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "overcommit.ok"),
        Severity::Ok
    );
    assert_eq!(
        severity(&fake.audit(Profile::Inference), "overcommit.ok"),
        Severity::Ok
    );
    let f = fake.audit(Profile::Shared);
    let always = get(&f, "overcommit.always");
    assert_eq!(always.severity, Severity::Warn);
    assert!(
        always.fix.contains("sysctl -w vm.overcommit_memory=2"),
        "{}",
        always.fix
    );
    assert!(always
        .fix
        .contains("echo 'vm.overcommit_memory = 2' >> /etc/sysctl.d/90-memtriage.conf"));
}

#[test]
fn overcommit_heuristic_differs_by_profile() {
    let fake = Fake::new();
    let f = fake.audit(Profile::Training);
    let h = get(&f, "overcommit.heuristic");
    assert_eq!(h.severity, Severity::Info);
    assert_eq!(
        h.fix,
        "sysctl -w vm.overcommit_memory=1\necho 'vm.overcommit_memory = 1' >> /etc/sysctl.d/90-memtriage.conf"
    );
    assert_eq!(
        evidence(h, "commit headroom (CommitLimit - Committed_AS)"),
        "11.6 GiB"
    );
    assert_eq!(
        severity(&fake.audit(Profile::Inference), "overcommit.ok"),
        Severity::Ok
    );
    let f = fake.audit(Profile::Shared);
    assert!(get(&f, "overcommit.heuristic")
        .fix
        .contains("vm.overcommit_memory=2"));
}

#[test]
fn strict_overcommit_on_training_with_the_default_ratio() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/overcommit_memory", "2\n");
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "overcommit.never"), Severity::Warn);
    let low = get(&f, "overcommit.ratio-low");
    assert_eq!(low.severity, Severity::Warn);
    assert!(low.title.contains("11.8 GiB of 23.5 GiB"), "{}", low.title);
    assert!(low.fix.contains("sysctl -w vm.overcommit_ratio=95"));
    absent(&f, "overcommit.no-headroom");
}

#[test]
fn strict_overcommit_with_headroom_suits_a_shared_host() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/overcommit_memory", "2\n");
    fake.write("/proc/sys/vm/overcommit_ratio", "95\n");
    fake.meminfo("CommitLimit", 24684092 / 100 * 95);
    for profile in [Profile::Shared, Profile::Inference] {
        let f = fake.audit(profile);
        assert_eq!(severity(&f, "overcommit.ok"), Severity::Ok, "{profile:?}");
        absent(&f, "overcommit.ratio-low");
    }
    assert_eq!(
        severity(&fake.audit(Profile::Training), "overcommit.never"),
        Severity::Warn
    );
}

#[test]
fn strict_overcommit_without_headroom_is_an_error() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/overcommit_memory", "2\n");
    fake.meminfo("Committed_AS", 12342044 + 1000);
    for profile in PROFILES {
        let f = fake.audit(profile);
        let n = get(&f, "overcommit.no-headroom");
        assert_eq!(n.severity, Severity::Error, "{profile:?}");
        assert!(n.title.contains("none"), "{}", n.title);
        assert!(evidence(n, "commit headroom (CommitLimit - Committed_AS)").starts_with('-'));
    }
}

// ---------------------------------------------------------------- swap

fn with_swap(fake: &Fake, size_kb: u64, used_kb: u64) {
    fake.write(
        "/proc/swaps",
        format!("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/nvme0n1p3                          partition\t{size_kb}\t\t{used_kb}\t\t-2\n"),
    );
    fake.meminfo("SwapTotal", size_kb);
    fake.meminfo("SwapFree", size_kb - used_kb);
}

#[test]
fn swap_on_is_wrong_for_training_and_inference_and_fine_for_shared() {
    let fake = Fake::new();
    with_swap(&fake, 8 << 20, 0);
    for profile in [Profile::Training, Profile::Inference] {
        let f = fake.audit(profile);
        let s = get(&f, "swap.enabled");
        assert_eq!(s.severity, Severity::Warn);
        assert!(s.fix.starts_with("swapoff -a"), "{}", s.fix);
        assert_eq!(
            evidence(s, "partition /dev/nvme0n1p3"),
            "8.0 GiB, 0 B used, priority -2"
        );
    }
    let f = fake.audit(Profile::Shared);
    absent(&f, "swap.enabled");
    assert_eq!(severity(&f, "swap.ok"), Severity::Ok);
    fake.write("/proc/sys/vm/swappiness", "100\n");
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "swappiness.high"),
        Severity::Info
    );
}

#[test]
fn no_swap_on_a_shared_host_is_worth_knowing() {
    let fake = Fake::new();
    let f = fake.audit(Profile::Shared);
    assert_eq!(severity(&f, "swap.disabled"), Severity::Info);
    assert_eq!(
        severity(&fake.audit(Profile::Training), "swap.ok"),
        Severity::Ok
    );
}

#[test]
fn heavily_used_swap() {
    let fake = Fake::new();
    with_swap(&fake, 4 << 20, 3 << 20);
    let f = fake.audit(Profile::Shared);
    let h = get(&f, "swap.heavily-used");
    assert_eq!(h.severity, Severity::Warn);
    assert!(h.title.contains("3.0 GiB of 4.0 GiB"), "{}", h.title);
}

// ---------------------------------------------------------------- pressure

#[test]
fn memory_pressure_levels() {
    let fake = Fake::new();
    fake.write(
        "/proc/pressure/memory",
        "some avg10=25.00 avg60=20.00 avg300=5.00 total=99999999\nfull avg10=0.50 avg60=0.40 avg300=0.10 total=1234\n",
    );
    assert_eq!(
        severity(&fake.audit(Profile::Training), "pressure.memory-stalls"),
        Severity::Warn
    );
    fake.write(
        "/proc/pressure/memory",
        "some avg10=60.00 avg60=55.00 avg300=40.00 total=99999999\nfull avg10=30.00 avg60=25.00 avg300=12.00 total=1234\n",
    );
    let f = fake.audit(Profile::Inference);
    assert_eq!(severity(&f, "pressure.memory-stalls"), Severity::Error);
    absent(&f, "pressure.ok");
}

#[test]
fn pressure_absent_or_malformed_is_reported_not_zero() {
    let fake = Fake::new();
    fake.remove("/proc/pressure");
    let s = fake.snapshot();
    assert!(s.pressure.is_none());
    assert!(s.unreadable_reason("pressure").unwrap().contains("absent"));
    let f = audit(&s, Profile::Training);
    assert_eq!(severity(&f, "pressure.unavailable"), Severity::Info);
    assert!(get(&f, "pressure.unavailable").fix.contains("psi=1"));

    fake.write("/proc/pressure/memory", "some avg10=x\n");
    let s = fake.snapshot();
    assert!(s
        .unreadable_reason("pressure")
        .unwrap()
        .contains("malformed"));
    absent(&audit(&s, Profile::Training), "pressure.ok");
}

// ---------------------------------------------------------------- THP

const THP: &str = "/sys/kernel/mm/transparent_hugepage";

#[test]
fn thp_defrag_always_hurts_latency() {
    let fake = Fake::new();
    fake.write(
        &format!("{THP}/defrag"),
        "[always] defer defer+madvise madvise never\n",
    );
    let f = fake.audit(Profile::Inference);
    let d = get(&f, "thp.defrag-always");
    assert_eq!(d.severity, Severity::Warn);
    assert!(
        d.fix
            .contains("echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag"),
        "{}",
        d.fix
    );
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "thp.defrag-always"),
        Severity::Warn
    );
    assert_eq!(
        severity(&fake.audit(Profile::Training), "thp.defrag-always"),
        Severity::Info
    );
}

#[test]
fn thp_defrag_madvise_is_only_flagged_for_inference() {
    let fake = Fake::new();
    assert_eq!(
        severity(&fake.audit(Profile::Inference), "thp.defrag-madvise"),
        Severity::Info
    );
    assert_eq!(
        severity(&fake.audit(Profile::Training), "thp.ok"),
        Severity::Ok
    );
    fake.write(
        &format!("{THP}/defrag"),
        "always defer [defer+madvise] madvise never\n",
    );
    let f = fake.audit(Profile::Inference);
    assert_eq!(severity(&f, "thp.ok"), Severity::Ok);
    assert_eq!(evidence(get(&f, "thp.ok"), "defrag"), "defer+madvise");
}

#[test]
fn thp_enabled_never_and_always() {
    let fake = Fake::new();
    fake.write(&format!("{THP}/enabled"), "always madvise [never]\n");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "thp.disabled"),
        Severity::Info
    );
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "thp.ok"),
        Severity::Ok
    );
    fake.write(&format!("{THP}/enabled"), "[always] madvise never\n");
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "thp.enabled-always"),
        Severity::Info
    );
    absent(&fake.audit(Profile::Training), "thp.enabled-always");
}

#[test]
fn thp_missing_is_unreadable() {
    let fake = Fake::new();
    fake.remove(THP);
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "thp.unreadable"), Severity::Info);
    well_formed(&f);
}

// ---------------------------------------------------------------- huge page pools

const HP2M: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB";
const HP1G: &str = "/sys/kernel/mm/hugepages/hugepages-1048576kB";

#[test]
fn unused_huge_page_pools() {
    let fake = Fake::new();
    fake.write(&format!("{HP2M}/nr_hugepages"), "512\n");
    fake.write(&format!("{HP2M}/free_hugepages"), "512\n");
    let f = fake.audit(Profile::Training);
    let p = get(&f, "hugepages.pool-unused");
    assert_eq!(p.severity, Severity::Info, "1 GiB of 23.5 GiB is small");
    assert!(
        p.title
            .starts_with("1.0 GiB of RAM reserved as 2.0 MiB huge pages"),
        "{}",
        p.title
    );
    assert!(p.fix.contains("sysctl -w vm.nr_hugepages=0"));

    fake.write(&format!("{HP1G}/nr_hugepages"), "8\n");
    fake.write(&format!("{HP1G}/free_hugepages"), "8\n");
    let f = fake.audit(Profile::Training);
    let big = f
        .iter()
        .find(|f| f.id == "hugepages.pool-unused" && f.title.contains("1.0 GiB huge pages"))
        .unwrap();
    assert_eq!(big.severity, Severity::Warn);
    assert!(big
        .fix
        .contains("echo 0 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"));
}

#[test]
fn huge_page_pools_in_use_are_ok() {
    let fake = Fake::new();
    fake.write(&format!("{HP2M}/nr_hugepages"), "512\n");
    fake.write(&format!("{HP2M}/free_hugepages"), "100\n");
    let f = fake.audit(Profile::Inference);
    absent(&f, "hugepages.pool-unused");
    assert!(get(&f, "hugepages.ok").title.contains("1.0 GiB in use"));
    // Reserved but not yet faulted: a mapping has claimed them.
    fake.write(&format!("{HP2M}/free_hugepages"), "512\n");
    fake.write(&format!("{HP2M}/resv_hugepages"), "512\n");
    absent(&fake.audit(Profile::Inference), "hugepages.pool-unused");
}

// ---------------------------------------------------------------- limits

#[test]
fn max_map_count_by_profile() {
    let fake = Fake::new();
    let f = fake.audit(Profile::Training);
    let m = get(&f, "max-map-count.low");
    assert_eq!(m.severity, Severity::Warn);
    assert!(m.fix.starts_with("sysctl -w vm.max_map_count=1048576\n"));
    assert_eq!(
        severity(&fake.audit(Profile::Inference), "max-map-count.low"),
        Severity::Warn
    );
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "max-map-count.low"),
        Severity::Info
    );
    fake.write("/proc/sys/vm/max_map_count", "1048576\n");
    for profile in PROFILES {
        assert_eq!(
            severity(&fake.audit(profile), "max-map-count.ok"),
            Severity::Ok
        );
    }
}

fn set_limit(fake: &Fake, name: &str, soft: &str, hard: &str) {
    let text = fake.read("/proc/self/limits");
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(name) {
                let unit = l.split_whitespace().last().unwrap();
                format!("{name:<26}{soft:<21}{hard:<21}{unit:<10}")
            } else {
                l.to_string()
            }
        })
        .collect();
    fake.write("/proc/self/limits", out.join("\n") + "\n");
}

#[test]
fn memlock_by_profile() {
    let fake = Fake::new();
    // The captured 8 MiB: low for training and inference.
    for profile in [Profile::Training, Profile::Inference] {
        let f = fake.audit(profile);
        let m = get(&f, "memlock.low");
        assert_eq!(m.severity, Severity::Warn);
        assert!(m.fix.contains("ulimit -l unlimited"));
        assert!(m.fix.contains("--ulimit memlock=-1:-1"));
        assert_eq!(
            evidence(m, "max locked memory (this shell)"),
            "soft 8.0 MiB, hard 8.0 MiB"
        );
    }
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "memlock.low"),
        Severity::Info
    );

    set_limit(&fake, "Max locked memory", "4294967296", "4294967296");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "memlock.ok"),
        Severity::Ok
    );
    assert_eq!(
        severity(&fake.audit(Profile::Inference), "memlock.low"),
        Severity::Warn
    );

    set_limit(&fake, "Max locked memory", "unlimited", "unlimited");
    for profile in PROFILES {
        let f = fake.audit(profile);
        assert_eq!(get(&f, "memlock.ok").title, "max locked memory: unlimited");
    }
}

#[test]
fn nofile_by_profile() {
    let fake = Fake::new();
    assert_eq!(
        severity(&fake.audit(Profile::Training), "nofile.ok"),
        Severity::Ok
    );
    set_limit(&fake, "Max open files", "1024", "524288");
    assert_eq!(fake.snapshot().limits.nofile.unwrap().hard, Some(524288));
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "nofile.low"), Severity::Warn);
    assert!(get(&f, "nofile.low").fix.contains("ulimit -n 65536"));
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "nofile.low"),
        Severity::Info
    );
}

// ---------------------------------------------------------------- dirty, NUMA, panic

#[test]
fn dirty_thresholds_high() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/dirty_bytes", format!("{}\n", 32 * GIB));
    let f = fake.audit(Profile::Training);
    let d = get(&f, "dirty.thresholds-high");
    assert_eq!(d.severity, Severity::Info);
    assert!(d.title.contains("32.0 GiB"), "{}", d.title);
    assert!(d
        .fix
        .contains("sysctl -w vm.dirty_background_bytes=1073741824"));
}

#[test]
fn zone_reclaim_and_numa_balancing_on_several_nodes() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/zone_reclaim_mode", "1\n");
    fake.write("/proc/sys/kernel/numa_balancing", "1\n");
    // One node: neither applies.
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "numa.ok"), Severity::Ok);

    fake.write(
        "/sys/devices/system/node/node1/meminfo",
        "Node 1 MemTotal: 1 kB\n",
    );
    let f = fake.audit(Profile::Training);
    let z = get(&f, "numa.zone-reclaim");
    assert_eq!(z.severity, Severity::Warn);
    assert!(z.fix.starts_with("sysctl -w vm.zone_reclaim_mode=0"));
    assert_eq!(severity(&f, "numa.balancing"), Severity::Info);
    let f = fake.audit(Profile::Shared);
    absent(&f, "numa.balancing");
    assert_eq!(severity(&f, "numa.zone-reclaim"), Severity::Warn);
}

#[test]
fn panic_on_oom() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/panic_on_oom", "1\n");
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "panic-on-oom.enabled"),
        Severity::Warn
    );
}

// ---------------------------------------------------------------- cgroup

#[test]
fn cgroup_limit_near_and_ok() {
    let fake = Fake::new();
    fake.write(
        &format!("{MEMCG}/memory.limit_in_bytes"),
        format!("{}\n", 8 * GIB),
    );
    fake.write(
        &format!("{MEMCG}/memory.usage_in_bytes"),
        format!("{}\n", 2 * GIB),
    );
    let f = fake.audit(Profile::Training);
    let ok = get(&f, "cgroup.ok");
    assert_eq!(ok.title, "cgroup limit 8.0 GiB: 2.0 GiB used (25%)");

    fake.write(
        &format!("{MEMCG}/memory.usage_in_bytes"),
        format!("{}\n", 7 * GIB),
    );
    assert_eq!(
        severity(&fake.audit(Profile::Training), "cgroup.limit-near"),
        Severity::Warn
    );
    fake.write(
        &format!("{MEMCG}/memory.usage_in_bytes"),
        format!("{}\n", 8 * GIB - (100 << 20)),
    );
    let f = fake.audit(Profile::Inference);
    let near = get(&f, "cgroup.limit-near");
    assert_eq!(near.severity, Severity::Error);
    assert_eq!(
        evidence(near, "limit"),
        format!(
            "8.0 GiB (set by {})",
            MEMCG.trim_start_matches("/sys/fs/cgroup/memory")
        )
    );
}

#[test]
fn cgroup_oom_kills_and_unreadable_cgroup() {
    let fake = Fake::new();
    fake.write(
        &format!("{MEMCG}/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
    );
    let f = fake.audit(Profile::Shared);
    assert_eq!(severity(&f, "cgroup.oom-kills"), Severity::Warn);
    assert!(get(&f, "cgroup.oom-kills").title.starts_with("3 OOM kills"));

    fake.remove(MEMCG);
    let s = fake.snapshot();
    assert!(s.cgroup.is_none());
    assert!(s
        .unreadable_reason("cgroup")
        .unwrap()
        .contains("not visible"));
    assert_eq!(
        severity(&audit(&s, Profile::Training), "cgroup.unreadable"),
        Severity::Info
    );
}

// ---------------------------------------------------------------- OOM kills

fn with_oom_log(fake: &Fake) {
    let mut log = fake.read("/dev/kmsg");
    log.push_str(&fs::read_to_string(fixtures().join("kmsg-oom")).unwrap());
    fake.write("/dev/kmsg", log);
    fake.edit("/proc/vmstat", "oom_kill 0", "oom_kill 2");
}

#[test]
fn oom_kills_in_the_kernel_log() {
    let fake = Fake::new();
    with_oom_log(&fake);
    fake.write("/proc/uptime", "7300.10 9000.00\n");
    let s = fake.snapshot();
    let kills = s.oom_kills.as_ref().unwrap();
    assert_eq!(kills.len(), 2);
    assert_eq!((kills[0].pid, kills[0].comm.as_str()), (48213, "python"));
    assert_eq!(kills[0].constraint, OomConstraint::Cgroup);
    assert_eq!(kills[0].anon_rss, Some(16720448 * 1024));
    assert_eq!(
        kills[0].memcg.as_deref(),
        Some("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d.slice/cri-containerd-3f9a.scope")
    );
    assert_eq!(kills[0].timestamp, Some(5012.34695));
    assert_eq!(kills[1].constraint, OomConstraint::Global);
    assert_eq!(kills[1].shmem_rss, Some(4 * GIB));

    // The last kill was 100 s ago: an error.
    let f = audit(&s, Profile::Training);
    let oom = get(&f, "oom.recent-kills");
    assert_eq!(oom.severity, Severity::Error);
    assert!(
        oom.title.starts_with(
            "2 processes OOM-killed since boot (1 by a cgroup limit), the last 100 s ago"
        ),
        "{}",
        oom.title
    );
    assert_eq!(evidence(oom, "OOM kills since boot"), "2");
    let last = evidence(oom, "killed pid 51002 (pt_data_worker)");
    assert!(
        last.contains("anon-rss 10.0 GiB")
            && last.contains("shmem-rss 4.0 GiB")
            && last.contains("global out of memory"),
        "{last}"
    );
    let first = evidence(oom, "killed pid 48213 (python)");
    assert!(first.contains("cgroup limit of /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d.slice"), "{first}");
    assert!(oom.fix.contains("resources.limits.memory"));

    // Hours later: still shown, as a warning.
    fake.write("/proc/uptime", "90000.00 1.00\n");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "oom.recent-kills"),
        Severity::Warn
    );
}

#[test]
fn oom_kills_counted_but_log_unreadable_or_rotated() {
    let fake = Fake::new();
    fake.edit("/proc/vmstat", "oom_kill 0", "oom_kill 4");
    // Rotated: the log is readable and holds no OOM lines.
    let f = fake.audit(Profile::Training);
    let k = get(&f, "oom.kills-since-boot");
    assert_eq!(k.severity, Severity::Warn);
    assert!(evidence(k, "kernel log").contains("rotated"));

    fake.remove("/dev/kmsg");
    let s = fake.snapshot();
    assert!(s.oom_kills.is_none());
    assert!(s
        .unreadable_reason("oom_kills")
        .unwrap()
        .contains("does not exist"));
    let f = audit(&s, Profile::Training);
    let k = get(&f, "oom.kills-since-boot");
    assert!(evidence(k, "kernel log").starts_with("unreadable:"));
    assert!(k.fix.contains("dmesg"));

    fake.remove("/proc/vmstat");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "oom.unreadable"),
        Severity::Info
    );
}

#[test]
fn kmsg_reader_on_a_regular_file_drops_dictionary_lines() {
    let fake = Fake::new();
    with_oom_log(&fake);
    let lines = read_kmsg(&Root::at(fake.dir.path())).unwrap();
    assert!(lines.iter().all(|l| !l.starts_with(' ')));
    assert_eq!(lines.len(), 12 + 16);
}

#[cfg(target_os = "linux")]
#[test]
fn kmsg_permission_denied_names_the_privilege() {
    use std::os::unix::fs::PermissionsExt;
    let fake = Fake::new();
    let path = fake.path("/dev/kmsg");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads through any mode: then there is nothing to check.
    if fs::read(&path).is_ok() {
        return;
    }
    let err = read_kmsg(&Root::at(fake.dir.path())).unwrap_err();
    assert!(
        err.contains("needs root or CAP_SYSLOG; dmesg_restrict=1"),
        "{err}"
    );
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

#[test]
fn live_kmsg_reader_returns_ordered_records_without_blocking() {
    let lines = match read_kmsg(&Root::host()) {
        Ok(lines) => lines,
        Err(reason) => {
            // Not root (or no /dev/kmsg in a container): the reason must say so.
            assert!(
                reason.contains("CAP_SYSLOG") || reason.contains("does not exist"),
                "{reason}"
            );
            return;
        }
    };
    assert!(
        !lines.is_empty(),
        "the kernel log has at least the boot banner"
    );
    let seqs: Vec<u64> = lines
        .iter()
        .map(|l| kmsg::parse_line(l).seq.expect(l))
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "records in order");
    assert!(lines.iter().all(|l| !l.contains('\n')));
}

/// A real OOM kill in a v1 memory cgroup of 64 MiB, then found in /dev/kmsg with
/// its cgroup, and counted in /proc/vmstat. Needs root and the v1 memory controller
/// (this machine's layout); elsewhere it says why it did nothing.
#[test]
fn live_cgroup_oom_kill_is_found_in_the_kernel_log() {
    use std::process::Command;
    let hierarchy = Path::new("/sys/fs/cgroup/memory");
    let name = format!("memtriage-doctor-test-{}", std::process::id());
    let dir = hierarchy.join(&name);
    if !hierarchy.join("memory.limit_in_bytes").exists() || fs::create_dir(&dir).is_err() {
        eprintln!("skipped: needs root and the cgroup v1 memory controller");
        return;
    }
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = fs::remove_dir(&self.0);
        }
    }
    let _cleanup = Cleanup(dir.clone());
    fs::write(dir.join("memory.limit_in_bytes"), "67108864").unwrap();
    let before = read(&Root::host()).oom_kill_count.unwrap();

    // `tail` keeps the one endless line of /dev/zero in memory until the limit kills it.
    let procs = dir.join("cgroup.procs");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {} && exec tail /dev/zero",
            procs.display()
        ))
        .status()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(9),
        "killed by the OOM killer: {status:?}"
    );

    let s = read(&Root::host());
    assert!(
        s.oom_kill_count.unwrap() > before,
        "vmstat oom_kill counts it"
    );
    let kills = s.oom_kills.as_ref().expect("root reads the kernel log");
    let kill = kills
        .iter()
        .rev()
        .find(|k| {
            k.memcg.as_deref() == Some(&format!("/{name}")[..])
                || k.oom_memcg.as_deref() == Some(&format!("/{name}")[..])
        })
        .unwrap_or_else(|| panic!("no kill in /{name} among {kills:#?}"));
    assert_eq!(kill.comm, "tail");
    assert_eq!(kill.constraint, OomConstraint::Cgroup);
    let anon = kill.anon_rss.unwrap();
    assert!(
        (16 << 20..=64 << 20).contains(&anon),
        "anon-rss {anon} within the 64 MiB limit"
    );
    // Regression: the log's clock ran 1.5 ms ahead of /proc/uptime, the kill read
    // as "in the future" and doctor did not call it recent.
    let age =
        memtriage_core::diagnose::oom::age(kill.timestamp.unwrap(), s.uptime_seconds.unwrap())
            .expect("a kill of this boot");
    assert!((0.0..60.0).contains(&age), "killed {age} s ago");

    let f = audit(&s, Profile::Training);
    let oom = get(&f, "oom.recent-kills");
    assert_eq!(
        oom.severity,
        Severity::Error,
        "a kill seconds ago is an error"
    );
    assert!(oom
        .evidence
        .iter()
        .any(|e| e.label == format!("killed pid {} (tail)", kill.pid)));
}

// ---------------------------------------------------------------- proactive reclaim

/// A Firecracker guest's DAMON setup: one kdamond over physical memory paging out
/// regions idle for 12 aggregation intervals of 5 s.
fn with_damon_pageout(fake: &Fake) {
    let k = "/sys/kernel/mm/damon/admin/kdamonds";
    fake.write(&format!("{k}/nr_kdamonds"), "1\n")
        .write(&format!("{k}/0/state"), "on\n")
        .write(&format!("{k}/0/contexts/nr_contexts"), "1\n")
        .write(&format!("{k}/0/contexts/0/operations"), "paddr\n")
        .write(
            &format!("{k}/0/contexts/0/monitoring_attrs/intervals/aggr_us"),
            "5000000\n",
        )
        .write(&format!("{k}/0/contexts/0/schemes/nr_schemes"), "1\n")
        .write(&format!("{k}/0/contexts/0/schemes/0/action"), "pageout\n")
        .write(
            &format!("{k}/0/contexts/0/schemes/0/access_pattern/age/min"),
            "12\n",
        );
}

#[test]
fn damon_pageout_warns_an_inference_machine_that_warmed_files_will_not_stay() {
    let fake = Fake::new();
    with_damon_pageout(&fake);
    for profile in PROFILES {
        let f = fake.audit(profile);
        well_formed(&f);
        absent(&f, "proactive-reclaim.ok");
        let want = if profile == Profile::Inference {
            Severity::Warn
        } else {
            Severity::Info
        };
        assert_eq!(
            severity(&f, "proactive-reclaim.active"),
            want,
            "{profile:?}"
        );
        let finding = get(&f, "proactive-reclaim.active");
        assert!(finding.title.contains("idle for 60 s"), "{}", finding.title);
        assert_eq!(
            evidence(finding, "reclaims memory idle for"),
            "60 s (paddr)"
        );
        assert!(
            finding.fix.contains("memtriage warm --lock"),
            "{}",
            finding.fix
        );
        assert!(
            finding.fix.contains("kdamonds/0/state"),
            "names the kdamond to stop: {}",
            finding.fix
        );
    }
    // A stopped kdamond reclaims nothing.
    fake.write("/sys/kernel/mm/damon/admin/kdamonds/0/state", "off\n");
    get(&fake.audit(Profile::Inference), "proactive-reclaim.ok");
}

#[test]
fn a_scheme_over_processes_address_spaces_is_only_worth_knowing() {
    let fake = Fake::new();
    with_damon_pageout(&fake);
    fake.write(
        "/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/operations",
        "vaddr\n",
    );
    let f = fake.audit(Profile::Inference);
    assert_eq!(severity(&f, "proactive-reclaim.active"), Severity::Info);
    let title = &get(&f, "proactive-reclaim.active").title;
    assert!(title.contains("processes it watches"), "{title}");
}

#[test]
fn damon_files_that_cannot_be_read_are_unreadable_not_none() {
    let fake = Fake::new();
    // A directory where the count should be: read fails as it does for a non-root user.
    fs::create_dir_all(fake.path("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds")).unwrap();
    let f = fake.audit(Profile::Inference);
    absent(&f, "proactive-reclaim.ok");
    assert_eq!(severity(&f, "proactive-reclaim.unreadable"), Severity::Info);
}
