//! The tests of `windump`, a file of their own to keep both under the size limit
//! (.ci/check-sizes.sh).

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/kernel-crashes/dumps"
    );
    std::fs::read(format!("{dir}/{name}")).expect(name)
}

/// A region of `file` as a caller's bounded read returns it: cut short at the end.
fn read(file: &[u8], region: FileRegion) -> &[u8] {
    let start = usize::try_from(region.offset)
        .unwrap_or(usize::MAX)
        .min(file.len());
    &file[start..start.saturating_add(region.len).min(file.len())]
}

struct Parsed {
    header: DumpHeader,
    layout: TriageLayout,
    drivers: Vec<Driver>,
    stack: Vec<u64>,
}

/// The whole pipeline as a caller runs it, reading only the regions it is told.
fn parse_file(file: &[u8]) -> Result<Parsed, ParseError> {
    let header = header(read(file, FileRegion::new(0u64, HEADER64_LEN)))?;
    let layout = triage_layout(&header, read(file, header.triage_header_region()))?;
    let list = read(file, layout.driver_list_region());
    let drivers = drivers(&layout, list, read(file, layout.string_pool_region()))?;
    let stack = stack_addresses(&layout, read(file, layout.call_stack_region())).collect();
    Ok(Parsed {
        header,
        layout,
        drivers,
        stack,
    })
}

fn file_name(driver: &Driver) -> &str {
    driver.name.as_deref().map_or("", basename)
}

/// BlueScreenView's guess: the first stack word in a driver that is not the kernel.
fn likely_culprit(parsed: &Parsed) -> Option<(&str, u64)> {
    parsed.stack.iter().find_map(|&word| {
        let (driver, offset) = driver_at(&parsed.drivers, word)?;
        let name = file_name(driver);
        let kernel = ["ntoskrnl.exe", "hal.dll"]
            .iter()
            .any(|k| name.eq_ignore_ascii_case(k));
        (!kernel).then_some((name, offset))
    })
}

#[test]
fn the_x64_triage_dump_reads_as_documented() {
    let parsed = parse_file(&fixture("triage_x64.dmp")).unwrap();
    let parameters = [
        0xffffffffc0000005,
        0xfffff8048b58334c,
        0xffff850429891ee8,
        0xffff850429891720,
    ];
    let expected = DumpHeader {
        bits: 64,
        major_version: 15,
        minor_version: 19041,
        machine: Machine::X64,
        processors: 16,
        bugcheck_code: 0x1000007E,
        bugcheck_parameters: parameters,
        dump_type: DumpType::Triage,
        system_time_filetime: Some(0x1d707f23dbb3399),
        uptime_ticks: Some(0x23bc1e9),
        // The faulting instruction is the one the bug check names.
        instruction_pointer: Some(0xfffff8048b58334c),
    };
    assert_eq!(parsed.header, expected);
    // 2021-02-21T01:38:22Z, seconds after boot (amdppm.sys failing as it starts).
    assert_eq!(parsed.header.system_time_unix(), Some(1_613_871_502));
    assert_eq!(parsed.header.uptime().map(|d| d.as_millis()), Some(3747));
    let expected = TriageLayout {
        bits: 64,
        size_of_dump: 0x13a28c,
        context_offset: 0x348,
        call_stack_offset: 0xe390,
        call_stack_size: 0x2118,
        driver_list_offset: 0x10828,
        driver_count: 151,
        string_pool_offset: 0x15d18,
        string_pool_size: 0x3720,
        top_of_stack: 0xffff850429890ee8,
    };
    assert_eq!(parsed.layout, expected);
    // The entry size is right: the pool starts where the list ends.
    let list = parsed.layout.driver_list_region();
    assert_eq!(
        list.offset + list.len as u64,
        parsed.layout.string_pool_region().offset
    );

    assert_eq!(parsed.drivers.len(), 151);
    assert!(parsed.drivers.iter().all(|d| d.name.is_some()));
    let ntoskrnl = &parsed.drivers[0];
    assert_eq!(
        ntoskrnl.name.as_deref(),
        Some(r"\SystemRoot\system32\ntoskrnl.exe")
    );
    assert_eq!(
        (ntoskrnl.base, ntoskrnl.size, ntoskrnl.timestamp),
        (0xfffff8047ba00000, 0x1046000, 0x0d8333e6)
    );
    assert_eq!(
        parsed.drivers[2].name.as_deref(),
        Some(r"\SystemRoot\system32\kd.dll")
    );
    let (driver, offset) = driver_at(&parsed.drivers, parameters[1]).unwrap();
    assert_eq!(
        driver.name.as_deref(),
        Some(r"\SystemRoot\System32\drivers\amdppm.sys")
    );
    assert_eq!(
        (driver.base, driver.size, offset),
        (0xfffff8048b580000, 0x3b000, 0x334c)
    );

    assert_eq!(
        (parsed.stack.len(), &parsed.stack[2..4]),
        (0x2118 / 8, &parameters[..2])
    );
    assert_eq!(likely_culprit(&parsed), Some(("amdppm.sys", 0x334c)));
}

