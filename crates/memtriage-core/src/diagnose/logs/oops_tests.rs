use super::super::LogScanner;
use crate::model::finding::{CauseKind, Finding};

fn finding(log: &str, id: &str) -> Finding {
    let mut scanner = LogScanner::with_source("dmesg");
    scanner.feed(log.as_bytes());
    scanner.finish();
    scanner
        .findings()
        .into_iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no {id} finding in {log}"))
}

fn oops_finding(log: &str) -> Finding {
    finding(log, "log.kernel-oops")
}

fn windows_finding(log: &str) -> Finding {
    finding(log, "log.windows-memory-fault")
}

/// The issue's own example: the module, the process and the taint flags were all there.
#[test]
fn an_nvidia_oops_names_the_module_the_process_and_the_taint() {
    let f = oops_finding(
        "[ 1234.567890] BUG: unable to handle page fault for address: ffffb8a1c0e3f000\n\
         [ 1234.567900] #PF: supervisor read access in kernel mode\n\
         [ 1234.567905] #PF: error_code(0x0000) - not-present page\n\
         [ 1234.567915] Oops: 0000 [#1] PREEMPT SMP NOPTI\n\
         [ 1234.567920] CPU: 3 PID: 4242 Comm: python Tainted: P           OE     6.5.0-14-generic #14-Ubuntu\n\
         [ 1234.567925] RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]\n",
    );
    assert_eq!(
        f.title,
        "Kernel oops in the nvidia module, a GPU driver, while python (pid 4242) ran"
    );
    assert_eq!(f.evidence_value("suspect"), Some("nvidia (GPU driver)"));
    assert_eq!(f.evidence_value("function"), Some("_nv012345rm"));
    assert_eq!(f.evidence_value("running"), Some("python (pid 4242)"));
    assert_eq!(
        f.evidence_value("tainted"),
        Some("P (a proprietary module is loaded), O (an out-of-tree module is loaded), E (an unsigned module is loaded)")
    );
    assert_eq!(
        f.evidence_value("access"),
        Some("supervisor read access in kernel mode, not-present page")
    );
    assert_eq!(f.evidence_value("kernel"), Some("6.5.0-14-generic"));
    assert!(f.fix.contains("nvidia-bug-report.sh"), "{}", f.fix);
    assert_eq!(
        f.assessment.as_ref().map(|a| a.cause),
        Some(CauseKind::Driver)
    );
}

/// Built-in code has an author too: the source file a BUG names, or the first frame
/// of the call trace inside a module when the faulting code is built in.
#[test]
fn built_in_code_is_named_by_its_source_file_or_the_trace() {
    let f = oops_finding(
        "kernel BUG at /home/user/rpmbuild/BUILD/linux-4.4.14/fs/ext4/inode.c:2422!\n\
         invalid opcode: 0000 [#1] SMP\n\
         CPU: 0 PID: 6 Comm: kworker/u4:0 Tainted: G           O    4.4.14-11.pvops.qubes.x86_64 #1\n\
         RIP: e030:[<ffffffff812acace>]  [<ffffffff812acace>] mpage_prepare_extent_to_map+0x2ce/0x2f0\n",
    );
    assert_eq!(f.evidence_value("suspect"), Some("ext4 (filesystem)"));
    assert_eq!(
        f.evidence_value("function"),
        Some("mpage_prepare_extent_to_map")
    );
    let f = oops_finding(
        "Pid: 1124, comm: xfsalloc/6 Not tainted 2.6.32-358.el6.x86_64 #1\n\
         BUG: unable to handle kernel NULL pointer dereference at 0000000000000008\n\
         IP: [<ffffffff8127684d>] list_del+0xd/0x50\n\
         Call Trace:\n\
          [<ffffffffa025d081>] ? arc_read+0x7a1/0x8d0 [zfs]\n\
          [<ffffffffa025d081>] xfs_alloc_ag_vextent+0x7a1/0x8d0 [xfs]\n",
    );
    assert_eq!(f.evidence_value("suspect"), Some("xfs (filesystem)"));
    assert_eq!(f.evidence_value("named by"), Some("the call trace"));
}

