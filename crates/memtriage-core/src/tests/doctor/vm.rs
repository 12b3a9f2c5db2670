//! vm sysctls that limit or stall jobs: `vm.max_map_count` by profile and dirty page
//! thresholds.

use crate::diagnose::doctor::Profile;
use crate::model::finding::Severity;

use super::{get, severity, Fake, GIB, PROFILES};

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
