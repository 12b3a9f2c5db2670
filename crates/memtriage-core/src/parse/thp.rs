//! The choice files of `/sys/kernel/mm/transparent_hugepage` (`enabled`, `defrag`,
//! `shmem_enabled`), which list every option and bracket the one in force.

/// `always [madvise] never` → `madvise`.
pub fn selected(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = start + text[start..].find(']')?;
    let v = text[start + 1..end].trim();
    (!v.is_empty()).then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::selected;

    #[test]
    fn selected_values() {
        assert_eq!(
            selected("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            selected("always defer [defer+madvise] madvise never").as_deref(),
            Some("defer+madvise")
        );
        assert_eq!(selected("always madvise never"), None);
        assert_eq!(selected("[]"), None);
        assert_eq!(selected("]["), None);
    }
}
