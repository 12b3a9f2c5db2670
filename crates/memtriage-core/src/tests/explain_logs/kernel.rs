//! The kernel itself: oopses and memory pressure.

use crate::diagnose::logs::FailureClass;
use crate::model::finding::Severity;

use super::{first_match, only_finding, scan, scan_fixture};

#[test]
fn kernel_oops_and_memory_pressure() {
    let s = scan_fixture("kernel-oops-dmesg.log");
    let f = only_finding(&s, FailureClass::KernelOops);
    assert_eq!(
        f.title,
        "Kernel oops in the nvidia module, a GPU driver, while python (pid 9911) ran"
    );
    assert!(f.why.contains("PAGE_FAULT_IN_NONPAGED_AREA"));
    for line in [
        "[ 1.0] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP",
        "[ 1.0] Kernel panic - not syncing: Fatal exception",
        "[ 1.0] kernel BUG at mm/slub.c:123!",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        only_finding(&s, FailureClass::KernelOops);
    }

    let s = scan_fixture("memory-pressure-dmesg.log");
    let f = only_finding(&s, FailureClass::MemoryPressure);
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.title,
        "Memory reclaim stalled: kswapd0 was blocked for more than 122 s"
    );
    assert_eq!(
        first_match(&s, "kernel.page-allocation-failure").capture("order"),
        Some("4")
    );
}
