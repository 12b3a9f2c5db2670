//! The forms users paste, each a defect once found on real logs: counts that must be
//! whole, encodings, messages with text glued around them or wrapped, what a SIGKILL
//! does and does not prove, and prose that only mentions a failure.

use crate::diagnose::logs::FailureClass;
use crate::model::finding::{Certainty, Severity};

use super::{classes, each_named_first, evidence, only_finding, scan};

#[test]
fn every_kill_of_a_dmesg_is_counted_and_the_largest_are_listed() {
    let mut log = String::new();
    for i in 0..26u64 {
        log.push_str(&format!(
            "[Sat Nov 21 06:{:02}:00 2026] Out of memory: Killed process {} (python) total-vm:9000000kB, anon-rss:{}kB, file-rss:0kB, shmem-rss:0kB\n",
            i,
            1000 + i,
            (i + 1) * 100_000
        ));
    }
    let f = only_finding(&scan(log.as_bytes()), FailureClass::OomKill);
    assert!(f.title.contains("killed 26 processes"), "{}", f.title);
    assert_eq!(evidence(&f, "OOM kills in the log"), "26");
    assert!(evidence(&f, "kills not listed").starts_with("22 more"));
    // The largest (pid 1025, 2.5 GiB) leads, though it was neither first nor kept.
    let killed: Vec<&str> = f
        .evidence
        .iter()
        .filter(|e| e.label == "killed")
        .map(|e| e.value.as_str())
        .collect();
    assert!(
        killed.first().is_some_and(|k| k.contains("1025")),
        "{killed:?}"
    );
}

#[test]
fn the_kernel_report_names_the_limit_and_who_held_the_memory() {
    let log = b"[ 100.1] python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[ 100.1] memory: usage 4,194,304kB, limit 4194304kB, failcnt 77
[ 100.1] Tasks state (memory values in pages):
[ 100.1] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name
[ 100.1] [    101]     0   101   500000   500000  3000000        0             0 python
[ 100.1] [    102]     0   102   300000   200000  2000000        0             0 pt_data_worker
[ 100.1] [    103]     0   103   300000   200000  2000000        0             0 pt_data_worker
[ 100.1] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/job,task_memcg=/job,task=python,pid=101,uid=0
[ 100.1] Memory cgroup out of memory: Killed process 101 (python) total-vm:2000000kB, anon-rss:1600000kB, file-rss:0kB, shmem-rss:0kB
";
    let f = only_finding(&scan(log), FailureClass::OomKill);
    assert_eq!(evidence(&f, "memory cgroup limit hit"), "4.0 GiB");
    let holders = evidence(&f, "largest holders at the kill (rss by command)");
    assert!(
        holders.starts_with("python: 1.9 GiB, pt_data_worker ×2: 1.5 GiB"),
        "{holders}"
    );
    assert_eq!(
        f.assessment.as_ref().map(|a| a.certainty),
        Some(Certainty::Confirmed)
    );
}

#[test]
fn exit_statuses_and_launcher_reports_of_sigkill() {
    for line in [
        "Error: container exited with code 137",
        "    Exit Code:    137",
        "exitcode  : -9 (pid: 4242)",
        "  Signal 9 (SIGKILL) received by PID 4242",
        "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        // Nothing names the sender: a SIGKILL of unknown cause, a warning whose
        // check is the kernel's log.
        let f = only_finding(&s, FailureClass::Sigkill);
        assert_eq!(f.severity, Severity::Warn, "{line}");
        assert!(f.assessment.as_ref().unwrap().confirm.contains("dmesg"));
    }
}

#[test]
fn a_sigkill_the_runtime_says_was_not_oom_is_never_an_oom_error() {
    let kubectl =
        b"    State:          Terminated\n      Reason:       Error\n      Exit Code:    137\n";
    let docker = b"\"OOMKilled\": false,\n\"ExitCode\": 137,\n";
    for log in [&kubectl[..], &docker[..]] {
        let findings = scan(log).findings();
        assert!(
            findings.iter().all(|f| f.id != "log.oom-kill"),
            "{findings:?}"
        );
        let f = only_finding(&scan(log), FailureClass::Sigkill);
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(
            f.assessment.as_ref().map(|a| a.certainty),
            Some(Certainty::Possible)
        );
    }
}

