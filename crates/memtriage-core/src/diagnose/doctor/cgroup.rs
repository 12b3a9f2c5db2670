//! The memory cgroup of the shell that runs the audit: its limit and its OOM kills.

use crate::diagnose::oom;
use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::system::SystemSnapshot;
use crate::model::units::iec;

use super::{ev, finding, percent, unreadable, Profile};

use crate::model::system::MEMINFO;

pub(super) fn cgroup(sys: &SystemSnapshot, _: Profile) -> Vec<Finding> {
    let why = "A container or systemd slice limit OOM-kills the job at the limit even when the \
               machine has RAM free; `free` and `nvidia-smi` do not show it.";
    let Some(cg) = &sys.cgroup else {
        if sys.unreadable_reason("cgroup").is_some() {
            return vec![unreadable(
                sys,
                ids::CGROUP_UNREADABLE,
                "the memory cgroup of this shell",
                &[("cgroup", "/proc/self/cgroup")],
            )];
        }
        return vec![finding(
            ids::CGROUP_OK,
            Severity::Ok,
            "no memory cgroup limits this shell".into(),
            vec![ev(
                "memory cgroup",
                "none with the memory controller",
                "/proc/self/cgroup",
            )],
            why,
            String::new(),
        )];
    };
    let source = format!("{} (cgroup {})", cg.dir, version_name(cg));
    let mut evidence = vec![
        ev("cgroup", cg.path.clone(), "/proc/self/cgroup"),
        Evidence::bytes_or_unreadable("usage", cg.usage, &source),
        ev(
            "limit",
            match (cg.limit, &cg.limit_set_by) {
                (Some(l), Some(by)) => format!("{} (set by {by})", iec(l)),
                (Some(l), None) => iec(l),
                (None, _) => "none".into(),
            },
            &source,
        ),
    ];
    if let Some(h) = cg.high {
        evidence.push(ev("memory.high (throttling starts)", iec(h), &source));
    }
    if let Some(total) = sys.memory.as_ref().and_then(|m| m.total) {
        evidence.push(Evidence::bytes("MemTotal", total, MEMINFO));
    }
    let mut out = Vec::new();
    if let Some(n) = cg.oom_kills.filter(|n| *n > 0) {
        let mut e = evidence.clone();
        e.push(Evidence::count("oom_kill", n, &source));
        out.push(finding(
            ids::CGROUP_OOM_KILLS,
            Severity::Warn,
            format!(
                "{n} OOM kill{} inside this cgroup ({})",
                if n == 1 { "" } else { "s" },
                cg.path
            ),
            e,
            why,
            oom::fix(oom::Limit::Cgroup).into(),
        ));
    }
    match (cg.limit, cg.usage) {
        (Some(limit), Some(usage)) => {
            let pct = percent(usage, limit);
            let severity = if pct >= 95.0 {
                Severity::Error
            } else if pct >= 85.0 {
                Severity::Warn
            } else {
                Severity::Ok
            };
            if severity == Severity::Ok {
                out.push(finding(
                    ids::CGROUP_OK,
                    Severity::Ok,
                    format!(
                        "cgroup limit {}: {} used ({pct:.0}%)",
                        iec(limit),
                        iec(usage)
                    ),
                    evidence,
                    why,
                    String::new(),
                ));
            } else {
                out.push(finding(
                    ids::CGROUP_LIMIT_NEAR,
                    severity,
                    format!(
                        "cgroup {} uses {} of its {} limit ({pct:.0}%)",
                        cg.path,
                        iec(usage),
                        iec(limit)
                    ),
                    evidence,
                    "The next allocation over the limit is reclaimed from page cache first, then \
                     OOM-kills a process in the cgroup, usually the job.",
                    "Raise the limit where it is set (docker run --memory=…, Kubernetes \
                     resources.limits.memory, systemd MemoryMax=, Slurm --mem), or lower the job's peak."
                        .into(),
                ));
            }
        }
        (Some(limit), None) => out.push(finding(
            ids::CGROUP_OK,
            Severity::Ok,
            format!("cgroup limit {} (usage unreadable)", iec(limit)),
            evidence,
            why,
            String::new(),
        )),
        (None, _) => out.push(finding(
            ids::CGROUP_OK,
            Severity::Ok,
            format!("cgroup {} has no memory limit", cg.path),
            evidence,
            why,
            String::new(),
        )),
    }
    out
}

fn version_name(cg: &crate::model::process::CgroupMemory) -> &'static str {
    match cg.version {
        crate::model::process::CgroupVersion::V1 => "v1",
        crate::model::process::CgroupVersion::V2 => "v2",
    }
}