#[test]
fn the_arm64_triage_dump_reads_as_documented() {
    let parsed = parse_file(&fixture("triage_arm64.dmp")).unwrap();
    let h = &parsed.header;
    assert_eq!(
        (h.bits, h.machine, h.processors, h.minor_version),
        (64, Machine::Arm64, 8, 22000)
    );
    assert_eq!(
        (h.bugcheck_code, h.bugcheck_parameters),
        (0x1C8, [0x1b58, 0xfffff803f3a20860, 0, 0])
    );
    assert_eq!(
        (h.system_time_unix(), h.uptime().map(|d| d.as_secs())),
        (Some(1_631_587_918), Some(796))
    );
    let l = &parsed.layout;
    assert_eq!((l.driver_list_offset, l.driver_count), (0xde30, 245));
    assert_eq!(
        (l.string_pool_offset, l.string_pool_size),
        (0x16800, 0x6eb0)
    );
    assert_eq!((l.call_stack_offset, l.call_stack_size), (0xcf50, 0xb60));
    assert_eq!(parsed.drivers.len(), 245);
    let first: Vec<_> = parsed.drivers[..4].iter().map(file_name).collect();
    assert_eq!(
        first,
        ["ntoskrnl.exe", "hal.dll", "kd.dll", "HalExtQCWdogTimer.dll"]
    );
    // A power-button hold: the bug check and the Pc are the kernel's own.
    for address in [h.bugcheck_parameters[1], h.instruction_pointer.unwrap()] {
        assert_eq!(
            driver_at(&parsed.drivers, address).map(|(d, _)| file_name(d)),
            Some("ntoskrnl.exe")
        );
    }
}

fn put(file: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if file.len() < at + bytes.len() {
        file.resize(at + bytes.len(), 0);
    }
    file[at..at + bytes.len()].copy_from_slice(bytes);
}

fn put_u32(file: &mut Vec<u8>, at: usize, value: u32) {
    put(file, at, &value.to_le_bytes());
}

/// A 32-bit triage dump built from the documented layout (no real one is at
/// hand): bug check 0xD1 at foo.sys+0x42, whose address is also on the stack.
fn synthetic_x86() -> Vec<u8> {
    let drivers = [
        (r"\SystemRoot\system32\ntoskrnl.exe", 0x8280_0000, 0x40_0000),
        ("foo.sys", 0x9000_0000, 0x1000),
    ];
    let stack = [0x8280_0010, 0x9000_0042, 7];
    let mut file = b"PAGEDUMP".to_vec();
    let header = [
        (0x8, 15),
        (0xC, 7601),
        (0x20, 0x14C),
        (0x28, 0xD1),
        (0x2C, 0x10),
        (0x30, 2),
        (0x38, 0x9000_0042),
        (0xF88, 4),
        (0x320 + 0xB8, 0x9000_0042),
    ];
    let (stack_at, list_at) = (0x1100, 0x1100 + 4 * stack.len());
    let pool_at = list_at + DRIVER_ENTRY32_LEN * drivers.len();
    let mut pool = Vec::new();
    for (i, (name, base, size)) in drivers.into_iter().enumerate() {
        let at = list_at + i * DRIVER_ENTRY32_LEN;
        put_u32(&mut file, at, (pool_at + pool.len()) as u32);
        put_u32(&mut file, at + DRIVER_ENTRY32.base, base);
        put_u32(&mut file, at + DRIVER_ENTRY32.size, size);
        put_u32(&mut file, at + DRIVER_ENTRY32.timestamp, 0x5000_0000);
        let units: Vec<u16> = name.encode_utf16().chain([0]).collect();
        pool.extend((units.len() as u32 - 1).to_le_bytes());
        pool.extend(units.iter().flat_map(|u| u.to_le_bytes()));
    }
    put(&mut file, pool_at, &pool);
    let triage = [
        (0x04, pool_at + pool.len()),
        (0x0C, 0x320),
        (0x28, stack_at),
        (0x2C, 4 * stack.len()),
        (0x30, list_at),
        (0x34, drivers.len()),
        (0x38, pool_at),
        (0x3C, pool.len()),
    ];
    let triage = triage.map(|(at, value)| (HEADER32_LEN + at, value as u32));
    let words = stack
        .iter()
        .enumerate()
        .map(|(i, &w)| (stack_at + 4 * i, w));
    for (at, value) in header.into_iter().chain(triage).chain(words) {
        put_u32(&mut file, at, value);
    }
    file
}

