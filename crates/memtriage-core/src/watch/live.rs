//! What a live view of the machine shows at each sample (`memtriage top`): a header of
//! machine-wide figures and every process's row. [`Live`] consumes the sampler's
//! samples and builds a [`LiveFrame`]; a front end only draws frames.

use serde::Serialize;

use crate::model::gpu::GpuTick;
use crate::model::system::OomKill;
use crate::parse::kmsg::oom_kills;
use crate::probe::kmsg::{read_kmsg, LogFollower, Start};
use crate::probe::root::Root;
use crate::probe::system::{
    read_meminfo, read_pressure, read_thp_setting, read_vmstat, THP_ENABLED,
};
use crate::sampler::Sample;

use super::processes::{ProcessRow, ProcessTable};

/// Machine-wide figures at one sample; each `None` where unreadable.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MachineHeader {
    pub mem_total: Option<u64>,
    pub mem_available: Option<u64>,
    pub swap_total: Option<u64>,
    pub swap_used: Option<u64>,
    /// PSI memory avg10, percent.
    pub psi_some: Option<f64>,
    pub psi_full: Option<f64>,
    /// The machine's page faults and major faults per second since the last sample
    /// (`/proc/vmstat` pgfault, pgmajfault).
    pub faults_per_second: Option<f64>,
    pub major_faults_per_second: Option<f64>,
    pub shm_used: Option<u64>,
    pub shm_size: Option<u64>,
    /// The transparent huge page mode in force.
    pub thp: Option<String>,
    /// `oom_kill` of `/proc/vmstat`: kills since boot.
    pub oom_kills_since_boot: Option<u64>,
    /// The last OOM kill the kernel log shows, where it can be read.
    pub last_oom_kill: Option<OomKill>,
    /// Every GPU's memory (NVML), where there is NVML.
    pub gpus: Option<Vec<GpuTick>>,
}

/// One frame of a live view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveFrame {
    pub schema: &'static str,
    /// Seconds since the view started.
    pub t: f64,
    pub header: MachineHeader,
    pub processes: Vec<ProcessRow>,
    /// `smaps_rollup` reads this sample made, and what they cost in seconds.
    pub pss_reads: usize,
    pub pss_read_seconds: f64,
}

pub const LIVE_SCHEMA: &str = "memtriage.top/v1";

/// The state a live view keeps between samples.
pub struct Live {
    root: Root,
    table: ProcessTable,
    last_vmstat: Option<(f64, u64, u64)>,
    kmsg: Option<LogFollower>,
    last_kill: Option<OomKill>,
}

impl Live {
    /// `window_seconds`: how far back growth and sparklines look.
    pub fn new(root: &Root, window_seconds: f64) -> Self {
        // The last kill so far, then only new ones.
        let last_kill = read_kmsg(root)
            .ok()
            .and_then(|lines| oom_kills(lines.iter().map(String::as_str)).pop());
        Live {
            root: root.clone(),
            table: ProcessTable::new(root, window_seconds),
            last_vmstat: None,
            kmsg: LogFollower::kmsg(root, Start::Now).ok(),
            last_kill,
        }
    }

    pub fn frame(&mut self, sample: &Sample) -> LiveFrame {
        let processes = self.table.absorb(sample);
        LiveFrame {
            schema: LIVE_SCHEMA,
            t: sample.t,
            header: self.header(sample),
            processes,
            pss_reads: sample.pss_attempts.len(),
            pss_read_seconds: sample
                .pss_attempts
                .iter()
                .map(|a| a.cost.as_secs_f64())
                .sum(),
        }
    }

    fn header(&mut self, sample: &Sample) -> MachineHeader {
        let meminfo = read_meminfo(&self.root).ok();
        let pressure = read_pressure(&self.root).ok().flatten();
        let vmstat = read_vmstat(&self.root).ok();
        let faults = vmstat
            .as_ref()
            .and_then(|v| Some((v.counter("pgfault")?, v.counter("pgmajfault")?)));
        let rates = match (faults, self.last_vmstat) {
            (Some((minor, major)), Some((t0, m0, j0))) if sample.t > t0 => Some((
                minor.saturating_sub(m0) as f64 / (sample.t - t0),
                major.saturating_sub(j0) as f64 / (sample.t - t0),
            )),
            _ => None,
        };
        if let Some((minor, major)) = faults {
            self.last_vmstat = Some((sample.t, minor, major));
        }
        if let Some(follower) = &mut self.kmsg {
            if let Ok(lines) = follower.read_new() {
                if let Some(kill) = oom_kills(lines.iter().map(String::as_str)).pop() {
                    self.last_kill = Some(kill);
                }
            }
        }
        MachineHeader {
            mem_total: meminfo.as_ref().and_then(|m| m.total),
            mem_available: meminfo.as_ref().and_then(|m| m.available),
            swap_total: meminfo.as_ref().and_then(|m| m.swap_total),
            swap_used: meminfo.as_ref().and_then(|m| m.swap_used()),
            psi_some: pressure.as_ref().and_then(|p| Some(p.some.as_ref()?.avg10)),
            psi_full: pressure.as_ref().and_then(|p| Some(p.full.as_ref()?.avg10)),
            faults_per_second: rates.map(|r| r.0),
            major_faults_per_second: rates.map(|r| r.1),
            shm_used: sample.system.as_ref().and_then(|s| s.shm_used),
            shm_size: sample.system.as_ref().and_then(|s| s.shm_size),
            thp: read_thp_setting(&self.root, THP_ENABLED).ok().flatten(),
            oom_kills_since_boot: vmstat.as_ref().and_then(|v| v.counter("oom_kill")),
            last_oom_kill: self.last_kill.clone(),
            gpus: sample.gpu.as_ref().map(|g| g.devices.clone()),
        }
    }
}
