//! Full smaps of a live process.

use crate::probe::maps;
use crate::Root;

/// Regression: smaps is many records; reading it as one-shot stopped at the first
/// short read and lost every region past the first 4 KiB.
#[test]
fn smaps_larger_than_one_read_is_read_whole() {
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    std::thread::sleep(std::time::Duration::from_millis(100));
    let expected = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap()
        .lines()
        .count();
    let smaps_size = std::fs::read(format!("/proc/{pid}/smaps")).unwrap().len();
    let report = maps::read(&Root::host(), pid).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        smaps_size > 4096,
        "the test needs an smaps over one page, got {smaps_size}"
    );
    assert_eq!(report.regions.len(), expected);
    let total: usize = report.by_kind.iter().map(|k| k.regions).sum();
    assert_eq!(total, expected);
}

#[test]
fn a_vanished_process_is_no_such_process() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id() as i32;
    child.wait().unwrap();
    let err = maps::read(&Root::host(), pid).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("pid {pid}: no such process (it may have exited)")
    );
}
