//! NVIDIA GPUs through NVML, loaded at run time (`libnvidia-ml.so.1`, or the file
//! `MEMTRIAGE_NVML_LIB` names), so one binary runs with or without a GPU and driver.
//! NVML is started once per process, and only tried once: a machine without it pays
//! one failed `dlopen`.
//!
//! NVML's pids are the host's. memtriage joins them to `/proc` only when it runs in
//! the host's pid namespace; in a container's, it says the join is impossible rather
//! than attribute memory to whichever local process happens to have the same number.

use std::sync::OnceLock;

use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError, RetirementCause};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::{Device, Nvml};

use crate::model::gpu::{
    EccCounts, GpuDevice, GpuMemory, GpuProcess, GpuProcessKind, GpuReport, GpuTick,
    GpuUtilization, MigMode, PidJoin, RemappedRows, RetiredPages, GPU_SCHEMA,
};
use crate::model::process::Unreadable;
use crate::probe::procdir;
use crate::probe::root::Root;

/// The environment variable naming the NVML library to load instead of the driver's.
pub const NVML_LIB_ENV: &str = "MEMTRIAGE_NVML_LIB";
const DEFAULT_LIB: &str = "libnvidia-ml.so.1";

/// The inode of the kernel's first pid namespace (`PROC_PID_INIT_INO`).
const INIT_PID_NAMESPACE: &str = "pid:[4026531836]";

/// A started NVML, shared by every reader of this process.
pub struct Gpus {
    nvml: Nvml,
    count: u32,
}

static GPUS: OnceLock<Result<Gpus, String>> = OnceLock::new();

/// The machine's GPUs, or why there are none to read (in words for people).
pub fn gpus() -> Result<&'static Gpus, &'static str> {
    GPUS.get_or_init(start_on_a_large_stack)
        .as_ref()
        .map_err(String::as_str)
}

