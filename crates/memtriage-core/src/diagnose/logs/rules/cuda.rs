//! CUDA: the caching allocator out of memory, pinned host memory, illegal accesses and
//! device-side assertions.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::model::finding::Certainty::Likely;
use crate::model::finding::Severity::Error;
use crate::model::ids;

/// The caching allocator's own report that the device's memory ran out (`CUDA out of
/// memory. Tried to allocate …`), not a CUDA call's `CUDA error: out of memory`.
pub(in super::super) const CACHING_ALLOCATOR_OOM: &str = "torch.cuda-oom";

/// The DataLoader's wrapper over an error of its pin memory thread.
pub(in super::super) const PIN_MEMORY_THREAD_CAUGHT: &str = "torch.pin-memory-thread-caught";

pub(super) static RULES: &[Rule] = &[
    // ---- CUDA --------------------------------------------------------------------
    // TensorFlow's BFC allocator dumps its chunks and bins when an allocation fails,
    // before (and sometimes instead of) the `OOM when allocating` line.
    Rule {
        certainty: Likely,
        extract: Some(failed_for_its_caller),
        ..rule(
            "tensorflow.bfc-memory-dump",
            C::CudaOom,
            Error,
            &["bfc_allocator"],
            r"bfc_allocator\.cc:\d+\] (?:\d+ Chunks of size \d+ totalling|Sum Total of in-use chunks|Bin \(\d+\):\s+Total Chunks|Allocator \(\S+\) ran out of memory)",
            "TensorFlow's GPU allocator dumped its memory map: an allocation failed",
        )
    },
    // torch.cuda.memory_summary()'s table counts the allocator's failures since the
    // start: one or more is an out-of-memory the job caught (or did not).
    Rule {
        certainty: Likely,
        ..rule(
            "torch.memory-summary-ooms",
            C::CudaOom,
            Error,
            &["CUDA OOMs:"],
            r"\bCUDA OOMs: +(?P<ooms>[1-9]\d*)\b",
            "PyTorch's memory summary counts {ooms} CUDA out-of-memory failures",
        )
    },
    rule(
        "cuda.ecc-uncorrectable",
        C::GpuEcc,
        Error,
        &["ECC error", "ECC_UNCORRECTABLE", "ECCUncorrectable", "ecc error", "ncorrectable memory error"],
        r"(?i:uncorrectable ECC error)|CUDA_ERROR_ECC_UNCORRECTABLE|cudaErrorECCUncorrectable|(?i:double[- ]bit ECC error)|ECC error(?:s)? (?:detected|encountered)|(?i:uncorrectable memory errors?)",
        "The GPU hit an uncorrectable ECC error in its memory",
    ),
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
            CACHING_ALLOCATOR_OOM,
            C::CudaOom,
            Error,
            &["CUDA out of memory"],
            r"CUDA out of memory\b",
            "CUDA out of memory on GPU {gpu}: asked for {asked} with {free} free of {total}",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            // Boltz catches CUDA's out-of-memory error in its predict loop and says so
            // its own way.
            "boltz.ran-out-of-memory",
            C::CudaOom,
            Error,
            &["ran out of memory, skipping batch"],
            r"WARNING: ran out of memory, skipping batch",
            "Boltz ran out of GPU memory and skipped a batch",
        )
    },
    rule(
        // The DataLoader's wrapper over what its pin memory thread raised: pinning
        // fails there as a CUDA error (`CUDA error: out of memory` from
        // cudaHostAlloc), but beside the caching allocator's report of the device's
        // memory it gives way (`report::findings`).
        PIN_MEMORY_THREAD_CAUGHT,
        C::MemlockLimit,
        Error,
        &["pin memory thread"],
        r"\bCaught \w+ in pin memory thread\b",
        "Pinning host memory failed in the DataLoader's pin memory thread",
    ),
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
        extract: Some(not_a_kernel_fault),
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
        // A GPU library's exception that ended the program (`what():  [custatevec]
        // %out of memory in addQubitsToState`): the device's memory, not a crash.
        "cxx.what-gpu-out-of-memory",
        C::CudaOom,
        Error,
        &["out of memory"],
        r"(?i:^\s*what\(\):\s+(?P<what>.*\b(?:cuda|cublas|cudnn|cufft|cusparse|cusolver|curand|cutensor|custatevec|cutensornet|nccl|gpu|hip|rocm)\b.*\bout of memory\b.*?)\s*$)",
        "A GPU library ran out of device memory: {what}",
    ),
    rule(
        // TensorFlow's OOM names the device: on the CPU it is host memory.
        "tensorflow.cpu-oom",
        C::HostAllocFailure,
        Error,
        &["device:CPU"],
        r"OOM when allocating tensor\b.*\bdevice:CPU:\d+",
        "TensorFlow ran out of host memory allocating a tensor on the CPU",
    ),
    rule(
        // Accelerators that are no CUDA device say it their own way: Kokkos's device
        // spaces (`Kokkos ERROR: HIP memory space failed to allocate`), Rockchip's NPU
        // (`E/RKNN: failed to malloc npu memory!, size: 59187712`), the Raspberry Pi's
        // VideoCore (`vc4_v3d …: Failed to allocate memory for tile binning: -12`), DXVK
        // under Wine (`err:   DxvkMemoryAllocator: Memory allocation failed`).
        "accelerator.allocation-failed",
        C::CudaOom,
        Error,
        &["memory space failed to allocate", "failed to malloc npu memory", "Failed to allocate memory for tile binning", "1285: Out of memory", "DxvkMemoryAllocator: Memory allocation failed"],
        // OpenGL's GL_OUT_OF_MEMORY by its number, as Minecraft logs it (`[Client
        // thread/ERROR]: 1285: Out of memory`).
        r"\bDxvkMemoryAllocator: Memory allocation failed\b|\bKokkos ERROR: \w+ memory space failed to allocate\b|\bfailed to malloc npu memory\b|\bFailed to allocate memory for tile binning\b|(?:\bGL ERROR |\]: )1285: Out of memory\b",
        "The accelerator ran out of its memory",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // PyTorch's caching allocator asks NVML who holds the device's memory to
            // word its out-of-memory error; where NVML fails (Jetson, some containers)
            // the assertion replaces that error (pytorch/pytorch#112377): `RuntimeError:
            // NVML_SUCCESS == r INTERNAL ASSERT FAILED at "…/CUDACachingAllocator.cpp":841`.
            "cuda.oom-report-nvml-assert",
            C::CudaOom,
            Error,
            &["NVML_SUCCESS == r INTERNAL ASSERT FAILED"],
            r"\bNVML_SUCCESS == r INTERNAL ASSERT FAILED at \x22[^\x22]*CUDACachingAllocator\.cpp\x22",
            "PyTorch's allocator failed while reporting a CUDA out-of-memory (NVML's assertion)",
        )
    },
    rule(
        // Miners say it too: OpenCL's `CL_MEM_OBJECT_ALLOCATION_FAILURE when calling
        // clCreateBuffer`, xmrig's CUDA plugin `nv thread #0 failed with error
        // <randomx_prepare>:43 "out of memory"`.
        "cuda.runtime-oom",
        C::CudaOom,
        Error,
        &["Out of memory in cu", "out of memory", "OUT_OF_MEMORY", "exceed allowed memory", "ALLOC_FAILED", "cudaError", "MemoryAllocation", "OutOfMemoryError", "RESOURCE_EXHAUSTED", "ResourceExhausted", "Resource exhausted", "OOM when allocating", "cache blocks", "KV cache", "KV Cache", "to allocate", "not allocate", "Out of memory error on GPU", "hipErrorOutOfMemory", "unable to allocate CUDA", "unable to allocate ROCm", "reserved for KV Cache is -", "from DEVICE [", "[DEVICE] allocation failed", "out_of_memory", "OUT_OF_DEVICE_MEMORY", "out of GPU memory", "insufficient GPU memory", "ErrorOutOfDeviceMemory", "Device memory allocation of size", "Not enough memory to handle", "mem-fraction-static", "Error Code 2: OutOfMemory", "Allocation on device", "PxgCudaDeviceMemoryAllocator", "MEM_OBJECT_ALLOCATION_FAILURE when calling"],
        r"(?:CUDA|HIP|MPS backend|cuda|CUDA driver|CUDA runtime|CUDNN|cuDNN|cuBLAS|GPU)(?: error)?:? out of memory|Cuda Runtime \(out of memory\)|NCudaLib::TOutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED|CUFFT_ALLOC_FAILED|CUSOLVER_STATUS_ALLOC_FAILED|CUSPARSE_STATUS_ALLOC_FAILED|Cuda failure '?out of memory'?|torch\.(?:cuda\.)?OutOfMemoryError|(?:ResourceExhaustedError|RESOURCE_EXHAUSTED).{0,40}(?:OOM|[Oo]ut of memory)|OOM when allocating tensor|RESOURCE_EXHAUSTED: Out of memory|Resource exhausted: Out of memory while trying to allocate|No available memory for the cache blocks|(?:larger than the maximum number of tokens that can be stored in KV cache|Insufficient memory for KV cache|not enough KV cache|KV cache is (?:not enough|too small))|(?:failed to allocate|Failed to allocate|Could not allocate).{0,60}(?:on device|device memory|GPU memory|GPU)|would exceed allowed memory\. \(out of memory\)|cudaMalloc.{0,200}out of memory|cuda runtime error \(2\) : out of memory|THCudaCheck FAIL.*error=2 : out of memory|CUDA error(?: \d+)? at \S+(?::| -) out of memory|\bRMM_ERROR_OUT_OF_MEMORY\b|\bCUDA error !+ <out of memory> !+|Out of memory error on GPU \d+|\bhipErrorOutOfMemory\b|\bunable to allocate (?:CUDA|ROCm)\d* buffer\b|cupy\.cuda\.memory\.OutOfMemoryError|reserved for KV Cache is -\d|\bFailed to allocate \d+ bytes from DEVICE \[\d+\] memory|\[\[DEVICE\] allocation failed|std::bad_alloc: out_of_memory: (?:CUDA error|RMM failure)|\brmm::out_of_memory\b|\b(?:VK_)?ERROR_OUT_OF_DEVICE_MEMORY\b|\bErrorOutOfDeviceMemory\b|\bOut of GPU memory allocating\b|\bSystem is out of GPU memory\b|\bfailed due to insufficient GPU memory\b|\bggml_vulkan: Device memory allocation of size \d+ failed|\bNot enough memory to handle \d+ prefill tokens|\bNot enough memory\. Please try to increase --mem-fraction-static|\bError Code 2: OutOfMemory\b|!!! Exception during processing !!! Allocation on device|\bPxgCudaDeviceMemoryAllocator fail to allocate memory|\bout of memory in \S+\.cuh? at line \d+|\bOut of memory in cu[A-Z]\w*\(|\bCUDA [Dd]river API error:? out of memory\b|\bCL_MEM_OBJECT_ALLOCATION_FAILURE when calling clCreateBuffer\b|\bnv\s+thread #\d+ failed with error <\w+>:\d+ \x22out of memory\x22",
        "CUDA out of memory (outside PyTorch's caching allocator)",
    ),
    Rule {
        certainty: crate::model::finding::Certainty::Likely,
        why: Some(
            "cuBLAS and cuDNN fail to initialise or run with these generic statuses most often because the GPU \
             had no memory left for their workspaces; a version mismatch or a broken driver gives them too.",
        ),
        ..rule(
            "cuda.library-status-likely-oom",
            C::CudaOom,
            Error,
            &["CUBLAS_STATUS_NOT_INITIALIZED", "CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_NOT_INITIALIZED", "CUBLAS_STATUS_EXECUTION_FAILED", "cuDNN error", "Failed to get convolution algorithm"],
            r"(?P<status>CUBLAS_STATUS_NOT_INITIALIZED|CUDNN_STATUS_INTERNAL_ERROR|CUDNN_STATUS_NOT_INITIALIZED|CUBLAS_STATUS_EXECUTION_FAILED|Failed to get convolution algorithm)",
            "{status}: most often the GPU had no memory left for the library's workspace",
        )
    },
    rule(
        // Accelerator memory in other stacks' words: CTranslate2 (faster-whisper),
        // XLA on a TPU (its HBM), game engines' video memory (Unreal's D3D and Vulkan
        // RHIs, Source 2's `OUT OF VIDEO MEMORY!`), Blender Cycles' devices (`System
        // is out of GPU and shared host memory`), MLX on Apple's GPU (`[metal::malloc]
        // Attempting to allocate N bytes which is greater than the maximum allowed
        // buffer size`, a command buffer's `kIOGPUCommandBufferCallbackErrorOutOfMemory`),
        // MATLAB's GPU arrays (`Out of memory on device. To view more detail about
        // available memory on the GPU, use 'gpuDevice()'`), hashcat's devices (`Device
        // #1: Device does not provide enough allocatable device-memory to handle this
        // attack`, `Not enough allocatable device memory for this attack`, retyped
        // `Not enough allocable device memory`).
        "accelerator.out-of-memory",
        C::CudaOom,
        Error,
        &["CUDA failed with error out of memory", "memory space hbm", "of video memory", "System is out of GPU", "[metal::malloc] Attempting to allocate", "ErrorOutOfMemory", "Out of memory on device", "enough allocatable device", "enough allocable device"],
        r"CUDA failed with error out of memory|\[metal::malloc\] Attempting to allocate \d+ bytes which is greater than the maximum allowed buffer size\b|\bkIOGPUCommandBufferCallbackErrorOutOfMemory\b|\bSystem is out of GPU(?: and shared host)? memory\b|Ran out of memory in memory space hbm|(?i:\bout of video memory)(?: trying to allocate| ?!)|\bOut of memory on device\. To view more detail about available memory on the GPU\b|\b(?:Device does not provide|Not) enough alloca(?:ta)?ble device[- ]memory\b",
        "The accelerator ran out of memory (GPU or TPU memory)",
    ),
    rule(
        // TensorRT's builder and runtime: its error code 2 is OutOfMemory. TensorRT 7
        // said it otherwise: its allocator's CUDA error 2 (`Cuda Error in
        // nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)`), the
        // tactic it could not try (`GPU memory allocation error during
        // getBestTactic`), `OutOfMemory Error in nvinfer1::…`.
        "tensorrt.out-of-memory",
        C::CudaOom,
        Error,
        &["Error Code 2: OutOfMemory", "Requested amount of GPU memory", "Allocator::allocate: 2", "GPU memory allocation error during", "OutOfMemory Error in nvinfer1"],
        r"Error Code 2: OutOfMemory\b|Requested amount of GPU memory \((?P<bytes>\d+) bytes\) could not be allocated|\bCuda Error in nvinfer1::\S*Allocator::allocate: 2 \(out of memory\)|\bGPU memory allocation error during \w+|\bOutOfMemory Error in nvinfer1::",
        "TensorRT could not allocate GPU memory (Error Code 2: OutOfMemory)",
    ),
    rule(
        // AMD's GPUs report a bad address as a VM page fault in the kernel log: the
        // ROCm counterpart of CUDA's illegal memory access.
        "amdgpu.vm-page-fault",
        C::CudaIllegalMemoryAccess,
        Error,
        &["page fault (src_id", "PROTECTION_FAULT_STATUS", "Memory access fault by GPU", "MEMORY_APERTURE_VIOLATION", "GPU fault detected", "PROTECTION_FAULT_ADDR"],
        // ROCm's runtime says it to the program: `Memory access fault by GPU node-1 …`.
        // The radeon-era driver (GCN cards) says `amdgpu 0000:01:00.0: GPU fault detected:
        // 146 0x03c84404 for process lolMiner`, then `VM_CONTEXT1_PROTECTION_FAULT_ADDR`.
        r"Memory access fault by GPU node-\d+|HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION|\[(?P<hub>gfxhub|mmhub)\d*(?:_\d+)?\] (?:retry |no-retry )?page fault \(src_id|\b(?:GCVM_L2|VM_L2|MMVM_L2)_PROTECTION_FAULT_STATUS:0x[0-9A-Fa-f]+|\bamdgpu \S+: GPU fault detected: \d+ 0x[0-9a-fA-F]+|\bVM_CONTEXT1_PROTECTION_FAULT_(?:ADDR|STATUS)\s+0x[0-9a-fA-F]+",
        "The AMD GPU faulted on an address its program may not touch (a GPU VM page fault)",
    ),
    rule(
        // Moore Threads' MUSA driver (mtgpu) reports a bad address in the kernel log as
        // an MMU fault with the page-table level that missed: `MTGPU: 550: MMU (Core) -
        // FAULT:`, then `MMU status (…): PC = 21, Reading from 0x83E9D03400, MCU L1(IP1
        // Global), Fault (Page Table).`; Jetson's nvgpu the same with its engine and
        // channel (`[MMU FAULT] mmu engine id:  18, ch id:  479, fault addr: 0x0`, `TSG 8
        // generated a mmu fault`).
        "gpu.mmu-fault",
        C::CudaIllegalMemoryAccess,
        Error,
        &["- FAULT:", "Fault (Page Table)", "[MMU FAULT]", "generated a mmu fault"],
        r"\bMTGPU:.*\bMMU \(\w+\) - FAULT:|\bMMU status \(0x[0-9A-Fa-f]+ \| 0x[0-9A-Fa-f]+\): PC = \d+, (?:Reading from|Writing to) 0x[0-9A-Fa-f]+.*\bFault \(Page Table\)|\bnvgpu: .*\[MMU FAULT\] mmu engine id:|\bTSG \d+ generated a mmu fault\b",
        "The GPU faulted on an address its program may not touch (an MMU page-table fault)",
    ),
    rule(
        "cuda.illegal-address",
        C::CudaIllegalMemoryAccess,
        Error,
        &["illegal memory access", "ErrorIllegalAddress", "load or store instruction on an invalid memory address", "llegal memory access", "thread terminated with exception", "cudaError", "ILLEGAL_ADDRESS", "illegal instruction", "error=77", "error=700", "failed with error 700", "CUDA Exception: ", "CUDA_EXCEPTION_", "Invalid __", "Illegal address in "],
        // cuda-gdb names the exception that stopped a kernel; compute-sanitizer (and
        // cuda-memcheck before it) the access that went astray.
        // Blender's Cycles names the CUDA call that met it; PhysX the driver call that
        // returned it by its number (`cuEventRecord failed with error 700`).
        r"(?i:an illegal memory access was encountered)|\bErrorIllegalAddress\b|\bthe device encountered a load or store instruction on an invalid memory address\b|\bIllegal address in (?:CUDA queue \w+|cu[A-Z]\w+\(|\w+, line \d+)|cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS|an illegal instruction was encountered|THCudaCheck FAIL.*error=(?:77|700)\b|\bcu[A-Z]\w+ failed with error 700\b|\bCUDA Exception: (?:Warp|Lane|Device) (?:Out-of-range|Illegal|Misaligned) Address\b|\bCUDA_EXCEPTION_\d+, (?:Warp|Lane|Device) (?:Out-of-range|Illegal|Misaligned) Address\b|^=+ Invalid __(?:global|shared|local)__ (?:read|write|atomic) of size \d+",
        "CUDA error: an illegal memory access was encountered",
    ),
    rule(
        // fish names SIGBUS by its description, `(Misaligned address error)`: a bus
        // error's words, read here before CUDA's rule takes them.
        "fish.sigbus",
        C::MmapBusError,
        Error,
        &["SIGBUS (Misaligned address error)"],
        r"terminated by signal SIGBUS \(Misaligned address error\)",
        "The process died of a bus error (SIGBUS)",
    ),
    Rule {
        // What the program sees when the GPU faulted: where the text shows the GPU's own
        // fault (an Xid, `Xid 69 … Class Error`, `Xid 62`, or the driver's word that the
        // GPU failed), that is the cause told. An illegal address (`cuda.illegal-address`)
        // stays the program's: Xid 13 and 31 report that one.
        absorbed_by: Some(C::GpuXid),
        ..rule(
            "cuda.misaligned-or-launch-failure",
            C::CudaIllegalMemoryAccess,
            Error,
            &["misaligned address", "unspecified launch failure", "LAUNCH_FAILED", "cudaErrorLaunchFailure", "MISALIGNED_ADDRESS"],
            r"(?P<error>misaligned address|unspecified launch failure|CUDA_ERROR_LAUNCH_FAILED|cudaErrorLaunchFailure|CUDA_ERROR_MISALIGNED_ADDRESS)",
            "CUDA error: {error}",
        )
    },
    rule(
        "cuda.kernel-assertion",
        C::CudaDeviceAssert,
        Error,
        &["Assertion `"],
        r"(?:(?P<file>[^\s:]+\.cuh?):(?P<line>\d+): .*?)?Assertion `(?P<assertion>.+)` failed",
        "A CUDA kernel assertion failed in {file}:{line}: {assertion}",
    ),
    rule(
        "cuda.device-side-assert",
        C::CudaDeviceAssert,
        Error,
        &["device-side assert", "CUDA_ERROR_ASSERT", "cudaErrorAssert", "error=59", "error=710"],
        r"device-side assert(?:ion)? triggered|CUDA_ERROR_ASSERT|cudaErrorAssert|THCudaCheck FAIL.*error=(?:59|710)\b",
        "CUDA error: device-side assert triggered",
    ),
];

