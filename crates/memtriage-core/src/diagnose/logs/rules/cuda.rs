//! CUDA: the caching allocator out of memory, pinned host memory, illegal accesses and
//! device-side assertions.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::diagnose::ids;
use crate::model::finding::Severity::Error;

pub(super) static RULES: &[Rule] = &[
    // ---- CUDA --------------------------------------------------------------------
    Rule {
        optional: &[
            r"Tried to allocate (?P<asked>SIZE)",
            r"GPU (?P<gpu>\d+) has a total capacity of (?P<total>SIZE) of which (?P<free>SIZE) is free",
            r"this process has (?P<in_use>SIZE) memory in use",
            r"Of the allocated memory (?P<allocated>SIZE) is allocated by PyTorch, and (?P<reserved_unallocated>SIZE) is reserved by PyTorch but unallocated",
            r"\(GPU (?P<gpu>\d+); (?P<total>SIZE) total capacity; (?P<allocated>SIZE) already allocated; (?P<free>SIZE) free;",
            r"(?P<reserved>SIZE) reserved in total by PyTorch",
        ],
        ..rule(
            "torch.cuda-oom",
            C::CudaOom,
            Error,
            &["CUDA out of memory"],
            r"CUDA out of memory\.",
            "CUDA out of memory on GPU {gpu}: asked for {asked} with {free} free of {total}",
        )
    },
    Rule {
        why: Some(
            "Page-locked (pinned) host memory counts against RLIMIT_MEMLOCK and cannot be swapped; when the limit or \
             the host's memory is reached, pinning fails.",
        ),
        fix: Some(
            "Raise the locked-memory limit: ulimit -l unlimited (shell), LimitMEMLOCK=infinity (systemd), \
             docker run --ulimit memlock=-1, or /etc/security/limits.conf: * - memlock unlimited.\nOr pin less: \
             DataLoader(pin_memory=False), fewer workers.",
        ),
        ..rule(
            "torch.pinned-memory",
            C::MemlockLimit,
            Error,
            &["cudaHost", "CachingHostAllocator", "pin memory thread", "pin_memory"],
            r"(?:cudaHostAlloc|cudaHostRegister|CachingHostAllocator|pin memory thread|pin_memory).*(?:out of memory|[Ff]ailed|[Ee]rror|Cannot allocate memory)|(?:Error|[Ff]ailed).*(?:cudaHostAlloc|cudaHostRegister|CachingHostAllocator|pin memory thread)",
            "Pinning host memory failed",
        )
    },
    rule(
        "cuda.runtime-oom",
        C::CudaOom,
        Error,
        &["CUDA error: out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "cudaError"],
        r"CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED|cudaErrorMemoryAllocation",
        "CUDA out of memory (outside PyTorch's caching allocator)",
    ),
    rule(
        "cuda.illegal-address",
        C::CudaIllegalMemoryAccess,
        Error,
        &["illegal memory access", "cudaError"],
        r"an illegal memory access was encountered|cudaErrorIllegalAddress",
        "CUDA error: an illegal memory access was encountered",
    ),
    rule(
        "cuda.misaligned-or-launch-failure",
        C::CudaIllegalMemoryAccess,
        Error,
        &["CUDA error: misaligned address", "unspecified launch failure"],
        r"CUDA error: (?P<error>misaligned address|unspecified launch failure)",
        "CUDA error: {error}",
    ),
    rule(
        "cuda.kernel-assertion",
        C::CudaDeviceAssert,
        Error,
        &["Assertion `"],
        r"(?P<file>[^\s:]+\.cuh?):(?P<line>\d+): .*?Assertion `(?P<assertion>.+)` failed",
        "A CUDA kernel assertion failed in {file}:{line}: {assertion}",
    ),
    rule(
        "cuda.device-side-assert",
        C::CudaDeviceAssert,
        Error,
        &["device-side assert triggered"],
        r"device-side assert triggered",
        "CUDA error: device-side assert triggered",
    ),
];

pub(super) const CUDA_OOM: ClassInfo = ClassInfo {
    class: C::CudaOom,
    name: "cuda_oom",
    id: ids::LOG_CUDA_OOM,
    title: "CUDA out of memory",
    why: "PyTorch asked the GPU for more memory than was free.",
    fix: "Lower the peak: a smaller batch (gradient accumulation keeps the effective batch), activation \
          checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast(dtype=torch.bfloat16)); \
          do not keep tensors across steps (loss.item(), not loss, in running totals).\nSee the peak: \
          torch.cuda.memory_summary(), torch.cuda.max_memory_allocated().",
};

pub(super) const CUDA_ILLEGAL_MEMORY_ACCESS: ClassInfo = ClassInfo {
    class: C::CudaIllegalMemoryAccess,
    name: "cuda_illegal_memory_access",
    id: ids::LOG_CUDA_ILLEGAL_MEMORY_ACCESS,
    title: "CUDA error: an illegal memory access was encountered",
    why: "A GPU kernel read or wrote memory outside any allocation (an out-of-range index, a use after free, \
          a race). The CUDA context is now unusable: every later CUDA call fails.",
    fix: CUDA_ASYNC_FIX,
};

pub(super) const CUDA_DEVICE_ASSERT: ClassInfo = ClassInfo {
    class: C::CudaDeviceAssert,
    name: "cuda_device_assert",
    id: ids::LOG_CUDA_DEVICE_ASSERT,
    title: "CUDA error: device-side assert triggered",
    why: "A check inside a GPU kernel failed, most often an index out of range (a label ≥ num_classes in a \
          loss, a token id ≥ vocabulary size in an embedding). The CUDA context is now unusable.",
    fix: CUDA_ASYNC_FIX,
};

const CUDA_ASYNC_FIX: &str = "Rerun with CUDA_LAUNCH_BLOCKING=1 python … : CUDA reports errors asynchronously, at a later \
     call far from the kernel that failed; with it the traceback points at the real launch.\nBuild-time checks: \
     TORCH_USE_CUDA_DSA=1 (device-side assertions with the failing kernel named, needs a PyTorch built with it).\n\
     Find the bad access: compute-sanitizer --tool memcheck python train.py";