#[test]
fn a_ray_worker_dead_of_an_unknown_cause_is_a_warning_not_information() {
    let f = only_finding(
        &scan(b"2023-07-31 13:21:11,493 WARNING worker.py:2033 -- A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker.\n"),
        FailureClass::Sigkill,
    );
    assert_eq!(f.severity, Severity::Warn);
}

#[test]
fn python_and_numpy_out_of_ram() {
    let f = only_finding(
        &scan(b"numpy.core._exceptions._ArrayMemoryError: Unable to allocate 74.5 GiB for an array with shape (100000, 100000) and data type float64\n"),
        FailureClass::HostAllocFailure,
    );
    assert!(
        f.title.contains("74.5 GiB") && f.title.contains("(100000, 100000)"),
        "{}",
        f.title
    );
    only_finding(
        &scan(b"Traceback (most recent call last):\n  File \"x.py\", line 1\nMemoryError\n"),
        FailureClass::HostAllocFailure,
    );
    only_finding(
        &scan(b"RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes.\n"),
        FailureClass::HostAllocFailure,
    );
    only_finding(
        &scan(b"OSError: [WinError 1455] The paging file is too small for this operation to complete.\n"),
        FailureClass::HostAllocFailure,
    );
}

#[test]
fn utf16_logs_and_byte_order_marks() {
    let text = "Windows PowerShell\r\nOut of memory: Killed process 9 (python) total-vm:4kB, anon-rss:4kB\r\n";
    let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let mut marked = vec![0xFF, 0xFE];
    marked.extend_from_slice(&le);
    for log in [le, marked] {
        let s = scan(&log);
        only_finding(&s, FailureClass::OomKill);
        assert_eq!(s.matches()[0].line_no, 2);
    }
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(b"Killed\n");
    only_finding(&scan(&bom), FailureClass::Sigkill);
}

#[test]
fn messages_in_other_encodings_binary_and_nul_bytes_are_still_found() {
    // GBK around the message (a Chinese Windows console), NUL bytes, binary garbage.
    let mut log = b"\xd1\xb5\xc1\xb7\xbf\xaa\xca\xbc \x00\x01\x02\xff\n".to_vec();
    log.extend_from_slice(
        b"\xb4\xed\xce\xf3: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
    );
    log.extend(std::iter::repeat_n(0u8, 10_000));
    log.extend_from_slice(b"\nSegmentation fault (core dumped)\n");
    let ids = classes(&log);
    assert!(ids.contains(&"log.cuda-oom".to_string()), "{ids:?}");
    assert!(ids.contains(&"log.native-crash".to_string()), "{ids:?}");
}

#[test]
fn a_message_wrapped_by_a_terminal_is_read_joined() {
    let log = b"[rank1]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 1] Process group watchdog thread terminated with exception: CUDA error: an illegal me\nmory access was encountered\n";
    only_finding(&scan(log), FailureClass::CudaIllegalMemoryAccess);
    let log = b"RuntimeError: DataLoader worker (pid 270071) is killed by signal: \nBus error. It is possible that dataloader's workers are out of shared memory.\n";
    only_finding(&scan(log), FailureClass::DataloaderShm);
}

#[test]
fn text_glued_before_the_message_and_markdown_quotes() {
    only_finding(
        &scan(b" 19%|######    | 569/2975 [03:31<1:35:15,  2.38s/it]Killed\n"),
        FailureClass::Sigkill,
    );
    only_finding(
        &scan(b"> Dec 1 15:01:07 cluster1 kernel: Out of memory: Kill process 7963 (sge_qmaster) score 948 or sacrifice child\n"),
        FailureClass::OomKill,
    );
}

