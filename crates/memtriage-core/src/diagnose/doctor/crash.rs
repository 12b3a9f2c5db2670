//! The crash an earlier boot kept: a node that rebooted after a panic holds the oops
//! in pstore, in kdump's `vmcore-dmesg.txt` or in the journal's previous boot. Read as
//! `explain` reads a log, so the faulting driver is named the same way.

use crate::diagnose::logs::LogScanner;
use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::system::SystemSnapshot;

use super::{ev, finding, unreadable, Profile};

const SOURCES: &str = "/sys/fs/pstore, /var/crash/*/vmcore-dmesg.txt, journalctl -k -b -1";

pub(super) fn previous_boot(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let Some(logs) = &sys.previous_boot_logs else {
        return vec![unreadable(
            sys,
            ids::CRASH_UNREADABLE,
            "An earlier boot's kernel crash",
            &[("previous_boot_logs", SOURCES)],
        )];
    };
    let crashes: Vec<Finding> = logs
        .iter()
        .filter_map(|log| {
            let mut scanner = LogScanner::with_source(&log.source);
            scanner.feed(log.text.as_bytes());
            scanner.finish();
            let oops = scanner
                .findings()
                .into_iter()
                .find(|f| f.id == ids::LOG_KERNEL_OOPS)?;
            Some(crashed(oops, &log.source))
        })
        .collect();
    if !crashes.is_empty() {
        return crashes;
    }
    let read: Vec<&str> = logs.iter().map(|l| l.source.as_str()).collect();
    vec![finding(
        ids::CRASH_OK,
        Severity::Ok,
        "No kernel crash kept from an earlier boot".into(),
        vec![ev(
            "logs read",
            if read.is_empty() {
                "none kept (pstore and /var/crash empty, no previous boot in the journal)".into()
            } else {
                read.join(", ")
            },
            SOURCES,
        )],
        "A node that rebooted after a kernel panic keeps the oops in pstore, kdump or the journal; \
         without it a crash looks like a job that vanished.",
        String::new(),
    )]
}

/// The oops `explain` found, said as the earlier boot's.
fn crashed(oops: Finding, source: &str) -> Finding {
    let mut evidence = vec![Evidence::text("kept in", source, source)];
    evidence.extend(oops.evidence);
    Finding {
        id: ids::CRASH_PREVIOUS_BOOT.to_string(),
        severity: Severity::Error,
        title: format!("An earlier boot crashed: {}", oops.title),
        evidence,
        why: oops.why,
        fix: oops.fix,
        assessment: oops.assessment,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::BootLog;

    fn with_logs(logs: Option<Vec<BootLog>>) -> SystemSnapshot {
        let mut sys = SystemSnapshot::empty();
        sys.previous_boot_logs = logs;
        sys
    }

    #[test]
    fn an_oops_kept_in_pstore_names_its_driver() {
        let sys = with_logs(Some(vec![BootLog {
            source: "/sys/fs/pstore/dmesg-ramoops-0".into(),
            text: "<4>[ 1234.5] BUG: unable to handle page fault for address: ffffb8a1c0e3f000\n\
                   <4>[ 1234.5] CPU: 3 PID: 4242 Comm: python Tainted: P           OE     6.5.0-14-generic #14\n\
                   <4>[ 1234.5] RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]\n\
                   <0>[ 1234.6] Kernel panic - not syncing: Fatal exception\n"
                .into(),
        }]));
        let found = previous_boot(&sys, Profile::Training);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.id, "crash.previous-boot");
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.title
                .starts_with("An earlier boot crashed: Kernel oops in the nvidia module"),
            "{}",
            f.title
        );
        assert_eq!(f.evidence[0].value, "/sys/fs/pstore/dmesg-ramoops-0");
    }

    #[test]
    fn nothing_kept_is_ok_and_nothing_readable_says_so() {
        let ok = previous_boot(&with_logs(Some(Vec::new())), Profile::Training);
        assert_eq!(ok[0].id, "crash.ok");
        let healthy = vec![BootLog {
            source: "journalctl -k -b -1".into(),
            text: "[    0.0] Linux version 6.5.0\n[  100.0] systemd-shutdown: Sending SIGTERM\n"
                .into(),
        }];
        assert_eq!(
            previous_boot(&with_logs(Some(healthy)), Profile::Training)[0].id,
            "crash.ok"
        );
        let unread = previous_boot(&with_logs(None), Profile::Training);
        assert_eq!(unread[0].id, "crash.unreadable");
        assert_eq!(unread[0].severity, Severity::Info);
    }
}
