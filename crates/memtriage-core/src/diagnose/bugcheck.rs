//! Windows bug checks by code: their names, what their four parameters hold, and
//! which of them (if any) is the address of the faulting instruction, from Microsoft's
//! bug check reference (learn.microsoft.com, "Bug Check Code Reference"). A dump or a
//! WinDbg analysis gives the code and the parameters; this says what they mean, whose
//! the driver named is, and what to do.

use crate::model::finding::{CauseKind, Evidence};

/// Whom a bug check points at before any module is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Points {
    /// A driver or the kernel touched memory wrongly: the module at the faulting
    /// address is the suspect, failing RAM the other usual cause.
    Code,
    /// The hardware reported an error it could not correct (WHEA, a machine check).
    Hardware,
    /// The display driver stopped responding and could not be reset.
    DisplayDriver,
    /// A driver held a CPU too long, or never finished a power transition.
    Stall,
    /// Memory management's own structures were found corrupt: RAM or a driver that
    /// wrote where it must not.
    Corruption,
    /// Someone asked for the crash (a power button held, a keyboard crash, a debugger).
    Manual,
}

/// One bug check's entry in the reference.
#[derive(Debug, Clone, Copy)]
pub struct BugCheck {
    pub code: u32,
    pub name: &'static str,
    /// What each of the four parameters holds; empty where the reference says
    /// "reserved" or nothing.
    pub parameters: [&'static str; 4],
    /// The parameter (0-based) that holds the faulting instruction's address (or a
    /// pointer into the responsible driver), where the reference names one.
    pub faulting_address: Option<usize>,
    pub points: Points,
    pub meaning: &'static str,
}

const fn check(
    code: u32,
    name: &'static str,
    parameters: [&'static str; 4],
    faulting_address: Option<usize>,
    points: Points,
    meaning: &'static str,
) -> BugCheck {
    BugCheck {
        code,
        name,
        parameters,
        faulting_address,
        points,
        meaning,
    }
}

const EXCEPTION: [&str; 4] = [
    "exception code",
    "address of the faulting instruction",
    "exception record or context",
    "context or trap frame",
];

/// The bug checks users bring: the memory faults, and those that look like them.
pub const BUG_CHECKS: &[BugCheck] = &[
    check(0x0A, "IRQL_NOT_LESS_OR_EQUAL", ["memory referenced", "IRQL at the time", "access (bit 0 write, bit 3 execute)", "address of the faulting instruction"], Some(3), Points::Code, "kernel code touched pageable or invalid memory at too high an interrupt level"),
    check(0x19, "BAD_POOL_HEADER", ["kind of corruption", "", "", ""], None, Points::Corruption, "a pool allocation's header was found corrupt"),
    check(0x1A, "MEMORY_MANAGEMENT", ["subtype (what memory management found corrupt)", "", "", ""], None, Points::Corruption, "memory management found its own structures corrupt"),
    check(0x1E, "KMODE_EXCEPTION_NOT_HANDLED", EXCEPTION, Some(1), Points::Code, "kernel code raised an exception (most often an access violation, c0000005) that nothing handled"),
    check(0x3B, "SYSTEM_SERVICE_EXCEPTION", ["exception code", "address of the faulting instruction", "context record", ""], Some(1), Points::Code, "an exception in a system call's kernel code"),
    check(0x4E, "PFN_LIST_CORRUPT", ["kind of corruption", "", "", ""], None, Points::Corruption, "the list of physical pages was found corrupt"),
    check(0x50, "PAGE_FAULT_IN_NONPAGED_AREA", ["memory referenced", "access (0 read, 1 write, 2 execute)", "address of the faulting instruction", ""], Some(2), Points::Code, "kernel code touched memory that was not there"),
    check(0x7C, "BUGCODE_NDIS_DRIVER", ["kind of violation", "", "", ""], None, Points::Code, "a network driver (NDIS) broke the rules of its interface"),
    check(0x7E, "SYSTEM_THREAD_EXCEPTION_NOT_HANDLED", EXCEPTION, Some(1), Points::Code, "a system thread raised an exception that nothing handled"),
    check(0x7F, "UNEXPECTED_KERNEL_MODE_TRAP", ["trap number", "", "", ""], None, Points::Code, "the CPU trapped in kernel mode (a double fault, a stack overflow)"),
    check(0x8E, "KERNEL_MODE_EXCEPTION_NOT_HANDLED", EXCEPTION, Some(1), Points::Code, "kernel code raised an exception that nothing handled"),
    check(0x9F, "DRIVER_POWER_STATE_FAILURE", ["kind", "", "", ""], None, Points::Stall, "a driver did not finish a power transition"),
    check(0xBE, "ATTEMPTED_WRITE_TO_READONLY_MEMORY", ["memory referenced", "PTE contents", "", ""], None, Points::Code, "a driver wrote to read-only memory"),
    check(0xC2, "BAD_POOL_CALLER", ["kind of bad request", "", "", ""], None, Points::Corruption, "a driver made a bad pool request (a double free, a wrong size)"),
    check(0xC5, "DRIVER_CORRUPTED_EXPOOL", ["memory referenced", "IRQL", "access", "address of the faulting instruction"], Some(3), Points::Corruption, "a driver corrupted the system's pool"),
    check(0xD1, "DRIVER_IRQL_NOT_LESS_OR_EQUAL", ["memory referenced", "IRQL at the time", "access (0 read, 1 write, 8 execute)", "address of the faulting instruction"], Some(3), Points::Code, "a driver touched pageable or invalid memory at too high an interrupt level"),
    check(0xE2, "MANUALLY_INITIATED_CRASH", ["", "", "", ""], None, Points::Manual, "the crash was asked for from the keyboard or a debugger"),
    check(0xEA, "THREAD_STUCK_IN_DEVICE_DRIVER", ["thread", "device context", "", ""], None, Points::DisplayDriver, "a display driver spun waiting for its hardware"),
    check(0xEF, "CRITICAL_PROCESS_DIED", ["process", "", "", ""], None, Points::Code, "a process Windows cannot run without ended"),
    check(0xFC, "ATTEMPTED_EXECUTE_OF_NOEXECUTE_MEMORY", ["memory referenced", "PTE contents", "", ""], None, Points::Code, "kernel code jumped into memory that is not code"),
    check(0x101, "CLOCK_WATCHDOG_TIMEOUT", ["clock interrupt timeout", "", "", "processor"], None, Points::Hardware, "a processor stopped answering clock interrupts"),
    check(0x116, "VIDEO_TDR_FAILURE", ["recovery context", "address in the responsible driver", "error code", ""], Some(1), Points::DisplayDriver, "the display driver stopped responding and could not be reset"),
    check(0x117, "VIDEO_TDR_TIMEOUT_DETECTED", ["recovery context", "address in the responsible driver", "", ""], Some(1), Points::DisplayDriver, "the display driver stopped responding"),
    check(0x119, "VIDEO_SCHEDULER_INTERNAL_ERROR", ["kind", "", "", ""], None, Points::DisplayDriver, "the GPU scheduler found a fatal violation"),
    check(0x124, "WHEA_UNCORRECTABLE_ERROR", ["kind of error source", "WHEA error record", "", ""], None, Points::Hardware, "the hardware reported an error it could not correct"),
    check(0x12B, "FAULTY_HARDWARE_CORRUPTED_PAGE", ["", "", "", ""], None, Points::Hardware, "a page's contents changed with nothing writing it: failing RAM"),
    check(0x133, "DPC_WATCHDOG_VIOLATION", ["kind", "", "", ""], None, Points::Stall, "a driver held a processor too long at high interrupt level"),
    check(0x139, "KERNEL_SECURITY_CHECK_FAILURE", ["kind of corruption", "trap frame", "exception record", ""], None, Points::Corruption, "the kernel found a critical structure corrupt"),
    check(0x154, "UNEXPECTED_STORE_EXCEPTION", ["", "", "", ""], None, Points::Code, "the memory compression store hit an exception (most often a failing disk or RAM)"),
    check(0x1C8, "MANUALLY_INITIATED_POWER_BUTTON_HOLD", ["", "", "", ""], None, Points::Manual, "the power button was held down"),
];

/// A bug check by its code; the `0x1000_0000` bit (the same check, with a
/// different parameter layout flag) is ignored.
pub fn lookup(code: u32) -> Option<&'static BugCheck> {
    let base = code & !0x1000_0000;
    BUG_CHECKS.iter().find(|b| b.code == base)
}

/// A bug check by its name (`PAGE_FAULT_IN_NONPAGED_AREA`).
pub fn by_name(name: &str) -> Option<&'static BugCheck> {
    BUG_CHECKS.iter().find(|b| b.name == name)
}

