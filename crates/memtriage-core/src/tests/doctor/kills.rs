//! OOM kills: whether one panics the machine, kills in the kernel log (or a log that
//! cannot be read or has rotated), the /dev/kmsg reader, and a real kill in a memory
//! cgroup of this machine.

use std::fs;
use std::path::{Path, PathBuf};

use crate::diagnose::doctor::{audit, Profile};
use crate::model::finding::Severity;
use crate::model::system::OomConstraint;
use crate::parse::kmsg;
use crate::probe::kmsg::read_kmsg;
use crate::probe::system::read;
use crate::Root;

use crate::tests::support::{fixtures, skip};

use super::{evidence, get, severity, Fake, GIB};

#[test]
fn panic_on_oom() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/panic_on_oom", "1\n");
    assert_eq!(
        severity(&fake.audit(Profile::Shared), "panic-on-oom.enabled"),
        Severity::Warn
    );
}

// ---------------------------------------------------------------- OOM kills

fn with_oom_log(fake: &Fake) {
    let mut log = fake.read("/dev/kmsg");
    log.push_str(&fs::read_to_string(fixtures().join("kmsg-oom")).unwrap());
    fake.write("/dev/kmsg", log);
    fake.edit("/proc/vmstat", "oom_kill 0", "oom_kill 2");
}

#[test]
fn oom_kills_in_the_kernel_log() {
    let fake = Fake::new();
    with_oom_log(&fake);
    fake.write("/proc/uptime", "7300.10 9000.00\n");
    let s = fake.snapshot();
    let kills = s.oom_kills.as_ref().unwrap();
    assert_eq!(kills.len(), 2);
    assert_eq!((kills[0].pid, kills[0].comm.as_str()), (48213, "python"));
    assert_eq!(kills[0].constraint, OomConstraint::Cgroup);
    assert_eq!(kills[0].anon_rss, Some(16720448 * 1024));
    assert_eq!(
        kills[0].memcg.as_deref(),
        Some("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d.slice/cri-containerd-3f9a.scope")
    );
    assert_eq!(kills[0].timestamp, Some(5012.34695));
    assert_eq!(kills[1].constraint, OomConstraint::Global);
    assert_eq!(kills[1].shmem_rss, Some(4 * GIB));

    // The last kill was 100 s ago: an error.
    let f = audit(&s, Profile::Training);
    let oom = get(&f, "oom.recent-kills");
    assert_eq!(oom.severity, Severity::Error);
    assert!(
        oom.title.starts_with(
            "2 processes OOM-killed since boot (1 by a cgroup limit), the last 100 s ago"
        ),
        "{}",
        oom.title
    );
    assert_eq!(evidence(oom, "OOM kills since boot"), "2");
    let last = evidence(oom, "killed pid 51002 (pt_data_worker)");
    assert!(
        last.contains("anon-rss 10.0 GiB")
            && last.contains("shmem-rss 4.0 GiB")
            && last.contains("global out of memory"),
        "{last}"
    );
    let first = evidence(oom, "killed pid 48213 (python)");
    assert!(first.contains("cgroup limit of /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d.slice"), "{first}");
    assert!(oom.fix.contains("resources.limits.memory"));

    // Hours later: still shown, as a warning.
    fake.write("/proc/uptime", "90000.00 1.00\n");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "oom.recent-kills"),
        Severity::Warn
    );
}

