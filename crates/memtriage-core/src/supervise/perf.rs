//! `--perf`: counters of the whole job from perf_event_open(2).
//!
//! Counters are opened on memtriage itself, disabled, with `inherit` and
//! `enable_on_exec`: the job inherits them at fork and its exec enables them, so
//! they count the job and every process it starts, and nothing of memtriage (whose
//! threads never exec). Inherited counts fold into ours as the job's processes exit.

use std::os::fd::{FromRawFd, OwnedFd};

use crate::model::run::PerfCounts;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_TYPE_HW_CACHE: u32 = 3;
const SW_PAGE_FAULTS: u64 = 2;
const SW_CONTEXT_SWITCHES: u64 = 3;
const SW_PAGE_FAULTS_MIN: u64 = 5;
const SW_PAGE_FAULTS_MAJ: u64 = 6;
const HW_INSTRUCTIONS: u64 = 1;
const CACHE_DTLB: u64 = 3;
const OP_READ: u64 = 0;
const OP_WRITE: u64 = 1;
const RESULT_MISS: u64 = 1;
const FORMAT_TOTAL_TIME_ENABLED: u64 = 1;
const FORMAT_TOTAL_TIME_RUNNING: u64 = 2;
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_ENABLE_ON_EXEC: u64 = 1 << 12;
/// perf_event_open flag: the new descriptor is close-on-exec.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// `struct perf_event_attr` as of its first version (PERF_ATTR_SIZE_VER0, 64 bytes),
/// which every kernel accepts; the fields after it stay zero.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

struct Counter {
    fd: OwnedFd,
}

fn open(kind: u32, config: u64) -> Result<Counter, std::io::Error> {
    let attr = Attr {
        kind,
        size: std::mem::size_of::<Attr>() as u32,
        config,
        read_format: FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING,
        flags: FLAG_DISABLED | FLAG_INHERIT | FLAG_ENABLE_ON_EXEC,
        ..Attr::default()
    };
    // SAFETY: perf_event_open reads `attr` (of the size it says) and returns a new fd.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(Counter {
        fd: unsafe { OwnedFd::from_raw_fd(fd as i32) },
    })
}

impl Counter {
    /// The count, scaled when the kernel multiplexed the counter.
    fn read(&self) -> Option<u64> {
        let mut buf = [0u8; 24];
        let n = rustix::io::read(&self.fd, &mut buf).ok()?;
        if n < 24 {
            return None;
        }
        let word =
            |i: usize| u64::from_ne_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let (value, enabled, running) = (word(0), word(1), word(2));
        if running == 0 {
            return (value == 0).then_some(0);
        }
        Some(((value as u128 * enabled as u128) / running as u128) as u64)
    }
}

/// Counters opened before the job starts.
pub struct Perf {
    software: Vec<(&'static str, Result<Counter, String>)>,
    hardware: Vec<(&'static str, Counter)>,
    hardware_unavailable: Option<String>,
}

impl Perf {
    pub fn open() -> Self {
        let sw = |name, config| {
            (
                name,
                open(PERF_TYPE_SOFTWARE, config).map_err(|e| e.to_string()),
            )
        };
        let software = vec![
            sw("page_faults", SW_PAGE_FAULTS),
            sw("minor_faults", SW_PAGE_FAULTS_MIN),
            sw("major_faults", SW_PAGE_FAULTS_MAJ),
            sw("context_switches", SW_CONTEXT_SWITCHES),
        ];
        let dtlb = |op| CACHE_DTLB | (op << 8) | (RESULT_MISS << 16);
        let mut hardware = Vec::new();
        let mut hardware_unavailable = None;
        for (name, kind, config) in [
            ("instructions", PERF_TYPE_HARDWARE, HW_INSTRUCTIONS),
            ("dtlb_load_misses", PERF_TYPE_HW_CACHE, dtlb(OP_READ)),
            ("dtlb_store_misses", PERF_TYPE_HW_CACHE, dtlb(OP_WRITE)),
        ] {
            match open(kind, config) {
                Ok(c) => hardware.push((name, c)),
                Err(e) => {
                    hardware_unavailable.get_or_insert_with(|| {
                        format!(
                            "hardware counters are not available here ({e}): no PMU is exposed to this machine, as in many VMs; dTLB misses cannot be counted"
                        )
                    });
                }
            }
        }
        Perf {
            software,
            hardware,
            hardware_unavailable,
        }
    }

    /// Read after the job's processes have exited, so their counts have folded in.
    pub fn counts(&self) -> PerfCounts {
        let get = |name: &str| -> Option<u64> {
            self.software
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, c)| c.as_ref().ok())
                .and_then(Counter::read)
                .or_else(|| {
                    self.hardware
                        .iter()
                        .find(|(n, _)| *n == name)
                        .and_then(|(_, c)| c.read())
                })
        };
        PerfCounts {
            page_faults: get("page_faults"),
            minor_faults: get("minor_faults"),
            major_faults: get("major_faults"),
            context_switches: get("context_switches"),
            instructions: get("instructions"),
            dtlb_load_misses: get("dtlb_load_misses"),
            dtlb_store_misses: get("dtlb_store_misses"),
            hardware_unavailable: self.hardware_unavailable.clone(),
        }
    }

    /// Why software counters failed too (perf_event_paranoid, seccomp), if they did.
    pub fn software_error(&self) -> Option<String> {
        self.software
            .iter()
            .find_map(|(_, c)| c.as_ref().err().cloned())
    }
}
