//! Resource limits of the shell, by profile: locked memory and open files.

use crate::diagnose::doctor::Profile;
use crate::model::finding::Severity;

use super::{evidence, get, severity, Fake, PROFILES};

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
