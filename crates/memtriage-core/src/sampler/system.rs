//! The machine-wide figures a sampler takes at each tick when asked.

use crate::probe::root::Root;
use crate::probe::system::{read_meminfo, read_pressure, read_vmstat, shm_usage};

use super::sample::SystemSample;

pub(crate) fn read(root: &Root) -> SystemSample {
    let shm = shm_usage(root).ok();
    let mem = read_meminfo(root).ok();
    let swap_used = mem.as_ref().and_then(|m| m.swap_used());
    let swapped_in_out = read_vmstat(root)
        .ok()
        .and_then(|vm| Some((vm.counter("pswpin")?, vm.counter("pswpout")?)));
    let pressure = read_pressure(root).ok().flatten();
    SystemSample {
        shm_used: shm.as_ref().and_then(|s| s.used),
        shm_size: shm.as_ref().and_then(|s| s.total),
        swap_used,
        swapped_in_out,
        psi_some_avg10: pressure.as_ref().and_then(|p| Some(p.some.as_ref()?.avg10)),
        psi_full_avg10: pressure.as_ref().and_then(|p| Some(p.full.as_ref()?.avg10)),
        available: mem.as_ref().and_then(|m| m.available),
        node_available: mem.as_ref().and_then(|m| Some(m.free? + m.inactive_file?)),
    }
}