#[test]
fn what_is_only_mentioned_or_recovered_from_is_not_a_failure() {
    for log in [
        // NCCL without InfiniBand falls back to sockets and goes on.
        &b"node1:123:456 [0] NCCL WARN Failed to open libibverbs.so[.1]\nnode1:123:456 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"[..],
        // Documentation quoting the message as an example.
        b"If the extension is built for another torch, importing it prints `Segmentation fault (core dumped)` and exits.\n",
        b"## CUDA out of memory\n\nA common error you may encounter when the GPU runs out of memory is:\n\n```\nCUDA out of memory. Tried to allocate 256.00 MiB (GPU 0; 11.17 GiB total capacity)\n```\n",
        // A healthy `free` and a healthy ulimit -a.
        b"              total        used        free\nMem:           62Gi        20Gi        30Gi\nSwap:         2.0Gi       0.1Gi       1.9Gi\n",
        b"max locked memory       (kbytes, -l) 64\n",
    ] {
        let findings = scan(log).findings();
        assert!(
            findings.iter().all(|f| f.severity < Severity::Warn),
            "{}: {findings:?}",
            String::from_utf8_lossy(log)
        );
    }
}

#[test]
fn swap_nearly_full_is_thrashing_with_the_figures() {
    let f = only_finding(
        &scan(b"              total        used        free\nMem:           15Gi        15Gi       200Mi\nSwap:         8.0Gi       7.8Gi       200Mi\n"),
        FailureClass::SwapThrashing,
    );
    assert!(f.title.contains("97%"), "{}", f.title);
    assert_eq!(f.severity, Severity::Warn);

    // top: a swap device too large to fill, but gigabytes in it and nothing available.
    let f = only_finding(
        &scan(b"KiB Mem : 16363244 total,   329000 free, 15569480 used,   464764 buff/cache\nKiB Swap: 16707580 total, 10609236 free,  6098344 used.   275080 avail Mem\n"),
        FailureClass::SwapThrashing,
    );
    assert!(
        f.title
            .contains("holds 5.8 GiB (37% of 15.9 GiB) with 269 MiB of memory available"),
        "{}",
        f.title
    );
    // The same swap with memory to spare is a machine that swapped once, not thrashing.
    assert!(
        scan(b"KiB Swap: 16707580 total, 10609236 free,  6098344 used.  8275080 avail Mem\n")
            .findings()
            .is_empty()
    );

    // A progress bar's own RAM and swap figures.
    let f = only_finding(
        &scan("3/3 11.3G 1.362: 63% 40/63 16.1s/it   MPS alloc= 0.37 GB | RAM= 16.3/17.2 GB (95.2%) | swap= 23.78 GB\n".as_bytes()),
        FailureClass::SwapThrashing,
    );
    assert!(
        f.title
            .starts_with("RAM 95.2% used (16.3/17.2 GB) with 23.8 GiB in swap"),
        "{}",
        f.title
    );
    assert!(scan(b"RAM= 9.1/17.2 GB (52.9%) | swap= 0.00 GB\n")
        .findings()
        .is_empty());
}

#[test]
fn a_failure_users_report_in_their_own_words() {
    only_finding(
        &scan(b"When I change it to layer3, the terminal shows 'Bus error' after printing the line.\n"),
        FailureClass::MmapBusError,
    );
    only_finding(
        &scan(b"the run abruptly erred with \"Segmentation fault\" on the second epoch\n"),
        FailureClass::NativeCrash,
    );
    // Documentation telling the reader what they may see is not a report.
    assert!(
        scan(b"Otherwise you will get `Segmentation fault` when importing it.\n")
            .findings()
            .iter()
            .all(|f| f.severity < Severity::Warn)
    );
}

#[test]
fn memory_the_job_printed_rising_is_growth_with_its_slope() {
    let mut log = String::new();
    for epoch in 0..8u32 {
        log.push_str(&format!(
            "epoch {epoch} loss 0.{} | RSS: {:.1} GB\n",
            9 - epoch,
            2.0 + f64::from(epoch) * 0.5
        ));
    }
    let f = only_finding(&scan(log.as_bytes()), FailureClass::MemoryGrowth);
    assert_eq!(f.severity, Severity::Warn);
    assert!(
        f.title
            .contains("rose from 2.0 GiB to 5.5 GiB over 8 readings"),
        "{}",
        f.title
    );
    assert_eq!(evidence(&f, "rise per reading (mean)"), "512 MiB");
    // A flat series is not growth.
    let flat: String = (0..8)
        .map(|e| format!("epoch {e} | RSS: 2.0 GB\n"))
        .collect();
    assert!(scan(flat.as_bytes()).findings().is_empty());
}