/// NVML's loader fills a table of every function of the library on the stack (over
/// 256 KiB in a debug build): started from a sampler's small stack it overflowed.
/// It runs on a thread of its own, whoever asks first.
fn start_on_a_large_stack() -> Result<Gpus, String> {
    // Where the driver is not loaded there is nothing to open: no dlopen, no thread.
    let configured = std::env::var_os(NVML_LIB_ENV).is_some_and(|v| !v.is_empty());
    let driver = ["/proc/driver/nvidia", "/dev/nvidiactl"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    if !configured && !driver {
        return Err(
            "no NVIDIA GPU found (no NVIDIA driver is loaded: /proc/driver/nvidia \
                    and /dev/nvidiactl are missing)"
                .into(),
        );
    }
    std::thread::Builder::new()
        .name("memtriage-nvml-init".into())
        .stack_size(16 << 20)
        .spawn(start)
        .map_err(|e| format!("NVML was not tried: no thread to start it ({e})"))?
        .join()
        .unwrap_or_else(|_| Err("NVML failed to start (its loader panicked)".into()))
}

/// The whole report, or an absent one with the reason.
pub fn report(root: &Root) -> GpuReport {
    match gpus() {
        Ok(g) => g.report(root),
        Err(reason) => GpuReport::absent(reason),
    }
}

fn start() -> Result<Gpus, String> {
    let configured = std::env::var_os(NVML_LIB_ENV).filter(|v| !v.is_empty());
    let lib = configured.clone().unwrap_or_else(|| DEFAULT_LIB.into());
    let nvml = Nvml::builder()
        .lib_path(&lib)
        .init()
        .map_err(|e| start_failure(&e, configured.as_ref().map(|p| p.to_string_lossy())))?;
    let count = nvml.device_count().map_err(|e| match e {
        NvmlError::NoPermission => no_permission(),
        other => format!("NVML started but could not count the GPUs: {other}"),
    })?;
    if count == 0 {
        return Err("no NVIDIA GPU found (the driver is loaded but sees no device)".into());
    }
    Ok(Gpus { nvml, count })
}

fn no_permission() -> String {
    "NVML refused: insufficient permissions to open the GPU devices (/dev/nvidia*); \
     run as root or add the user to the group that owns them"
        .into()
}

/// Why NVML could not start, with what to do about it.
fn start_failure(error: &NvmlError, configured: Option<std::borrow::Cow<'_, str>>) -> String {
    match (error, configured) {
        (NvmlError::LibloadingError(e), Some(path)) => {
            format!("{NVML_LIB_ENV}={path}: NVML could not be loaded: {e}")
        }
        (NvmlError::LibloadingError(_), None) => format!(
            "no NVIDIA GPU found ({DEFAULT_LIB}, the NVIDIA driver's NVML library, is not installed)"
        ),
        (NvmlError::DriverNotLoaded, _) => {
            "no NVIDIA GPU found (the NVIDIA kernel driver is not loaded: lsmod | grep nvidia)".into()
        }
        (NvmlError::NoPermission, _) => no_permission(),
        (NvmlError::LibRmVersionMismatch, _) => {
            "NVML and the loaded NVIDIA kernel driver have different versions (the driver was \
             upgraded without a reboot): reboot, or unload and reload the nvidia modules"
                .into()
        }
        (NvmlError::FailedToLoadSymbol(what), _) => format!(
            "the NVIDIA driver is too old for memtriage (its NVML lacks {what}); \
             drivers from 450 on are supported"
        ),
        (other, _) => format!("NVML failed to start: {other}"),
    }
}

/// Whether NVML's pids can be read as this machine's.
pub fn pid_join(root: &Root) -> PidJoin {
    let ns = std::fs::read_link(root.path("/proc/self/ns/pid"));
    match ns {
        Ok(target) if target.as_os_str() == INIT_PID_NAMESPACE => PidJoin::Host,
        // Older kernels and some sandboxes hide the link: the host's namespace is
        // the one where kthreadd is pid 2.
        Err(_) if kthreadd_is_pid_2(root) => PidJoin::Host,
        _ => PidJoin::Impossible {
            reason: "memtriage runs in a container's pid namespace: NVML reports the host's \
                     pids, which cannot be matched to the processes seen here; run it on the \
                     host (or with the host's pid namespace: docker --pid=host, hostPID: true) \
                     to see which process holds GPU memory"
                .into(),
        },
    }
}

fn kthreadd_is_pid_2(root: &Root) -> bool {
    procdir::comm(root, 2).is_some_and(|c| c == "kthreadd")
}

/// The process's name and one-letter state, from its `stat`; `None` when no such
/// process exists here.
fn name_and_state(root: &Root, pid: i32) -> Option<(String, char)> {
    let stat = procdir::stat(root, pid)?;
    Some((stat.comm, stat.state))
}

/// The pid a containerised process has inside its own namespace (the last of
/// `NSpid` in its status), where that differs from ours.
fn innermost_pid(root: &Root, pid: i32) -> Option<i32> {
    let inner = procdir::status(root, pid)?.innermost_pid?;
    (inner != pid).then_some(inner)
}

/// Records a failed read as unreadable, except "not supported": that board has no such
/// feature, which `None` already says.
fn read<T>(
    unreadable: &mut Vec<Unreadable>,
    field: &str,
    result: Result<T, NvmlError>,
) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(NvmlError::NotSupported) => None,
        Err(e) => {
            unreadable.push(Unreadable {
                field: field.into(),
                reason: describe(&e),
            });
            None
        }
    }
}

fn describe(error: &NvmlError) -> String {
    match error {
        NvmlError::NoPermission => "insufficient permissions (run as root)".into(),
        NvmlError::GpuLost => "the GPU has fallen off the bus (it no longer answers)".into(),
        NvmlError::FailedToLoadSymbol(_) => "the driver is too old to report it".into(),
        other => other.to_string(),
    }
}

