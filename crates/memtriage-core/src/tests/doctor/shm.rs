//! /dev/shm: its size against RAM for each profile, how full it is, and whether it is
//! a mounted tmpfs at all.

use crate::diagnose::doctor::{audit, Profile};
use crate::model::finding::Severity;

use super::{absent, evidence, get, severity, Fake, GIB, PROFILES};

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
