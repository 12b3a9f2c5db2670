//! `doctor`: audits a [`SystemSnapshot`] against what ML jobs need, for the machine's
//! purpose ([`Profile`]). A pure function of the snapshot: it never reads the machine
//! and never changes it. Every check yields a finding, an `ok` one when it passes,
//! so the user sees what was checked and the values behind it.
//!
//! One file per family of checks; this module holds the profile, the order the checks
//! run in, and the helpers they share (evidence, sysctl fixes, unreadable inputs).
//! Ids come from [`crate::model::ids`]: `<area>.<problem>`, `<area>.ok` when the
//! check passes, `<area>.unreadable` when its inputs could not be read.

use serde::{Deserialize, Serialize};

use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::system::SystemSnapshot;

pub mod cgroup;
pub mod crash;
pub mod gpu;
pub mod hugepages;
mod killer_alarms;
pub mod killers;
pub mod kills;
pub mod limits;
pub mod memory;
pub mod numa;
pub mod overcommit;
pub mod reclaim;
pub mod shm;
pub mod vm;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// A dedicated training machine: one big job owns the memory.
    Training,
    /// A serving machine: latency matters, weights must stay resident.
    Inference,
    /// A machine shared by many users' jobs.
    Shared,
}

impl Profile {
    /// Every profile, in the order help texts list them.
    pub const ALL: [Profile; 3] = [Profile::Training, Profile::Inference, Profile::Shared];
}

/// The profile's name as `as_str` writes it, for every front end that reads one.
impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| {
                format!("unknown profile {name:?}: use \"training\", \"inference\" or \"shared\"")
            })
    }
}

/// "a training machine", "an inference machine", "a shared machine".
fn machine(profile: Profile) -> &'static str {
    match profile {
        Profile::Training => "a training machine",
        Profile::Inference => "an inference machine",
        Profile::Shared => "a shared machine",
    }
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Training => "training",
            Profile::Inference => "inference",
            Profile::Shared => "shared",
        }
    }
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
pub const SYSCTL_FILE: &str = "/etc/sysctl.d/90-memtriage.conf";

type Rule = fn(&SystemSnapshot, Profile) -> Vec<Finding>;

/// All findings, most severe first; within a severity, in the order of the rules.
pub fn audit(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    const RULES: [Rule; 20] = [
        memory::memory,
        kills::oom,
        killers::killers,
        killer_alarms::false_alarms,
        cgroup::cgroup,
        memory::pressure,
        shm::shm,
        overcommit::overcommit,
        memory::swap,
        hugepages::thp,
        hugepages::hugepages,
        vm::max_map_count,
        limits::memlock,
        limits::nofile,
        vm::dirty,
        numa::numa,
        kills::panic_on_oom,
        crash::previous_boot,
        reclaim::proactive_reclaim,
        gpu::gpu,
    ];
    let mut out: Vec<Finding> = RULES.iter().flat_map(|rule| rule(sys, profile)).collect();
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

fn finding(
    id: &str,
    severity: Severity,
    title: String,
    evidence: Vec<Evidence>,
    why: &str,
    fix: String,
) -> Finding {
    Finding {
        assessment: None,
        id: id.to_string(),
        severity,
        title,
        evidence,
        why: why.to_string(),
        fix,
    }
}

fn ev(label: &str, value: impl Into<String>, source: &str) -> Evidence {
    Evidence::text(label, value, source)
}

fn vm_path(key: &str) -> String {
    format!("/proc/sys/vm/{key}")
}

/// `sysctl -w` for now, and a line in a sysctl.d file for after the next boot.
/// `>>` so that applying several fixes does not overwrite the earlier ones.
fn sysctl_fix(settings: &[(&str, String)]) -> String {
    let mut lines: Vec<String> = settings
        .iter()
        .map(|(k, v)| format!("sysctl -w {k}={v}"))
        .collect();
    lines.extend(
        settings
            .iter()
            .map(|(k, v)| format!("echo '{k} = {v}' >> {SYSCTL_FILE}")),
    );
    lines.join("\n")
}

/// A check whose inputs could not be read: says what and why, at `info`, so a user
/// knows the check was not made.
fn unreadable(sys: &SystemSnapshot, id: &str, what: &str, fields: &[(&str, &str)]) -> Finding {
    let evidence = fields
        .iter()
        .map(|(field, source)| {
            let reason = sys.unreadable_reason(field).unwrap_or("not read");
            ev(field, format!("unreadable: {reason}"), source)
        })
        .collect();
    finding(
        id,
        Severity::Info,
        format!("{what}: could not be read, not checked"),
        evidence,
        "A check that cannot see its values cannot vouch for them.",
        "Run the audit (memtriage doctor) as root on the host, not inside a container, to read everything."
            .into(),
    )
}

fn opt_num(v: Option<impl ToString>) -> String {
    v.map_or_else(|| "unreadable".to_string(), |v| v.to_string())
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ids;

    #[test]
    fn sysctl_fix_sets_now_and_persists() {
        assert_eq!(
            sysctl_fix(&[("vm.overcommit_memory", "1".into())]),
            "sysctl -w vm.overcommit_memory=1\necho 'vm.overcommit_memory = 1' >> /etc/sysctl.d/90-memtriage.conf"
        );
    }

    #[test]
    fn empty_snapshot_yields_findings_without_errors() {
        let f = audit(&SystemSnapshot::empty(), Profile::Training);
        assert!(f.iter().all(|f| f.severity <= Severity::Info), "{f:#?}");
        assert!(f.iter().any(|f| f.id == ids::MEMORY_UNREADABLE));
    }
}
