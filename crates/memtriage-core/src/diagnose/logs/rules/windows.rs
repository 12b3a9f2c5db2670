//! The Windows face of the same faults, which users bring to a Linux team: bug checks
//! (blue screens and WinDbg's `!analyze -v`), access violations in Event Viewer, exit
//! statuses and Python's own report.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::diagnose::bugcheck::{self, Maker};
use crate::model::finding::CauseKind::{Driver, UserCode};
use crate::model::finding::Certainty::Likely;
use crate::model::finding::Severity::Error;
use crate::model::ids;

/// The module named as the cause, and whom it points at: the NVIDIA driver, RAM (the
/// kernel itself, or WinDbg's `memory_corruption`), or the program.
fn extract_module(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    // The same value in another form (a regex names a group once): the bug check in
    // words, by its short code, or as the first argument of `nt!KeBugCheckEx` in a
    // stack's text.
    for (alias, name) in [
        ("check_words", "check"),
        ("short_code", "code"),
        ("stack_code", "code"),
    ] {
        if let Some(i) = out.iter().position(|(k, _)| k == alias) {
            out[i].0 = name.into();
        }
    }
    let module = out
        .iter()
        .find(|(k, _)| k == "module")
        .map(|(_, v)| v.to_ascii_lowercase());
    if let Some(m) = module {
        let whose = match bugcheck::maker(&m) {
            Some(Maker::NvidiaDisplay) => "the NVIDIA display driver",
            Some(Maker::AmdDisplay) => "the AMD display driver",
            Some(Maker::WindowsKernel) => {
                "RAM or memory corruption (the Windows kernel itself faulted)"
            }
            _ => "this module",
        };
        out.push(("whose".into(), whose.into()));
    }
    true
}

