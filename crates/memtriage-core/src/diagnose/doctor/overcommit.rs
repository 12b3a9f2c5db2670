//! Overcommit accounting against the machine's purpose.

use crate::model::finding::{Evidence, Finding, Quantity, Severity};
use crate::model::ids;
use crate::model::system::{MemInfo, SystemSnapshot};
use crate::model::units::iec;

use super::{ev, finding, machine, opt_num, sysctl_fix, unreadable, vm_path, Profile};

/// Share of the commit limit that must stay free under strict overcommit.
pub const COMMIT_HEADROOM_MIN_PERCENT: u64 = 5;

use crate::model::system::MEMINFO;

const WHY_STRICT: &str = "Under strict accounting (mode 2) every writable private mapping \
    counts against CommitLimit: fork() of a large Python process for DataLoader workers, and \
    the big virtual reservations of PyTorch and CUDA fail with \"Cannot allocate memory\" long \
    before RAM is used.";
const WHY_LOOSE: &str = "Overcommit decides whether large reservations succeed up front; mode \
    1 lets fork() of a large process and sparse reservations succeed and leaves real shortage \
    to the OOM killer.";
const WHY_SHARED: &str = "On a shared host, overcommit lets one user's job promise memory the \
    machine lacks, and the OOM killer then picks the largest process, which may be another \
    user's; strict accounting (mode 2) fails the allocation of the job that asked instead.";

pub(super) fn overcommit(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let Some(mode) = sys.vm.overcommit_memory else {
        return vec![unreadable(
            sys,
            ids::OVERCOMMIT_UNREADABLE,
            "vm.overcommit_memory",
            &[("vm.overcommit_memory", "/proc/sys/vm/overcommit_memory")],
        )];
    };
    let m = sys.memory.clone().unwrap_or_default();
    let headroom = m.commit_headroom();
    let evidence = evidence(sys, mode, &m, headroom);
    let mut out = Vec::new();
    if mode == 2 {
        out = strict(sys, &m, headroom, profile, &evidence);
    } else if profile == Profile::Shared && mode == 1 {
        out.push(finding(
            ids::OVERCOMMIT_ALWAYS,
            Severity::Warn,
            "overcommit always (vm.overcommit_memory=1) on a shared machine".into(),
            evidence.clone(),
            WHY_SHARED,
            sysctl_fix(&[
                ("vm.overcommit_memory", "2".into()),
                ("vm.overcommit_ratio", "95".into()),
            ]),
        ));
    } else if profile == Profile::Shared && mode == 0 {
        out.push(finding(
            ids::OVERCOMMIT_HEURISTIC,
            Severity::Info,
            "heuristic overcommit (vm.overcommit_memory=0) on a shared machine".into(),
            evidence.clone(),
            WHY_SHARED,
            sysctl_fix(&[
                ("vm.overcommit_memory", "2".into()),
                ("vm.overcommit_ratio", "95".into()),
            ]),
        ));
    } else if profile == Profile::Training && mode == 0 {
        out.push(finding(
            ids::OVERCOMMIT_HEURISTIC,
            Severity::Info,
            "heuristic overcommit (vm.overcommit_memory=0) on a training machine".into(),
            evidence.clone(),
            "Mode 0 refuses single allocations larger than RAM + swap (a huge anonymous \
             reservation, a fork of a process bigger than free memory); a dedicated box is \
             better served by mode 1.",
            sysctl_fix(&[("vm.overcommit_memory", "1".into())]),
        ));
    }
    if out.is_empty() {
        let name = match mode {
            0 => "heuristic",
            1 => "always",
            2 => "strict",
            _ => "unknown",
        };
        out.push(finding(
            ids::OVERCOMMIT_OK,
            Severity::Ok,
            format!(
                "overcommit {name} (vm.overcommit_memory={mode}) suits {}",
                machine(profile)
            ),
            evidence,
            if mode == 2 { WHY_STRICT } else { WHY_LOOSE },
            String::new(),
        ));
    }
    out
}