/// Forms of known failures first met in the unseen batch of 2026-11-28 (its `train`
/// split; the sources are in corpus/unseen/2026-11-28/index.jsonl): each line, verbatim,
/// is its family's failure.
#[test]
fn forms_met_in_the_world_are_their_familys_failure() {
    for (line, class) in [
        // geerlingguy/raspberry-pi-pcie-devices#222 (arm64)
        (
            "[   88.338659] Unable to handle kernel paging request at virtual address ffffffc011d47000",
            FailureClass::KernelOops,
        ),
        (
            "[   88.339504] Internal error: Oops: 96000061 [#1] PREEMPT SMP",
            FailureClass::KernelOops,
        ),
        // cPanelSSP/SSP#76 (2.6.32)
        (
            "Mar  2 17:35:10 server1 kernel: [2858609.598568] Killed process 11726, UID 498, (mysqld) total-vm:7823732kB, anon-rss:2539268kB, file-rss:768kB",
            FailureClass::OomKill,
        ),
        // yahoo/TensorFlowOnSpark#134
        (
            "17/11/25 18:23:24 ERROR YarnClusterScheduler: Lost executor 9 on harrisburg.cs.colostate.edu: Container killed by YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used.",
            FailureClass::UserspaceOomKill,
        ),
        // NVIDIA/k8s-device-plugin#189
        (
            "2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8, the device will go unhealthy.",
            FailureClass::GpuXid,
        ),
        // mesos/elasticsearch#574
        (
            "[2016-07-19 05:02:47,664][WARN ][bootstrap                ] Unable to lock JVM Memory: error=12,reason=Cannot allocate memory",
            FailureClass::MemlockLimit,
        ),
        // docker-library/mongo#575
        (
            "   2022-10-12T21:11:31.719+00:00: vm.max_map_count is too low",
            FailureClass::MaxMapCount,
        ),
        // blakeblackshear/frigate#8470
        (
            "[578760.598621] systemd-journald[3639274]: Under memory pressure, flushing caches.",
            FailureClass::MemoryPressure,
        ),
        // scitix/sichek#51
        (
            "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874",
            FailureClass::GpuXid,
        ),
        // SakuraRiven/EAST#15 (Windows: a relative path, and an unformatted %d)
        (
            "RuntimeError: [enforce fail at ..\\c10\\core\\CPUAllocator.cpp:62] data. DefaultCPUAllocator: not enough memory: you tried to allocate %dGB. Buy new RAM!27",
            FailureClass::HostAllocFailure,
        ),
        // datenlord/async-rdma#107
        (
            "2023-07-20T12:27:48.882393Z ERROR async_rdma::memory_region::raw: ibv_reg_mr err, arguments:",
            FailureClass::MemlockLimit,
        ),
        // threestudio-project/threestudio#369: tqdm's last redraw before the crash
        (
            "Epoch 0: |                                     | 4540/? [07:57<00:00,  9.51it/s]Fatal Python error: Segmentation fault",
            FailureClass::NativeCrash,
        ),
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        only_finding(&s, class);
    }
}

/// Values anonymised the ways people anonymise them keep the verdict, and what a
/// placeholder stood for is unknown, never a number.
#[test]
fn placeholders_keep_the_verdict_and_invent_no_value() {
    for line in [
        "RuntimeError: DataLoader worker (pid XXX) is killed by signal: Killed.",
        "RuntimeError: DataLoader worker (pid <pid>) is killed by signal: Killed.",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        let f = only_finding(&s, FailureClass::DataloaderWorkerKilled);
        assert!(
            !f.title.contains("<n>") && !f.title.contains("pid 0"),
            "{}",
            f.title
        );
    }
}

/// A terminal copy cuts every long line at its width, a literal anywhere in it.
fn hard_wrapped(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        for piece in chars.chunks(width) {
            out.extend(piece);
            out.push('\n');
        }
    }
    out
}

