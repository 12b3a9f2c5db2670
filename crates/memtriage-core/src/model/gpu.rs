//! The machine's NVIDIA GPUs as NVML reports them, or why it could not. Sizes are
//! bytes; `None` is "unreadable" (the reason is in `unreadable`), never zero.

use serde::{Deserialize, Serialize};

use super::process::Unreadable;

pub const GPU_SCHEMA: &str = "memtriage.gpu/v1";

/// What NVML said: the devices and the processes that hold their memory. When there is
/// no GPU, no driver, or NVML refused, `available` is false and `reason` says why;
/// every other field is then empty, which means unknown, not "no GPU memory used".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuReport {
    pub schema: String,
    pub available: bool,
    /// Why NVML could not be used (`available` false), in words for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The kernel driver's version, e.g. `550.54.15`.
    #[serde(default)]
    pub driver_version: Option<String>,
    /// The newest CUDA the driver supports, e.g. `12.4`.
    #[serde(default)]
    pub cuda_version: Option<String>,
    #[serde(default)]
    pub devices: Vec<GpuDevice>,
    /// Whether NVML's pids (the host's) could be matched to this machine's processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<PidJoin>,
    #[serde(default)]
    pub unreadable: Vec<Unreadable>,
}

impl GpuReport {
    /// No usable NVML, for this reason.
    pub fn absent(reason: impl Into<String>) -> Self {
        GpuReport {
            schema: GPU_SCHEMA.into(),
            available: false,
            reason: Some(reason.into()),
            driver_version: None,
            cuda_version: None,
            devices: Vec::new(),
            pids: None,
            unreadable: Vec::new(),
        }
    }

    /// Every process holding GPU memory, with the device it is on.
    pub fn processes(&self) -> impl Iterator<Item = (&GpuDevice, &GpuProcess)> {
        self.devices
            .iter()
            .flat_map(|d| d.processes.iter().map(move |p| (d, p)))
    }

    /// GPU memory `pid` (a pid of this machine's namespace) holds on each device.
    /// `None` when NVML is absent or its pids could not be joined: unknown, not 0.
    pub fn memory_of(&self, pid: i32) -> Option<ProcessGpuMemory> {
        if !self.available || !self.pids.as_ref().is_some_and(PidJoin::joinable) {
            return None;
        }
        let devices: Vec<DeviceUse> = self
            .processes()
            .filter(|(_, p)| p.pid == Some(pid))
            .map(|(d, p)| DeviceUse {
                index: d.index,
                uuid: d.uuid.clone(),
                used: p.used,
                kind: p.kind,
            })
            .collect();
        let total = devices.iter().map(|d| d.used).sum::<Option<u64>>();
        Some(ProcessGpuMemory { total, devices })
    }
}

/// One GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuDevice {
    /// NVML's index (the order `nvidia-smi` lists; `CUDA_VISIBLE_DEVICES` may differ).
    pub index: u32,
    pub name: Option<String>,
    /// `GPU-…`, stable across reboots; what `CUDA_VISIBLE_DEVICES` and Xid logs name.
    pub uuid: Option<String>,
    /// `00000000:3B:00.0`: the address kernel logs (Xid) name the GPU by.
    pub pci_bus_id: Option<String>,
    pub memory: Option<GpuMemory>,
    pub utilization: Option<GpuUtilization>,
    /// `None` where ECC is off or not supported by the board.
    pub ecc: Option<EccCounts>,
    /// Pages retired after ECC errors (before Ampere; Ampere and later remap rows).
    pub retired_pages: Option<RetiredPages>,
    /// Rows remapped after ECC errors (Ampere and later).
    pub remapped_rows: Option<RemappedRows>,
    /// Whether the driver stays loaded with no client (startup and first-call latency).
    pub persistence_mode: Option<bool>,
    pub mig: Option<MigMode>,
    /// Processes holding memory on this device, compute and graphics.
    pub processes: Vec<GpuProcess>,
    pub unreadable: Vec<Unreadable>,
}

