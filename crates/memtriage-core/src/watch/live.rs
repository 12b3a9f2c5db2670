//! What a live view of the machine shows at each sample (`memtriage top`): a header of
//! machine-wide figures and every process's row. [`Live`] consumes the sampler's
//! samples and builds a [`LiveFrame`]; a front end only draws frames.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use serde::Serialize;

use crate::model::gpu::GpuTick;
use crate::model::maps::{FileGroup, KindGroup};
use crate::model::system::OomKill;
use crate::parse::kmsg::oom_kills;
use crate::probe::kmsg::{read_kmsg, LogFollower, Start};
use crate::probe::root::Root;
use crate::probe::system::{
    read_meminfo, read_pressure, read_thp_setting, read_vmstat, THP_ENABLED,
};
use crate::sampler::Sample;

use super::killer_view::{KillerView, KillersNow};
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
    /// The OOM killers, the first to act first, and when at the present rate.
    pub killers: KillersNow,
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
    /// The regions of the process a viewer focused on (see `Live::focus`), by kind and
    /// by mapped file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus: Option<Focus>,
}

/// A focused process's memory by kind and by mapped file, read from `smaps` (a walk
/// of its page tables: only for the one process a viewer asked for, at most every
/// [`FOCUS_EVERY`] seconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Focus {
    pub pid: i32,
    /// Seconds since the view started, when read.
    pub at: f64,
    pub by_kind: Vec<KindGroup>,
    /// The largest mapped files, resident size first.
    pub by_file: Vec<FileGroup>,
    /// Why the regions could not be read, where they could not.
    pub error: Option<String>,
}

/// How often a focused process's regions are read again.
pub const FOCUS_EVERY: f64 = 5.0;
/// Mapped files a focus keeps.
const FOCUS_FILES: usize = 8;

pub const LIVE_SCHEMA: &str = "memtriage.top/v1";

/// The state a live view keeps between samples.
pub struct Live {
    root: Root,
    table: ProcessTable,
    last_vmstat: Option<(f64, u64, u64)>,
    kmsg: Option<LogFollower>,
    last_kill: Option<OomKill>,
    killers: KillerView,
    /// The pid a viewer focuses on, 0 for none; set from the viewer's thread.
    focus: Arc<AtomicI32>,
    last_focus: Option<Focus>,
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
            killers: KillerView::new(root),
            focus: Arc::new(AtomicI32::new(0)),
            last_focus: None,
        }
    }

    /// Where a viewer says which process to read regions of (0: none). Shared with
    /// the viewer's thread; the reading happens here, on the sampler's.
    pub fn focus(&self) -> Arc<AtomicI32> {
        Arc::clone(&self.focus)
    }

    fn read_focus(&mut self, t: f64) -> Option<Focus> {
        let pid = self.focus.load(Ordering::Relaxed);
        if pid <= 0 {
            self.last_focus = None;
            return None;
        }
        let fresh = self
            .last_focus
            .as_ref()
            .is_some_and(|f| f.pid == pid && t - f.at < FOCUS_EVERY);
        if !fresh {
            self.last_focus = Some(match crate::probe::maps::read(&self.root, pid) {
                Ok(report) => Focus {
                    pid,
                    at: t,
                    by_kind: report.by_kind,
                    by_file: report.by_file.into_iter().take(FOCUS_FILES).collect(),
                    error: None,
                },
                Err(e) => Focus {
                    pid,
                    at: t,
                    by_kind: Vec::new(),
                    by_file: Vec::new(),
                    error: Some(e.to_string()),
                },
            });
        }
        self.last_focus.clone()
    }

    pub fn frame(&mut self, sample: &Sample) -> LiveFrame {
        let processes = self.table.absorb(sample);
        let focus = self.read_focus(sample.t);
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
            focus,
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
            killers: self
                .killers
                .at(sample.t, meminfo.as_ref(), &sample.processes),
        }
    }
}
