//! The machine-wide figures a sampler takes at each tick when asked.

use crate::parse::kv;
use crate::probe::root::Root;
use crate::probe::system::parse_pressure;

use super::sample::SystemSample;

pub(crate) fn read(root: &Root) -> SystemSample {
    let (shm_used, shm_size) = shm(root);
    let swap_used = root.read("/proc/meminfo").ok().and_then(|m| {
        let m = kv::size_map(&m);
        Some(m.get("SwapTotal")?.saturating_sub(*m.get("SwapFree")?))
    });
    let swapped_in_out = root
        .read_string("/proc/vmstat")
        .ok()
        .and_then(|vm| Some((kv::counter(&vm, "pswpin")?, kv::counter(&vm, "pswpout")?)));
    let pressure = root
        .read_string("/proc/pressure/memory")
        .ok()
        .and_then(|p| parse_pressure(&p).ok());
    SystemSample {
        shm_used,
        shm_size,
        swap_used,
        swapped_in_out,
        psi_some_avg10: pressure.as_ref().and_then(|p| Some(p.some.as_ref()?.avg10)),
        psi_full_avg10: pressure.as_ref().and_then(|p| Some(p.full.as_ref()?.avg10)),
    }
}

/// Used and total bytes of /dev/shm.
fn shm(root: &Root) -> (Option<u64>, Option<u64>) {
    match rustix::fs::statvfs(root.path("/dev/shm")) {
        Ok(st) => {
            let frsize = st.f_frsize;
            (
                Some(st.f_blocks.saturating_sub(st.f_bfree) * frsize),
                Some(st.f_blocks * frsize),
            )
        }
        Err(_) => (None, None),
    }
}