/// Oopses in unrelated built-in functions point at the RAM, not at one piece of code.
#[test]
fn oopses_scattered_over_unrelated_functions_point_at_ram() {
    let mut log = String::new();
    // Lines of unequal widths: three of one width would read as a terminal's wrap.
    for (address, func) in [
        ("ffff8800deadbeef", "list_del"),
        ("00000000000008", "kmem_cache_alloc"),
        ("ffffea0001b2", "find_get_entry"),
    ] {
        log.push_str(&format!(
            "BUG: unable to handle kernel paging request at {address}\n\
             RIP: 0010:{func}+0x1c/0x30\n\
             ---[ end trace 0123456789abcdef ]---\n"
        ));
    }
    let f = oops_finding(&log);
    assert!(f.title.contains("failing RAM"), "{f:#?}");
    assert_eq!(
        f.assessment.as_ref().map(|a| a.cause),
        Some(CauseKind::Hardware)
    );
    assert!(f.fix.contains("memtest86+"), "{}", f.fix);
}

/// A headline alone (no report lines after it) is still an oops, told as before.
#[test]
fn a_headline_alone_keeps_its_plain_verdict() {
    let f =
        oops_finding("BUG: unable to handle kernel NULL pointer dereference at 000000000000000d\n");
    assert!(
        f.title.starts_with("Kernel oops: unable to handle"),
        "{}",
        f.title
    );
    assert!(f.evidence_value("suspect").is_none());
}

/// The register dump may come first (a WARN's report), behind the log's own prefix; a
/// 4.x BUG names a NULL pointer as `(null)`.
#[test]
fn a_prefixed_register_dump_and_a_null_bug_are_read() {
    let f = oops_finding(
        "[  886.507366] RIP: 0010:freeRpcInfrastructure_VGPU+0x25/0xe0 [nvidia]\n\
         [  886.507380] CPU: 12 PID: 4567 Comm: nvidia-vgpu-mgr Tainted: P           OE     5.4.0-81-generic #91\n",
    );
    assert_eq!(f.evidence_value("suspect"), Some("nvidia (GPU driver)"));
    let f = oops_finding(
        "[1568872.360135] BUG: unable to handle kernel NULL pointer dereference at           (null)\n\
         [1568872.361626] IP: [<ffffffffba828802>] sysrq_handle_crash+0x12/0x20\n\
         [1568872.385263] Oops: 0002 [#1] SMP\n",
    );
    assert_eq!(f.evidence_value("function"), Some("sysrq_handle_crash"));
}

