//! `/proc/PID/smaps_rollup`, and the whole of `smaps` summed the same way.

use crate::model::process::Rollup;
use crate::parse::kv;

/// `None` for an empty rollup (no address space) or one without its core fields.
/// Sums every record, so it takes the whole of `smaps` as well as `smaps_rollup`.
pub fn parse(text: &[u8]) -> Option<Rollup> {
    let mut r = Rollup::default();
    let (mut has_rss, mut has_pss) = (false, false);
    // Sums saturate: a forged or corrupt file must not overflow (a fuzzer found one).
    let add = |total: &mut Option<u64>, bytes: u64| {
        *total = Some(total.unwrap_or(0).saturating_add(bytes));
    };
    for (key, bytes) in kv::sizes(text) {
        match key {
            "Rss" => (r.rss, has_rss) = (r.rss.saturating_add(bytes), true),
            "Pss" => (r.pss, has_pss) = (r.pss.saturating_add(bytes), true),
            "Pss_Anon" => add(&mut r.pss_anon, bytes),
            "Pss_File" => add(&mut r.pss_file, bytes),
            "Pss_Shmem" => add(&mut r.pss_shmem, bytes),
            "Shared_Clean" => r.shared_clean = r.shared_clean.saturating_add(bytes),
            "Shared_Dirty" => r.shared_dirty = r.shared_dirty.saturating_add(bytes),
            "Private_Clean" => r.private_clean = r.private_clean.saturating_add(bytes),
            "Private_Dirty" => r.private_dirty = r.private_dirty.saturating_add(bytes),
            "Referenced" => r.referenced = r.referenced.saturating_add(bytes),
            "Anonymous" => r.anonymous = r.anonymous.saturating_add(bytes),
            "AnonHugePages" => r.anon_huge_pages = r.anon_huge_pages.saturating_add(bytes),
            "ShmemPmdMapped" => r.shmem_pmd_mapped = r.shmem_pmd_mapped.saturating_add(bytes),
            "FilePmdMapped" => r.file_pmd_mapped = r.file_pmd_mapped.saturating_add(bytes),
            "Shared_Hugetlb" => r.shared_hugetlb = r.shared_hugetlb.saturating_add(bytes),
            "Private_Hugetlb" => r.private_hugetlb = r.private_hugetlb.saturating_add(bytes),
            "Swap" => r.swap = r.swap.saturating_add(bytes),
            "SwapPss" => r.swap_pss = r.swap_pss.saturating_add(bytes),
            "Locked" => r.locked = r.locked.saturating_add(bytes),
            _ => {}
        }
    }
    (has_rss && has_pss).then_some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_rollup_is_none_not_zero() {
        assert_eq!(parse(b""), None);
        assert_eq!(
            parse(b"00400000-7fff ---p 00000000 00:00 0 [rollup]\n"),
            None
        );
    }

    #[test]
    fn rollup_uss_is_private_clean_plus_dirty() {
        let r = parse(
            b"Rss: 300 kB\nPss: 200 kB\nPrivate_Clean: 10 kB\nPrivate_Dirty: 90 kB\nAnonymous: 100 kB\nAnonHugePages: 50 kB\n",
        )
        .unwrap();
        assert_eq!(r.uss(), 100 * 1024);
        assert_eq!(r.anon_huge_coverage(), Some(0.5));
        assert_eq!(
            r.pss_anon, None,
            "a kernel before 5.14 has no Pss_Anon: unknown, not 0"
        );
    }

    /// On a live process the regions of smaps add up to what smaps_rollup reports
    /// (PSS within rounding: smaps rounds each region down to a kB).
    #[test]
    fn smaps_summed_matches_smaps_rollup_on_a_live_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let dir = format!("/proc/{}", child.id());
        // Read once the child is quiet: exec done, libraries loaded, asleep (smaps
        // the same before and after the rollup was read).
        let (all, rollup) = loop {
            let before = std::fs::read(format!("{dir}/smaps")).unwrap();
            let rollup = std::fs::read(format!("{dir}/smaps_rollup")).unwrap();
            let after = std::fs::read(format!("{dir}/smaps")).unwrap();
            if before == after && String::from_utf8_lossy(&after).contains("sleep") {
                break (after, rollup);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        child.kill().unwrap();
        child.wait().unwrap();
        let (summed, rolled) = (parse(&all).unwrap(), parse(&rollup).unwrap());
        let regions = all
            .split(|b| *b == b'\n')
            .filter(|l| l.starts_with(b"Rss:"))
            .count() as u64;
        assert!(regions > 5);
        assert_eq!(summed.rss, rolled.rss);
        assert_eq!(summed.uss(), rolled.uss());
        assert_eq!(summed.anonymous, rolled.anonymous);
        assert!(summed.pss <= rolled.pss && rolled.pss - summed.pss <= regions * 1024);
    }
}
