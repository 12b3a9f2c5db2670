//! NUMA: zone reclaim and automatic balancing on machines with several nodes.

use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::system::SystemSnapshot;

use super::{ev, finding, opt_num, sysctl_fix, vm_path, Profile};

pub(super) fn numa(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let evidence = vec![
        Evidence::count_or_unreadable(
            "NUMA nodes",
            sys.numa_nodes.map(u64::from),
            "/sys/devices/system/node/",
        ),
        ev(
            "vm.zone_reclaim_mode",
            opt_num(sys.vm.zone_reclaim_mode),
            &vm_path("zone_reclaim_mode"),
        ),
        ev(
            "kernel.numa_balancing",
            opt_num(sys.numa_balancing),
            "/proc/sys/kernel/numa_balancing",
        ),
    ];
    let why = "On a machine with several NUMA nodes, reclaiming or migrating pages to keep memory \
               local costs page faults and stalls that a GPU-bound job does not need.";
    let nodes = sys.numa_nodes.unwrap_or(0);
    let mut out = Vec::new();
    if nodes > 1 {
        if let Some(mode) = sys.vm.zone_reclaim_mode.filter(|m| *m != 0) {
            out.push(finding(
                ids::NUMA_ZONE_RECLAIM,
                Severity::Warn,
                format!("vm.zone_reclaim_mode is {mode} on {nodes} NUMA nodes"),
                evidence.clone(),
                "zone_reclaim_mode reclaims page cache (model files, dataset) on the local node \
                 rather than allocate on another node with free memory: reads go back to disk.",
                sysctl_fix(&[("vm.zone_reclaim_mode", "0".into())]),
            ));
        }
        if sys.numa_balancing == Some(1) && profile != Profile::Shared {
            out.push(finding(
                ids::NUMA_BALANCING,
                Severity::Info,
                format!("automatic NUMA balancing is on ({nodes} nodes)"),
                evidence.clone(),
                "NUMA balancing unmaps pages periodically to see who touches them; jobs already \
                 pinned to a node (numactl, torchrun with CPU affinity) pay the faults for nothing.",
                sysctl_fix(&[("kernel.numa_balancing", "0".into())]),
            ));
        }
    }
    if out.is_empty() {
        let title = match sys.numa_nodes {
            Some(0 | 1) => {
                "single NUMA node: zone reclaim and NUMA balancing do not apply".to_string()
            }
            Some(n) => format!("{n} NUMA nodes, zone reclaim off"),
            None => "NUMA layout unreadable; zone reclaim and balancing not judged".to_string(),
        };
        out.push(finding(
            ids::NUMA_OK,
            if sys.numa_nodes.is_none() {
                Severity::Info
            } else {
                Severity::Ok
            },
            title,
            evidence,
            why,
            String::new(),
        ));
    }
    out
}