impl Gpus {
    fn device(&self, index: u32) -> Result<Device<'_>, NvmlError> {
        self.nvml.device_by_index(index)
    }

    /// Everything NVML says about every device and the processes on them.
    pub fn report(&self, root: &Root) -> GpuReport {
        let join = pid_join(root);
        let mut unreadable = Vec::new();
        let driver_version = read(
            &mut unreadable,
            "driver_version",
            self.nvml.sys_driver_version(),
        );
        let cuda_version = read(
            &mut unreadable,
            "cuda_version",
            self.nvml.sys_cuda_driver_version(),
        )
        .map(|v| {
            format!(
                "{}.{}",
                nvml_wrapper::cuda_driver_version_major(v),
                nvml_wrapper::cuda_driver_version_minor(v)
            )
        });
        let devices = (0..self.count)
            .map(|index| match self.device(index) {
                Ok(d) => read_device(root, &join, index, &d),
                Err(e) => GpuDevice {
                    index,
                    name: None,
                    uuid: None,
                    pci_bus_id: None,
                    memory: None,
                    utilization: None,
                    ecc: None,
                    retired_pages: None,
                    remapped_rows: None,
                    persistence_mode: None,
                    mig: None,
                    processes: Vec::new(),
                    unreadable: vec![Unreadable {
                        field: "device".into(),
                        reason: describe(&e),
                    }],
                },
            })
            .collect();
        GpuReport {
            schema: GPU_SCHEMA.into(),
            available: true,
            reason: None,
            driver_version,
            cuda_version,
            devices,
            pids: Some(join),
            unreadable,
        }
    }

    /// The cheap figures a sampler reads each tick: memory used and who holds it.
    pub fn tick(&self, root: &Root, join: &PidJoin) -> Vec<GpuTick> {
        (0..self.count)
            .map(|index| {
                let Ok(d) = self.device(index) else {
                    return GpuTick {
                        index,
                        used: None,
                        total: None,
                        processes: Vec::new(),
                    };
                };
                let memory = d.memory_info().ok();
                GpuTick {
                    index,
                    used: memory.as_ref().map(|m| m.used),
                    total: memory.as_ref().map(|m| m.total),
                    processes: processes(root, join, &d, &mut Vec::new(), Lookup::Tick),
                }
            })
            .collect()
    }

    /// Xid errors and ECC events as they happen, where the driver supports them.
    pub fn events(&self) -> Result<nvml_wrapper::EventSet<'_>, String> {
        use nvml_wrapper::bitmasks::event::EventTypes;
        let wanted = EventTypes::CRITICAL_XID_ERROR
            | EventTypes::DOUBLE_BIT_ECC_ERROR
            | EventTypes::SINGLE_BIT_ECC_ERROR;
        let mut set = self
            .nvml
            .create_event_set()
            .map_err(|e| format!("NVML events are not available: {}", describe(&e)))?;
        let mut registered = 0;
        for index in 0..self.count {
            let Ok(d) = self.device(index) else { continue };
            let Ok(supported) = d.supported_event_types() else {
                continue;
            };
            let types = supported & wanted;
            if types.is_empty() {
                continue;
            }
            set = d
                .register_events(types, set)
                .map_err(|e| format!("NVML events could not be registered: {}", e.error))?;
            registered += 1;
        }
        if registered == 0 {
            return Err("no GPU here reports Xid or ECC events through NVML".into());
        }
        Ok(set)
    }
}