/// Under strict accounting (mode 2): headroom left, the ratio, and the mode itself on a
/// training machine.
fn strict(
    sys: &SystemSnapshot,
    m: &MemInfo,
    headroom: Option<i128>,
    profile: Profile,
    evidence: &[Evidence],
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let (Some(limit), Some(h)) = (m.commit_limit, headroom) {
        let min = limit / 100 * COMMIT_HEADROOM_MIN_PERCENT;
        if h < i128::from(min) {
            out.push(finding(
                ids::OVERCOMMIT_NO_HEADROOM,
                Severity::Error,
                format!(
                    "strict overcommit with {} of commit headroom left: the next large allocation or fork fails",
                    if h < 0 { "none".to_string() } else { iec(h as u64) }
                ),
                evidence.to_vec(),
                WHY_STRICT,
                format!(
                    "{}\n# or, on a dedicated box, stop strict accounting:\n{}",
                    sysctl_fix(&[("vm.overcommit_ratio", "95".into())]),
                    sysctl_fix(&[("vm.overcommit_memory", "1".into())])
                ),
            ));
        }
    }
    if let (Some(limit), Some(total)) = (m.commit_limit, m.total) {
        let unset_kbytes = sys.vm.overcommit_bytes.is_none_or(|k| k == 0);
        if unset_kbytes && limit < total / 4 * 3 {
            out.push(finding(
                ids::OVERCOMMIT_RATIO_LOW,
                Severity::Warn,
                format!(
                    "strict overcommit lets only {} of {} RAM be committed (overcommit_ratio {})",
                    iec(limit),
                    iec(total),
                    opt_num(sys.vm.overcommit_ratio)
                ),
                evidence.to_vec(),
                "Under mode 2 CommitLimit is swap + RAM × overcommit_ratio%; the default 50 \
                 leaves half the RAM unusable by jobs.",
                sysctl_fix(&[("vm.overcommit_ratio", "95".into())]),
            ));
        }
    }
    if profile == Profile::Training {
        out.push(finding(
            ids::OVERCOMMIT_NEVER,
            Severity::Warn,
            "strict overcommit (vm.overcommit_memory=2) on a training machine".into(),
            evidence.to_vec(),
            WHY_STRICT,
            sysctl_fix(&[("vm.overcommit_memory", "1".into())]),
        ));
    }
    out
}

/// The settings and the meminfo figures every overcommit finding shows.
fn evidence(sys: &SystemSnapshot, mode: u32, m: &MemInfo, headroom: Option<i128>) -> Vec<Evidence> {
    let mut evidence = vec![
        ev(
            "vm.overcommit_memory",
            mode.to_string(),
            &vm_path("overcommit_memory"),
        ),
        ev(
            "vm.overcommit_ratio",
            opt_num(sys.vm.overcommit_ratio),
            &vm_path("overcommit_ratio"),
        ),
        Evidence::bytes_or_unreadable("CommitLimit", m.commit_limit, MEMINFO),
        Evidence::bytes_or_unreadable("Committed_AS", m.committed_as, MEMINFO),
        ev(
            "commit headroom (CommitLimit - Committed_AS)",
            match headroom {
                Some(h) if h < 0 => format!("-{}", iec(h.unsigned_abs() as u64)),
                Some(h) => iec(h as u64),
                None => "unreadable".into(),
            },
            MEMINFO,
        )
        .with_optional_quantity(
            headroom
                .and_then(|h| i64::try_from(h).ok())
                .map(Quantity::SignedBytes),
        ),
    ];
    if let Some(k) = sys.vm.overcommit_bytes.filter(|k| *k > 0) {
        evidence.push(Evidence::bytes(
            "vm.overcommit_kbytes",
            k,
            vm_path("overcommit_kbytes"),
        ));
    }
    evidence
}
