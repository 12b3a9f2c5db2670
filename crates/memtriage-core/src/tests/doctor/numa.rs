//! NUMA: zone reclaim and automatic balancing on a machine with several nodes.

use crate::diagnose::doctor::Profile;
use crate::model::finding::Severity;

use super::{absent, get, severity, Fake};

#[test]
fn zone_reclaim_and_numa_balancing_on_several_nodes() {
    let fake = Fake::new();
    fake.write("/proc/sys/vm/zone_reclaim_mode", "1\n");
    fake.write("/proc/sys/kernel/numa_balancing", "1\n");
    // One node: neither applies.
    let f = fake.audit(Profile::Training);
    assert_eq!(severity(&f, "numa.ok"), Severity::Ok);

    fake.write(
        "/sys/devices/system/node/node1/meminfo",
        "Node 1 MemTotal: 1 kB\n",
    );
    let f = fake.audit(Profile::Training);
    let z = get(&f, "numa.zone-reclaim");
    assert_eq!(z.severity, Severity::Warn);
    assert!(z.fix.starts_with("sysctl -w vm.zone_reclaim_mode=0"));
    assert_eq!(severity(&f, "numa.balancing"), Severity::Info);
    let f = fake.audit(Profile::Shared);
    absent(&f, "numa.balancing");
    assert_eq!(severity(&f, "numa.zone-reclaim"), Severity::Warn);
}
