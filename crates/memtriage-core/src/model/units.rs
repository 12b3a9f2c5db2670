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

/// Bytes for a size; K/M/G/T (with or without `i`/`B`) are powers of 1024, as in
/// `free -h`, Docker `--memory` and Kubernetes' `Gi`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        format!("{text:?} is not a size (try 4G, 512M, 1.5GiB or a number of bytes)")
    })?;
    let shift = match unit
        .trim()
        .to_ascii_lowercase()
        .trim_end_matches('b')
        .trim_end_matches('i')
    {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use K, M, G or T)"
            ))
        }
    };
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is not a usable size"));
    }
    Ok(bytes as u64)
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
    use super::parse_size;

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
    fn nonsense_is_an_error_that_says_what_works() {
        assert!(parse_size("lots").unwrap_err().contains("try 4G"));
        assert!(parse_size("4X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1e400").is_err());
    }
}
