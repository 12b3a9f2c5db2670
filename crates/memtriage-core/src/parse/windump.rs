//! The headers of Windows kernel crash dumps: `PAGEDU64` (64-bit) and `PAGEDUMP`
//! (32-bit), as written to `C:\Windows\MEMORY.DMP` and, as small triage dumps
//! (dump type 4), to `C:\Windows\Minidump`. Only bounded regions are parsed, so a
//! caller reads kilobytes of a dump however large it is: the first
//! [`HEADER64_LEN`] bytes for [`header`], then the regions that
//! [`DumpHeader::triage_header_region`] and [`TriageLayout`]'s methods name.
//! Offsets and their sources (rizin, Rekall, kdmp-parser) are in
//! `corpus/kernel-crashes/dumps/SOURCES.md`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::parse::ParseError;

/// The 64-bit header's size; the triage header follows it.
pub const HEADER64_LEN: usize = 0x2000;
/// The 32-bit header's size; the triage header follows it.
pub const HEADER32_LEN: usize = 0x1000;
/// The part of `TRIAGE_DUMP64` read here (through DataBlocksCount).
pub const TRIAGE_HEADER64_LEN: usize = 0x80;
/// The part of `TRIAGE_DUMP32` read here (through DataBlocksCount).
pub const TRIAGE_HEADER32_LEN: usize = 0x68;
/// `DUMP_DRIVER_ENTRY64`: name offset, alignment, `KLDR_DATA_TABLE_ENTRY64` (0x88).
pub const DRIVER_ENTRY64_LEN: usize = 0x90;
/// `DUMP_DRIVER_ENTRY32`: name offset, then the packed `KLDR_DATA_TABLE_ENTRY32`
/// (0x48, TimeDateStamp at +0x44 per the rizin struct and the PDB-derived layouts).
pub const DRIVER_ENTRY32_LEN: usize = 0x4C;
/// A loaded system has a few hundred drivers; thousands means a corrupt count, and
/// the caller would otherwise read count × entry bytes on its say-so.
pub const MAX_DRIVERS: u32 = 4096;
/// 4096 drivers with 260-character paths fit in about 2.2 MiB.
pub const MAX_STRING_POOL: u32 = 4 << 20;
/// Kernel stacks are tens of KiB; the triage copy is a part of one.
pub const MAX_CALL_STACK: u32 = 1 << 20;

const HEADER_WHAT: &str = "Windows kernel dump header";
const TRIAGE_WHAT: &str = "Windows kernel dump triage header";
const DRIVERS_WHAT: &str = "Windows kernel dump driver list";

/// FILETIME counts 100 ns ticks from 1601-01-01; this many seconds precede 1970.
const FILETIME_UNIX_EPOCH_SECONDS: u64 = 11_644_473_600;
const TICKS_PER_SECOND: u64 = 10_000_000;

/// Bytes `offset..offset + len` of the dump file: what the caller reads next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRegion {
    pub offset: u64,
    pub len: usize,
}

impl FileRegion {
    pub fn new(offset: impl Into<u64>, len: usize) -> Self {
        FileRegion {
            offset: offset.into(),
            len,
        }
    }
}

/// `MachineImageType`: the crashed system's architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Machine {
    X64,
    Arm64,
    X86,
    Other(u32),
}

impl Machine {
    fn from_image_type(raw: u32) -> Self {
        match raw {
            0x8664 => Machine::X64,
            0xAA64 => Machine::Arm64,
            0x14C => Machine::X86,
            other => Machine::Other(other),
        }
    }

    pub fn name(self) -> String {
        match self {
            Machine::X64 => "x64",
            Machine::Arm64 => "ARM64",
            Machine::X86 => "x86",
            Machine::Other(raw) => return format!("machine type {raw:#x}"),
        }
        .to_string()
    }
}

/// `DumpType`: how much of memory the dump holds (the values of rizin's
/// `DMP_DUMPTYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DumpType {
    Full,
    /// Kernel memory only ("summary" in the older names).
    Kernel,
    HeaderOnly,
    /// A small dump, as in `C:\Windows\Minidump`: the header, one stack, the drivers.
    Triage,
    BitmapFull,
    BitmapKernel,
    Automatic,
    Other(u32),
}

