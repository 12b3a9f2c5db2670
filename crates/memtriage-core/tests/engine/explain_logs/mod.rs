//! `diagnose::logs` on log excerpts in the forms people paste them: plain dmesg,
//! `dmesg -T`, journalctl, syslog, `kubectl describe`, Slurm output, shells and Python
//! tracebacks; healthy training logs that must yield nothing; and the streaming
//! contract (any chunking gives the same answer, bounded memory, odd bytes).

use memtriage_core::diagnose::logs::{FailureClass, LogMatch, LogScanner, MAX_LINE};
use memtriage_core::model::finding::{Finding, Severity};

use crate::support::fixtures;

fn fixture(name: &str) -> Vec<u8> {
    let p = fixtures().join("logs").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn all_fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = fixtures().join("logs");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn scan(bytes: &[u8]) -> LogScanner {
    let mut s = LogScanner::with_source("test.log");
    s.feed(bytes);
    s.finish();
    s
}

fn scan_fixture(name: &str) -> LogScanner {
    scan(&fixture(name))
}

/// Feeds `bytes` in chunks whose sizes come from a small deterministic generator.
fn scan_chunked(bytes: &[u8], seed: u64, max: usize) -> LogScanner {
    let mut s = LogScanner::with_source("test.log");
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut pos = 0;
    while pos < bytes.len() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = 1 + (state >> 33) as usize % max;
        let end = (pos + n).min(bytes.len());
        s.feed(&bytes[pos..end]);
        pos = end;
    }
    s.finish();
    s
}

fn only_finding(s: &LogScanner, class: FailureClass) -> Finding {
    let f = s.findings();
    let id = format!("log.{}", class.as_str().replace('_', "-"));
    assert_eq!(
        f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
        vec![id.as_str()],
        "findings: {f:#?}"
    );
    f.into_iter().next().unwrap()
}

fn evidence<'a>(f: &'a Finding, label: &str) -> &'a str {
    f.evidence
        .iter()
        .find(|e| e.label == label)
        .map(|e| e.value.as_str())
        .unwrap_or_else(|| panic!("no evidence {label:?} in {:#?}", f.evidence))
}

fn first_match<'a>(s: &'a LogScanner, rule: &str) -> &'a LogMatch {
    s.matches()
        .iter()
        .find(|m| m.rule == rule)
        .unwrap_or_else(|| panic!("no match of {rule}: {:#?}", s.matches()))
}

fn quoted(f: &Finding, line_no: u64) -> &str {
    evidence(f, &format!("line {line_no}"))
}

// ---- OOM kills ------------------------------------------------------------------

#[test]
fn oom_kill_in_plain_dmesg_names_the_victim_its_size_and_the_constraint() {
    let s = scan_fixture("oom-dmesg.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        f.title,
        "The kernel's OOM killer killed python (pid 48213) holding 244 GiB of anonymous memory"
    );
    assert_eq!(evidence(&f, "killed"), "python (pid 48213)");
    assert_eq!(evidence(&f, "anon-rss"), "244 GiB"); // 256032492 kB
    assert_eq!(evidence(&f, "total-vm"), "268 GiB");
    assert_eq!(evidence(&f, "shmem-rss"), "2.0 MiB");
    assert!(evidence(&f, "constraint").contains("CONSTRAINT_NONE"));
    assert_eq!(evidence(&f, "when"), "612301.1 s after boot");
    // The kill is quoted from the line the kernel wrote, with its number.
    assert!(quoted(&f, 14).contains("Out of memory: Killed process 48213 (python)"));
    assert!(f.fix.contains("memtriage run -- python train.py"));
    assert!(f.fix.contains("torch.load(path, mmap=True)"));
    let m = first_match(&s, "kernel.oom-killed-process");
    assert_eq!(m.line_no, 14);
    assert_eq!(m.capture("pid"), Some("48213"));
    assert_eq!(m.capture("anon_rss"), Some("244 GiB"));
}

#[test]
fn memcg_oom_kill_in_dmesg_t_names_the_cgroup_whose_limit_was_hit() {
    let s = scan_fixture("oom-dmesg-T.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert!(
        f.title.starts_with(
            "The kernel's OOM killer killed pt_main_thread (pid 7731) holding 31.5 GiB"
        ),
        "{}",
        f.title
    );
    assert!(f.title.ends_with(
        "cgroup /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d.slice hit its memory limit"
    ));
    assert!(evidence(&f, "constraint").contains("CONSTRAINT_MEMCG"));
    assert!(evidence(&f, "victim's cgroup").ends_with("cri-containerd-3f9a.scope"));
    assert_eq!(evidence(&f, "when"), "Sat Nov 21 06:16:42 2026");
    assert!(f.fix.contains("resources.limits.memory"));
    assert_eq!(
        first_match(&s, "kernel.oom-kill-constraint").capture("constraint"),
        Some("cgroup")
    );
}