#[test]
fn a_message_a_terminal_cut_mid_literal_is_read_whole() {
    let log = "/home/usrname/torch/install/share/lua/5.1/cudnn/init.lua:118: Error in CuDNN: CUDNN_STATUS_ALLOC_FAILED (cudnnFindConvolutionForwardAlgorithm)\n\
               The kernel for ConfidNet/confidnet/notebook/success_errors_histogram.ipynb appears to have died. It will restart automatically\n";
    let wrapped = hard_wrapped(log, 80);
    assert!(wrapped.contains("CU\nDNN_STATUS") && wrapped.contains("appea\nrs"));
    let found = classes(wrapped.as_bytes());
    assert!(found.contains(&"log.cuda-oom".to_string()), "{found:?}");
    assert!(found.contains(&"log.oom-kill".to_string()), "{found:?}");
    // Pasted into a markdown quote, every piece behind its `> `.
    let quoted: String = wrapped.lines().map(|l| format!("> {l}\n")).collect();
    assert!(classes(quoted.as_bytes()).contains(&"log.cuda-oom".to_string()));
}

/// A piece may match a lesser form of its message alone (`Xid 45`, a cleanup) where
/// the whole says more (`caused by previous Xid 149`, the fault): the whole is read.
#[test]
fn a_line_a_terminal_cut_is_read_whole_before_its_pieces() {
    let log = "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149\n";
    let whole = scan(log.as_bytes()).findings();
    let wrapped = hard_wrapped(&log.repeat(3), 80);
    assert!(wrapped.contains(" c\naused by"), "{wrapped}");
    let cut = scan(wrapped.as_bytes()).findings();
    assert_eq!(cut.len(), 1, "{cut:#?}");
    assert_eq!(
        (&cut[0].title, cut[0].severity),
        (&whole[0].title, whole[0].severity)
    );
    assert_eq!(cut[0].severity, Severity::Error, "{cut:#?}");
}