/// Each dump type's number and name, in one place for both directions.
const DUMP_TYPES: [(u32, DumpType, &str); 7] = [
    (1, DumpType::Full, "full dump"),
    (2, DumpType::Kernel, "kernel dump"),
    (3, DumpType::HeaderOnly, "header-only dump"),
    (4, DumpType::Triage, "small (triage) dump"),
    (5, DumpType::BitmapFull, "full bitmap dump"),
    (6, DumpType::BitmapKernel, "kernel bitmap dump"),
    (7, DumpType::Automatic, "automatic dump"),
];

impl DumpType {
    fn from_raw(raw: u32) -> Self {
        DUMP_TYPES
            .iter()
            .find(|(number, ..)| *number == raw)
            .map_or(DumpType::Other(raw), |&(_, known, _)| known)
    }

    pub fn number(self) -> u32 {
        match self {
            DumpType::Other(raw) => raw,
            known => DUMP_TYPES.iter().find(|t| t.1 == known).map_or(0, |t| t.0),
        }
    }

    pub fn name(self) -> &'static str {
        DUMP_TYPES
            .iter()
            .find(|t| t.1 == self)
            .map_or("unknown dump type", |t| t.2)
    }
}

/// The fixed header at the start of every kernel dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpHeader {
    /// 64 for `PAGEDU64`, 32 for `PAGEDUMP`.
    pub bits: u8,
    /// 15 for a free (retail) build, 12 for a checked one.
    pub major_version: u32,
    /// The OS build number, e.g. 19041.
    pub minor_version: u32,
    pub machine: Machine,
    pub processors: u32,
    pub bugcheck_code: u32,
    /// A 32-bit dump's parameters are zero-extended.
    pub bugcheck_parameters: [u64; 4],
    pub dump_type: DumpType,
    /// When the system crashed, as a FILETIME (100 ns ticks since 1601); None when 0.
    pub system_time_filetime: Option<u64>,
    /// Time since boot in 100 ns ticks; None when 0.
    pub uptime_ticks: Option<u64>,
    /// The crashing context's Rip/Pc/Eip; None when zero or the machine is unknown.
    pub instruction_pointer: Option<u64>,
}

impl DumpHeader {
    /// Where the triage header lies (meaningful only for [`DumpType::Triage`]).
    pub fn triage_header_region(&self) -> FileRegion {
        if self.bits == 64 {
            FileRegion::new(HEADER64_LEN as u64, TRIAGE_HEADER64_LEN)
        } else {
            FileRegion::new(HEADER32_LEN as u64, TRIAGE_HEADER32_LEN)
        }
    }

    /// Seconds since 1970; None when the time is unset or before 1970.
    pub fn system_time_unix(&self) -> Option<u64> {
        (self.system_time_filetime? / TICKS_PER_SECOND).checked_sub(FILETIME_UNIX_EPOCH_SECONDS)
    }

    pub fn uptime(&self) -> Option<Duration> {
        let ticks = self.uptime_ticks?;
        Some(Duration::new(
            ticks / TICKS_PER_SECOND,
            // Below 10^7 ticks, so below 10^9 nanoseconds.
            (ticks % TICKS_PER_SECOND) as u32 * 100,
        ))
    }
}

/// Where a width's header keeps each field.
struct HeaderOffsets {
    len: usize,
    machine: usize,
    processors: usize,
    bugcheck_code: usize,
    parameters: usize,
    dump_type: usize,
    system_time: usize,
    uptime: usize,
    context: usize,
}

const HEADER64: HeaderOffsets = HeaderOffsets {
    len: HEADER64_LEN,
    machine: 0x30,
    processors: 0x34,
    bugcheck_code: 0x38,
    parameters: 0x40,
    dump_type: 0xF98,
    system_time: 0xFA8,
    uptime: 0x1030,
    context: 0x348,
};

// Rekall's explicit offsets; rizin's struct would put DumpType at 0x8A0 (SOURCES.md).
const HEADER32: HeaderOffsets = HeaderOffsets {
    len: HEADER32_LEN,
    machine: 0x20,
    processors: 0x24,
    bugcheck_code: 0x28,
    parameters: 0x2C,
    dump_type: 0xF88,
    system_time: 0xFC0,
    uptime: 0xFB8,
    context: 0x320,
};

/// A read past the end is zeros, not a panic; every caller checks the length first.
fn le_bytes<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..at.saturating_add(N))
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; N])
}