#[test]
fn a_32_bit_dump_reads_with_its_own_offsets_and_entry_size() {
    let parsed = parse_file(&synthetic_x86()).unwrap();
    let h = &parsed.header;
    assert_eq!(
        (h.bits, h.machine, h.minor_version, h.bugcheck_code),
        (32, Machine::X86, 7601, 0xD1)
    );
    assert_eq!(
        (h.bugcheck_parameters, h.instruction_pointer),
        ([0x10, 2, 0, 0x9000_0042], Some(0x9000_0042))
    );
    assert_eq!(
        h.triage_header_region(),
        FileRegion::new(0x1000u64, TRIAGE_HEADER32_LEN)
    );
    let foo = &parsed.drivers[1];
    assert_eq!(
        (foo.name.as_deref(), foo.base, foo.timestamp),
        (Some("foo.sys"), 0x9000_0000, 0x5000_0000)
    );
    assert_eq!(parsed.stack, [0x8280_0010, 0x9000_0042, 7]);
    assert_eq!(likely_culprit(&parsed), Some(("foo.sys", 0x42)));
}

#[test]
fn a_file_cut_short_says_how_short() {
    let file = fixture("triage_x64.dmp");
    let err = header(&file[..0x1800]).unwrap_err();
    assert_eq!(
        err.detail,
        "truncated: the dump header is 8192 bytes, the file has 6144"
    );
    assert!(header(b"PAGE").unwrap_err().detail.starts_with("truncated"));
    let err = triage_layout(&header(&file).unwrap(), &file[0x2000..0x2010]).unwrap_err();
    assert_eq!(
        err.detail,
        "truncated: the triage header is 128 bytes, the file has 16"
    );
}

#[test]
fn other_files_are_refused_by_what_they_start_with() {
    let cases: [(&[u8], &str); 6] = [
        (
            b"MDMP\x93\xa7\0\0 a user-mode dump",
            "`MDMP` (a user-mode minidump",
        ),
        (
            b"Microsoft (R) Windows Debugger\n",
            "text \"Microsoft (R) Wi\"",
        ),
        (b"\x7fELF\x02\x01\x01\0\0\0", "an ELF"),
        (&[0u8; 0x2000], "zero bytes"),
        (b"", "the file is empty"),
        (b"\x01\x02\xfe\xff", "bytes `01 02 fe ff`"),
    ];
    for (bytes, needle) in cases {
        let err = header(bytes).unwrap_err().detail;
        assert!(
            err.starts_with("not a Windows kernel dump: ") && err.contains(needle),
            "{err}"
        );
    }
}

#[test]
fn a_short_driver_list_is_an_error_and_a_name_outside_the_pool_is_none() {
    let mut file = fixture("triage_x64.dmp");
    let layout = parse_file(&file).unwrap().layout;
    let (list, pool) = (layout.driver_list_region(), layout.string_pool_region());
    let err = drivers(&layout, &read(&file, list)[..0x90 * 151 - 1], &[]).unwrap_err();
    assert!(
        err.detail
            .contains("151 entries of 0x90 bytes, but only 21743 bytes"),
        "{err}"
    );
    assert!(
        err.detail.ends_with("it runs past the end of the file"),
        "{err}"
    );
    // The second name past the pool, the third before it; a count past its end.
    put_u32(&mut file, list.offset as usize + 0x90, 0xFFFF_FFF0);
    put_u32(
        &mut file,
        list.offset as usize + 2 * 0x90,
        layout.string_pool_offset - 2,
    );
    let names: Vec<_> = parse_file(&file)
        .unwrap()
        .drivers
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(
        names[..4],
        [
            Some(r"\SystemRoot\system32\ntoskrnl.exe".into()),
            None,
            None,
            Some(r"\SystemRoot\System32\drivers\CLFS.SYS".into())
        ]
    );
    let cut_pool = &read(&file, pool)[..0x40];
    assert_eq!(
        drivers(&layout, read(&file, list), cut_pool).unwrap()[0].name,
        None
    );
}

