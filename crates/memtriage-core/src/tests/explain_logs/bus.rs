//! SIGBUS outside shared memory: a memory-mapped file and a disk's I/O errors, told
//! apart from a DataLoader worker's /dev/shm.

use crate::diagnose::logs::FailureClass;

use super::{evidence, first_match, only_finding, scan, scan_fixture};

#[test]
fn bus_error_in_safetensors_is_a_mapped_file_not_shm() {
    let s = scan_fixture("sigbus-mmap-faulthandler.log");
    let f = only_finding(&s, FailureClass::MmapBusError);
    assert_eq!(
        f.title,
        "Python died of a bus error (SIGBUS) in loader.py:27 in load_weights"
    );
    assert_eq!(
        f.evidence[0].value,
        "/opt/venv/lib/python3.11/site-packages/safetensors/torch.py:313 in load_file  [library, site-packages]"
    );
    assert!(evidence(&f, "reading a memory-mapped file in").contains("safetensors/torch.py:313"));
    assert!(f.fix.contains("os.replace"));
}

#[test]
fn bus_error_in_a_dataloader_worker_stack_is_shm() {
    let text = "Fatal Python error: Bus error\n\nCurrent thread 0x1 (most recent call first):\n  File \"/v/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py\", line 308 in _worker_loop\n\nExtension modules: x (total: 1)\n";
    let s = scan(text.as_bytes());
    let f = only_finding(&s, FailureClass::DataloaderShm);
    assert!(f.fix.contains("--shm-size=16g"));
}

#[test]
fn kernel_io_errors_explain_a_bus_error() {
    let s = scan_fixture("sigbus-io-error-dmesg.log");
    let f = only_finding(&s, FailureClass::MmapBusError);
    assert_eq!(f.title, "The disk failed a read: I/O error on nvme1n1");
    assert_eq!(evidence(&f, "sector"), "123456789");
    assert_eq!(
        first_match(&s, "kernel.buffer-io-error").capture("device"),
        Some("nvme1n1p1")
    );
    assert!(f.fix.contains("smartctl"));
}
