//! The memory cgroup of the shell: its limit, its OOM kills, and a cgroup that cannot
//! be read.

use crate::diagnose::doctor::{audit, Profile};
use crate::model::finding::Severity;

use super::{evidence, get, severity, Fake, GIB, MEMCG};

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