#[test]
fn oom_kills_counted_but_log_unreadable_or_rotated() {
    let fake = Fake::new();
    fake.edit("/proc/vmstat", "oom_kill 0", "oom_kill 4");
    // Rotated: the log is readable and holds no OOM lines.
    let f = fake.audit(Profile::Training);
    let k = get(&f, "oom.kills-since-boot");
    assert_eq!(k.severity, Severity::Warn);
    assert!(evidence(k, "kernel log").contains("rotated"));

    fake.remove("/dev/kmsg");
    let s = fake.snapshot();
    assert!(s.oom_kills.is_none());
    assert!(s
        .unreadable_reason("oom_kills")
        .unwrap()
        .contains("does not exist"));
    let f = audit(&s, Profile::Training);
    let k = get(&f, "oom.kills-since-boot");
    assert!(evidence(k, "kernel log").starts_with("unreadable:"));
    assert!(k.fix.contains("dmesg"));

    fake.remove("/proc/vmstat");
    assert_eq!(
        severity(&fake.audit(Profile::Training), "oom.unreadable"),
        Severity::Info
    );
}

#[test]
fn kmsg_reader_on_a_regular_file_drops_dictionary_lines() {
    let fake = Fake::new();
    with_oom_log(&fake);
    let lines = read_kmsg(&Root::at(fake.dir.path())).unwrap();
    assert!(lines.iter().all(|l| !l.starts_with(' ')));
    assert_eq!(lines.len(), 12 + 16);
}

#[cfg(target_os = "linux")]
#[test]
fn kmsg_permission_denied_names_the_privilege() {
    use std::os::unix::fs::PermissionsExt;
    let fake = Fake::new();
    let path = fake.path("/dev/kmsg");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads through any mode: the read is made without that privilege.
    let err = without_dac_override(|| read_kmsg(&Root::at(fake.dir.path()))).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Refused);
    assert!(
        err.to_string()
            .contains("needs root or CAP_SYSLOG; dmesg_restrict=1"),
        "{err}"
    );
}

/// `f` run on a thread of its own without the capabilities that let root read
/// through any file mode (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH): a thread's
/// capabilities are its own, so the rest of the test binary keeps them.
#[cfg(target_os = "linux")]
fn without_dac_override<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    const CAP_DAC_OVERRIDE: u32 = 1;
    const CAP_DAC_READ_SEARCH: u32 = 2;
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut header = Header {
                version: VERSION_3,
                pid: 0,
            };
            let mut data = [Data::default(); 2];
            // SAFETY: capget and capset read and write one header and two data
            // structs of the layout version 3 defines, which these are; pid 0 is
            // the calling thread.
            unsafe {
                assert_eq!(libc::syscall(libc::SYS_capget, &mut header, &mut data), 0);
                data[0].effective &= !(1 << CAP_DAC_OVERRIDE | 1 << CAP_DAC_READ_SEARCH);
                assert_eq!(libc::syscall(libc::SYS_capset, &header, &data), 0);
            }
            f()
        })
        .join()
        .unwrap()
    })
}

// ---------------------------------------------------------------- this machine

#[test]
fn live_kmsg_reader_returns_ordered_records_without_blocking() {
    let lines = match read_kmsg(&Root::host()) {
        Ok(lines) => lines,
        Err(e) => {
            // Not root (or no /dev/kmsg in a container): the reason must say so.
            let reason = e.to_string();
            assert!(
                reason.contains("CAP_SYSLOG") || reason.contains("does not exist"),
                "{reason}"
            );
            skip(format!("the kernel log is not readable here: {reason}"));
            return;
        }
    };
    assert!(
        !lines.is_empty(),
        "the kernel log has at least the boot banner"
    );
    let seqs: Vec<u64> = lines
        .iter()
        .map(|l| kmsg::parse_line(l).seq.expect(l))
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "records in order");
    assert!(lines.iter().all(|l| !l.contains('\n')));
}