/// `0x00000050` as WinDbg and Event Viewer print it.
pub fn code_text(code: u32) -> String {
    format!("0x{code:08X}")
}

/// The bug check by name and its parameters, each labelled with what it holds, as
/// evidence from `source` (a dump's header, a pasted analysis's line).
pub fn evidence(code: u32, parameters: &[Option<u64>; 4], source: &str) -> Vec<Evidence> {
    let check = lookup(code);
    let name = check.map_or("an unknown bug check", |c| c.name);
    let mut out = vec![Evidence::text(
        "bug check",
        format!("{} {name}", code_text(code)),
        source,
    )];
    for (i, value) in parameters.iter().enumerate() {
        let Some(value) = value else {
            continue;
        };
        let shown = match check.map(|c| c.parameters[i]).filter(|l| !l.is_empty()) {
            Some(label) => format!("0x{value:X} ({label})"),
            None => format!("0x{value:X}"),
        };
        out.push(Evidence::text(
            format!("parameter {}", i + 1),
            shown,
            source,
        ));
    }
    out
}

/// `Windows bug check 0x00000050 PAGE_FAULT_IN_NONPAGED_AREA in nvlddmkm.sys (NVIDIA's
/// display driver)`, without the driver where none is known.
pub fn title(code: u32, driver: Option<&str>) -> String {
    let name = lookup(code).map_or("an unknown bug check", |c| c.name);
    match driver {
        Some(d) => format!(
            "Windows bug check {} {name} in {d} ({})",
            code_text(code),
            whose(d)
        ),
        None => format!("Windows bug check {} {name}", code_text(code)),
    }
}