/// A Windows bug check pasted from WinDbg, BlueScreenView, WhoCrashed or the event log:
/// the code by name, its parameters labelled, the driver each tool blames.
#[test]
fn windows_bug_check_reports_name_the_check_and_the_driver() {
    let windbg = "PAGE_FAULT_IN_NONPAGED_AREA (50)\n\
                  Invalid system memory was referenced.\n\
                  Arguments:\n\
                  Arg1: fffff6fb7dbedf80, memory referenced.\n\
                  Arg2: 0000000000000000, value 0 = read operation, 1 = write operation.\n\
                  Arg3: fffff80cb903265d, If non-zero, the instruction address which referenced the bad memory\n\
                  Arg4: 0000000000000002, (reserved)\n\
                  IMAGE_NAME:  nvlddmkm.sys\n\
                  FAILURE_BUCKET_ID:  AV_R_INVALID_nvlddmkm!unknown_function\n";
    let f = windows_finding(windbg);
    assert_eq!(
        f.title,
        "Windows bug check 0x00000050 PAGE_FAULT_IN_NONPAGED_AREA in nvlddmkm.sys (NVIDIA's display driver)"
    );
    assert_eq!(
        f.evidence_value("parameter 3"),
        Some("0xFFFFF80CB903265D (address of the faulting instruction)")
    );
    assert!(f.fix.contains("DDU"), "{}", f.fix);
    let bsv = "Bug Check String  : SYSTEM_SERVICE_EXCEPTION\n\
               Bug Check Code    : 0x0000003b\n\
               Caused By Driver  : btrfs.sys\n";
    assert_eq!(
        windows_finding(bsv).title,
        "Windows bug check 0x0000003B SYSTEM_SERVICE_EXCEPTION in btrfs.sys (a driver)"
    );
    let event = "The computer has rebooted from a bugcheck.  The bugcheck was: 0x0000003b (0x00000000c0000005, 0xfffff800f1819d34, 0xffffd001fdcdad10, 0x0000000000000000). A dump was saved in: C:\\Windows\\MEMORY.DMP.\n";
    let f = windows_finding(event);
    assert_eq!(
        f.title,
        "Windows bug check 0x0000003B SYSTEM_SERVICE_EXCEPTION"
    );
    assert_eq!(
        f.evidence_value("parameter 2"),
        Some("0xFFFFF800F1819D34 (address of the faulting instruction)")
    );
    let whocrashed =
        "This was probably caused by the following module: ntoskrnl.exe (nt+0x14A0D0)\n\
                      Bugcheck code: 0xD1 (0x0, 0xFF, 0x0, 0x0)\n";
    let f = windows_finding(whocrashed);
    assert!(
        f.title
            .ends_with("in ntoskrnl.exe (the Windows kernel itself)"),
        "{}",
        f.title
    );
    assert_eq!(
        f.assessment.as_ref().map(|a| a.cause),
        Some(CauseKind::Hardware)
    );
}

/// The culprit as each form names it beyond the analysis's own line: a later
/// `IMAGE_NAME` over WinDbg's symbol complaints, an address inside a driver (a
/// localized BlueScreenView row, a classic blue screen, a failure bucket), the stop
/// screen's `What failed:` with the check by name, WinDbg's `KEY_VALUES`, and
/// WhoCrashed's summary of a check outside the memory faults.
#[test]
fn windows_culprits_are_named_by_the_surest_line_in_every_form() {
    let windbg = "DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)\n\
                  *** WARNING: Unable to verify timestamp for avgsp.sys\n\
                  Arg4: fffff80412345678, address which referenced memory\n\
                  IMAGE_NAME:  e1d65x64.sys\n";
    assert!(
        windows_finding(windbg)
            .title
            .ends_with("in e1d65x64.sys (a driver)"),
        "the analysis's answer outranks a driver without symbols"
    );
    let russian = "Текст ошибки      : DRIVER_IRQL_NOT_LESS_OR_EQUAL\n\
                   Код ошибки        : 0x000000d1\n\
                   Адрес причины     : netdrv.sys+1a2b\n";
    assert_eq!(
        windows_finding(russian).title,
        "Windows bug check 0x000000D1 DRIVER_IRQL_NOT_LESS_OR_EQUAL in netdrv.sys (a driver)"
    );
    let classic = "STOP: 0x000000D1 (0x0000000000000010,0x0000000000000002,0x0000000000000000,0xFFFFF88001234567)\n\
                   *** tcpipx.sys - Address FFFFF88001234567 base at FFFFF88001200000, DateStamp 4a5bc0a1\n";
    assert!(windows_finding(classic)
        .title
        .ends_with("in tcpipx.sys (a driver)"));
    let stop_screen = "Stop code: SYSTEM_THREAD_EXCEPTION_NOT_HANDLED\nWhat failed: nvlddmkm.sys\n";
    assert_eq!(
        windows_finding(stop_screen).title,
        "Windows bug check 0x0000007E SYSTEM_THREAD_EXCEPTION_NOT_HANDLED in nvlddmkm.sys (NVIDIA's display driver)"
    );
    let key_values = "    Key  : Bugcheck.Code.LegacyAPI\n    Value: 0x116\n\n\
                      \x20   Key  : Failure.Bucket\n    Value: 0x116_IMAGE_atikmpag.sys\n";
    assert_eq!(
        windows_finding(key_values).title,
        "Windows bug check 0x00000116 VIDEO_TDR_FAILURE in atikmpag.sys (AMD's display driver)"
    );
    let bucket = "BUGCHECK_CODE:  50\nFAILURE_BUCKET_ID:  AV_R_INVALID_nvlddmkm!unknown_function\n";
    assert!(windows_finding(bucket)
        .title
        .ends_with("in nvlddmkm.sys (NVIDIA's display driver)"));
    let whocrashed = "On Mon 02.03.2026 10:11:12 your computer crashed or a problem was reported\n\
                      This was probably caused by the following module: stornvme.sys (stornvme+0x2a3c1)\n\
                      Bugcheck code: 0x133 (0x1, 0x1E00, 0xFFFFF8000C2FB320, 0x0)\n\
                      Error: DPC_WATCHDOG_VIOLATION\n";
    assert_eq!(
        windows_finding(whocrashed).title,
        "Windows bug check 0x00000133 DPC_WATCHDOG_VIOLATION in stornvme.sys (a driver)"
    );
    // Kernel-Power 41's data: the code in decimal (80 is 0x50); 0 is a power loss.
    let power = "<Data Name=\"BugcheckCode\">80</Data>\n<Data Name=\"BugcheckParameter1\">0xffffa98c99cc35bf</Data>\n";
    assert!(windows_finding(power)
        .title
        .starts_with("Windows bug check 0x00000050"));
}

