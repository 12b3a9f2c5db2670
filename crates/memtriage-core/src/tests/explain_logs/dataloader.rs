//! PyTorch DataLoader workers: shared memory too small (a bus error, no space left on
//! /dev/shm) and workers killed by a signal.

use crate::diagnose::logs::FailureClass;

use super::{evidence, first_match, only_finding, quoted, scan, scan_fixture};

#[test]
fn dataloader_bus_error_is_shared_memory_with_the_exact_fixes() {
    let s = scan_fixture("dataloader-shm-bus-error.log");
    // "exited unexpectedly" is the echo of the bus error, reported with it.
    let f = only_finding(&s, FailureClass::DataloaderShm);
    assert_eq!(
        f.title,
        "A DataLoader worker died of a bus error: /dev/shm is too small"
    );
    for fix in [
        "docker run --shm-size=16g",
        "medium: Memory",
        "/dev/shm",
        "mount -o remount,size=16G /dev/shm",
        "torch.multiprocessing.set_sharing_strategy('file_system')",
    ] {
        assert!(f.fix.contains(fix), "{fix} not in {}", f.fix);
    }
    // The message glued to a tqdm bar is still found, on its own line number.
    assert_eq!(s.matches()[0].line_no, 1);
    assert_eq!(
        first_match(&s, "dataloader.worker-sigbus").capture("pid"),
        Some("2207")
    );
    assert_eq!(
        first_match(&s, "dataloader.worker-exited").capture("pids"),
        Some("2207, 2208")
    );
    assert!(quoted(&f, 15).contains("exited unexpectedly"));
}

#[test]
fn shm_no_space_left_on_device() {
    let s = scan_fixture("dataloader-shm-no-space.log");
    let f = only_finding(&s, FailureClass::DataloaderShm);
    assert_eq!(evidence(&f, "path"), "</torch_2183_1834633429_0>");
    assert!(f.fix.contains("--shm-size=16g"));
    // A full disk elsewhere is not shared memory.
    let s = scan(b"OSError: [Errno 28] No space left on device: '/ckpt/step-100.pt'\n");
    assert!(s.findings().is_empty());
    let s = scan(b"OSError: [Errno 28] No space left on device: '/dev/shm/torch_1_2'\n");
    assert_eq!(
        only_finding(&s, FailureClass::DataloaderShm).evidence[0].value,
        "/dev/shm/torch_1_2"
    );
}

#[test]
fn dataloader_worker_killed_by_sigkill_or_sigsegv() {
    let s = scan_fixture("dataloader-worker-killed.log");
    let f = only_finding(&s, FailureClass::DataloaderWorkerKilled);
    assert_eq!(
        f.title,
        "DataLoader worker (pid 31337) was killed by SIGKILL, most often the OOM killer"
    );
    assert!(f.fix.contains("num_workers"));
    assert!(f.fix.contains("memtriage inspect --tree"));

    let s = scan_fixture("dataloader-worker-segfault.log");
    let f = only_finding(&s, FailureClass::DataloaderWorkerKilled);
    assert_eq!(
        f.title,
        "DataLoader worker (pid 4455) was killed by signal: Segmentation fault"
    );
    assert!(f.fix.contains("num_workers=0"));
    assert!(f.fix.contains("PYTHONFAULTHANDLER=1"));

    // Without the bus error, "exited unexpectedly" is a worker death of its own.
    let s = scan(b"RuntimeError: DataLoader worker (pid(s) 12) exited unexpectedly\n");
    only_finding(&s, FailureClass::DataloaderWorkerKilled);
}