fn le_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(le_bytes(bytes, at))
}

fn le_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(le_bytes(bytes, at))
}

fn le_word(bytes: &[u8], at: usize, bits: u8) -> u64 {
    if bits == 64 {
        le_u64(bytes, at)
    } else {
        u64::from(le_u32(bytes, at))
    }
}

fn nonzero(value: u64) -> Option<u64> {
    (value != 0).then_some(value)
}

/// Parses the header from the file's first bytes: [`HEADER64_LEN`] of them for a
/// 64-bit dump ([`HEADER32_LEN`] suffice for a 32-bit one; more are ignored).
pub fn header(bytes: &[u8]) -> Result<DumpHeader, ParseError> {
    let (bits, offsets) = match bytes.get(..8) {
        Some(b"PAGEDU64") => (64, &HEADER64),
        Some(b"PAGEDUMP") => (32, &HEADER32),
        None if !bytes.is_empty()
            && (b"PAGEDU64".starts_with(bytes) || b"PAGEDUMP".starts_with(bytes)) =>
        {
            return Err(truncated(
                HEADER_WHAT,
                "dump header",
                HEADER32_LEN,
                bytes.len(),
            ));
        }
        _ => {
            return Err(ParseError::new(
                HEADER_WHAT,
                format!("not a Windows kernel dump: {}", describe_start(bytes)),
            ))
        }
    };
    if bytes.len() < offsets.len {
        return Err(truncated(
            HEADER_WHAT,
            "dump header",
            offsets.len,
            bytes.len(),
        ));
    }
    let machine = Machine::from_image_type(le_u32(bytes, offsets.machine));
    let parameter_width = usize::from(bits / 8);
    let mut bugcheck_parameters = [0u64; 4];
    for (i, parameter) in bugcheck_parameters.iter_mut().enumerate() {
        *parameter = le_word(bytes, offsets.parameters + i * parameter_width, bits);
    }
    let instruction_pointer = match (bits, machine) {
        (64, Machine::X64) => nonzero(le_u64(bytes, offsets.context + 0xF8)),
        (64, Machine::Arm64) => nonzero(le_u64(bytes, offsets.context + 0x108)),
        (32, Machine::X86) => nonzero(u64::from(le_u32(bytes, offsets.context + 0xB8))),
        _ => None,
    };
    Ok(DumpHeader {
        bits,
        major_version: le_u32(bytes, 0x8),
        minor_version: le_u32(bytes, 0xC),
        machine,
        processors: le_u32(bytes, offsets.processors),
        bugcheck_code: le_u32(bytes, offsets.bugcheck_code),
        bugcheck_parameters,
        dump_type: DumpType::from_raw(le_u32(bytes, offsets.dump_type)),
        system_time_filetime: nonzero(le_u64(bytes, offsets.system_time)),
        uptime_ticks: nonzero(le_u64(bytes, offsets.uptime)),
        instruction_pointer,
    })
}

fn truncated(what: &'static str, part: &str, needed: usize, had: usize) -> ParseError {
    let detail = format!("truncated: the {part} is {needed} bytes, the file has {had}");
    ParseError::new(what, detail)
}

/// What a file that is not a kernel dump looks like, for the error that refuses it.
fn describe_start(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(16)];
    if head.is_empty() {
        return "the file is empty".to_string();
    }
    if head.starts_with(b"MDMP") {
        return "it starts with `MDMP` (a user-mode minidump of one process, not a kernel crash dump)"
            .to_string();
    }
    if head.starts_with(b"\x7fELF") {
        return "it starts with `\\x7fELF` (an ELF executable or core file)".to_string();
    }
    if head.starts_with(b"MZ") {
        return "it starts with `MZ` (a Windows executable)".to_string();
    }
    if head.iter().all(|&b| b == 0) {
        return "it starts with zero bytes (a dump Windows never finished writing, \
                or one overwritten)"
            .to_string();
    }
    if head
        .iter()
        .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        let text: String = head.iter().map(|&b| char::from(b)).collect();
        return format!("it starts with text {:?}", text);
    }
    let hex: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("it starts with bytes `{}`", hex.join(" "))
}

