//! The GPU driver's Xid errors and NCCL's collectives timing out.

use crate::diagnose::logs::FailureClass;
use crate::model::finding::Severity;

use super::{evidence, only_finding, scan, scan_fixture};

#[test]
fn xid_79_in_journalctl() {
    let s = scan_fixture("xid-79-journalctl.log");
    let f = only_finding(&s, FailureClass::GpuXid);
    assert_eq!(f.severity, Severity::Error);
    // Meaning and next step come from the Xid catalogue (diagnose/xid_catalog.json).
    assert!(
        f.title
            .starts_with("GPU Xid 79 on PCI:0000:3b:00: The GPU stopped answering on PCIe"),
        "{}",
        f.title
    );
    assert!(
        f.fix.starts_with("The GPU needs a reset (or a reboot)"),
        "{}",
        f.fix
    );
    assert!(f.fix.contains("Drain the node and reboot it"), "{}", f.fix);
    assert!(f.fix.contains("dcgmi diag -r 2"), "{}", f.fix);
}

#[test]
fn several_xids_each_explained_worst_first() {
    let s = scan_fixture("xid-dmesg.log");
    let findings = s.findings();
    let f = findings
        .iter()
        .find(|f| f.id == "log.gpu-xid")
        .expect("gpu-xid");
    for xid in [13, 43, 45] {
        assert!(
            f.evidence.iter().any(|e| e.label == format!("Xid {xid}")),
            "{xid}"
        );
    }
    // The ECC Xids are their own finding: they call for the hardware's triage.
    let ecc = findings
        .iter()
        .find(|f| f.id == "log.gpu-ecc")
        .expect("gpu-ecc");
    assert!(evidence(ecc, "Xid 94").starts_with("An uncorrectable memory error was contained"));
    assert!(ecc.evidence.iter().any(|e| e.label == "Xid 63"));
    assert!(evidence(f, "Xid 13").ends_with("pid 41235 (python)"));
    assert!(f.title.starts_with("GPU Xid 13 on PCI:0000:18:00"));
    // Xid 45 alone is the driver cleaning up: information, not the failure.
    let s = scan(b"[ 1.0] NVRM: Xid (PCI:0000:18:00): 45, pid=1, name=python, Ch 00000008\n");
    assert_eq!(
        only_finding(&s, FailureClass::GpuXid).severity,
        Severity::Info
    );
}

#[test]
fn nccl_watchdog_timeout_through_torchrun_rank_prefixes() {
    let s = scan_fixture("nccl-timeout.log");
    let f = only_finding(&s, FailureClass::NcclFailure);
    assert_eq!(
        f.title,
        "NCCL collective ALLREDUCE (SeqNum 52113) timed out after 600023 ms"
    );
    assert_eq!(evidence(&f, "timeout ms"), "600000");
    assert_eq!(evidence(&f, "rank"), "3");
    assert!(f.fix.contains("TORCH_NCCL_TRACE_BUFFER_SIZE"));
    assert!(f.fix.contains("init_process_group(timeout="));
}