pub(super) static RULES: &[Rule] = &[
    Rule {
        extract: Some(extract_module),
        optional: &[r"(?:What failed|Probably caused by|IMAGE_NAME|MODULE_NAME)\s*:\s*(?P<module>\S+)"],
        ..rule(
            "windows.bugcheck-page-fault",
            C::WindowsMemoryFault,
            Error,
            &["PAGE_FAULT_IN_NONPAGED_AREA", "PAGE FAULT IN NONPAGED AREA", "FAULT IN NOT PAGED", "0x00000050", "ugcheck", "ugCheck", "BUGCHECK", "top code"],
            r"(?i:PAGED?[_ ]FAULT[_ ]IN[_ ]NO[NT][_ ]?PAGED[_ ]AREA)|(?i:bug ?check(?: code)?|stop code|BugCheckCode)\s*[:=]?\s*(?:0x0*50\b|\(50\)|50\b)|\b0x00000050\b",
            "Windows bug check PAGE_FAULT_IN_NONPAGED_AREA (0x50): the kernel touched memory that was not there",
        )
    },
    // The bug checks of a driver's bad access (kernel-mode exceptions are access
    // violations, c0000005, in most dumps). A bug check's name in words (`MEMORY
    // MANAGEMENT`) counts in capitals, alone on
    // its line or after `Stop code:` as the blue screen shows it: otherwise it is
    // English (a shouted sentence about memory management).
    Rule {
        extract: Some(extract_module),
        optional: &[r"(?:What failed|Probably caused by|IMAGE_NAME|MODULE_NAME)\s*:\s*(?P<module>\S+)"],
        ..rule(
            "windows.bugcheck-memory",
            C::WindowsMemoryFault,
            Error,
            &["nt!KeBugCheckEx", "MEMORY_MANAGEMENT", "MEMORY MANAGEMENT", "KERNEL_DATA_INPAGE_ERROR", "BAD_POOL_", "EXCEPTION_NOT_HANDLED", "SYSTEM_SERVICE_EXCEPTION", "IRQL_NOT_LESS_OR_EQUAL", "IRQL NOT LESS OR EQUAL", "VIDEO_TDR_FAILURE", "VIDEO TDR FAILURE", "0x0000001a", "0x0000001A", "0x000000d1", "0x000000D1", "0x00000116", "stop code", "bugcheck"],
            r"\b(?P<check>MEMORY_MANAGEMENT|KERNEL_DATA_INPAGE_ERROR|BAD_POOL_(?:HEADER|CALLER)|(?:DRIVER_)?IRQL_NOT_LESS_OR_EQUAL|VIDEO_TDR_FAILURE|(?:KMODE|SYSTEM_THREAD)_EXCEPTION_NOT_HANDLED|SYSTEM_SERVICE_EXCEPTION)\b|(?:stop code:?\s*|^\s*)(?P<check_words>(?-i:MEMORY MANAGEMENT|(?:DRIVER )?IRQL NOT LESS OR EQUAL|VIDEO TDR FAILURE))\s*$|\b(?P<code>0x0000001[aA]|0x000000[dD]1|0x00000116)\b|(?:stop code|bugcheck(?: code)?)[^.\n]{0,12}?\b(?P<short_code>0x0*(?:1[aA]|[dD]1|50|116|3[bB]|7[eE]|1000007[eE]|124))\b|: 00000000`(?P<stack_code>000000(?:0a|1a|d1|50))\b[^:\n]*: nt!KeBugCheckEx\b",
            "Windows bug check {check}",
        )
    },
    Rule {
        extract: Some(extract_module),
        optional: &[r"(?:What failed|Probably caused by|IMAGE_NAME|MODULE_NAME)\s*:\s*(?P<module>\S+)"],
        ..rule(
            "windows.analyze-cause",
            C::WindowsMemoryFault,
            Error,
            &["Probably caused by", "What failed", "FAILURE_BUCKET_ID"],
            r"(?:Probably caused by|What failed)\s*:\s*(?P<module>\S+)|FAILURE_BUCKET_ID:\s*(?P<bucket>\S+)",
            "Windows crashed; the analysis blames {module}",
        )
    },
    // Any bug check in the forms that carry it whole, whatever its code: WhoCrashed's
    // `Bugcheck code: 0x154 (…)`, WinDbg's `KEY_VALUES` (`Key : Bugcheck.Code.…`),
    // Kernel-Power 41's `BugcheckCode` in decimal (0 there is a power loss, no bug
    // check), WinDbg's `Bugcheck Analysis` banner, the stop screen's `Stop code:` with
    // any check's name; the report's reader names the check and the driver.
    Rule {
        extract: Some(extract_module),
        ..rule(
            "windows.bugcheck-report",
            C::WindowsMemoryFault,
            Error,
            &["ugcheck", "top code"],
            r#"(?i:\bbugcheck code):\s*0x[0-9a-fA-F]+\s*\(|^\s*Key\s*:\s*Bugcheck\.Code\.\w+\s*$|BugcheckCode"?>\s*[1-9]\d*\s*<|^\*\s+Bugcheck Analysis\s+\*$|(?i:\bstop code)\s*:\s*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){2,}\s*$"#,
            "Windows bug check",
        )
    },
    Rule {
        // Windows' timeout detection and recovery (event 4101): the display driver
        // hung and was reset; repeated, it comes before a VIDEO_TDR_FAILURE bug check.
        certainty: Likely,
        extract: Some(extract_module),
        ..rule(
            "windows.display-driver-reset",
            C::WindowsMemoryFault,
            Error,
            &["stopped responding and has successfully recovered"],
            r"Display driver (?P<module>\S+) stopped responding and has successfully recovered",
            "Windows reset the display driver {module} after it stopped responding",
        )
    },
    Rule {
        extract: Some(extract_module),
        optional: &[r"Faulting module name:\s*(?P<module>[^,\s]+)"],
        ..rule(
            "windows.faulting-module",
            C::WindowsMemoryFault,
            Error,
            &["Faulting module", "0xc0000005"],
            r"Faulting module name:\s*(?P<module>[^,\s]+)|Exception code:\s*0x[cC]0000005",
            "Windows: {module} crashed with an access violation (0xc0000005)",
        )
    },
    Rule {
        cause: Some(UserCode),
        certainty: Likely,
        ..rule(
            "windows.access-violation",
            C::WindowsMemoryFault,
            Error,
            &["access violation", "3221225477", "1073741819", "C0000005", "c0000005", "ACCESS_VIOLATION", "referenced memory at", "fatal exception: code", "Problem Event Name", "BUGCHECK_CODE", "bugcheck", "ExceptionCode", "AccessViolationException", "heap has been corrupted", "page fault on", "exit code -1073740940", "exit code 3221226356", "exit code 0xC000005"],
            // .NET raises the same fault as AccessViolationException.
            // Python's ctypes raises it as `OSError: exception: access violation reading 0x…`;
            // OBS's crash handler as `Unhandled exception: c0000005`; WinDbg's event
            // line for a dump's exception (`(eb4.1328): Access violation - code c0000005
            // (first/second chance not available)`), not a first chance, which a debugged
            // JVM or .NET program handles every day).
            // Intel Fortran's runtime says it as `forrtl: severe (157): Program Exception -
            // access violation`. Wine says it as a page fault (`wine: Unhandled page fault
            // on read access to 0x7d925744 at address …`, `Unhandled exception: page
            // fault on read access to 0x00000000 in wow64 32-bit code`).
            // PyCharm ends a run killed by heap corruption with `Process finished with exit
            // code -1073740940 (0xC0000374)`; people retyping 0xC0000005 drop a zero
            // (`exit code 0xC000005`).
            r"\b(?:wine: Unhandled|Unhandled exception:) page fault on (?:read|write|execute) access to 0x[0-9a-fA-F]+|\bProgram Exception - access violation\b|(?-i:\bUnhandled exception: (?:0x)?[cC]0000005\b)|\bAccessViolationException\b|\bexception: access violation (?:reading|writing|executing) 0x[0-9a-fA-F]+|\b0xC0000374: A heap has been corrupted|(?:Windows )?fatal exception: (?:access violation|code 0x[cC]00000(?:05|FD|fd)|code 0x[cC]0000374)|Problem Event Name:\s*(?:BEX64|BEX|APPCRASH)|BUGCHECK_CODE:\s*\w+|\bBugCheck [0-9A-Fa-f]{1,8}, \{[0-9a-fA-F]+,|rebooted from a bugcheck|[Tt]he bugcheck was: 0x|(?i:exit(?:ed with)? (?:code|status)\s*[:=]?\s*(?:3221225477|-1073741819))|(?i:\bexit code (?:-1073740940|3221226356|0xC000005)\b)|(?i:\b0xC0000005\b)|(?i:(?:exception code|código de excepción|code d['’]exception|ausnahmecode|codice eccezione|código de exceção|kod wyjątku|код исключения|例外コード|异常代码|異常代碼|예외 코드)\s*:?\s*c0000005\b)|STATUS_ACCESS_VIOLATION|EXCEPTION_ACCESS_VIOLATION|(?:\b3221225477|(?:^|[^\w-])-1073741819)\b|referenced memory at 0x[0-9a-fA-F]+\. The memory could not be|(?i:\bThe instruction at 0x[0-9a-f]+ referenced memory at 0x[0-9a-f]+)|(?i:ExceptionCode\x22>c0000(?:005|374)<)|\(\w+\.\w+\): Access violation - code c0000005 \((?:first/second chance not available|!!! second chance !!!)\)",
            "Windows: the process crashed with an access violation (0xC0000005)",
        )
    },
    rule(
        // The Resource-Exhaustion-Detector's event 2004: commit charge near its limit,
        // with the programs that hold the most.
        "windows.low-virtual-memory",
        C::MemoryPressure,
        crate::model::finding::Severity::Warn,
        &["low virtual memory condition"],
        r"Windows successfully diagnosed a low virtual memory condition",
        "Windows ran low on virtual memory (commit charge near its limit)",
    ),
];