impl GpuDevice {
    /// `GPU 0 (NVIDIA H100 80GB HBM3)`.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("GPU {} ({name})", self.index),
            None => format!("GPU {}", self.index),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuMemory {
    pub total: u64,
    pub used: u64,
    pub free: u64,
    /// Held by the driver and firmware, out of reach of any process (NVML's memory v2).
    #[serde(default)]
    pub reserved: Option<u64>,
}

/// Percent of the last sample period (1/6 s to 1 s by product) the GPU was busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuUtilization {
    pub gpu_percent: u32,
    pub memory_percent: u32,
}

/// Memory error counts: volatile since the driver loaded, aggregate over the board's
/// life. Each `None` where the board does not count it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EccCounts {
    pub volatile_corrected: Option<u64>,
    pub volatile_uncorrected: Option<u64>,
    pub aggregate_corrected: Option<u64>,
    pub aggregate_uncorrected: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetiredPages {
    /// Retired after multiple single-bit errors.
    pub single_bit: u64,
    /// Retired after a double-bit (uncorrectable) error.
    pub double_bit: u64,
    /// A retirement that takes effect at the next reset or reboot.
    pub pending: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemappedRows {
    pub correctable: u64,
    pub uncorrectable: u64,
    /// A remap waits for a GPU reset to take effect.
    pub pending: bool,
    /// A remap failed: the GPU needs service.
    pub failure: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigMode {
    pub current: bool,
    /// What the next reset will apply.
    pub pending: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuProcessKind {
    Compute,
    Graphics,
}

/// A process holding memory on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    /// The pid NVML reports: the host's pid namespace.
    pub host_pid: u32,
    /// The same process in this machine's namespace; `None` when it cannot be told
    /// (see [`GpuReport::pids`]) or no process of this namespace has it.
    pub pid: Option<i32>,
    /// Its pid inside its own container (`NSpid`), where that differs from `pid`:
    /// what the job's own logs call it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_pid: Option<i32>,
    /// Its name here, when `pid` is known and the process exists.
    #[serde(default)]
    pub comm: Option<String>,
    /// Its state letter (`R`, `S`, `Z`, `T`…) when it exists; with `pid` known and
    /// this `None`, the memory is held for a process that no longer exists.
    #[serde(default)]
    pub state: Option<char>,
    pub kind: GpuProcessKind,
    /// `None` when NVML cannot say (MIG without privileges, Windows' WDDM).
    pub used: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_instance: Option<u32>,
}

/// How NVML's pids relate to this machine's `/proc`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "join", rename_all = "snake_case")]
pub enum PidJoin {
    /// memtriage runs in the host's pid namespace: NVML's pids are its pids.
    Host,
    /// In a container's pid namespace: NVML's host pids cannot be matched to the
    /// processes seen here, so no memory is attributed to them.
    Impossible { reason: String },
}

impl PidJoin {
    pub fn joinable(&self) -> bool {
        matches!(self, PidJoin::Host)
    }
}

/// One process's GPU memory: its total and each device's share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessGpuMemory {
    /// `Some(0)` for a process that holds none; `None` when a device could not say.
    pub total: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceUse>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceUse {
    pub index: u32,
    pub uuid: Option<String>,
    pub used: Option<u64>,
    pub kind: GpuProcessKind,
}

/// One device's reading at a sampler tick: cheap figures only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuTick {
    pub index: u32,
    pub used: Option<u64>,
    pub total: Option<u64>,
    pub processes: Vec<GpuProcess>,
}

/// An Xid the NVIDIA driver wrote to the kernel log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelXid {
    pub xid: u32,
    /// The GPU's PCI address as the driver printed it, e.g. `0000:3b:00`.
    pub pci: String,
    /// The process the driver blamed, on drivers that say.
    pub pid: Option<i32>,
    pub name: Option<String>,
    /// The rest of the driver's message.
    pub detail: String,
    /// Seconds since boot, when the line carried it.
    pub timestamp: Option<f64>,
    pub wall_time: Option<String>,
}
