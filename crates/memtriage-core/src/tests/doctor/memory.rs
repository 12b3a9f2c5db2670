//! `doctor`'s memory checks: memory available, swap and memory pressure (PSI).

use crate::diagnose::doctor::{audit, Profile};
use crate::model::finding::Severity;

use super::{absent, evidence, get, severity, Fake};

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
