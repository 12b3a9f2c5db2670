//! `/proc/PID/statm` (proc(5)): `size resident shared text lib data dt`, in pages.
//!
//! The cheapest way to watch a process's RSS: the kernel prints seven counters it
//! keeps anyway, with no lock on the address space (unlike `smaps_rollup`) and no
//! formatting of fifty fields (unlike `stat`). Used by the Python `track()` sampler,
//! which reads it every millisecond.

/// The fields a sampler needs, in pages (multiply by the page size for bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Statm {
    /// Virtual size.
    pub size: u64,
    /// Resident pages: anon + file + shmem (the same as `VmRSS`).
    pub resident: u64,
    /// Resident file and shmem pages.
    pub shared: u64,
}

/// `None` when the text is not three or more numbers.
pub fn parse(bytes: &[u8]) -> Option<Statm> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut words = text.split_ascii_whitespace().map(|w| w.parse::<u64>());
    Some(Statm {
        size: words.next()?.ok()?,
        resident: words.next()?.ok()?,
        shared: words.next()?.ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pages_of_a_captured_statm() {
        assert_eq!(
            parse(b"61577 4210 2511 651 0 12312 0\n"),
            Some(Statm {
                size: 61577,
                resident: 4210,
                shared: 2511
            })
        );
    }

    #[test]
    fn cut_short_or_garbage_is_none_not_zero() {
        assert_eq!(parse(b""), None);
        assert_eq!(parse(b"61577 42"), None);
        assert_eq!(parse(b"a b c"), None);
    }
}