/// Not the allocation TensorFlow's caller may do without (`The caller indicates that
/// this is not a failure`: cuDNN's autotuning asks for workspace it can go without).
#[allow(clippy::ptr_arg)] // the Extractor signature: other extractors push
fn failed_for_its_caller(msg: &str, _out: &mut Vec<(String, String)>) -> bool {
    !msg.contains("indicates that this is not a failure")
}

/// Not a kernel's fault that CUDA reported at the host allocator's next call
/// (`THCCachingHostAllocator.cpp line=278 error=700 : an illegal memory access was
/// encountered`): CUDA reports a kernel's error at whichever call comes next.
#[allow(clippy::ptr_arg)] // the Extractor signature: other extractors push
fn not_a_kernel_fault(msg: &str, _out: &mut Vec<(String, String)>) -> bool {
    let lowercase = msg.to_ascii_lowercase();
    ![
        "illegal memory access",
        "misaligned address",
        "unspecified launch failure",
        "device-side assert",
    ]
    .iter()
    .any(|fault| lowercase.contains(fault))
}

pub(super) const CUDA_OOM: ClassInfo = ClassInfo {
    class: C::CudaOom,
    name: "cuda_oom",
    id: ids::LOG_CUDA_OOM,
    title: "CUDA out of memory",
    why: "PyTorch asked the GPU for more memory than was free.",
    fix: "Lower the peak: a smaller batch (gradient accumulation keeps the effective batch), activation \
          checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast(dtype=torch.bfloat16)); \
          do not keep tensors across steps (loss.item(), not loss, in running totals).\nSee the peak: \
          torch.cuda.memory_summary(), torch.cuda.max_memory_allocated().",    cause: crate::model::finding::CauseKind::Capacity,
    confirm: "torch.cuda.memory_summary() at the failure, or nvidia-smi for other processes on the GPU.",
};

