//! Batch 23's forms (JavaScript toolchains, Go services, media tools, ML frameworks
//! beyond PyTorch, notebooks, databases), each from the program that prints it, and
//! the reports' own words.

use super::{classes, each_named_first, texts_named_first};

#[test]
fn programs_name_the_allocation_that_failed() {
    each_named_first(&[
        (
            r"[03/07/2020-16:57:34] [E] [TRT] C:\source\rtSafe\safeRuntime.cpp (25) - Cuda Error in nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)",
            "log.cuda-oom",
        ),
        (
            "[03/07/2020-16:57:34] [W] [TRT] GPU memory allocation error during getBestTactic: conv0_fwd",
            "log.cuda-oom",
        ),
        (
            "592 2019-06-07T00:29:56Z [23849] FATAL out of memory in V8 (heap setup)",
            "log.host-alloc-failure",
        ),
        (
            "Error [ERR_WORKER_OUT_OF_MEMORY]: Worker terminated due to reaching memory limit: JS heap out of memory",
            "log.host-alloc-failure",
        ),
        (
            "net.rubyeye.xmemcached.exception.MemcachedServerException: out of memory storing object,key=policy/POLICY-4726d860",
            "log.host-alloc-failure",
        ),
        (
            "gm convert: Memory allocation failed (/home/ubuntu/Downloads/gg/tmp/images-small-1611262202Tkvs19.jpg) [File exists].",
            "log.host-alloc-failure",
        ),
    ]);
}

#[test]
fn crashes_and_kills_in_their_programs_words() {
    each_named_first(&[
        (
            "[2017-06-08 16:27:02.711][6][critical][backtrace] Caught Segmentation fault, suspect faulting address 0x0",
            "log.native-crash",
        ),
        (
            "INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error",
            "log.nccl-failure",
        ),
        ("[#-----------------------------] 69/4190Killed", "log.sigkill"),
        (
            "Post this change the pod is getting restarted with OOMKilled status.",
            "log.oom-kill",
        ),
        (
            "Build crashes due to OOMKill, but with a success exit code (0)",
            "log.oom-kill",
        ),
    ]);
}

/// A Chinese report quotes the error it got (`训练时报\`…\`错误`): reported, not named.
#[test]
fn an_error_quoted_after_a_verb_of_reporting_is_the_writers() {
    each_named_first(&[(
        "使用单张GeForce GTX 750 Ti显卡，显存是2G，在训练RetinaFace时报`MXNetError: cudaMalloc retry failed: out of memory`错误，如果不增加显卡的情况下能否解决这个问题。",
        "log.cuda-oom",
    )]);
}

/// A page's list of what brings an alert on (`This happens when:`) reports nothing;
/// a program's own `This can happen when …` sentence is no such list.
#[test]
fn a_pages_list_of_causes_is_no_report() {
    texts_named_first(&[(
        "The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.\nProcess completed with exit code 137.\n",
        "log.sigkill",
    )]);
    assert!(classes(
        b"Session Restarted (Out of Memory)\nYour session was restarted. This happens when:\n- Your session tried to use more memory than was allocated to it.\n- A process had a memory leak that gradually consumed all available memory\n"
    )
    .is_empty());
}

/// Read after batch 23's set-aside was scored: MLX's Metal allocator, Trino's query
/// limit, TensorFlow's way of naming NCCL's error.
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        (
            "RuntimeError: [metal::malloc] Attempting to allocate 48736917632 bytes which is greater than the maximum allowed buffer size of 30150672384 bytes.",
            "log.cuda-oom",
        ),
        (
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
            "log.cuda-oom",
        ),
        (
            "Query 20240117_021243_00035_3g5dg failed: Query exceeded per-node memory limit of 4.80GB [Allocated: 4.80GB, Delta: 497.44kB]",
            "log.host-alloc-failure",
        ),
        (
            "io.trino.ExceededMemoryLimitException: Query exceeded per-node memory limit of 4.80GB",
            "log.host-alloc-failure",
        ),
        (
            "2023-03-03 13:12:24.938224: I tensorflow/core/common_runtime/executor.cc:1197] [/job:localhost/replica:0/task:0/device:GPU:2] (DEBUG INFO) Executor start aborting: UNKNOWN: Error invoking NCCL: unhandled cuda error",
            "log.nccl-failure",
        ),
    ]);
}
