//! Forms from batch 10's areas, written from the programs that print them:
//! RAPIDS' memory manager, the NVIDIA driver's Windows events, ClickHouse's memory
//! limits, InnoDB's buffer pool, kraken2's loader, gcc's and R's crash reports,
//! cilium/ebpf's locked-memory hint, Cloud Run's limit in bare units.

use super::each_named_first;

#[test]
fn each_service_and_tool_is_read_in_its_own_words() {
    each_named_first(&[
        (
            r#"xgboost.core.XGBoostError: [02:14:02] /work/src/c_api/../common/device_helpers.cuh:393: Memory allocation error on worker 0: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory"#,
            "log.cuda-oom",
        ),
        (
            r#"MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/device/pool_memory_resource.hpp:188: Maximum pool size exceeded"#,
            "log.cuda-oom",
        ),
        (
            r#"terminate called after throwing an instance of 'rmm::out_of_memory'"#,
            "log.cuda-oom",
        ),
        (
            r#"The description for Event ID 153 from source nvlddmkm cannot be found. Either the component that raises this event is not installed on your local computer or the installation is corrupted."#,
            "log.gpu-xid",
        ),
        (
            r#"The description for Event ID 13 from source nvlddmkm cannot be found."#,
            "log.gpu-xid",
        ),
        (
            r#"2021.02.26 00:42:41.734859 [ 14500 ] {161ad650-be23-4a05-a205-ac18f746702b} <Error> DynamicQueryHandler: Code: 241, e.displayText() = DB::Exception: Memory limit (total) exceeded: would use 64.00 GiB (attempt to allocate chunk of 4217828 bytes), maximum: 64.00 GiB"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Code: 241. DB::Exception: Memory limit (for query) exceeded: would use 9.31 GiB (attempt to allocate chunk of 4194304 bytes), maximum: 9.31 GiB. (MEMORY_LIMIT_EXCEEDED)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"DB::Exception: Received from localhost:9000. DB::Exception: (total) memory limit exceeded: would use 2.07 GiB (attempt to allocate chunk of 4624776 bytes), current RSS 63.00 GiB, maximum: 60.00 GiB."#,
            "log.host-alloc-failure",
        ),
        (
            r#"    Loading database information...Failed attempt to allocate 45977025096bytes;"#,
            "log.host-alloc-failure",
        ),
        (
            r#"virtual memory exhausted: Cannot allocate memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"cc1plus: out of memory allocating 65536 bytes after a total of 1893462016 bytes"#,
            "log.host-alloc-failure",
        ),
        (
            r#"2016-12-29T15:17:43.852152Z 0 [ERROR] InnoDB: Cannot allocate memory for the buffer pool"#,
            "log.host-alloc-failure",
        ),
        (
            r#"2016-12-29T15:17:43.851927Z 0 [ERROR] InnoDB: mmap(137428992 bytes) failed; errno 12"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Error: load tracer noBpf objects failed: field DoAccept: program do_accept: map settings: map create: operation not permitted (MEMLOCK may be too low, consider rlimit.RemoveMemlock)"#,
            "log.memlock-limit",
        ),
        (
            r#"/usr/include/stdc-predef.h:32:92: internal compiler error: Segmentation fault"#,
            "log.native-crash",
        ),
        (r#" *** caught segfault ***"#, "log.native-crash"),
        (r#" *** caught bus error ***"#, "log.native-crash"),
        (r#" *** caught illegal operation ***"#, "log.native-crash"),
        (
            r#"Memory limit of 953M exceeded with 967M used. Consider increasing the memory limit, see https://cloud.google.com/run/docs/configuring/memory-limits"#,
            "log.oom-kill",
        ),
    ]);
}