/// The triage header's map of the small dump. Offsets are absolute file offsets,
/// each checked to lie within `size_of_dump`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriageLayout {
    /// The header's width, which sets the driver entry and stack word sizes.
    pub bits: u8,
    pub size_of_dump: u32,
    pub context_offset: u32,
    pub call_stack_offset: u32,
    pub call_stack_size: u32,
    pub driver_list_offset: u32,
    pub driver_count: u32,
    pub string_pool_offset: u32,
    pub string_pool_size: u32,
    /// The stack pointer the saved stack starts at (a kernel address).
    pub top_of_stack: u64,
}

impl TriageLayout {
    pub fn driver_entry_len(&self) -> usize {
        if self.bits == 64 {
            DRIVER_ENTRY64_LEN
        } else {
            DRIVER_ENTRY32_LEN
        }
    }

    /// The bytes [`drivers`] takes as its list.
    pub fn driver_list_region(&self) -> FileRegion {
        let len = (self.driver_count as usize).saturating_mul(self.driver_entry_len());
        FileRegion::new(self.driver_list_offset, len)
    }

    /// The bytes [`drivers`] takes as its pool.
    pub fn string_pool_region(&self) -> FileRegion {
        FileRegion::new(self.string_pool_offset, self.string_pool_size as usize)
    }

    /// The bytes [`stack_addresses`] takes.
    pub fn call_stack_region(&self) -> FileRegion {
        FileRegion::new(self.call_stack_offset, self.call_stack_size as usize)
    }
}

/// Parses the triage header, the bytes at [`DumpHeader::triage_header_region`].
pub fn triage_layout(header: &DumpHeader, bytes: &[u8]) -> Result<TriageLayout, ParseError> {
    if header.dump_type != DumpType::Triage {
        return Err(ParseError::new(
            TRIAGE_WHAT,
            format!(
                "dump type {} ({}) has no triage data",
                header.dump_type.number(),
                header.dump_type.name()
            ),
        ));
    }
    let region = header.triage_header_region();
    if bytes.len() < region.len {
        return Err(truncated(
            TRIAGE_WHAT,
            "triage header",
            region.len,
            bytes.len(),
        ));
    }
    let layout = TriageLayout {
        bits: header.bits,
        size_of_dump: le_u32(bytes, 0x04),
        context_offset: le_u32(bytes, 0x0C),
        call_stack_offset: le_u32(bytes, 0x28),
        call_stack_size: le_u32(bytes, 0x2C),
        driver_list_offset: le_u32(bytes, 0x30),
        driver_count: le_u32(bytes, 0x34),
        string_pool_offset: le_u32(bytes, 0x38),
        string_pool_size: le_u32(bytes, 0x3C),
        top_of_stack: le_word(bytes, 0x48, header.bits),
    };
    check_layout(&layout).map_err(|detail| ParseError::new(TRIAGE_WHAT, detail))?;
    Ok(layout)
}

/// Every region a caller will read must be plausible before it reads it.
fn check_layout(layout: &TriageLayout) -> Result<(), String> {
    let limits = [
        ("DriverCount", layout.driver_count, MAX_DRIVERS),
        ("StringPoolSize", layout.string_pool_size, MAX_STRING_POOL),
        ("SizeOfCallStack", layout.call_stack_size, MAX_CALL_STACK),
    ];
    for (field, value, limit) in limits {
        if value > limit {
            return Err(format!(
                "{field} is {value}, more than the {limit} any real dump has (the triage header is corrupt)"
            ));
        }
    }
    let regions = [
        ("ContextOffset", FileRegion::new(layout.context_offset, 0)),
        ("CallStackOffset", layout.call_stack_region()),
        ("DriverListOffset", layout.driver_list_region()),
        ("StringPoolOffset", layout.string_pool_region()),
    ];
    for (field, FileRegion { offset, len }) in regions {
        // Offset 0 is the dump header itself, so a region there is a corrupt one.
        if offset == 0 && len > 0 {
            return Err(format!("{field} is 0 but its region is {len} bytes"));
        }
        if offset.saturating_add(len as u64) > u64::from(layout.size_of_dump) {
            return Err(format!(
                "{field} {offset:#x} (+{len:#x} bytes) reaches past SizeOfDump {:#x}",
                layout.size_of_dump
            ));
        }
    }
    Ok(())
}

