//! Batch 26's forms (observability stacks, CI farms, robots and boards, blockchain
//! nodes and miners, LLM training), each from the program that prints it, and the
//! words of the threads that name the killer.

use super::{classes, each_named_first, lines_raise_nothing, scan, texts_named_first};
use crate::model::finding::Severity;

#[test]
fn gpu_drivers_and_miners_name_the_fault() {
    each_named_first(&[
        (
            "[51023.896095] amdgpu 0000:01:00.0: GPU fault detected: 146 0x03c84404 for process lolMiner pid 2787 thread lolMiner pid 2787",
            "log.cuda-illegal-memory-access",
        ),
        (
            "[51023.896103] amdgpu 0000:01:00.0:   VM_CONTEXT1_PROTECTION_FAULT_ADDR   0x00305679",
            "log.cuda-illegal-memory-access",
        ),
        (
            "nvgpu: 17000000.gpu      gv11b_fb_mmu_fault_info_dump:294  [ERR]  [MMU FAULT] mmu engine id:  18, ch id:  479, fault addr: 0x0, fault addr aperture: 0, fault type: invalid pde",
            "log.cuda-illegal-memory-access",
        ),
        (
            "nvgpu: 17000000.gpu       nvgpu_tsg_set_ctx_mmu_error:1069 [ERR]  TSG 8 generated a mmu fault",
            "log.cuda-illegal-memory-access",
        ),
        (
            "[2019-12-12 19:12:13.521]  ocl  error CL_MEM_OBJECT_ALLOCATION_FAILURE when calling clCreateBuffer with buffer size 2181038080",
            "log.cuda-oom",
        ),
        (
            "Unrecoverable memory error by GPU 2. Reset of all Cuda GPUs required. Please check your (memory) OC & UV settings on this card.",
            "log.gpu-ecc",
        ),
    ]);
}

#[test]
fn a_launch_failure_beside_its_xid_is_the_xid() {
    let text = "TREX: Can't find nonce with device [ID=4, GPU: #4], cuda exception: CUDA_ERROR_LAUNCH_FAILED, try to reduce overclock to stabilize GPU state\n\
                Jul 25 06:41:44 rig kernel: NVRM: Xid (PCI:0000:08:00): 69, pid=26803, Class Error: ChId 0014, Class 0000c7c0, Offset 00001b0c, Data ffffffff, ErrorCode 0000000c\n";
    assert_eq!(
        classes(text.as_bytes()).first().map(String::as_str),
        Some("log.gpu-xid")
    );
    // Alone, it is CUDA's.
    each_named_first(&[(
        "RuntimeError: CUDA error: unspecified launch failure",
        "log.cuda-illegal-memory-access",
    )]);
}

#[test]
fn services_and_compilers_name_their_limits() {
    each_named_first(&[
        (
            "2023-01-12T11:39:25.971Z\twarn\tmemorylimiterprocessor@v0.66.0/memorylimiter.go:312\tMemory usage is above soft limit. Dropping data.\t{\"kind\": \"processor\", \"cur_mem_mib\": 87}",
            "log.memory-pressure",
        ),
        (
            "[2025-07-28T21:51:44.891587812Z ERROR solana_accounts_db::io_uring::memory] Unable to increase the maximum memory lock limit to 2000000000 from 65536",
            "log.memlock-limit",
        ),
        (
            "c:\\src\\big.cpp(1): fatal error C1060: compiler is out of heap space",
            "log.host-alloc-failure",
        ),
        (
            "LLM reason: CI failed due to a GCC 12 internal compiler error (segmentation fault) while compiling src/rpc/blockchain.cpp.",
            "log.native-crash",
        ),
    ]);
    lines_raise_nothing(&[
        "2023-01-12T11:39:30.975Z\tinfo\tmemorylimiterprocessor@v0.66.0/memorylimiter.go:298\tMemory usage back within limits. Resuming normal operation.",
    ]);
}