#[test]
fn absurd_triage_fields_name_the_field() {
    let file = fixture("triage_x64.dmp");
    let cases = [
        (
            0x34,
            1_000_000,
            "DriverCount is 1000000, more than the 4096",
        ),
        (0x3C, u32::MAX, "StringPoolSize is"),
        (0x2C, 0x7FFF_FFFF, "SizeOfCallStack is"),
        (
            0x30,
            0x13a000,
            "DriverListOffset 0x13a000 (+0x54f0 bytes) reaches past SizeOfDump 0x13a28c",
        ),
        (0x38, 0, "StringPoolOffset is 0"),
        (0x0C, 0xFFFF_FFFF, "ContextOffset 0xffffffff"),
        (0x04, 0x100, "reaches past SizeOfDump 0x100"),
    ];
    for (at, value, needle) in cases {
        let mut bad = file[..HEADER64_LEN + TRIAGE_HEADER64_LEN].to_vec();
        put_u32(&mut bad, HEADER64_LEN + at, value);
        let err = parse_file(&bad).err().expect(needle);
        assert!(
            err.what == TRIAGE_WHAT && err.detail.contains(needle),
            "{needle}: {err}"
        );
    }
}

#[test]
fn a_kernel_dump_has_a_header_but_no_triage_layout() {
    let mut file = fixture("triage_x64.dmp")[..HEADER64_LEN + TRIAGE_HEADER64_LEN].to_vec();
    put_u32(&mut file, HEADER64.dump_type, 2);
    let h = header(&file).unwrap();
    assert_eq!(
        (h.dump_type, h.bugcheck_code),
        (DumpType::Kernel, 0x1000007E)
    );
    let err = triage_layout(&h, read(&file, h.triage_header_region())).unwrap_err();
    assert_eq!(err.detail, "dump type 2 (kernel dump) has no triage data");
    put_u32(&mut file, HEADER64.dump_type, 99);
    put_u32(&mut file, HEADER64.machine, 0x1C4);
    let h = header(&file).unwrap();
    assert_eq!(
        (h.dump_type, h.dump_type.number()),
        (DumpType::Other(99), 99)
    );
    assert_eq!(
        (h.machine.name(), h.instruction_pointer),
        ("machine type 0x1c4".into(), None)
    );
}

#[test]
fn addresses_map_to_the_driver_that_holds_them() {
    let at = |base, size| Driver {
        name: None,
        base,
        size,
        timestamp: 0,
    };
    let list = [at(0x1000, 0x100), at(u64::MAX - 0xF, 0x100), at(0x5000, 0)];
    let offset = |address| driver_at(&list, address).map(|(_, offset)| offset);
    assert_eq!(
        [offset(0x1000), offset(0x10FF), offset(u64::MAX)],
        [Some(0), Some(0xFF), Some(0xF)]
    );
    assert_eq!([offset(0x1100), offset(0xFFF), offset(0x5000)], [None; 3]);
    assert_eq!(
        basename(r"\SystemRoot\System32\drivers\amdppm.sys"),
        "amdppm.sys"
    );
    assert_eq!((basename("hal.dll"), basename(r"C:\dir\")), ("hal.dll", ""));
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn no_input_panics() {
    let mut file = fixture("triage_x64.dmp");
    let real = parse_file(&file).unwrap().layout;
    let (list, pool) = (
        read(&file, real.driver_list_region()),
        read(&file, real.string_pool_region()),
    );
    for end in 0..=0x2100 {
        let _ = parse_file(&file[..end]);
        let _ = drivers(
            &real,
            &list[..end.min(list.len())],
            &pool[..end.min(pool.len())],
        );
    }
    let x86 = synthetic_x86();
    for end in 0..=x86.len() {
        let _ = parse_file(&x86[..end]);
    }
    // The fields the parsers trust, then anywhere in the regions they read.
    let fields = [
        0x30, 0x34, 0x38, 0xF98, 0x2004, 0x200C, 0x2028, 0x202C, 0x2030, 0x2034, 0x2038, 0x203C,
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..4000 {
        let at = match round % 2 {
            0 => fields[xorshift(&mut state) as usize % fields.len()],
            _ => xorshift(&mut state) as usize % 0x19438,
        };
        let saved = file[at..at + 4].to_vec();
        let value = match xorshift(&mut state) % 4 {
            0 => 0,
            1 => u32::MAX,
            2 => xorshift(&mut state) as u32 % 0x20_0000,
            _ => xorshift(&mut state) as u32,
        };
        put_u32(&mut file, at, value);
        let _ = parse_file(&file);
        put(&mut file, at, &saved);
    }
    for len in [0, 7, 8, 0x1000, 0x2000, 0x2100] {
        for signature in [&b"PAGEDU64"[..], b"PAGEDUMP", b"MDMP"] {
            let mut noise: Vec<u8> = (0..len).map(|_| xorshift(&mut state) as u8).collect();
            let n = signature.len().min(len);
            noise[..n].copy_from_slice(&signature[..n]);
            let _ = parse_file(&noise);
        }
    }
    assert!(parse_file(&file).is_ok(), "every mutation was undone");
}