/// Images that are the kernel itself: a fault there is its own or corruption by
/// another driver, never the place to stop looking.
const KERNEL_IMAGES: &[&str] = &[
    "ntoskrnl.exe",
    "ntkrnlmp.exe",
    "ntkrnlpa.exe",
    "ntkrpamp.exe",
    "hal.dll",
    "kd.dll",
];

fn is_kernel_image(name: &str) -> bool {
    KERNEL_IMAGES.iter().any(|k| name.eq_ignore_ascii_case(k))
}

/// The makers of the images that bug checks most often name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maker {
    NvidiaDisplay,
    AmdDisplay,
    IntelDisplay,
    /// dxgkrnl and dxgmms2, which fault on behalf of the display driver.
    GraphicsKernel,
    /// The kernel's own images, and WinDbg's `memory_corruption` pseudo-module.
    WindowsKernel,
}

/// Who made `image` (`nvlddmkm.sys`, `ntoskrnl.exe`, WinDbg's `MODULE_NAME`), where it
/// is one of the images told apart here.
pub fn maker(image: &str) -> Option<Maker> {
    let d = image.to_ascii_lowercase();
    let any = |prefixes: &[&str]| prefixes.iter().any(|p| d.starts_with(p));
    if any(&["nvlddmkm", "nvkflt", "nvvad", "nvwgf", "nvoglv"]) {
        Some(Maker::NvidiaDisplay)
    } else if any(&["atikmdag", "amdkmdag", "atikmpag"]) {
        Some(Maker::AmdDisplay)
    } else if any(&["igdkmd"]) {
        Some(Maker::IntelDisplay)
    } else if is_kernel_image(&d) || any(&["ntoskrnl", "ntkrnl"]) || d.contains("memory_corruption")
    {
        Some(Maker::WindowsKernel)
    } else if d == "dxgkrnl.sys" || d == "dxgmms2.sys" {
        Some(Maker::GraphicsKernel)
    } else {
        None
    }
}