#[test]
fn a_thread_names_the_killer_of_its_kill() {
    texts_named_first(&[
        (
            "Exception in thread \"main\" java.lang.RuntimeException: starting java failed with [137]\n\n\
             jasontedor · comment · 2019-08-03\nA JVM exit code of 137 means that the JVM was killed with `SIGKILL`. This is almost surely your kernel OOM killer (check your system logs).\n",
            "log.oom-kill",
        ),
        (
            "| x86_64-oe-linux-g++: fatal error: Killed signal terminated program cc1plus\n\nThat is the OOM killer, not a compiler fault.\n",
            "log.oom-kill",
        ),
        (
            "After some time i encountered workflow that resulted in OOM kill of the process.\n",
            "log.oom-kill",
        ),
    ]);
}

#[test]
fn a_sawtooth_and_an_faq_report_nothing() {
    for page in [
        "The graylog-collector-service-x64 process uses about 70MB of ram which starts growing about 1MB/s until it reaches ~133MB and falls back to ~70MB.\n",
        "# FAQ: I keep getting “Too many open files” when my node is syncing\n\n## Reasons for getting “Too many open files”\n* **ulimit** is set too low.\n",
    ] {
        let said = classes(page.as_bytes());
        assert!(said.is_empty(), "{said:?}\n{page}");
    }
    // A rise that never falls back stays one.
    texts_named_first(&[(
        "The process uses about 70MB of ram which keeps growing until it reaches 2GB and it never falls back to 70MB.\n",
        "log.memory-growth",
    )]);
}

#[test]
fn a_bus_error_the_thread_blames_on_shared_memory_is_shared_memorys() {
    let nccl = "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n\
                 2 0x000000000007587d ncclGroupEnd()  ???:0\n\n\
                 guanyonglai · comment · 2023-01-31\n\
                 这个是因为docker run的时候默认分配的共享内存不够，只有64M。可以在docker run的时候加上--shm-size=\"6g\"。\n";
    assert_eq!(
        classes(nccl.as_bytes()).first().map(String::as_str),
        Some("log.dataloader-shm")
    );
    // Without that word it stays a bus error of its own.
    let alone =
        "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n";
    assert_eq!(
        classes(alone.as_bytes()).first().map(String::as_str),
        Some("log.mmap-bus-error")
    );
    // The word alone is context, no failure: one finding of its own, at info.
    let said = scan(b"Docker's default shared memory is not enough for NCCL.\n").findings();
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].id, "log.dataloader-shm");
    assert_eq!(said[0].severity, Severity::Info);
}

#[test]
fn miners_runtimes_and_trainers_name_the_failure() {
    each_named_first(&[
        (
            "nv   thread #0 failed with error <randomx_prepare>:43 \"out of memory\"",
            "log.cuda-oom",
        ),
        (
            "[2023/02/22 07:29:06] [engine] caught signal (SIGSEGV)",
            "log.native-crash",
        ),
        (
            "Jul 29 11:22:20 solana solana-start[1859054]:                         Please increase sysctl vm.max_map_count or equivalent for your platform.",
            "log.max-map-count",
        ),
    ]);
    texts_named_first(&[(
        "[Rank 0] Watchdog caught collective operation timeout:\n  WorkNCCL(..., OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)\n  ran for 1800090 milliseconds before timing out.\n",
        "log.nccl-failure",
    )]);
}

#[test]
fn a_segfault_told_in_spanish_is_one() {
    texts_named_first(&[(
        "Cuando pruebo con 800.000 núcleos se me cae y me dice la típica violación de segmento.\n",
        "log.native-crash",
    )]);
}

#[test]
fn a_rise_brought_down_by_a_restart_is_no_sawtooth() {
    for rise in [
        "Memory keeps growing until the pod restarts and then goes back to 200MB.\n",
        "We went back to v1.2 and memory still grows over time.\n",
    ] {
        assert!(
            classes(rise.as_bytes())
                .iter()
                .any(|id| id == "log.memory-growth"),
            "{rise}"
        );
    }
}
