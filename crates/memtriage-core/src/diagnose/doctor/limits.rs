//! Resource limits of the shell: locked memory and open files.

use crate::model::finding::{Finding, Severity};
use crate::model::ids;
use crate::model::system::{Rlimit, SystemSnapshot};
use crate::model::units::iec;

use super::{ev, finding, unreadable, Profile, GIB, MIB};

pub const NOFILE_RECOMMENDED: u64 = 65_536;
/// Below this (1024 is the usual soft default) many DataLoader workers run out of descriptors.
pub const NOFILE_MIN: u64 = 4096;
/// Pinning less than this for RDMA/NCCL or mlock is a misconfiguration on a GPU box.
pub const MEMLOCK_MIN_TRAINING: u64 = GIB;

const LIMITS: &str = "/proc/self/limits";

fn rlimit_text(l: &Rlimit, unit: fn(u64) -> String) -> String {
    let one = |v: Option<u64>| v.map_or("unlimited".to_string(), unit);
    format!("soft {}, hard {}", one(l.soft), one(l.hard))
}

pub(super) fn memlock(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(l) = sys.limits.memlock else {
        return vec![unreadable(
            sys,
            ids::MEMLOCK_UNREADABLE,
            "RLIMIT_MEMLOCK",
            &[("limits.memlock", LIMITS)],
        )];
    };
    let evidence = vec![ev(
        "max locked memory (this shell)",
        rlimit_text(&l, iec),
        LIMITS,
    )];
    let why = "NCCL over InfiniBand/RoCE and GPUDirect RDMA register (pin) memory against \
               RLIMIT_MEMLOCK, and a server that mlocks its weights to keep them resident needs \
               their full size; a low limit fails with \"Cannot allocate memory\" or ibv_reg_mr errors.";
    let low = match (l.soft, profile) {
        (None, _) => None,
        (Some(s), Profile::Inference) => Some((s, Severity::Warn)),
        (Some(s), Profile::Training) if s < MEMLOCK_MIN_TRAINING => Some((s, Severity::Warn)),
        (Some(s), Profile::Shared) if s < 64 * MIB => Some((s, Severity::Info)),
        _ => None,
    };
    let Some((soft, severity)) = low else {
        return vec![finding(
            ids::MEMLOCK_OK,
            Severity::Ok,
            format!(
                "max locked memory: {}",
                l.soft.map_or("unlimited".to_string(), iec)
            ),
            evidence,
            why,
            String::new(),
        )];
    };
    vec![finding(
        ids::MEMLOCK_LOW,
        severity,
        format!(
            "max locked memory is {}; pinned and locked memory will fail",
            iec(soft)
        ),
        evidence,
        why,
        "ulimit -l unlimited   # in the job's shell; needs the hard limit raised first\n\
         echo '* - memlock unlimited' >> /etc/security/limits.d/90-memtriage.conf   # new logins\n\
         systemd service: LimitMEMLOCK=infinity\n\
         Docker: docker run --ulimit memlock=-1:-1 …"
            .into(),
    )]
}

pub(super) fn nofile(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(l) = sys.limits.nofile else {
        return vec![unreadable(
            sys,
            ids::NOFILE_UNREADABLE,
            "RLIMIT_NOFILE",
            &[("limits.nofile", LIMITS)],
        )];
    };
    let evidence = vec![ev(
        "max open files (this shell)",
        rlimit_text(&l, |v| v.to_string()),
        LIMITS,
    )];
    let why = "torch.multiprocessing shares each tensor a DataLoader worker sends as a file \
               descriptor; with many workers and prefetching a soft limit of 1024 ends in \
               \"Too many open files\" or \"received 0 items of ancdata\".";
    match l.soft {
        Some(s) if s < NOFILE_MIN => vec![finding(
            ids::NOFILE_LOW,
            if profile == Profile::Training { Severity::Warn } else { Severity::Info },
            format!("max open files is {s}"),
            evidence,
            why,
            format!(
                "ulimit -n {NOFILE_RECOMMENDED}   # in the job's shell, up to the hard limit\n\
                 echo '* - nofile 1048576' >> /etc/security/limits.d/90-memtriage.conf   # new logins\n\
                 systemd service: LimitNOFILE=1048576; Docker: docker run --ulimit nofile=1048576:1048576 …\n\
                 or in the job: torch.multiprocessing.set_sharing_strategy('file_system')"
            ),
        )],
        _ => vec![finding(
            ids::NOFILE_OK,
            Severity::Ok,
            format!(
                "max open files: {}",
                l.soft.map_or("unlimited".to_string(), |s| s.to_string())
            ),
            evidence,
            why,
            String::new(),
        )],
    }
}
