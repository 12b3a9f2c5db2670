//! The one formatter of sizes for people, and the one parser of sizes people type. JSON keeps integers of bytes; tables, titles
//! and evidence text show IEC units through this function, so a size reads the same
//! wherever it is printed.

/// A count and its noun in the right number: "1 sample", "3 samples".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// IEC units, e.g. `3.2 GiB`: one decimal below 100, none above, plain bytes below 1 KiB.
pub fn iec(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else if value >= 100.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A byte count that may be negative (a headroom already overdrawn), e.g. `-1.5 GiB`.
pub fn iec_signed(bytes: i64) -> String {
    if bytes < 0 {
        format!("-{}", iec(bytes.unsigned_abs()))
    } else {
        iec(bytes.unsigned_abs())
    }
}

/// Bytes in one `unit`: B (or bytes), K, M, G, T or P, with or without `i` and `B`,
/// in any case, all powers of 1024, as `free -h`, Docker's `--memory`, Kubernetes'
/// `Gi`, the kernel's `kB` and PyTorch's `GiB` mean them; `None` for anything else.
/// The one table of units: every size read from a person or a log goes through it.
pub fn unit_bytes(unit: &str) -> Option<u64> {
    let unit = unit.trim().to_ascii_lowercase();
    let stem = unit.strip_suffix("bytes").unwrap_or(&unit);
    let stem = stem.strip_suffix('b').unwrap_or(stem);
    let stem = stem.strip_suffix('i').unwrap_or(stem);
    let shift = match stem {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        _ => return None,
    };
    Some(1 << shift)
}

/// `number` of `unit`s ([`unit_bytes`]) in bytes, e.g. `(2.5, "GiB")`; `None` for an
/// unknown unit, a negative number, or one past `u64`.
pub fn bytes_of(number: f64, unit: &str) -> Option<u64> {
    let bytes = number * unit_bytes(unit)? as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes <= u64::MAX as f64).then_some(bytes as u64)
}

/// Bytes for a size a person typed (`4G`, `512MiB`, `1.5g`, `65536`): at least one
/// byte; the error says what works.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        format!("{text:?} is not a size (try 4G, 512M, 1.5GiB or a number of bytes)")
    })?;
    let Some(per_unit) = unit_bytes(unit) else {
        return Err(format!(
            "{text:?}: unknown unit {unit:?} (use K, M, G, T or P)"
        ));
    };
    let bytes = value * per_unit as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is not a usable size"));
    }
    Ok(bytes as u64)
}

/// Unix milliseconds as `2026-11-25 17:30:12 UTC` (UTC: a record is read on other
/// machines and in other zones than it was written).
pub fn utc_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_count_takes_its_nouns_number() {
        assert_eq!(super::counted(1, "sample", "samples"), "1 sample");
        assert_eq!(super::counted(0, "sample", "samples"), "0 samples");
        assert_eq!(
            super::counted(2, "PSS reading", "PSS readings"),
            "2 PSS readings"
        );
    }

    use super::*;

    #[test]
    fn iec_units() {
        assert_eq!(iec(512), "512 B");
        assert_eq!(iec(1536), "1.5 KiB");
        assert_eq!(iec(3 << 30), "3.0 GiB");
        assert_eq!(iec(300 << 20), "300 MiB");
        assert_eq!(iec(u64::MAX), "16384 PiB");
    }

    #[test]
    fn signed_sizes_keep_their_sign() {
        assert_eq!(iec_signed(-(3 << 30)), "-3.0 GiB");
        assert_eq!(iec_signed(1536), "1.5 KiB");
        assert_eq!(iec_signed(i64::MIN), "-8192 PiB");
    }
}

#[cfg(test)]
mod size_tests {
    use super::{bytes_of, parse_size, unit_bytes};

    #[test]
    fn units_are_powers_of_1024() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("2Gi"), Ok(2 << 30));
        assert_eq!(parse_size("100kB"), Ok(100 << 10));
    }

    #[test]
    fn every_spelling_of_a_unit_is_a_power_of_1024() {
        for (unit, bytes) in [
            ("", 1),
            ("B", 1),
            ("bytes", 1),
            ("kB", 1 << 10),
            ("KiB", 1 << 10),
            ("k", 1 << 10),
            ("MB", 1 << 20),
            ("Mi", 1 << 20),
            ("GiB", 1 << 30),
            ("g", 1 << 30),
            ("TB", 1 << 40),
            ("PiB", 1 << 50),
        ] {
            assert_eq!(unit_bytes(unit), Some(bytes), "{unit:?}");
        }
        assert_eq!(unit_bytes("pages"), None);
        assert_eq!(unit_bytes("EiB"), None);
        assert_eq!(bytes_of(2.5, "GiB"), Some(5 << 29));
        assert_eq!(bytes_of(-1.0, "MiB"), None);
        assert_eq!(bytes_of(1e30, "PiB"), None);
    }

    #[test]
    fn nonsense_is_an_error_that_says_what_works() {
        assert!(parse_size("lots").unwrap_err().contains("try 4G"));
        assert!(parse_size("4X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1e400").is_err());
    }
}
