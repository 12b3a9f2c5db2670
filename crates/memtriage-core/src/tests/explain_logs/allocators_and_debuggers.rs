//! Forms written from the programs that print them, for the messages batch 9's
//! set-aside third showed no rule read: glibc's heap checks, cuda-gdb's and
//! compute-sanitizer's reports of a stray access, the driver's lost GPU, vLLM's
//! negative KV-cache budget, Deeplearning4j's device allocation, Rust's io errors,
//! V8's and Electron's fatal out-of-memory.

use super::each_named_first;

#[test]
fn glibcs_heap_and_bounds_checks_are_native_crashes() {
    each_named_first(&[
        (r#"malloc(): corrupted top size"#, "log.native-crash"),
        (r#"malloc(): memory corruption"#, "log.native-crash"),
        (r#"malloc(): memory corruption (fast)"#, "log.native-crash"),
        (
            r#"malloc(): smallbin double linked list corrupted"#,
            "log.native-crash",
        ),
        (r#"malloc(): invalid size (unsorted)"#, "log.native-crash"),
        (
            r#"malloc(): unaligned tcache chunk detected"#,
            "log.native-crash",
        ),
        (r#"free(): invalid pointer"#, "log.native-crash"),
        (r#"free(): invalid size"#, "log.native-crash"),
        (r#"free(): invalid next size (fast)"#, "log.native-crash"),
        (r#"free(): invalid next size (normal)"#, "log.native-crash"),
        (
            r#"free(): double free detected in tcache 2"#,
            "log.native-crash",
        ),
        (r#"double free or corruption (out)"#, "log.native-crash"),
        (r#"double free or corruption (!prev)"#, "log.native-crash"),
        (r#"double free or corruption (fasttop)"#, "log.native-crash"),
        (r#"corrupted size vs. prev_size"#, "log.native-crash"),
        (r#"corrupted double-linked list"#, "log.native-crash"),
        (r#"munmap_chunk(): invalid pointer"#, "log.native-crash"),
        (r#"realloc(): invalid next size"#, "log.native-crash"),
        (
            r#"malloc_consolidate(): invalid chunk size"#,
            "log.native-crash",
        ),
        (
            r#"*** Error in `./a.out': double free or corruption (fasttop): 0x0000000001c3d010 ***"#,
            "log.native-crash",
        ),
        (
            r#"*** Error in `python3': free(): invalid pointer: 0x00007f3a9c000b20 ***"#,
            "log.native-crash",
        ),
        (
            r#"*** stack smashing detected ***: terminated"#,
            "log.native-crash",
        ),
        (
            r#"*** buffer overflow detected ***: terminated"#,
            "log.native-crash",
        ),
        (
            r#"*** stack smashing detected ***: <unknown> terminated"#,
            "log.native-crash",
        ),
    ]);
}

#[test]
fn each_debugger_driver_and_runtime_is_read_in_its_own_words() {
    each_named_first(&[
        (
            r#"CUDA Exception: Warp Out-of-range Address"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"Program received signal CUDA_EXCEPTION_5, Warp Out-of-range Address."#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"CUDA Exception: Warp Illegal Address"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"Program received signal CUDA_EXCEPTION_14, Warp Illegal Address."#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"CUDA Exception: Lane Illegal Address"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"CUDA Exception: Device Illegal Address"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"CUDA Exception: Warp Misaligned Address"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"========= Invalid __global__ read of size 4 bytes"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"========= Invalid __global__ write of size 8 bytes"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"========= Invalid __shared__ write of size 4 bytes"#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"========= Program hit cudaErrorIllegalAddress (error 700) due to "an illegal memory access was encountered" on CUDA API call to cudaDeviceSynchronize."#,
            "log.cuda-illegal-memory-access",
        ),
        (
            r#"Feb 17 08:00:34 dgx-a100 kernel: NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned from rmStatus @ kernel_ce_gv100.c:106"#,
            "log.gpu-xid",
        ),
        (
            r#"Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU"#,
            "log.gpu-xid",
        ),
        (
            r#"Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error"#,
            "log.gpu-xid",
        ),
        (
            r#"INFO 02-26 09:54:05 worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch activation peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB."#,
            "log.cuda-oom",
        ),
        (
            r#"Caused by: java.lang.RuntimeException: Failed to allocate 637074016 bytes from DEVICE [0] memory"#,
            "log.cuda-oom",
        ),
        (
            r#"org.nd4j.linalg.exception.ND4JIllegalStateException: Allocation failed: [[DEVICE] allocation failed; Error code: [2]]"#,
            "log.cuda-oom",
        ),
        (
            r#"OSError: Cannot allocate memory (os error 12)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Error: Os { code: 12, kind: OutOfMemory, message: "Cannot allocate memory" }"#,
            "log.host-alloc-failure",
        ),
        (
            r#"fork/exec /usr/bin/git: cannot allocate memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"runtime: out of memory: cannot allocate 4194304-byte block (3997171712 in use)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"# Fatal process out of memory: Zone"#,
            "log.host-alloc-failure",
        ),
        (
            r#"# Fatal process out of memory: Failed to reserve virtual memory for CodeRange"#,
            "log.host-alloc-failure",
        ),
        (
            r#"- 2024-12-23T07:47:54.523+05:30,Renderer process oom - see https://www.electronjs.org/docs/tutorial/application-debugging for potential debugging information."#,
            "log.host-alloc-failure",
        ),
        (
            r#"render-process-gone { reason: 'oom', exitCode: -536870904 }"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Error: Os { code: 24, kind: Uncategorized, message: "Too many open files" }"#,
            "log.too-many-open-files",
        ),
        (
            r#"thread 'main' panicked at src/main.rs:12:5: Too many open files (os error 24)"#,
            "log.too-many-open-files",
        ),
    ]);
}
