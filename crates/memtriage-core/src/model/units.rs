//! The one formatter of sizes for people. JSON keeps integers of bytes; tables, titles
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
