use super::*;
use crate::model::finding::CauseKind;
use crate::parse::windump::{self as parse, DumpType, Machine};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../corpus/kernel-crashes/dumps/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The real triage dump, read as `explain` reads it: header, triage regions, stack.
fn explain_fixture(name: &str) -> Finding {
    let bytes = fixture(name);
    let header = parse::header(&bytes).expect("header");
    let at = |r: parse::FileRegion| &bytes[r.offset as usize..r.offset as usize + r.len];
    let layout = parse::triage_layout(&header, at(header.triage_header_region())).expect("layout");
    let drivers = parse::drivers(
        &layout,
        at(layout.driver_list_region()),
        at(layout.string_pool_region()),
    )
    .expect("drivers");
    let stack: Vec<u64> = parse::stack_addresses(&layout, at(layout.call_stack_region())).collect();
    explain(
        &DumpContents {
            header: &header,
            drivers: &drivers,
            stack: &stack,
            drivers_missing: None,
        },
        name,
    )
}

#[test]
fn the_real_x64_triage_dump_names_amdppm_from_the_exception_address() {
    let f = explain_fixture("triage_x64.dmp");
    assert_eq!(
        f.title,
        "Windows bug check 0x1000007E SYSTEM_THREAD_EXCEPTION_NOT_HANDLED in amdppm.sys (a driver)"
    );
    assert_eq!(
        f.evidence_value("suspect"),
        Some("amdppm.sys+0x334c (a driver)")
    );
    assert_eq!(
        f.evidence_value("named by"),
        Some("parameter 2 (address of the faulting instruction)")
    );
    assert_eq!(
        f.evidence_value("parameter 1"),
        Some("0xFFFFFFFFC0000005 (exception code)")
    );
    assert_eq!(
        f.evidence_value("system"),
        Some("Windows build 19041 (x64, 16 processors)")
    );
    assert_eq!(f.evidence_value("drivers loaded"), Some("151"));
    assert_eq!(
        f.evidence_value("crashed at"),
        Some("2021-02-21 01:38:22 UTC")
    );
    assert_eq!(f.evidence_value("up for"), Some("3.7 s"));
    let a = f.assessment.as_ref().expect("assessment");
    assert_eq!(a.certainty, Certainty::Confirmed);
    assert_eq!(a.cause, CauseKind::Driver);
    assert_eq!(f.severity, Severity::Error);
}

#[test]
fn the_real_arm64_dump_is_a_crash_someone_asked_for() {
    let f = explain_fixture("triage_arm64.dmp");
    assert!(
        f.title
            .starts_with("Windows bug check 0x000001C8 MANUALLY_INITIATED_POWER_BUTTON_HOLD"),
        "{}",
        f.title
    );
    assert_eq!(f.severity, Severity::Info);
    assert!(f.fix.starts_with("Nothing failed"), "{}", f.fix);
}

fn header(code: u32, parameters: [u64; 4], ip: Option<u64>) -> DumpHeader {
    DumpHeader {
        bits: 64,
        major_version: 15,
        minor_version: 22631,
        machine: Machine::X64,
        processors: 8,
        bugcheck_code: code,
        bugcheck_parameters: parameters,
        dump_type: DumpType::Triage,
        system_time_filetime: None,
        uptime_ticks: None,
        instruction_pointer: ip,
    }
}

fn driver(name: &str, base: u64, size: u32) -> Driver {
    Driver {
        name: Some(format!("\\SystemRoot\\System32\\drivers\\{name}")),
        base,
        size,
        timestamp: 0,
    }
}

fn drivers() -> Vec<Driver> {
    vec![
        driver("ntoskrnl.exe", 0xfffff800_00000000, 0x100_0000),
        driver("nvlddmkm.sys", 0xfffff801_00000000, 0x400_0000),
    ]
}

fn explain_with(h: &DumpHeader, drivers: &[Driver], stack: &[u64]) -> Finding {
    let contents = DumpContents {
        header: h,
        drivers,
        stack,
        drivers_missing: None,
    };
    explain(&contents, "d.dmp")
}

/// 0x50's third parameter is the faulting instruction: the NVIDIA driver, confirmed.
#[test]
fn a_page_fault_names_the_driver_holding_the_faulting_instruction() {
    let h = header(
        0x50,
        [0xffff_a000_0000_0010, 0, 0xfffff801_00012345, 0],
        None,
    );
    let drivers = drivers();
    let f = explain_with(&h, &drivers, &[]);
    assert_eq!(
        f.title,
        "Windows bug check 0x00000050 PAGE_FAULT_IN_NONPAGED_AREA in nvlddmkm.sys (NVIDIA's display driver)"
    );
    assert_eq!(
        f.evidence_value("parameter 2"),
        Some("0x0 (access (0 read, 1 write, 2 execute))")
    );
    assert!(f.fix.contains("DDU"), "{}", f.fix);
    assert_eq!(
        f.assessment.as_ref().map(|a| a.certainty),
        Some(Certainty::Confirmed)
    );
}

/// A fault inside the kernel's own image looks further: the saved stack's first
/// driver is a guess (likely); with none, the kernel itself points at RAM.
#[test]
fn a_fault_in_the_kernel_falls_back_to_the_stack_then_to_ram() {
    let h = header(0x50, [0, 0, 0xfffff800_00001000, 0], None);
    let drivers = drivers();
    let stack = [0x1234, 0xfffff800_00002000, 0xfffff801_00000400];
    let f = explain_with(&h, &drivers, &stack);
    assert_eq!(
        f.evidence_value("suspect"),
        Some("nvlddmkm.sys+0x400 (NVIDIA's display driver)")
    );
    assert_eq!(
        f.assessment.as_ref().map(|a| a.certainty),
        Some(Certainty::Likely)
    );
    let f = explain_with(&h, &drivers, &[]);
    assert_eq!(
        f.evidence_value("suspect"),
        Some("ntoskrnl.exe+0x1000 (the Windows kernel itself)")
    );
    assert_eq!(
        f.assessment.as_ref().map(|a| a.cause),
        Some(CauseKind::Hardware)
    );
    assert!(f.fix.contains("memtest86+"), "{}", f.fix);
}

/// A kernel dump (type 2) keeps no driver list in its header: the bug check is still
/// explained, with no suspect invented.
#[test]
fn a_dump_without_a_driver_list_still_names_its_bug_check() {
    let mut h = header(0x124, [0, 0xffff_9000_0000_0000, 0, 0], None);
    h.dump_type = DumpType::Kernel;
    let f = explain(
        &DumpContents {
            header: &h,
            drivers: &[],
            stack: &[],
            drivers_missing: Some("not read".into()),
        },
        "MEMORY.DMP",
    );
    assert_eq!(
        f.title,
        "Windows bug check 0x00000124 WHEA_UNCORRECTABLE_ERROR"
    );
    assert_eq!(f.evidence_value("suspect"), None);
    assert_eq!(f.evidence_value("drivers"), Some("not read"));
    assert_eq!(
        f.assessment.as_ref().map(|a| (a.certainty, a.cause)),
        Some((Certainty::Possible, CauseKind::Hardware))
    );
}
