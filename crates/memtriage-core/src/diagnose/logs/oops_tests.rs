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
