//! CUDA: the caching allocator out of memory in its new and old forms, illegal
//! accesses and device-side assertions.

use crate::diagnose::logs::FailureClass;

use super::{evidence, first_match, only_finding, scan_fixture};

#[test]
fn cuda_oom_new_form_captures_every_figure() {
    let s = scan_fixture("cuda-oom-new.log");
    let f = only_finding(&s, FailureClass::CudaOom);
    assert_eq!(
        f.title,
        "CUDA out of memory on GPU 0: asked for 2.00 GiB with 1.02 GiB free of 79.15 GiB"
    );
    assert_eq!(evidence(&f, "tried to allocate"), "2.00 GiB");
    assert_eq!(evidence(&f, "total capacity"), "79.15 GiB");
    assert_eq!(evidence(&f, "free"), "1.02 GiB");
    assert_eq!(evidence(&f, "allocated by PyTorch"), "74.50 GiB");
    assert_eq!(
        evidence(&f, "reserved by PyTorch but unallocated"),
        "2.91 GiB (4% of allocated)"
    );
    // 2.91 GiB of 74.5 is not fragmentation: the advice is to need less.
    assert!(
        f.fix.starts_with("Lower the peak: a smaller batch"),
        "{}",
        f.fix
    );
    assert!(f.fix.contains("activation checkpointing"));
    assert!(f.fix.contains("mixed precision"));
    assert!(!f.fix.contains("expandable_segments"));
    let m = first_match(&s, "torch.cuda-oom");
    assert_eq!(m.capture("in_use"), Some("78.11 GiB"));
}

#[test]
fn cuda_oom_with_large_reserved_unallocated_advises_expandable_segments() {
    let s = scan_fixture("cuda-oom-fragmented.log");
    let f = only_finding(&s, FailureClass::CudaOom);
    assert_eq!(
        evidence(&f, "reserved by PyTorch but unallocated"),
        "11.85 GiB (45% of allocated)"
    );
    assert!(
        f.fix.starts_with(
            "The caching allocator is fragmented: 11.85 GiB is reserved but unallocated."
        ),
        "{}",
        f.fix
    );
    assert!(f
        .fix
        .contains("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
}

#[test]
fn cuda_oom_old_form() {
    let s = scan_fixture("cuda-oom-old.log");
    let f = only_finding(&s, FailureClass::CudaOom);
    assert_eq!(
        f.title,
        "CUDA out of memory on GPU 0: asked for 20.00 MiB with 3.44 MiB free of 15.78 GiB"
    );
    assert_eq!(evidence(&f, "allocated by PyTorch"), "14.56 GiB");
    assert_eq!(evidence(&f, "reserved by PyTorch in total"), "14.68 GiB");
    assert!(evidence(&f, "reserved by PyTorch but unallocated").ends_with("(1% of allocated)"));
    assert!(f.fix.starts_with("Lower the peak"));
}

#[test]
fn cuda_illegal_access_and_device_assert_advise_launch_blocking() {
    let s = scan_fixture("cuda-illegal-access.log");
    let f = only_finding(&s, FailureClass::CudaIllegalMemoryAccess);
    // "For debugging consider passing CUDA_LAUNCH_BLOCKING=1" is advice, not a failure.
    assert_eq!(s.matches().len(), 1);
    for fix in [
        "CUDA_LAUNCH_BLOCKING=1",
        "TORCH_USE_CUDA_DSA=1",
        "compute-sanitizer --tool memcheck python",
    ] {
        assert!(f.fix.contains(fix), "{fix}");
    }

    let s = scan_fixture("cuda-device-assert.log");
    let f = only_finding(&s, FailureClass::CudaDeviceAssert);
    assert!(f.title.starts_with(
        "A CUDA kernel assertion failed in /pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92"
    ));
    assert_eq!(
        first_match(&s, "cuda.kernel-assertion").capture("assertion"),
        Some("-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"")
    );
    assert!(f.fix.contains("CUDA_LAUNCH_BLOCKING=1"));
}