fn read_device(root: &Root, join: &PidJoin, index: u32, d: &Device<'_>) -> GpuDevice {
    let mut un = Vec::new();
    let name = read(&mut un, "name", d.name());
    let uuid = read(&mut un, "uuid", d.uuid());
    let pci_bus_id = read(&mut un, "pci_bus_id", d.pci_info()).map(|p| p.bus_id);
    let memory = read(&mut un, "memory", d.memory_info()).map(|m| GpuMemory {
        total: m.total,
        used: m.used,
        free: m.free,
        reserved: Some(m.reserved),
    });
    let utilization = read(&mut un, "utilization", d.utilization_rates()).map(|u| GpuUtilization {
        gpu_percent: u.gpu,
        memory_percent: u.memory,
    });
    let ecc = read_ecc(d, &mut un);
    let retired_pages = read_retired(d, &mut un);
    let remapped_rows = read_remapped(d, &mut un);
    let persistence_mode = read(&mut un, "persistence_mode", d.is_in_persistent_mode());
    let mig = read(&mut un, "mig", d.mig_mode()).map(|m| MigMode {
        current: m.current == 1,
        pending: m.pending == 1,
    });
    let processes = processes(root, join, d, &mut un, Lookup::Report);
    GpuDevice {
        index,
        name,
        uuid,
        pci_bus_id,
        memory,
        utilization,
        ecc,
        retired_pages,
        remapped_rows,
        persistence_mode,
        mig,
        processes,
        unreadable: un,
    }
}

fn read_ecc(d: &Device<'_>, un: &mut Vec<Unreadable>) -> Option<EccCounts> {
    let mut count = |error: MemoryError, counter: EccCounter, field: &str| {
        read(un, field, d.total_ecc_errors(error, counter))
    };
    let ecc = EccCounts {
        volatile_corrected: count(
            MemoryError::Corrected,
            EccCounter::Volatile,
            "ecc.volatile_corrected",
        ),
        volatile_uncorrected: count(
            MemoryError::Uncorrected,
            EccCounter::Volatile,
            "ecc.volatile_uncorrected",
        ),
        aggregate_corrected: count(
            MemoryError::Corrected,
            EccCounter::Aggregate,
            "ecc.aggregate_corrected",
        ),
        aggregate_uncorrected: count(
            MemoryError::Uncorrected,
            EccCounter::Aggregate,
            "ecc.aggregate_uncorrected",
        ),
    };
    (ecc != EccCounts::default()).then_some(ecc)
}

fn read_retired(d: &Device<'_>, un: &mut Vec<Unreadable>) -> Option<RetiredPages> {
    let single = read(
        un,
        "retired_pages",
        d.retired_pages(RetirementCause::MultipleSingleBitEccErrors),
    )?;
    let double = read(
        un,
        "retired_pages",
        d.retired_pages(RetirementCause::DoubleBitEccError),
    )?;
    Some(RetiredPages {
        single_bit: single.len() as u64,
        double_bit: double.len() as u64,
        pending: read(un, "retired_pages.pending", d.are_pages_pending_retired()),
    })
}

/// nvml-wrapper has no call for remapped rows; the symbol is read from the library.
fn read_remapped(d: &Device<'_>, un: &mut Vec<Unreadable>) -> Option<RemappedRows> {
    let Ok(sym) = d.nvml().lib().nvmlDeviceGetRemappedRows.as_ref() else {
        return None;
    };
    let (mut corr, mut unc, mut pending, mut failure) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: the handle belongs to the live NVML `d` borrows; the four pointers are
    // to locals that outlive the call, as nvmlDeviceGetRemappedRows requires.
    let code = unsafe { sym(d.handle(), &mut corr, &mut unc, &mut pending, &mut failure) };
    let result = nvml_wrapper::error::nvml_try(code);
    read(un, "remapped_rows", result)?;
    Some(RemappedRows {
        correctable: u64::from(corr),
        uncorrectable: u64::from(unc),
        pending: pending != 0,
        failure: failure != 0,
    })
}

/// How much of each GPU process is read from /proc: a full report adds its pid inside
/// its container (`status`), which a sampler's tick does not need.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lookup {
    Report,
    Tick,
}