#[test]
fn oom_kill_in_journalctl_and_syslog() {
    let s = scan_fixture("oom-journalctl.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert!(
        f.title.contains("python3 (pid 90210) holding 60.0 GiB"),
        "{}",
        f.title
    );
    assert_eq!(evidence(&f, "shmem-rss"), "1.0 GiB");
    assert_eq!(
        evidence(&f, "cgroup whose limit was hit"),
        "/system.slice/slurmstepd.scope/job_4411"
    );
    assert_eq!(evidence(&f, "when"), "Nov 21 06:16:42");

    let s = scan_fixture("oom-syslog.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert!(
        f.title.contains("python (pid 5150) holding 16.0 GiB"),
        "{}",
        f.title
    );
    // The CRON line that follows is not evidence.
    assert_eq!(s.matches().len(), 3);
}

#[test]
fn kubectl_describe_oomkilled_and_exit_code_137() {
    let s = scan_fixture("oom-kubectl-describe.txt");
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(
        f.title,
        "Kubernetes: the container was OOMKilled (it reached its memory limit)"
    );
    assert_eq!(quoted(&f, 12).trim(), "Reason:       OOMKilled");
    assert_eq!(quoted(&f, 13).trim(), "Exit Code:    137");
    assert_eq!(
        evidence(&f, "matching lines"),
        "2 lines (first at line 12, last at line 13)"
    );
}

#[test]
fn slurm_oom_kill_event_and_srun_out_of_memory() {
    let s = scan_fixture("oom-slurm.out");
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(
        f.title,
        "Slurm: 1 OOM kill in step 4411.0 (the job's memory cgroup limit was hit)"
    );
    assert!(f.fix.contains("#SBATCH --mem="));
    let m = first_match(&s, "slurm.task-out-of-memory");
    assert_eq!(
        (m.capture("node"), m.capture("task")),
        (Some("gpu-node-3"), Some("0"))
    );
    assert_eq!(m.line_no, 3);
}

#[test]
fn shell_killed_and_exit_code_137() {
    let s = scan_fixture("oom-shell-killed.log");
    let f = only_finding(&s, FailureClass::OomKill);
    let m = first_match(&s, "shell.killed");
    assert_eq!(m.capture("pid"), Some("77120"));
    assert_eq!(
        m.capture("command"),
        Some("python train.py --config big.yaml")
    );
    assert_eq!(first_match(&s, "exit.sigkill").line_no, 4);
    // `killed_frac=0.00` on lines 1 and 2 is a metric, not a kill.
    assert!(s.matches().iter().all(|m| m.line_no >= 3));
    assert!(f.fix.contains("dmesg -T"), "{}", f.fix);

    let s = scan_fixture("oom-bare-killed.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(quoted(&f, 2), "Killed");
}

// ---- DataLoader -----------------------------------------------------------------

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

// ---- native crashes ---------------------------------------------------------------

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
    let mut s = LogScanner::new();
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

// ---- SIGBUS on mapped files ----------------------------------------------------------

#[test]
fn bus_error_in_safetensors_is_a_mapped_file_not_shm() {
    let s = scan_fixture("sigbus-mmap-faulthandler.log");
    let f = only_finding(&s, FailureClass::MmapBusError);
    assert_eq!(
        f.title,
        "Python died of a bus error (SIGBUS) in loader.py:27 in load_weights"
    );
    assert_eq!(
        f.evidence[0].value,
        "/opt/venv/lib/python3.11/site-packages/safetensors/torch.py:313 in load_file  [library, site-packages]"
    );
    assert!(evidence(&f, "reading a memory-mapped file in").contains("safetensors/torch.py:313"));
    assert!(f.fix.contains("os.replace"));
}

#[test]
fn bus_error_in_a_dataloader_worker_stack_is_shm() {
    let text = "Fatal Python error: Bus error\n\nCurrent thread 0x1 (most recent call first):\n  File \"/v/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py\", line 308 in _worker_loop\n\nExtension modules: x (total: 1)\n";
    let s = scan(text.as_bytes());
    let f = only_finding(&s, FailureClass::DataloaderShm);
    assert!(f.fix.contains("--shm-size=16g"));
}

#[test]
fn kernel_io_errors_explain_a_bus_error() {
    let s = scan_fixture("sigbus-io-error-dmesg.log");
    let f = only_finding(&s, FailureClass::MmapBusError);
    assert_eq!(f.title, "The disk failed a read: I/O error on nvme1n1");
    assert_eq!(evidence(&f, "sector"), "123456789");
    assert_eq!(
        first_match(&s, "kernel.buffer-io-error").capture("device"),
        Some("nvme1n1p1")
    );
    assert!(f.fix.contains("smartctl"));
}

// ---- CUDA ------------------------------------------------------------------------------

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

#[test]
fn xid_79_in_journalctl() {
    let s = scan_fixture("xid-79-journalctl.log");
    let f = only_finding(&s, FailureClass::GpuXid);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        f.title,
        "GPU Xid 79 on PCI:0000:3b:00: GPU has fallen off the bus (no longer reachable over PCIe)"
    );
    assert!(f.fix.starts_with("Drain the node and reboot it"));
}