/// A real OOM kill in a v1 memory cgroup of 64 MiB, then found in /dev/kmsg with
/// its cgroup, and counted in /proc/vmstat. Needs root and the v1 memory controller
/// (this machine's layout); elsewhere it says why it did nothing. The cgroup is
/// named as `memtriage run --limit` names its own, so the kill is the test's, not
/// the machine's: `doctor` after the test suite finds the machine as it was.
#[test]
fn live_cgroup_oom_kill_is_found_in_the_kernel_log() {
    use std::process::Command;
    let hierarchy = Path::new("/sys/fs/cgroup/memory");
    // No memtriage has this pid, so the next `run --limit` may remove it if it is left.
    let name = format!(
        "{}{}",
        crate::model::system::RUN_LIMIT_CGROUP_PREFIX,
        std::process::id()
    );
    let dir = hierarchy.join(&name);
    if !hierarchy.join("memory.limit_in_bytes").exists() || fs::create_dir(&dir).is_err() {
        skip("needs root and the cgroup v1 memory controller");
        return;
    }
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = fs::remove_dir(&self.0);
        }
    }
    let _cleanup = Cleanup(dir.clone());
    fs::write(dir.join("memory.limit_in_bytes"), "67108864").unwrap();
    let before = read(&Root::host()).oom_kill_count.unwrap();

    // `tail` keeps the one endless line of /dev/zero in memory until the limit kills it.
    let procs = dir.join("cgroup.procs");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {} && exec tail /dev/zero",
            procs.display()
        ))
        .status()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(9),
        "killed by the OOM killer: {status:?}"
    );

    let s = read(&Root::host());
    assert!(
        s.oom_kill_count.unwrap() > before,
        "vmstat oom_kill counts it"
    );
    let kills = s.oom_kills.as_ref().expect("root reads the kernel log");
    let kill = kills
        .iter()
        .rev()
        .find(|k| {
            k.memcg.as_deref() == Some(&format!("/{name}")[..])
                || k.oom_memcg.as_deref() == Some(&format!("/{name}")[..])
        })
        .unwrap_or_else(|| panic!("no kill in /{name} among {kills:#?}"));
    assert_eq!(kill.comm, "tail");
    assert_eq!(kill.constraint, OomConstraint::Cgroup);
    let anon = kill.anon_rss.unwrap();
    assert!(
        (16 << 20..=64 << 20).contains(&anon),
        "anon-rss {anon} within the 64 MiB limit"
    );
    // Regression: the log's clock ran 1.5 ms ahead of /proc/uptime, the kill read
    // as "in the future" and doctor did not call it recent.
    let raw = s.uptime_seconds.unwrap() - kill.timestamp.unwrap();
    assert!(
        (-1.0..60.0).contains(&raw),
        "killed {raw} s ago by the raw clocks"
    );
    let age = crate::diagnose::oom::age(kill.timestamp.unwrap(), s.uptime_seconds.unwrap())
        .expect("a kill of this boot");
    assert!((0.0..60.0).contains(&age), "killed {age} s ago");

    assert!(kill.in_run_limit_cgroup());
    let f = audit(&s, Profile::Training);
    let own = f
        .iter()
        .flat_map(|f| &f.evidence)
        .find(|e| e.label.starts_with("OOM kills under `run`'s memory limits"))
        .expect("the test's kill is shown apart");
    assert!(own.value.parse::<u64>().unwrap() >= 1, "{own:?}");
    assert!(
        !f.iter().any(|f| f
            .evidence
            .iter()
            .any(|e| e.label == format!("killed pid {} (tail)", kill.pid))),
        "a kill under a run's own limit is not the machine's problem"
    );

    // The same kill, as if in another cgroup, is the machine's: an error, as recent.
    let mut elsewhere = s.clone();
    for k in elsewhere.oom_kills.iter_mut().flatten() {
        if k.pid == kill.pid {
            k.memcg = Some("/job".into());
            k.oom_memcg = Some("/job".into());
        }
    }
    let f = audit(&elsewhere, Profile::Training);
    let oom = get(&f, "oom.recent-kills");
    assert_eq!(
        oom.severity,
        Severity::Error,
        "a kill seconds ago is an error"
    );
    assert!(oom
        .evidence
        .iter()
        .any(|e| e.label == format!("killed pid {} (tail)", kill.pid)));
}
