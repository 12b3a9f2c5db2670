//! Proactive reclaim: DAMON schemes that page out idle memory, and DAMON files that
//! cannot be read.

use std::fs;

use crate::diagnose::doctor::Profile;
use crate::model::finding::Severity;

use super::{absent, evidence, get, severity, well_formed, Fake, PROFILES};

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