#[test]
fn several_xids_each_explained_worst_first() {
    let s = scan_fixture("xid-dmesg.log");
    let f = only_finding(&s, FailureClass::GpuXid);
    for xid in [13, 43, 45, 94, 63] {
        assert!(
            f.evidence.iter().any(|e| e.label == format!("Xid {xid}")),
            "{xid}"
        );
    }
    assert!(evidence(&f, "Xid 94").starts_with("contained ECC error"));
    assert!(evidence(&f, "Xid 13").ends_with("pid 41235 (python)"));
    assert!(f.title.starts_with("GPU Xid 13 on PCI:0000:18:00"));
    // Xid 45 alone is the driver cleaning up: information, not the failure.
    let s = scan(b"[ 1.0] NVRM: Xid (PCI:0000:18:00): 45, pid=1, name=python, Ch 00000008\n");
    assert_eq!(
        only_finding(&s, FailureClass::GpuXid).severity,
        Severity::Info
    );
}

#[test]
fn nccl_watchdog_timeout_through_torchrun_rank_prefixes() {
    let s = scan_fixture("nccl-timeout.log");
    let f = only_finding(&s, FailureClass::NcclFailure);
    assert_eq!(
        f.title,
        "NCCL collective ALLREDUCE (SeqNum 52113) timed out after 600023 ms"
    );
    assert_eq!(evidence(&f, "timeout ms"), "600000");
    assert_eq!(evidence(&f, "rank"), "3");
    assert!(f.fix.contains("TORCH_NCCL_TRACE_BUFFER_SIZE"));
    assert!(f.fix.contains("init_process_group(timeout="));
}

// ---- limits, kernel ----------------------------------------------------------------------

#[test]
fn max_map_count_enomem() {
    let s = scan_fixture("max-map-count.log");
    let f = only_finding(&s, FailureClass::MaxMapCount);
    assert_eq!(evidence(&f, "path"), "/data/shards/shard-00123.bin");
    assert!(f.fix.starts_with("sysctl -w vm.max_map_count=1048576"));
    let s = scan(b"mmap failed: Cannot allocate memory\n");
    only_finding(&s, FailureClass::MaxMapCount);
    // ENOMEM from fork is not a mapping limit.
    assert!(scan(b"OSError: [Errno 12] Cannot allocate memory\n")
        .findings()
        .is_empty());
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
fn kernel_oops_and_memory_pressure() {
    let s = scan_fixture("kernel-oops-dmesg.log");
    let f = only_finding(&s, FailureClass::KernelOops);
    assert_eq!(
        f.title,
        "Kernel oops: unable to handle page fault at ffffb1a2c3d4e000"
    );
    assert!(f.why.contains("PAGE_FAULT_IN_NONPAGED_AREA"));
    for line in [
        "[ 1.0] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP",
        "[ 1.0] Kernel panic - not syncing: Fatal exception",
        "[ 1.0] kernel BUG at mm/slub.c:123!",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        only_finding(&s, FailureClass::KernelOops);
    }

    let s = scan_fixture("memory-pressure-dmesg.log");
    let f = only_finding(&s, FailureClass::MemoryPressure);
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.title,
        "Memory reclaim stalled: kswapd0 was blocked for more than 122 s"
    );
    assert_eq!(
        first_match(&s, "kernel.page-allocation-failure").capture("order"),
        Some("4")
    );
}

