//! Sizes in IEC units for tables; JSON keeps integers of bytes.

use memtriage_core::model::units::iec;

/// A size that may be unreadable: `-` rather than a misleading 0.
pub fn iec_opt(bytes: Option<u64>) -> String {
    bytes.map(iec).unwrap_or_else(|| "-".to_string())
}

pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.0}%", part as f64 * 100.0 / whole as f64)
    }
}

pub use memtriage_core::model::units::utc_ms;

/// Seconds as a person says how long ago: `42 s`, `7 min`, `3.5 h`, `2.0 d`.
pub fn ago(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} d", seconds / 86_400.0)
    }
}

#[cfg(test)]
mod time_tests {
    use super::*;

    #[test]
    fn utc_dates_cross_leap_days_and_the_epoch() {
        assert_eq!(utc_ms(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_ms(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_ms(1_795_627_812_000), "2026-11-25 17:30:12 UTC");
        assert_eq!(ago(30.0), "30 s");
        assert_eq!(ago(600.0), "10 min");
    }
}
