//! A Windows crash dump explained: the bug check by name with its parameters, and the
//! driver whose code faulted. WinDbg's `!analyze -v` finds that driver with symbols;
//! without them the dump still says it where the bug check's parameters or the
//! crashing context hold the faulting address (the driver list gives each driver's
//! range), and the saved stack's first word inside a driver other than the kernel's
//! is the guess BlueScreenView makes (said as likely, never as confirmed).

use super::bugcheck::{self, BugCheck, Points};
use crate::model::finding::{
    Assessment, CauseKind, Certainty, Evidence, Finding, Quantity, Severity,
};
use crate::model::ids;
use crate::model::units::utc_ms;
use crate::parse::windump::{basename, driver_at, Driver, DumpHeader};

/// What was read of a dump, for [`explain`].
pub struct DumpContents<'a> {
    pub header: &'a DumpHeader,
    /// The triage data's driver list; empty for a dump without one.
    pub drivers: &'a [Driver],
    /// The saved stack's words, innermost first.
    pub stack: &'a [u64],
    /// Why the drivers are missing, when they are (a full dump, a damaged list).
    pub drivers_missing: Option<String>,
}

/// The driver suspected, and how it was found.
struct Suspect {
    name: String,
    offset: u64,
    named_by: String,
    certainty: Certainty,
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

fn suspect(contents: &DumpContents<'_>, check: Option<&BugCheck>) -> Option<Suspect> {
    let drivers = contents.drivers;
    let named = |address: u64, named_by: String, certainty| {
        driver_at(drivers, address).map(|(d, offset)| Suspect {
            name: d
                .name
                .as_deref()
                .map(basename)
                .unwrap_or("(unnamed driver)")
                .to_string(),
            offset,
            named_by,
            certainty,
        })
    };
    let from_parameter = check.and_then(|c| {
        let i = c.faulting_address?;
        let address = contents.header.bugcheck_parameters[i];
        named(
            address,
            format!("parameter {} ({})", i + 1, c.parameters[i]),
            Certainty::Confirmed,
        )
    });
    let from_context = || {
        contents.header.instruction_pointer.and_then(|ip| {
            named(
                ip,
                "the crashing context's instruction pointer".into(),
                Certainty::Confirmed,
            )
        })
    };
    let direct = from_parameter.or_else(from_context);
    if direct.as_ref().is_some_and(|s| !is_kernel_image(&s.name)) {
        return direct;
    }
    let from_stack = contents.stack.iter().find_map(|&word| {
        named(
            word,
            "the first return address on the saved stack inside a driver".into(),
            Certainty::Likely,
        )
        .filter(|s| !is_kernel_image(&s.name))
    });
    from_stack.or(direct)
}

/// Whose code a driver is, for the title and the fix.
pub fn whose(driver: &str) -> &'static str {
    let d = driver.to_ascii_lowercase();
    if d.starts_with("nvlddmkm") || d.starts_with("nvkflt") || d.starts_with("nvvad") {
        "NVIDIA's display driver"
    } else if d.starts_with("atikmdag") || d.starts_with("amdkmdag") || d.starts_with("atikmpag") {
        "AMD's display driver"
    } else if d.starts_with("igdkmd") {
        "Intel's display driver"
    } else if is_kernel_image(&d) {
        "the Windows kernel itself"
    } else if d == "dxgkrnl.sys" || d == "dxgmms2.sys" {
        "Windows' graphics kernel (on behalf of the display driver)"
    } else {
        "a driver"
    }
}

/// The dump's bug check and suspect, as one finding.
pub fn explain(contents: &DumpContents<'_>, source: &str) -> Finding {
    let h = contents.header;
    let check = bugcheck::lookup(h.bugcheck_code);
    let name = check.map_or("an unknown bug check", |c| c.name);
    let code = bugcheck::code_text(h.bugcheck_code);
    let suspect = suspect(contents, check);
    let mut evidence = vec![Evidence::text(
        "bug check",
        format!("{code} {name}"),
        source,
    )];
    for (i, value) in h.bugcheck_parameters.iter().enumerate() {
        let label = check.map(|c| c.parameters[i]).filter(|l| !l.is_empty());
        let shown = match label {
            Some(l) => format!("0x{value:X} ({l})"),
            None => format!("0x{value:X}"),
        };
        evidence.push(Evidence::text(
            format!("parameter {}", i + 1),
            shown,
            source,
        ));
    }
    if let Some(s) = &suspect {
        evidence.push(Evidence::text(
            "suspect",
            format!("{}+0x{:x} ({})", s.name, s.offset, whose(&s.name)),
            source,
        ));
        evidence.push(Evidence::text("named by", s.named_by.clone(), source));
    }
    evidence.push(Evidence::text(
        "system",
        format!(
            "Windows build {} ({}, {} processors)",
            h.minor_version,
            h.machine.name(),
            h.processors
        ),
        source,
    ));
    evidence.push(Evidence::text("dump", h.dump_type.name(), source));
    if let Some(at) = h.system_time_unix() {
        evidence.push(Evidence::text(
            "crashed at",
            utc_ms(i64::try_from(at.saturating_mul(1000)).unwrap_or(i64::MAX)),
            source,
        ));
    }
    if let Some(up) = h.uptime() {
        evidence.push(Evidence::measured(
            "up for",
            Quantity::Seconds(up.as_secs_f64()),
            source,
        ));
    }
    match &contents.drivers_missing {
        Some(why) => evidence.push(Evidence::text("drivers", why.clone(), source)),
        None => evidence.push(Evidence::count(
            "drivers loaded",
            contents.drivers.len() as u64,
            source,
        )),
    }
    let points = check.map_or(Points::Code, |c| c.points);
    let title = match &suspect {
        Some(s) => format!(
            "Windows bug check {code} {name} in {} ({})",
            s.name,
            whose(&s.name)
        ),
        None => format!("Windows bug check {code} {name}"),
    };
    let meaning = check.map_or(
        "Windows stopped on a bug check this tool has no entry for",
        |c| c.meaning,
    );
    Finding {
        id: ids::DUMP_WINDOWS_BUGCHECK.to_string(),
        severity: if points == Points::Manual { Severity::Info } else { Severity::Error },
        title,
        evidence,
        why: format!(
            "Windows stopped because {meaning}. The dump's parameters and driver list name the code that \
             was running; a fault in the Windows kernel itself most often means another driver corrupted \
             memory, or the RAM is failing."
        ),
        fix: fix_for(points, suspect.as_ref().map(|s| s.name.as_str())),
        assessment: Some(Assessment {
            certainty: suspect.as_ref().map_or(Certainty::Possible, |s| s.certainty),
            cause: cause_of(points, suspect.as_ref().map(|s| s.name.as_str())),
            confirm: "WinDbg on Windows: windbg -z FILE.dmp, then !analyze -v (MODULE_NAME, IMAGE_NAME).".into(),
        }),
    }
}

/// Whom a bug check points at: the hardware, nobody (a crash asked for), the RAM
/// when the kernel's own image faulted, else the driver.
pub fn cause_of(points: Points, driver: Option<&str>) -> CauseKind {
    match points {
        Points::Hardware => CauseKind::Hardware,
        Points::Manual => CauseKind::Configuration,
        _ if driver.is_some_and(is_kernel_image) => CauseKind::Hardware,
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
#[path = "windump_tests.rs"]
mod tests;
