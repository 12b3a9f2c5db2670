//! `/proc/swaps`.

use crate::model::system::SwapDevice;
use crate::parse::mountinfo::unescape_octal;

/// A header, then `Filename Type Size Used Priority` with sizes in kB.
pub fn parse(text: &str) -> Vec<SwapDevice> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            let filename = unescape_octal(f.next()?);
            let kind = f.next()?.to_string();
            let size = f.next()?.parse::<u64>().ok()?.checked_mul(1024)?;
            let used = f.next()?.parse::<u64>().ok()?.checked_mul(1024)?;
            let priority = f.next()?.parse().ok()?;
            Some(SwapDevice {
                filename,
                kind,
                size,
                used,
                priority,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn swaps_with_escaped_path() {
        let s = parse(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/swap\\040file\tfile\t\t1048572\t\t512\t\t-2\n",
        );
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].filename, "/swap file");
        assert_eq!(s[0].size, 1048572 * 1024);
        assert_eq!(s[0].used, 512 * 1024);
        assert_eq!(s[0].priority, -2);
    }
}