// ---- healthy logs ---------------------------------------------------------------------------

#[test]
fn healthy_logs_yield_no_finding() {
    for name in [
        "healthy-tqdm.log",
        "healthy-ddp-torchrun.log",
        "healthy-dmesg-boot.log",
        "healthy-kubectl-describe.txt",
    ] {
        let s = scan_fixture(name);
        assert!(s.matches().is_empty(), "{name}: {:#?}", s.matches());
        assert!(s.findings().is_empty(), "{name}");
        assert!(s.lines() > 5, "{name}");
    }
}

#[test]
fn innocent_mentions_are_not_failures() {
    for line in [
        "loss=0.3 killed_frac=0.1",
        "Killed 3 stale checkpoints older than 7 days",
        "step 10 | mem 3.2 GiB | oom_retries 0 | Out of memory errors: none",
        "Segmentation fault handler installed",
        "Aborted!",
        "the exit code 1370 is not ours",
        "warning: bus error rate 0",
        "INFO: task python:123 blocked for more than 120 seconds.",
        "NCCL INFO Channel 00/08 :    0   1   2   3",
        "ProcessGroupNCCL initialization options: TIMEOUT(ms): 600000",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "Exit Code:    0",
        "pin_memory: True",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        assert!(s.matches().is_empty(), "{line}: {:#?}", s.matches());
    }
}

// ---- mixed and ordering ---------------------------------------------------------------------------

#[test]
fn one_finding_per_class_most_severe_first() {
    let mut log = Vec::new();
    log.extend_from_slice(&fixture("memory-pressure-dmesg.log"));
    log.extend_from_slice(&fixture("healthy-tqdm.log"));
    log.extend_from_slice(&fixture("oom-dmesg.log"));
    log.extend_from_slice(&fixture("oom-shell-killed.log"));
    let s = scan(&log);
    let f = s.findings();
    let ids: Vec<&str> = f.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["log.oom-kill", "log.memory-pressure"]);
    // The kernel's own kill line is the best evidence, whatever came first.
    assert!(f[0]
        .title
        .starts_with("The kernel's OOM killer killed python (pid 48213)"));
}

// ---- streaming contract ---------------------------------------------------------------------------

#[test]
fn any_chunking_gives_the_same_matches_and_findings() {
    for (name, bytes) in all_fixtures() {
        let whole = scan(&bytes);
        for (seed, max) in [(1, 1), (2, 3), (3, 17), (4, 64), (5, 4096), (6, 1 << 20)] {
            let chunked = scan_chunked(&bytes, seed, max);
            assert_eq!(chunked.matches(), whole.matches(), "{name} seed {seed}");
            assert_eq!(chunked.findings(), whole.findings(), "{name} seed {seed}");
            assert_eq!(chunked.lines(), whole.lines(), "{name}");
            assert_eq!(chunked.bytes(), bytes.len() as u64);
        }
        // One line at a time, as `run` hands over a child's output.
        let mut by_line = LogScanner::with_source("test.log");
        let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        for line in text.split(|b| *b == b'\n') {
            by_line.feed_line(line);
        }
        by_line.finish();
        assert_eq!(by_line.matches(), whole.matches(), "{name} by line");
    }
}

#[test]
fn crlf_logs_read_like_lf_logs() {
    for (name, bytes) in all_fixtures() {
        let crlf: Vec<u8> = bytes
            .iter()
            .flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })
            .collect();
        let a = scan(&bytes);
        let b = scan(&crlf);
        assert_eq!(a.matches(), b.matches(), "{name}");
        assert_eq!(a.lines(), b.lines(), "{name}");
    }
}

#[test]
fn progress_bar_carriage_returns_end_segments_but_not_lines() {
    let log = b"step 1\n 10%|#   | 1/10\r 20%|##  | 2/10\rKilled\nnext\n";
    let s = scan(log);
    assert_eq!(s.matches().len(), 1);
    assert_eq!(s.matches()[0].line_no, 2);
    assert_eq!(s.matches()[0].line, "Killed");
    assert_eq!(s.lines(), 3);
}

#[test]
fn non_utf8_bytes_are_kept_as_escapes() {
    let log = b"\xff\xfe garbage \xc3\x28\nOut of memory: Killed process 77 (py\xe9thon) total-vm:1024kB, anon-rss:2048kB, file-rss:0kB\n";
    let s = scan(log);
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(s.matches()[0].line_no, 2);
    assert!(s.matches()[0].line.contains("(py\\xe9thon)"));
    assert_eq!(evidence(&f, "anon-rss"), "2.0 MiB");
}

