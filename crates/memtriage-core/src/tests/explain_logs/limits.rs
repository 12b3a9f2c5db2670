//! Per-process limits: memory mappings (vm.max_map_count), open files of tensor
//! sharing, and locked memory of RDMA, pinned memory and NCCL.

use crate::diagnose::logs::FailureClass;

use super::{evidence, first_match, only_finding, scan, scan_fixture};

#[test]
fn max_map_count_enomem() {
    let s = scan_fixture("max-map-count.log");
    let f = only_finding(&s, FailureClass::MaxMapCount);
    assert_eq!(evidence(&f, "path"), "/data/shards/shard-00123.bin");
    assert!(f.fix.starts_with("sysctl -w vm.max_map_count=1048576"));
    let s = scan(b"mmap failed: Cannot allocate memory\n");
    only_finding(&s, FailureClass::MaxMapCount);
    // A JVM's mapped file, and a runtime that could not protect a page (both ENOMEM
    // of the mapping count).
    for line in [
        "Caused by: java.lang.OutOfMemoryError: Map failed\n",
        "# Native memory allocation (mprotect) failed to protect 16384 bytes.\n",
        "loom: fault mprotect (197681): Out of memory\n",
    ] {
        only_finding(&scan(line.as_bytes()), FailureClass::MaxMapCount);
    }
    // ENOMEM without mmap is not a mapping limit: the host refused memory.
    only_finding(
        &scan(b"OSError: [Errno 12] Cannot allocate memory\n"),
        FailureClass::HostAllocFailure,
    );
}

#[test]
fn too_many_open_files_from_tensor_sharing() {
    let s = scan_fixture("too-many-open-files.log");
    let f = only_finding(&s, FailureClass::TooManyOpenFiles);
    assert!(f.fix.contains("ulimit -n 1048576"));
    assert!(f
        .fix
        .contains("torch.multiprocessing.set_sharing_strategy('file_system')"));
    assert_eq!(s.matches().len(), 2);
}

#[test]
fn memlock_failures_of_rdma_and_pinned_memory() {
    let s = scan_fixture("memlock-ibv.log");
    // The NCCL WARN about ibv_reg_mr is a memlock failure, not a generic NCCL warning.
    let f = only_finding(&s, FailureClass::MemlockLimit);
    assert!(f.fix.starts_with("ulimit -l unlimited"));
    assert!(f.fix.contains("--ulimit memlock=-1"));
    assert_eq!(
        first_match(&s, "rdma.memlock-warning").capture("limit"),
        Some("65536")
    );

    let s = scan_fixture("memlock-pinned.log");
    let ids: Vec<String> = s.findings().into_iter().map(|f| f.id).collect();
    assert!(ids.contains(&"log.memlock-limit".to_string()), "{ids:?}");
    let f = s
        .findings()
        .into_iter()
        .find(|f| f.id == "log.memlock-limit")
        .unwrap();
    assert!(f.fix.contains("ulimit -l unlimited"));
}

#[test]
fn nccl_ib_enomem_is_memlock_and_verbose_process_group_lines_are_not_candidates() {
    let s = scan(b"gpu-node-3:1:2 [0] NCCL WARN NET/IB : Unable to register memory: Cannot allocate memory\n");
    only_finding(&s, FailureClass::MemlockLimit);
    let s = scan(b"[rank0]:[I1121 06:00:05.0 ProcessGroupNCCL.cpp:917] ProcessGroupNCCL work enqueued: seq 1\n");
    assert!(s.matches().is_empty());
    let s = scan(b"[rank0]:[E1121 06:00:05.0 ProcessGroupNCCL.cpp:630] [Rank 0] Some NCCL operations have failed or timed out.\n");
    only_finding(&s, FailureClass::NcclFailure);
}