/// Compute and graphics processes; drivers older than NVML's v3 calls use v2.
fn processes(
    root: &Root,
    join: &PidJoin,
    d: &Device<'_>,
    un: &mut Vec<Unreadable>,
    lookup: Lookup,
) -> Vec<GpuProcess> {
    let mut out: Vec<GpuProcess> = Vec::new();
    let compute = match d.running_compute_processes() {
        Err(NvmlError::FailedToLoadSymbol(_)) => d.running_compute_processes_v2(),
        other => other,
    };
    let graphics = match d.running_graphics_processes() {
        Err(NvmlError::FailedToLoadSymbol(_)) => d.running_graphics_processes_v2(),
        other => other,
    };
    for (kind, field, list) in [
        (GpuProcessKind::Compute, "compute_processes", compute),
        (GpuProcessKind::Graphics, "graphics_processes", graphics),
    ] {
        for p in read(un, field, list).unwrap_or_default() {
            // A process with both kinds of context (Vulkan or OpenGL beside CUDA) is
            // in both lists with the same memory: counted once.
            match out.iter_mut().find(|o| o.host_pid == p.pid) {
                Some(seen) => seen.used = seen.used.max(used(&p)),
                None => out.push(gpu_process(root, join, kind, &p, lookup)),
            }
        }
    }
    out
}

/// `None` where NVML cannot say (MIG without privileges, WDDM).
fn used(p: &ProcessInfo) -> Option<u64> {
    match p.used_gpu_memory {
        UsedGpuMemory::Used(bytes) => Some(bytes),
        UsedGpuMemory::Unavailable => None,
    }
}

fn gpu_process(
    root: &Root,
    join: &PidJoin,
    kind: GpuProcessKind,
    p: &ProcessInfo,
    lookup: Lookup,
) -> GpuProcess {
    let pid = join.joinable().then(|| i32::try_from(p.pid).ok()).flatten();
    let seen = pid.and_then(|pid| name_and_state(root, pid));
    GpuProcess {
        host_pid: p.pid,
        pid,
        container_pid: pid
            .filter(|_| lookup == Lookup::Report)
            .and_then(|pid| innermost_pid(root, pid)),
        comm: seen.as_ref().map(|(c, _)| c.clone()),
        state: seen.map(|(_, s)| s),
        kind,
        used: used(p),
        gpu_instance: p.gpu_instance_id,
        compute_instance: p.compute_instance_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sampler's thread has 256 KiB; NVML's loader alone took more (the run
    /// aborted with a stack overflow when the sampler was first to ask). NVML is
    /// really loaded, the workspace's stand-in for the driver's library with one GPU,
    /// and in a child process running this test alone: a thread that overflows its
    /// stack takes its whole process down.
    #[test]
    fn regression_nvml_starts_from_a_thread_with_a_small_stack() {
        const CHILD: &str = "MEMTRIAGE_TEST_SMALL_STACK_CHILD";
        if std::env::var_os(CHILD).is_some() {
            let started = std::thread::Builder::new()
                .stack_size(128 << 10)
                .spawn(|| start_on_a_large_stack().map(|g| g.count))
                .unwrap()
                .join()
                .expect("the small thread survived");
            assert_eq!(started, Ok(1), "NVML started from the small thread");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("nvml.json");
        let gpu = r#"{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1",
            "pci_bus_id": "00000000:3B:00.0", "total": 85899345920, "used": 0}"#;
        std::fs::write(&config, format!(r#"{{"devices": [{gpu}]}}"#)).unwrap();
        let name = module_path!().split_once("::").unwrap().1.to_string()
            + "::regression_nvml_starts_from_a_thread_with_a_small_stack";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name.as_str(), "--exact", "--test-threads=1"])
            .env(CHILD, "1")
            .env(NVML_LIB_ENV, crate::tests::support::fake_nvml())
            .env("FAKE_NVML_CONFIG", &config)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {said}", out.status);
        assert!(said.contains("1 passed"), "the child ran the test: {said}");
    }
}
