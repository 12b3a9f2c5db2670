//! Native crashes: faulthandler frames, uncaught C++ exceptions and aborts, glibc heap
//! corruption, and the kernel's segfault line.

use crate::diagnose::logs::{FailureClass, LogScanner};

use super::{first_match, only_finding, scan, scan_fixture};

#[test]
fn faulthandler_frames_lead_the_evidence_innermost_first() {
    let s = scan_fixture("segfault-faulthandler.log");
    let f = only_finding(&s, FailureClass::NativeCrash);
    assert_eq!(
        f.title,
        "Python crashed: Segmentation fault in model.py:12 in forward"
    );
    let labels: Vec<&str> = f
        .evidence
        .iter()
        .take(5)
        .map(|e| e.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "frame 1 (innermost)",
            "frame 2",
            "frame 3",
            "frame 4",
            "innermost frame in your code"
        ]
    );
    let values: Vec<&str> = f
        .evidence
        .iter()
        .take(5)
        .map(|e| e.value.as_str())
        .collect();
    assert_eq!(
        values,
        [
            "/opt/venv/lib/python3.11/site-packages/fused_ops/__init__.py:41 in fused_layernorm  [library, site-packages]",
            "/home/alice/proj/model.py:12 in forward  [your code]",
            "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py:1562 in _call_impl  [library, site-packages]",
            "/home/alice/proj/train.py:40 in <module>  [your code]",
            "/home/alice/proj/model.py:12 in forward",
        ]
    );
    // The other thread's frames (threading.py) are not the crash site.
    assert!(!f.evidence.iter().any(|e| e.value.contains("threading.py")));
    let m = first_match(&s, "python.faulthandler");
    assert_eq!(m.line_no, 2);
    assert_eq!(m.capture("thread"), Some("0x00007f3b2c5ff740"));
    assert_eq!(m.captures_named("frame").count(), 4);
    // The shell's own report after the block is read as a line again.
    assert_eq!(
        first_match(&s, "shell.segfault").capture("pid"),
        Some("8080")
    );
    assert!(f.fix.contains("PYTHONFAULTHANDLER=1"));
    assert!(f.fix.contains("gdb"));
}

#[test]
fn faulthandler_block_still_open_at_the_end_counts() {
    let text = b"Fatal Python error: Aborted\n\nCurrent thread 0x00007f01 (most recent call first):\n  File \"/x/app.py\", line 3 in main\n";
    let mut s = LogScanner::live("stderr");
    s.feed(text);
    // Not finished: a streaming caller asks mid-run.
    let f = s.findings();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].title, "Python crashed: Aborted in app.py:3 in main");
    assert!(s.matches().is_empty(), "the block is kept until it ends");
    s.finish();
    assert_eq!(s.matches().len(), 1);
    assert_eq!(s.findings(), f);
}

#[test]
fn uncaught_cxx_exception_and_abort() {
    let s = scan_fixture("native-abort.log");
    let f = only_finding(&s, FailureClass::NativeCrash);
    assert_eq!(
        f.title,
        "A C++ exception was not caught: terminate called after throwing c10::Error"
    );
    assert_eq!(
        first_match(&s, "cxx.what").capture("what"),
        Some("Expected all tensors to be on the same device")
    );
    assert_eq!(first_match(&s, "shell.aborted").line_no, 4);
}

#[test]
fn glibc_heap_corruption_and_job_control_abort() {
    let s = scan_fixture("native-double-free.log");
    let f = only_finding(&s, FailureClass::NativeCrash);
    assert_eq!(
        f.title,
        "glibc detected heap corruption: double free or corruption (!prev)"
    );
    assert_eq!(
        first_match(&s, "shell.aborted").capture("command"),
        Some("python infer.py")
    );
    assert!(f.fix.contains("MALLOC_CHECK_=3"));
    for line in [
        "free(): invalid pointer",
        "munmap_chunk(): invalid pointer",
        "malloc(): corrupted top size",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        assert_eq!(
            first_match(&s, "glibc.heap-corruption").capture("message"),
            Some(line)
        );
    }
}

#[test]
fn kernel_segfault_line_names_the_library() {
    let s = scan_fixture("kernel-segfault-dmesg.log");
    let f = only_finding(&s, FailureClass::NativeCrash);
    assert_eq!(
        f.title,
        "python (pid 22541) segfaulted at address 0x0 in libtorch_cpu.so"
    );
}