pub(super) const CUDA_ILLEGAL_MEMORY_ACCESS: ClassInfo = ClassInfo {
    class: C::CudaIllegalMemoryAccess,
    name: "cuda_illegal_memory_access",
    id: ids::LOG_CUDA_ILLEGAL_MEMORY_ACCESS,
    title: "CUDA error: an illegal memory access was encountered",
    why: "A GPU kernel read or wrote memory outside any allocation (an out-of-range index, a use after free, \
          a race). The CUDA context is now unusable: every later CUDA call fails.",
    fix: CUDA_ASYNC_FIX,    cause: crate::model::finding::CauseKind::UserCode,
    confirm: "CUDA_LAUNCH_BLOCKING=1 python train.py names the failing kernel; compute-sanitizer --tool memcheck names the access.",
};

pub(super) const CUDA_DEVICE_ASSERT: ClassInfo = ClassInfo {
    class: C::CudaDeviceAssert,
    name: "cuda_device_assert",
    id: ids::LOG_CUDA_DEVICE_ASSERT,
    title: "CUDA error: device-side assert triggered",
    why: "A check inside a GPU kernel failed, most often an index out of range (a label ≥ num_classes in a \
          loss, a token id ≥ vocabulary size in an embedding). The CUDA context is now unusable.",
    fix: CUDA_ASYNC_FIX,    cause: crate::model::finding::CauseKind::UserCode,
    confirm: "CUDA_LAUNCH_BLOCKING=1 python train.py (or run on CPU) names the failing operation and index.",
};

const CUDA_ASYNC_FIX: &str = "Rerun with CUDA_LAUNCH_BLOCKING=1 python … : CUDA reports errors asynchronously, at a later \
     call far from the kernel that failed; with it the traceback points at the real launch.\nBuild-time checks: \
     TORCH_USE_CUDA_DSA=1 (device-side assertions with the failing kernel named, needs a PyTorch built with it).\n\
     Find the bad access: compute-sanitizer --tool memcheck python train.py";
