//! `explain FILE.dmp`: a Windows kernel crash dump read on Linux. Only the header and
//! the triage data's regions are read (kilobytes, however large the dump), never the
//! whole file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use crate::diagnose::windump::{self, DumpContents};
use crate::error::{Error, Result};
use crate::parse::windump::{self as parse, DumpType, FileRegion, HEADER64_LEN};
use crate::parse::ParseError;

use super::explain::{ExplainReport, EXPLAIN_SCHEMA};

/// The first bytes of a Windows kernel dump, 64- and 32-bit.
pub fn is_kernel_dump(start: &[u8]) -> bool {
    start.starts_with(b"PAGEDU64") || start.starts_with(b"PAGEDUMP")
}

/// Reads and explains the dump open as `file`; `shown` names it in errors and
/// evidence.
pub fn read(shown: &str, mut file: File) -> Result<ExplainReport> {
    let size = file.metadata().map_err(|e| Error::io(shown, e))?.len();
    let bad = |e: ParseError| Error::bad_input(shown.to_string(), e.detail);
    let head = region(&mut file, shown, FileRegion::new(0u64, HEADER64_LEN), size)?;
    let header = parse::header(&head).map_err(bad)?;
    let mut drivers = Vec::new();
    let mut stack = Vec::new();
    let drivers_missing = if header.dump_type == DumpType::Triage {
        let triage = region(&mut file, shown, header.triage_header_region(), size)?;
        let layout = parse::triage_layout(&header, &triage).map_err(bad)?;
        let list = region(&mut file, shown, layout.driver_list_region(), size)?;
        let pool = region(&mut file, shown, layout.string_pool_region(), size)?;
        drivers = parse::drivers(&layout, &list, &pool).map_err(bad)?;
        // The stack only guesses; a dump cut short there still names its bug check.
        if let Ok(words) = region(&mut file, shown, layout.call_stack_region(), size) {
            stack = parse::stack_addresses(&layout, &words).collect();
        }
        None
    } else {
        Some(format!(
            "not read: a {} keeps its driver list in kernel memory (open it in WinDbg)",
            header.dump_type.name()
        ))
    };
    let contents = DumpContents {
        header: &header,
        drivers: &drivers,
        stack: &stack,
        drivers_missing,
    };
    Ok(ExplainReport {
        schema: EXPLAIN_SCHEMA,
        source: shown.to_string(),
        lines: 0,
        bytes: size,
        rules: 0,
        matches: Vec::new(),
        findings: vec![windump::explain(&contents, shown)],
    })
}

/// The bytes of `r`, as many as the file has (the parsers say what a short read lacks).
fn region(file: &mut File, shown: &str, r: FileRegion, size: u64) -> Result<Vec<u8>> {
    if r.offset >= size {
        return Err(Error::bad_input(
            shown.to_string(),
            format!(
                "truncated: the dump's data at offset 0x{:x} lies past its end ({size} bytes)",
                r.offset
            ),
        ));
    }
    file.seek(SeekFrom::Start(r.offset))
        .map_err(|e| Error::io(shown, e))?;
    let mut bytes = Vec::with_capacity(r.len);
    file.take(r.len as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(shown, e))?;
    Ok(bytes)
}
