//! Transparent huge pages (enabled, defrag) and persistent huge page pools.

use crate::diagnose::doctor::Profile;
use crate::model::finding::Severity;

use super::{absent, evidence, get, severity, well_formed, Fake};

// ---------------------------------------------------------------- THP

const THP: &str = "/sys/kernel/mm/transparent_hugepage";

#[test]
fn thp_defrag_always_hurts_latency() {
    let fake = Fake::new();
    fake.write(&format!("{THP}/enabled"), "[always] madvise never\n");
    fake.write(
        &format!("{THP}/defrag"),
        "[always] defer defer+madvise madvise never\n",
    );
    let f = fake.audit(Profile::Inference);
    let d = get(&f, "thp.defrag-always");
    assert_eq!(d.severity, Severity::Warn);
    assert!(
        d.fix
            .contains("echo defer > /sys/kernel/mm/transparent_hugepage/defrag"),
        "{}",
        d.fix
    );
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "thp.defrag-always"),
        Severity::Warn
    );
    let training = fake.audit(Profile::Training);
    let t = get(&training, "thp.defrag-always");
    assert_eq!(t.severity, Severity::Info);
    assert!(t.fix.contains("echo defer+madvise >"), "{}", t.fix);

    // With enabled=madvise only regions that ask get huge pages: `always` stalls no
    // more faults than `madvise`, and training is not told to change it.
    fake.write(&format!("{THP}/enabled"), "always [madvise] never\n");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "thp.ok"),
        Severity::Ok
    );
    let f = fake.audit(Profile::Inference);
    assert!(f.iter().all(|x| x.id != "thp.defrag-always"));
    assert!(get(&f, "thp.defrag-madvise").fix.contains("echo defer >"));
}

#[test]
fn thp_defrag_madvise_is_only_flagged_for_inference() {
    let fake = Fake::new();
    let f = fake.audit(Profile::Inference);
    let d = get(&f, "thp.defrag-madvise");
    assert_eq!(d.severity, Severity::Info);
    assert!(d.fix.contains("echo defer >"), "{}", d.fix);
    assert_eq!(
        severity(&fake.audit(Profile::Training), "thp.ok"),
        Severity::Ok
    );
    // defer+madvise stalls the same regions as madvise (the ones that ask).
    fake.write(
        &format!("{THP}/defrag"),
        "always defer [defer+madvise] madvise never\n",
    );
    assert_eq!(
        severity(&fake.audit(Profile::Inference), "thp.defrag-madvise"),
        Severity::Info
    );
    fake.write(
        &format!("{THP}/defrag"),
        "always [defer] defer+madvise madvise never\n",
    );
    let f = fake.audit(Profile::Inference);
    assert_eq!(severity(&f, "thp.ok"), Severity::Ok);
    assert_eq!(evidence(get(&f, "thp.ok"), "defrag"), "defer");
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