/// A paste that lost its headline still ends with the 2.6-4.x register line
/// (`RIP  [<…>] func+0x…`); XFS's own corruption check names its source file.
#[test]
fn a_headless_oops_and_a_filesystems_internal_error_name_the_culprit() {
    let headless = "[    0.484590] Call Trace:\n\
                    [    0.484603]  [<ffffffff8107b1c9>] cpuhp_invoke_callback+0x89/0x3f0\n\
                    [    0.484680] RIP  [<ffffffff81014ec3>] rapl_cpu_online+0x63/0x80\n\
                    [    0.484685]  RSP <ffffc90040cafdf8>\n\
                    [    0.484696] ---[ end trace 366b19d11bca2521 ]---\n";
    let f = oops_finding(headless);
    assert_eq!(
        f.evidence_value("suspect"),
        Some("built-in kernel code (rapl_cpu_online)")
    );
    let xfs = "Oct 14 15:00:04 node7 kernel: XFS: Internal error XFS_WANT_CORRUPTED_GOTO at line 1502 of file fs/xfs/libxfs/xfs_alloc.c.  Caller xfs_free_ag_extent+0x3c4/0x780 [xfs]\n\
               Oct 14 15:00:04 node7 kernel: CPU: 5 PID: 2211 Comm: kworker/5:1 Not tainted 5.4.0-42-generic\n";
    let f = oops_finding(xfs);
    assert_eq!(f.evidence_value("suspect"), Some("xfs (filesystem)"));
}

/// A WARN names its module from its own line; it is a warning, not a crash, and its
/// fix asks for no reboot.
#[test]
fn a_kernel_warning_names_its_module_without_calling_it_a_crash() {
    let warn = "[    3.294516] ------------[ cut here ]------------\n\
                [    3.294587] WARNING: CPU: 3 PID: 295 at drivers/gpu/drm/amd/display/dc/core/dc.c:411 dc_commit_state+0x48e/0x540 [amdgpu]\n\
                [    3.294600] Modules linked in: amdgpu(+) drm_kms_helper\n";
    let f = oops_finding(warn);
    assert_eq!(f.severity, crate::model::finding::Severity::Warn);
    assert_eq!(f.title, "Kernel warning in the amdgpu module, a GPU driver");
    assert_eq!(f.evidence_value("suspect"), Some("amdgpu (GPU driver)"));
    assert!(!f.fix.contains("Reboot"), "{}", f.fix);
}