pub(super) const WINDOWS_MEMORY_FAULT: ClassInfo = ClassInfo {
    class: C::WindowsMemoryFault,
    name: "windows_memory_fault",
    id: ids::LOG_WINDOWS_MEMORY_FAULT,
    title: "Windows: a memory fault (bug check or access violation)",
    why: "A bug check 0x50 (PAGE_FAULT_IN_NONPAGED_AREA) means the kernel or a driver touched memory that is \
          not there; an access violation (0xC0000005, exit status 3221225477 or -1073741819) the same in a \
          program. In ML machines the culprit is usually the GPU driver (nvlddmkm.sys), failing or overclocked \
          RAM (memory_corruption, ntoskrnl.exe), or a native extension built for another CUDA or Python.",
    fix: "GPU driver (nvlddmkm.sys): a clean reinstall of a known-good driver (DDU, then the NVIDIA installer's \
          clean install), or roll back to the previous one.\nRAM (memory_corruption, ntoskrnl.exe): run Windows \
          Memory Diagnostic (mdsched.exe) or MemTest86; turn off overclocking and XMP/EXPO profiles in the BIOS.\n\
          A program's access violation: check that PyTorch, CUDA and the driver match (python -c \"import torch; \
          print(torch.__version__, torch.version.cuda)\" against nvidia-smi), reinstall the extension that crashes, \
          and get its stack with python -X faulthandler.\nCommit limit: let Windows manage the paging file size, \
          or enlarge it (System > Advanced > Performance > Virtual memory).",
    cause: Driver,
    confirm: "The dump's analysis names the module: WinDbg !analyze -v on C:\\Windows\\Minidump (or \
              Event Viewer > Windows Logs > System, source BugCheck); rerun a memory test.",
};