/// A loaded kernel module, as the triage dump lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Driver {
    /// The path, e.g. `\SystemRoot\System32\drivers\amdppm.sys`; None when its string
    /// lies outside the pool.
    pub name: Option<String>,
    /// The load address (zero-extended on 32-bit).
    pub base: u64,
    pub size: u32,
    /// The image's link time (seconds since 1970), which identifies its version.
    pub timestamp: u32,
}

/// Where a driver entry keeps its fields (the `KLDR_DATA_TABLE_ENTRY` ones are shifted
/// by the name offset and, on 64-bit, its alignment).
struct DriverEntryOffsets {
    base: usize,
    size: usize,
    timestamp: usize,
}

const DRIVER_ENTRY64: DriverEntryOffsets = DriverEntryOffsets {
    base: 0x08 + 0x30,
    size: 0x08 + 0x40,
    timestamp: 0x08 + 0x80,
};

const DRIVER_ENTRY32: DriverEntryOffsets = DriverEntryOffsets {
    base: 0x04 + 0x18,
    size: 0x04 + 0x20,
    timestamp: 0x04 + 0x44,
};

/// The drivers from `list` (the bytes at [`TriageLayout::driver_list_region`]) with
/// names from `pool` (those at [`TriageLayout::string_pool_region`]).
pub fn drivers(layout: &TriageLayout, list: &[u8], pool: &[u8]) -> Result<Vec<Driver>, ParseError> {
    let entry_len = layout.driver_entry_len();
    let count = layout.driver_count as usize;
    let needed = count.checked_mul(entry_len);
    if needed.is_none_or(|needed| needed > list.len()) {
        return Err(ParseError::new(
            DRIVERS_WHAT,
            format!(
                "the driver list at {:#x} is {count} entries of {entry_len:#x} bytes, \
                 but only {} bytes were read: it runs past the end of the file",
                layout.driver_list_offset,
                list.len()
            ),
        ));
    }
    let offsets = if layout.bits == 64 {
        &DRIVER_ENTRY64
    } else {
        &DRIVER_ENTRY32
    };
    Ok(list
        .chunks_exact(entry_len)
        .take(count)
        .map(|entry| Driver {
            name: pool_string(
                pool,
                le_u32(entry, 0).checked_sub(layout.string_pool_offset),
            ),
            base: le_word(entry, offsets.base, layout.bits),
            size: le_u32(entry, offsets.size),
            timestamp: le_u32(entry, offsets.timestamp),
        })
        .collect())
}

/// A `DUMP_STRING`: a u32 count, then UTF-16LE. The WDK comment calls the count a
/// length in bytes, but both real dumps store characters (33 for the 33-character
/// ntoskrnl path), as rizin reads it.
fn pool_string(pool: &[u8], at: Option<u32>) -> Option<String> {
    let at = at? as usize;
    let chars = le_u32(pool, at) as usize;
    let start = at.checked_add(4)?;
    let end = start.checked_add(chars.checked_mul(2)?)?;
    let units: Vec<u16> = pool
        .get(start..end)?
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    Some(String::from_utf16_lossy(&units))
}

/// The driver whose image holds `address`, and the address's offset into it.
pub fn driver_at(drivers: &[Driver], address: u64) -> Option<(&Driver, u64)> {
    drivers.iter().find_map(|driver| {
        let offset = address.checked_sub(driver.base)?;
        (offset < u64::from(driver.size)).then_some((driver, offset))
    })
}

/// The saved stack's words (8 bytes on 64-bit, 4 on 32-bit), from `stack`, the
/// bytes at [`TriageLayout::call_stack_region`]. Return addresses are among them,
/// which is how a tool without symbols names a likely culprit: the first word that
/// falls in a driver other than the kernel's own.
pub fn stack_addresses<'a>(
    layout: &TriageLayout,
    stack: &'a [u8],
) -> impl Iterator<Item = u64> + 'a {
    let bits = layout.bits;
    let word_len = if bits == 64 { 8 } else { 4 };
    let declared = stack.len().min(layout.call_stack_size as usize);
    stack[..declared]
        .chunks_exact(word_len)
        .map(move |word| le_word(word, 0, bits))
}

/// The file name of a driver path: `\SystemRoot\System32\drivers\amdppm.sys` →
/// `amdppm.sys`.
pub fn basename(path: &str) -> &str {
    path.rsplit(['\\', '/']).next().unwrap_or(path)
}

#[cfg(test)]
#[path = "windump_tests.rs"]
mod tests;
