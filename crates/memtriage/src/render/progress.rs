//! Progress of long reads, on stderr; the caller shows it only to a terminal.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting `total` bytes; `None` when there is nothing to count.
pub fn bytes(total: u64) -> Option<ProgressBar> {
    if total == 0 {
        return None;
    }
    let b = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    b.set_style(style);
    Some(b)
}
