//! A Windows crash dump explained: the bug check by name with its parameters, and the
//! driver whose code faulted. WinDbg's `!analyze -v` finds that driver with symbols;
//! without them the dump still says it where the bug check's parameters or the
//! crashing context hold the faulting address (the driver list gives each driver's
//! range), and the saved stack's first word inside a driver other than the kernel's
//! is the guess BlueScreenView makes (said as likely, never as confirmed).

use super::bugcheck::{self, BugCheck, Maker, Points};
use crate::model::finding::{Assessment, Certainty, Evidence, Finding, Quantity, Severity};
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

/// A fault in the kernel's own image is the place to look further, never to stop.
fn is_windows_kernel(image: &str) -> bool {
    bugcheck::maker(image) == Some(Maker::WindowsKernel)
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
    if direct.as_ref().is_some_and(|s| !is_windows_kernel(&s.name)) {
        return direct;
    }
    let from_stack = contents.stack.iter().find_map(|&word| {
        named(
            word,
            "the first return address on the saved stack inside a driver".into(),
            Certainty::Likely,
        )
        .filter(|s| !is_windows_kernel(&s.name))
    });
    from_stack.or(direct)
}

/// The dump's bug check and suspect, as one finding.
pub fn explain(contents: &DumpContents<'_>, source: &str) -> Finding {
    let h = contents.header;
    let check = bugcheck::lookup(h.bugcheck_code);
    let suspect = suspect(contents, check);
    let parameters = h.bugcheck_parameters.map(Some);
    let mut evidence = bugcheck::evidence(h.bugcheck_code, &parameters, source);
    if let Some(s) = &suspect {
        evidence.push(Evidence::text(
            "suspect",
            format!("{}+0x{:x} ({})", s.name, s.offset, bugcheck::whose(&s.name)),
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
    let title = bugcheck::title(h.bugcheck_code, suspect.as_ref().map(|s| s.name.as_str()));
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
        fix: bugcheck::fix_for(points, suspect.as_ref().map(|s| s.name.as_str())),
        assessment: Some(Assessment {
            certainty: suspect.as_ref().map_or(Certainty::Possible, |s| s.certainty),
            cause: bugcheck::cause_of(points, suspect.as_ref().map(|s| s.name.as_str())),
            confirm: "WinDbg on Windows: windbg -z FILE.dmp, then !analyze -v (MODULE_NAME, IMAGE_NAME).".into(),
        }),
    }
}

#[cfg(test)]
#[path = "windump_tests.rs"]
mod tests;