#[test]
fn a_10_mb_line_is_cut_and_costs_no_more() {
    let mut log = vec![b'x'; 10 << 20];
    log.extend_from_slice(b" Killed\n");
    log.extend_from_slice(b"Out of memory: Killed process 9 (python) total-vm:4kB, anon-rss:4kB\n");
    // Starts with a failure, then goes on for 10 MB.
    log.extend_from_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered ");
    log.extend(std::iter::repeat_n(b'y', 10 << 20));
    log.push(b'\n');
    // A literal far past the examined prefix does not count, however it is cut.
    log.extend(std::iter::repeat_n(b'z', 3 * MAX_LINE));
    log.extend_from_slice(b"CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    for s in [
        scan(&log),
        scan_chunked(&log, 9, 1 << 16),
        scan_chunked(&log, 10, 100_000),
    ] {
        let m = s.matches();
        assert_eq!(m.len(), 2, "{m:#?}");
        assert_eq!((m[0].rule, m[0].line_no), ("kernel.oom-killed-process", 2));
        assert_eq!((m[1].rule, m[1].line_no), ("cuda.illegal-address", 3));
        assert!(m[1].line.len() <= MAX_LINE + '…'.len_utf8());
        assert!(m[1].line.ends_with('…'));
        assert_eq!(s.lines(), 4);
    }
}

#[test]
fn matches_are_bounded_but_counted() {
    let mut log = Vec::new();
    for i in 0..10_000 {
        log.extend_from_slice(format!("epoch {i}\nKilled\n").as_bytes());
    }
    let s = scan(&log);
    assert_eq!(s.matches().len(), 16);
    assert_eq!(s.matches()[0].line_no, 2);
    assert_eq!(s.matches()[7].line_no, 16);
    assert_eq!(s.matches()[8].line_no, 20_000 - 14);
    assert_eq!(s.matches()[15].line_no, 20_000);
    assert_eq!(s.rule_counts()[0].count, 10_000);
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(
        evidence(&f, "matching lines"),
        "10000 lines (first at line 2, last at line 20000)"
    );
}

#[test]
fn matches_serialize_with_snake_case_class_and_named_captures() {
    let s = scan_fixture("dataloader-worker-killed.log");
    let v = serde_json::to_value(s.matches()).unwrap();
    assert_eq!(v[0]["class"], "dataloader_worker_killed");
    assert_eq!(v[0]["rule"], "dataloader.worker-sigkill");
    assert_eq!(v[0]["line_no"], 4);
    assert_eq!(v[0]["captures"][0]["name"], "pid");
    assert_eq!(v[0]["captures"][0]["value"], "31337");
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

mod chunking {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of real failure lines, line ends and odd bytes, so random logs hit the
    /// rules, the faulthandler block and the line-cutting paths.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"Killed".to_vec()),
            Just(b"Out of memory: Killed process 12 (py) total-vm:8kB, anon-rss:4kB".to_vec()),
            Just(b"Fatal Python error: Segmentation fault".to_vec()),
            Just(b"Current thread 0x01 (most recent call first):".to_vec()),
            Just(b"  File \"/a/b.py\", line 3 in f".to_vec()),
            Just(b"CUDA out of memory. Tried to allocate 2.00 GiB.".to_vec()),
            Just(b"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, gone".to_vec()),
            Just(b"\xff\xfe\xc3".to_vec()),
            Just(vec![b'x'; 1500]),
            proptest::collection::vec(any::<u8>(), 0..40),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn random_logs_give_the_same_answer_however_they_are_cut(
            pieces in proptest::collection::vec(piece(), 0..40),
            seed in any::<u64>(),
            max in 1usize..5000,
        ) {
            let log: Vec<u8> = pieces.concat();
            let whole = scan(&log);
            let chunked = scan_chunked(&log, seed, max);
            prop_assert_eq!(whole.matches(), chunked.matches());
            prop_assert_eq!(whole.findings(), chunked.findings());
            prop_assert_eq!(whole.lines(), chunked.lines());
            // Each kept byte is at most `\xNN`, plus the cut mark.
            prop_assert!(whole.matches().iter().all(|m| m.line.len() <= 4 * MAX_LINE + 3));
        }
    }
}
