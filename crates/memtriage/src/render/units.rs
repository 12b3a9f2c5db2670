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
