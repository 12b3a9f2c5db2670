//! Overcommit accounting: `vm.overcommit_memory` and strict mode's ratio and headroom,
//! against each profile.

use crate::diagnose::doctor::Profile;
use crate::model::finding::Severity;

use super::{absent, evidence, get, severity, Fake, PROFILES};

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