/// Whose code a driver is, for the title and the fix.
pub fn whose(driver: &str) -> &'static str {
    match maker(driver) {
        Some(Maker::NvidiaDisplay) => "NVIDIA's display driver",
        Some(Maker::AmdDisplay) => "AMD's display driver",
        Some(Maker::IntelDisplay) => "Intel's display driver",
        Some(Maker::WindowsKernel) => "the Windows kernel itself",
        Some(Maker::GraphicsKernel) => "Windows' graphics kernel (on behalf of the display driver)",
        None => "a driver",
    }
}

/// Whom a bug check points at: the hardware, nobody (a crash asked for), the RAM
/// when the kernel's own image faulted, else the driver.
pub fn cause_of(points: Points, driver: Option<&str>) -> CauseKind {
    match points {
        Points::Hardware => CauseKind::Hardware,
        Points::Manual => CauseKind::Configuration,
        _ if driver.and_then(maker) == Some(Maker::WindowsKernel) => CauseKind::Hardware,
        _ => CauseKind::Driver,
    }
}

/// The fix for a bug check of this kind in `driver` (a file name, `nvlddmkm.sys`).
pub fn fix_for(points: Points, driver: Option<&str>) -> String {
    let driver = driver.unwrap_or("");
    let who = whose(driver);
    match points {
        Points::Manual => "Nothing failed: the crash was asked for (a power button held, a keyboard or debugger crash).".into(),
        Points::Hardware => "Test the hardware: the CPU, RAM and PCIe devices reported an error they could not correct. \
             Run Windows Memory Diagnostic or memtest86+, check temperatures and overclocks (reset them to stock), \
             and read the WHEA records in Event Viewer (System log, source WHEA-Logger)."
            .into(),
        _ if who.starts_with("NVIDIA") || who.starts_with("AMD") || who.starts_with("Intel") => format!(
            "Reinstall the display driver ({driver}): remove it cleanly (DDU in safe mode), install the vendor's \
             current or last known good version, and for CUDA work one that matches the CUDA toolkit PyTorch was \
             built with. Reset GPU overclocks; if the bug checks continue, test the card and the RAM."
        ),
        _ if who == "the Windows kernel itself" => "The kernel faulted in its own code: most often memory corrupted \
             by another driver, or failing RAM. Run Windows Memory Diagnostic or memtest86+ (a pass per stick), \
             then Driver Verifier (verifier /standard /all, on a test machine) to catch the driver that writes \
             where it must not."
            .into(),
        _ if !driver.is_empty() => format!(
            "Update or remove {driver} (its vendor's current version; Device Manager or the program that \
             installed it). If bug checks continue in other drivers, test the RAM (memtest86+)."
        ),
        _ => "Open the dump in WinDbg (!analyze -v) to name the driver; test the RAM (memtest86+) if the bug checks \
             name different drivers each time."
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_the_flagged_form_finds_its_check() {
        let mut codes: Vec<u32> = BUG_CHECKS.iter().map(|b| b.code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), BUG_CHECKS.len());
        assert_eq!(
            lookup(0x1000_007E).map(|b| b.name),
            Some("SYSTEM_THREAD_EXCEPTION_NOT_HANDLED")
        );
        assert_eq!(lookup(0x50).and_then(|b| b.faulting_address), Some(2));
        assert!(lookup(0xDEAD).is_none());
        assert_eq!(code_text(0x50), "0x00000050");
        for b in BUG_CHECKS {
            if let Some(i) = b.faulting_address {
                assert!(b.parameters[i].contains("address"), "{}", b.name);
            }
        }
    }
}
