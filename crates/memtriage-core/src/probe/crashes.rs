//! Kernel logs kept from earlier boots, read-only: pstore (`/sys/fs/pstore`, where the
//! kernel writes its last messages as it panics, kept across the reboot), kdump's
//! `/var/crash/*/vmcore-dmesg.txt`, and on this machine the journal's previous boot.

use std::time::Duration;

use super::command::bounded_output;
use super::root::Root;
use crate::model::system::BootLog;

/// A crash is at the end of its log; this much of each is kept.
const KEEP_BYTES: usize = 256 << 10;
/// kdump keeps one directory per crash; the newest few say enough.
const NEWEST_DUMPS: usize = 3;
const PSTORE: &str = "/sys/fs/pstore";
const KDUMP: &str = "/var/crash";
/// The end of the previous boot's kernel log, asked of journalctl for at most this long.
const JOURNAL_LINES: &str = "3000";
const JOURNAL_TIMEOUT: Duration = Duration::from_secs(3);

/// The logs found; `Err` only where no place could be looked at.
pub fn previous_boot_logs(root: &Root) -> Result<Vec<BootLog>, String> {
    let mut logs = Vec::new();
    let pstore = read_dir(root, PSTORE);
    for name in pstore.iter().flatten() {
        if name.starts_with("dmesg-") || name.starts_with("console-") {
            push_file(root, &format!("{PSTORE}/{name}"), &mut logs);
        }
    }
    let kdump = read_dir(root, KDUMP);
    let mut dumps: Vec<&String> = kdump.iter().flatten().collect();
    // kdump names its directories by address and time (`127.0.0.1-2024-05-01-10:22:33`).
    dumps.sort_by(|a, b| b.cmp(a));
    for dir in dumps.into_iter().take(NEWEST_DUMPS) {
        push_file(root, &format!("{KDUMP}/{dir}/vmcore-dmesg.txt"), &mut logs);
    }
    let journal = root
        .is_host()
        .then(|| {
            bounded_output(
                "journalctl",
                &["-k", "-b", "-1", "-q", "--no-pager", "-n", JOURNAL_LINES],
                JOURNAL_TIMEOUT,
            )
        })
        .flatten();
    if let Some(text) = journal.filter(|t| !t.trim().is_empty()) {
        logs.push(BootLog {
            source: "journalctl -k -b -1".into(),
            text: tail(&text),
        });
    }
    if pstore.is_err() && kdump.is_err() && logs.is_empty() {
        return Err(format!(
            "{}: {}; {}: {}",
            PSTORE,
            pstore.err().unwrap_or_default(),
            KDUMP,
            kdump.err().unwrap_or_default()
        ));
    }
    Ok(logs)
}

fn read_dir(root: &Root, rel: &str) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(root.path(rel)).map_err(|e| e.to_string())?;
    Ok(entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect())
}

fn push_file(root: &Root, rel: &str, logs: &mut Vec<BootLog>) {
    if let Ok(bytes) = std::fs::read(root.path(rel)) {
        logs.push(BootLog {
            source: rel.to_string(),
            text: tail(&String::from_utf8_lossy(&bytes)),
        });
    }
}

fn tail(text: &str) -> String {
    let mut start = text.len().saturating_sub(KEEP_BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pstore_and_kdump_logs_are_read_from_a_captured_tree() {
        let dir = tempfile::tempdir().unwrap();
        let pstore = dir.path().join("sys/fs/pstore");
        std::fs::create_dir_all(&pstore).unwrap();
        std::fs::write(pstore.join("dmesg-ramoops-0"), "Oops: 0000 [#1] SMP\n").unwrap();
        std::fs::write(pstore.join("pmsg-ramoops-0"), "user space's own\n").unwrap();
        for crash in [
            "127.0.0.1-2024-05-01-10:22:33",
            "127.0.0.1-2024-06-02-08:00:00",
        ] {
            let d = dir.path().join("var/crash").join(crash);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("vmcore-dmesg.txt"), format!("{crash}\n")).unwrap();
        }
        let logs = previous_boot_logs(&Root::at(dir.path())).unwrap();
        let sources: Vec<&str> = logs.iter().map(|l| l.source.as_str()).collect();
        assert_eq!(
            sources,
            [
                "/sys/fs/pstore/dmesg-ramoops-0",
                "/var/crash/127.0.0.1-2024-06-02-08:00:00/vmcore-dmesg.txt",
                "/var/crash/127.0.0.1-2024-05-01-10:22:33/vmcore-dmesg.txt",
            ]
        );
        assert_eq!(logs[0].text, "Oops: 0000 [#1] SMP\n");
        let empty = tempfile::tempdir().unwrap();
        assert!(previous_boot_logs(&Root::at(empty.path())).is_err());
    }

    #[test]
    fn a_long_log_keeps_its_end_on_a_character_boundary() {
        let text = format!("{}é{}", "a".repeat(KEEP_BYTES), "b".repeat(KEEP_BYTES - 2));
        let kept = tail(&text);
        assert!(kept.len() <= KEEP_BYTES);
        assert!(kept.ends_with('b'));
    }
}