/// A pager pads lines with spaces to the width (they end there), and a tool may put
/// its prefix on every piece (`[12345.678901] `): neither is part of the message.
#[test]
fn padded_lines_and_prefixed_pieces_are_read_as_the_lines_they_were() {
    let padded = format!(
        "{:<80}\n{:<80}\n{:<80}\n",
        "| [2023-05-11 18:13:57 +0000] [7] [WARNING] Worker with pid 14824 was terminated",
        " due to signal 9",
        ""
    );
    let found = classes(padded.repeat(2).as_bytes());
    assert!(found.contains(&"log.sigkill".to_string()), "{found:?}");
    let assertion = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [31,0,0], thread: [16,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n";
    let prefixed: String = hard_wrapped(&assertion.repeat(3), 100)
        .lines()
        .map(|l| format!("[12345.678901] {l}\n"))
        .collect();
    let found = classes(prefixed.as_bytes());
    assert_eq!(
        found,
        vec!["log.cuda-device-assert".to_string()],
        "{prefixed}"
    );
}

/// The cgroup's figures at the kill, anonymised or retyped in capitals: the line is
/// still the kill's, and a value replaced is unknown, not zero.
#[test]
fn a_memory_cgroups_usage_line_is_read_with_its_values_hidden_or_in_capitals() {
    for line in [
        "memory: usage NkB, limit NkB, failcnt 125402",
        "memory: usage <size>, limit <size>, failcnt 125402",
        "MEMORY: USAGE 102360KB, LIMIT 102400KB, FAILCNT 125402",
    ] {
        let s = scan(format!("{line}\n").as_bytes());
        let f = only_finding(&s, FailureClass::OomKill);
        assert!(!f.title.contains(" 0 B"), "{line}: {}", f.title);
    }
    let s = scan(b"MEMORY: USAGE 102360KB, LIMIT 102400KB, FAILCNT 125402\n");
    assert!(
        only_finding(&s, FailureClass::OomKill)
            .title
            .contains("100 MiB"),
        "the limit read in capitals"
    );
}

/// Forms met in the third unseen batch's training two thirds
/// (`corpus/unseen/2026-11-28c/train`, sources in its index), one line each.
#[test]
fn forms_of_the_third_batch_are_named() {
    let cases = [
        ("CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory", "log.cuda-oom"),
        ("THCudaCheck FAIL file=/x/THCStorage.cu line=58 error=2 : out of memory", "log.cuda-oom"),
        ("|            CUDA OOMs: 1            |        cudaMalloc retries: 1         |", "log.cuda-oom"),
        ("[   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)", "log.gpu-xid"),
        ("Oops: Kernel access of bad area, sig: 11 [#1]", "log.kernel-oops"),
        ("Unable to handle kernel paging request for data at address 0x00000000", "log.kernel-oops"),
        (" ERROR   General   (mmapped_reader.hpp :  52)   mmap(2) failed. Reason: Cannot allocate memory. Error code: 12", "log.host-alloc-failure"),
        ("* thread #2, name = 'server_wfsync', stop reason = signal SIGBUS: illegal address", "log.mmap-bus-error"),
        ("largeweb2 systemd[1]: user-1021.slice: A process of this unit has been killed by the OOM killer.", "log.oom-kill"),
        ("Mar 29 01:08:45 fedora systemd-oomd[1003]: Memory pressure for /user.slice/user-1000.slice/user@1000.service is greater than 10 for more than 10 seconds and there was reclaim activity", "log.userspace-oom-kill"),
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", "log.userspace-oom-kill"),
        ("Exception: process 1 terminated with signal SIGSEGV", "log.native-crash"),
        ("# RuntimeError: CUDA error: uncorrectable ECC error encountered", "log.gpu-ecc"),
        ("This is failing with `Unix.Unix_error(Unix.ENOMEM, \"io_uring_register_buffers\", \"\")`.", "log.memlock-limit"),
        ("WARNING: It appears that your OpenFabrics subsystem is configured to only allow registering part of your physical memory.", "log.memlock-limit"),
    ];
    each_named_first(&cases);
    // A summary that counts none, and a page's title over the error it explains.
    assert!(classes(b"|            CUDA OOMs: 0            |\n").is_empty());
    let page = "CUDA Out of Memory: What It Means and How to Fix It\nYou loaded a model. It crashed. The error says something like:\nCUDA error: out of memory\n";
    assert!(
        classes(page.as_bytes()).is_empty(),
        "{:?}",
        classes(page.as_bytes())
    );
}

/// Forms the third batch's set-aside third missed at its one scoring (fixed after it,
/// so not counted in its figure): Ray's words without a literal the rule was found by,
/// a kernel segfault line without its `comm[pid]: `, slurmctld's record of a SIGKILL.
#[test]
fn forms_the_third_batch_set_aside_missed_are_named() {
    let cases = [
        ("Worker exit type: USER_ERROR Worker exit detail: Task was killed due to the node running low on memory.", "log.userspace-oom-kill"),
        ("segfault at 99ef469b ip 0000000099ef469b sp 00007ffff238e878 error 14 in zero (deleted)[7f6299ef4000+7a2000]", "log.native-crash"),
        ("[2022-05-27T11:37:57.377] _job_complete: JobId=127441 WTERMSIG 9", "log.sigkill"),
    ];
    each_named_first(&cases);
}

/// Forms of the fourth batch's `train` split (corpus/unseen/2026-11-29), one line of
/// each as its source printed it.
#[test]
fn forms_of_the_fourth_batch_are_named() {
    let cases = [
        ("Out of memory error on GPU 0. Cannot allocate 3.125000GB memory on GPU 0, available memory is only 117.750000MB.", "log.cuda-oom"),
        ("2017-05-09 13:13:15.970947: I tensorflow/core/common_runtime/bfc_allocator.cc:696] 4 Chunks of size 488374272 totalling 1.82GiB", "log.cuda-oom"),
        ("(RayWorker pid=4856) *** SIGBUS received at time=1695209888 on cpu 3 ***", "log.mmap-bus-error"),
        ("192.168.11.119: kern: warning: [2026-04-22T21:27:51.291660856Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 08 = 0x0000000004d4b1a0", "log.gpu-xid"),
        ("# Native memory allocation (mmap) failed to map 246939648 bytes for committing reserved memory.", "log.host-alloc-failure"),
        (">>>>>>> [242060.604870] PANIC: double fault, error_code: 0x0", "log.kernel-oops"),
        ("warning: failed to mlock 827228160-byte buffer (after previously locking 0 bytes): Cannot allocate memory", "log.memlock-limit"),
        ("F0118 23:24:48.788218 37264 parallel.cpp:135] Check failed: result == ncclSuccess (2 vs. 0)  unhandled system error.", "log.nccl-failure"),
        ("    160 root      20   0       0      0      0 R  99.0   0.0  10:42.59 [kswapd0]", "log.memory-pressure"),
        ("distributed.worker - WARNING - Unmanaged memory use is high. This may indicate a memory leak or the memory may not be", "log.memory-growth"),
        ("**RSS is climbing ~300–500 MB/hour under streaming load.** But Python traced memory is essentially flat.", "log.memory-growth"),
        ("HI, I have a BSOD with stop code 0x1A, I can not find argument 1 on MSDN", "log.windows-memory-fault"),
        ("Display driver nvlddmkm stopped responding and has successfully recovered.", "log.windows-memory-fault"),
        ("But when i exec it for about 100 epoch, the terminal display \"segmentation fault (core dumped)\". I try", "log.native-crash"),
    ];
    each_named_first(&cases);
}

/// What the fourth batch's set-aside third missed at its one scoring (fixed after it,
/// so not counted in its figure): the kubelet's OOM events, Dask's nanny, earlyoom's
/// lines in a list, an oops's register dump without its headline.
#[test]
fn forms_the_fourth_batch_set_aside_missed_are_named() {
    let cases = [
        ("  Warning  CgroupOOM  28s                kubelet            Cgroup OOM encountered, victim process: stress, pid: 470521", "log.oom-kill"),
        ("  Warning  SystemOOM                17m                   kubelet, node1  System OOM encountered", "log.oom-kill"),
        ("distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting", "log.userspace-oom-kill"),
        ("- sending SIGTERM to process 997 uid 1000 \"my-process-name\": oom_score 1146, oom_score_adj 0, VmRSS 23007 MiB", "log.userspace-oom-kill"),
        ("RIP: 0010:[<ffffffff8124e424>]  [<ffffffff8124e424>] blk_requeue_request+0x94/0xa0", "log.kernel-oops"),
    ];
    each_named_first(&cases);
    // A limits table's small locked-memory limit is context, not a failure: many
    // healthy machines run with the 64 KiB default.
    let limits =
        scan(b"Max locked memory         65536                65536                bytes     \n")
            .findings();
    assert_eq!(limits.len(), 1, "{limits:?}");
    assert_eq!(limits[0].id, "log.memlock-limit");
    assert_eq!(limits[0].severity, crate::model::finding::Severity::Info);
    assert!(limits[0].title.contains("64.0 KiB"), "{}", limits[0].title);
    assert!(scan(
        b"Max locked memory         unlimited            unlimited            bytes     \n"
    )
    .findings()
    .is_empty());
}

/// One line of each form batch 5's train split brought (PostgreSQL's /dev/shm, a
/// JVM's heap and SIGBUS, TensorRT's and CatBoost's GPU OOM, a compiler killed in
/// another language, a kernel BUG line without its colon, heap corruption in an event).
#[test]
fn forms_the_fifth_batch_brought_are_named() {
    let cases = [
        ("ERROR:  could not resize shared memory segment \"/PostgreSQL.1767612635\" to 183552 bytes: No space left on device", "log.dataloader-shm"),
        ("java.lang.OutOfMemoryError: unable to create new native thread", "log.host-alloc-failure"),
        ("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space", "log.host-alloc-failure"),
        ("MemoryError: Unable to allocate array with shape (93849, 1, 52300) and data type float64", "log.host-alloc-failure"),
        ("#  SIGBUS (0x7) at pc=0x00007ff481c70304, pid=24249, tid=24426", "log.mmap-bus-error"),
        ("siginfo: si_signo: 7 (SIGBUS), si_code: 2 (BUS_ADRERR), si_addr: 0x00007f6a1e3aa000", "log.mmap-bus-error"),
        ("[11/22/2024-13:40:47] [E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)", "log.cuda-oom"),
        ("(NCudaLib::TOutOfMemoryError) catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h:303: Error: Out of memory. Requested 11032 MB; Free 8260.007324 MB", "log.cuda-oom"),
        ("gcc: 致命错误：已杀死 signal terminated program cc1", "log.sigkill"),
        ("collect2: fatal error: ld terminated with signal 9 [Unicestwiony]", "log.sigkill"),
        ("Transcription worker exited unexpectedly (code -9).", "log.sigkill"),
        ("[17.799154] BUG unable to handle page fault for address ffffffff822c26c0", "log.kernel-oops"),
        ("kernel panic - not syncing : Fault exception", "log.kernel-oops"),
        ("    <Data Name=\"ExceptionCode\">c0000374</Data> ", "log.windows-memory-fault"),
        ("段错误 (核心已转储)", "log.native-crash"),
        ("7:M 26 Feb 2023 13:42:15.741 # Redis 5.0.5 crashed by signal: 11", "log.native-crash"),
        ("[>>>>>>>>>> ] 1022/5000, 1.5 task/s, elapsed: 673s, ETA: 2621s已杀死", "log.sigkill"),
    ];
    each_named_first(&cases);
}

/// An issue pasted with its title and byline: the title is the error the poster got.
/// A first-person sentence before a quote reports it (`We are getting the following
/// error`), where the same words on a page introduce an example.
#[test]
fn an_issue_title_and_a_report_are_failures() {
    for (text, class) in [
        ("# Task was killed due to the node running low on memory (ray oom)\nNebularaid2000 · description · 2025-05-14\n遇到了和 #911 中一样的问题\n", "log.userspace-oom-kill"),
        ("# [BUG] <RuntimeError: CUDA error: an illegal memory access was encountered>\n\nThe run stops at step 40.\n", "log.cuda-illegal-memory-access"),
        ("We are getting the following error and pods are restarting -\nbootstrap check failure [1] of [1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]\n", "log.max-map-count"),
    ] {
        let found = scan(text.as_bytes()).findings();
        assert_eq!(found.first().map(|f| f.id.as_str()), Some(class), "{text}: {found:?}");
    }
    // Without the byline, a heading that names an error is a page's section.
    assert!(classes(b"# CUDA out of memory\n\nReduce the batch size.\n").is_empty());
}

/// Pages that quote errors, told from output by what only pages carry.
#[test]
fn pages_that_quote_errors_raise_nothing() {
    for page in [
        "---\ntitle: NCCL\ndescription: Troubleshooting NCCL issues\n---\nA common problem:\n```text\nWatchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1806948 milliseconds before timing out.\n```\n",
        "+**Problem**: a run stops with a bare ``Killed``\n+\n+.. code-block:: text\n+\n+   Killed\n",
        "ディープラーニングの罠:空き容量があるのに「CUDA out of memory」が発生する理由\n",
        "|   12 | Wizardcoder-15b  | autohf   |  16 |    2.59407   | CUDA out of memory |\n",
        "I get this error:\n\n```text\n---\ntitle: NCCL\n---\nWatchdog caught collective operation timeout: WorkNCCL(SeqNum=42) ran for 1806948 milliseconds before timing out.\n```\n",
        "If you trained a model, you hit this error.\nQuick Navigation:\nUnderstanding the Error\nRuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB.\n",
        "1. 问题现象与背景\n开发者经常会遇到RuntimeError: CUDA out of memory错误。\n2. 根本原因分析\n显存容量限制\n3. 解决方案\n",
    ] {
        assert!(classes(page.as_bytes()).is_empty(), "{page}: {:?}", classes(page.as_bytes()));
    }
}

/// Ray's words in releases after the rule was written: 2.56's count of workers
/// (docs.ray.io, data/how-to-avoid-ooms), and the raylet's summary pointing at its OOM
/// page (ray-project/ray#44574): the two misses of `corpus/unseen/2026-11-28-killers`,
/// scored before any rule was written for them.
#[test]
fn rays_later_memory_monitor_words_are_named() {
    let cases = [
        ("Error: 2 worker(s) were killed due to the node running low on memory. Memory on the node (IP: 10.0.0.5, ID: 92edc4e9) was 110.69GB / 124.35GB (0.890161)", "log.userspace-oom-kill"),
        ("(raylet) Refer to the documentation on how to address the out of memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory on this node", "log.userspace-oom-kill"),
    ];
    each_named_first(&cases);
}
