//! A stand-in for `libnvidia-ml.so.1` that answers the NVML calls memtriage makes
//! from a JSON file (`FAKE_NVML_CONFIG`), so the GPU paths (loading the library at run
//! time, joining NVML's pids to `/proc`, Xid events) run for real on machines with no
//! GPU. memtriage loads it through `MEMTRIAGE_NVML_LIB`. It is a test double of the
//! driver's library, not of memtriage: everything above the C ABI is the real code.
//!
//! A process entry names a pid, or a `comm` that every live process of that name
//! matches (a test's job is started by `memtriage run`, so its pid is not known ahead).
#![allow(clippy::missing_safety_doc, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nvml_wrapper_sys::bindings::*;
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Config {
    /// NVML's return code for `nvmlInit_v2` (4: no permission, 9: driver not loaded).
    #[serde(default)]
    init_error: Option<u32>,
    #[serde(default = "driver")]
    driver_version: String,
    /// As NVML gives it: 12040 is CUDA 12.4.
    #[serde(default = "cuda")]
    cuda_version: i32,
    #[serde(default)]
    devices: Vec<DeviceConfig>,
}

fn driver() -> String {
    "550.54.15".into()
}
fn cuda() -> i32 {
    12040
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceConfig {
    name: String,
    uuid: String,
    pci_bus_id: String,
    total: u64,
    used: u64,
    #[serde(default)]
    reserved: u64,
    #[serde(default)]
    utilization: (u32, u32),
    /// volatile corrected, volatile uncorrected, aggregate corrected, aggregate
    /// uncorrected; absent: ECC not supported.
    #[serde(default)]
    ecc: Option<[u64; 4]>,
    /// single-bit, double-bit, pending; absent: not supported.
    #[serde(default)]
    retired: Option<(u32, u32, bool)>,
    /// correctable, uncorrectable, pending, failure; absent: not supported.
    #[serde(default)]
    remapped: Option<(u32, u32, bool, bool)>,
    #[serde(default)]
    persistence: bool,
    /// current, pending; absent: not supported.
    #[serde(default)]
    mig: Option<(bool, bool)>,
    #[serde(default)]
    compute: Vec<ProcessConfig>,
    #[serde(default)]
    graphics: Vec<ProcessConfig>,
    #[serde(default)]
    xid_events: Vec<XidConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcessConfig {
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    comm: Option<String>,
    /// Bytes; absent: NVML cannot say (NVML_VALUE_NOT_AVAILABLE).
    #[serde(default)]
    used: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct XidConfig {
    /// Delivered this long after nvmlInit.
    after_ms: u64,
    xid: u64,
}

struct State {
    config: Config,
    started: Instant,
}

static STATE: OnceLock<State> = OnceLock::new();

fn state() -> Option<&'static State> {
    STATE.get()
}

fn device(handle: nvmlDevice_t) -> Option<&'static DeviceConfig> {
    let index = (handle as usize).checked_sub(1)?;
    state()?.config.devices.get(index)
}

fn handle(index: usize) -> nvmlDevice_t {
    (index + 1) as nvmlDevice_t
}

const OK: nvmlReturn_t = nvmlReturn_enum_NVML_SUCCESS;
const INVALID: nvmlReturn_t = nvmlReturn_enum_NVML_ERROR_INVALID_ARGUMENT;
const NOT_SUPPORTED: nvmlReturn_t = nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED;
const TOO_SMALL: nvmlReturn_t = nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE;

unsafe fn write_str(text: &str, buf: *mut c_char, len: c_uint) -> nvmlReturn_t {
    if buf.is_null() || text.len() + 1 > len as usize {
        return TOO_SMALL;
    }
    // SAFETY: the caller gave `len` bytes at `buf`; text and its NUL fit.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        *buf.add(text.len()) = 0;
    }
    OK
}

#[no_mangle]
pub extern "C" fn nvmlInit_v2() -> nvmlReturn_t {
    let Some(path) = std::env::var_os("FAKE_NVML_CONFIG") else {
        return nvmlReturn_enum_NVML_ERROR_DRIVER_NOT_LOADED;
    };
    let config: Config = match std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
    {
        Some(c) => c,
        None => return nvmlReturn_enum_NVML_ERROR_UNKNOWN,
    };
    if let Some(code) = config.init_error {
        return code;
    }
    let _ = STATE.set(State {
        config,
        started: Instant::now(),
    });
    OK
}

#[no_mangle]
pub extern "C" fn nvmlShutdown() -> nvmlReturn_t {
    OK
}

#[no_mangle]
pub extern "C" fn nvmlErrorString(_result: nvmlReturn_t) -> *const c_char {
    c"fake NVML error".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(buf: *mut c_char, len: c_uint) -> nvmlReturn_t {
    match state() {
        // SAFETY: as the caller's contract.
        Some(s) => unsafe { write_str(&s.config.driver_version, buf, len) },
        None => nvmlReturn_enum_NVML_ERROR_UNINITIALIZED,
    }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(version: *mut c_int) -> nvmlReturn_t {
    let Some(s) = state() else {
        return nvmlReturn_enum_NVML_ERROR_UNINITIALIZED;
    };
    // SAFETY: a valid pointer, as the caller's contract.
    unsafe { *version = s.config.cuda_version };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(count: *mut c_uint) -> nvmlReturn_t {
    let Some(s) = state() else {
        return nvmlReturn_enum_NVML_ERROR_UNINITIALIZED;
    };
    // SAFETY: as the caller's contract.
    unsafe { *count = s.config.devices.len() as c_uint };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(
    index: c_uint,
    out: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    let Some(s) = state() else {
        return nvmlReturn_enum_NVML_ERROR_UNINITIALIZED;
    };
    if index as usize >= s.config.devices.len() {
        return INVALID;
    }
    // SAFETY: as the caller's contract.
    unsafe { *out = handle(index as usize) };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetIndex(d: nvmlDevice_t, index: *mut c_uint) -> nvmlReturn_t {
    if device(d).is_none() {
        return INVALID;
    }
    // SAFETY: as the caller's contract.
    unsafe { *index = (d as usize - 1) as c_uint };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetName(
    d: nvmlDevice_t,
    buf: *mut c_char,
    len: c_uint,
) -> nvmlReturn_t {
    match device(d) {
        // SAFETY: as the caller's contract.
        Some(c) => unsafe { write_str(&c.name, buf, len) },
        None => INVALID,
    }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUUID(
    d: nvmlDevice_t,
    buf: *mut c_char,
    len: c_uint,
) -> nvmlReturn_t {
    match device(d) {
        // SAFETY: as the caller's contract.
        Some(c) => unsafe { write_str(&c.uuid, buf, len) },
        None => INVALID,
    }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(
    d: nvmlDevice_t,
    pci: *mut nvmlPciInfo_t,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    // SAFETY: as the caller's contract; zero is a valid nvmlPciInfo_t.
    unsafe {
        let p = &mut *pci;
        *p = std::mem::zeroed();
        for (dst, src) in p.busId.iter_mut().zip(c.pci_bus_id.bytes().take(31)) {
            *dst = src as c_char;
        }
        for (dst, src) in p
            .busIdLegacy
            .iter_mut()
            .zip(c.pci_bus_id.bytes().skip(4).take(15))
        {
            *dst = src as c_char;
        }
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(
    d: nvmlDevice_t,
    m: *mut nvmlMemory_v2_t,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    // SAFETY: as the caller's contract.
    unsafe {
        (*m).total = c.total;
        (*m).used = c.used;
        (*m).reserved = c.reserved;
        (*m).free = c.total.saturating_sub(c.used + c.reserved);
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(
    d: nvmlDevice_t,
    u: *mut nvmlUtilization_t,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    // SAFETY: as the caller's contract.
    unsafe {
        (*u).gpu = c.utilization.0;
        (*u).memory = c.utilization.1;
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTotalEccErrors(
    d: nvmlDevice_t,
    error_type: nvmlMemoryErrorType_t,
    counter: nvmlEccCounterType_t,
    out: *mut c_ulonglong,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    let Some(ecc) = c.ecc else {
        return NOT_SUPPORTED;
    };
    let at = (counter as usize) * 2 + error_type as usize;
    // volatile=0/aggregate=1, corrected=0/uncorrected=1: [vc, vu, ac, au].
    let Some(v) = ecc.get(at) else { return INVALID };
    // SAFETY: as the caller's contract.
    unsafe { *out = *v };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages_v2(
    d: nvmlDevice_t,
    cause: nvmlPageRetirementCause_t,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: *mut c_ulonglong,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    let Some((single, double, _)) = c.retired else {
        return NOT_SUPPORTED;
    };
    let n = if cause == 0 { single } else { double };
    // SAFETY: as the caller's contract: `*count` entries at each non-null buffer.
    unsafe {
        if addresses.is_null() || *count < n {
            *count = n;
            return if n == 0 { OK } else { TOO_SMALL };
        }
        for i in 0..n as usize {
            *addresses.add(i) = 0x1000 * (i as u64 + 1);
            if !timestamps.is_null() {
                *timestamps.add(i) = 0;
            }
        }
        *count = n;
    }
    OK
}

/// The count NVML's callers ask for first (the v1 call, without timestamps).
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages(
    d: nvmlDevice_t,
    cause: nvmlPageRetirementCause_t,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
) -> nvmlReturn_t {
    // SAFETY: forwarded under the same contract.
    unsafe { nvmlDeviceGetRetiredPages_v2(d, cause, count, addresses, std::ptr::null_mut()) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPagesPendingStatus(
    d: nvmlDevice_t,
    pending: *mut nvmlEnableState_t,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    let Some((_, _, p)) = c.retired else {
        return NOT_SUPPORTED;
    };
    // SAFETY: as the caller's contract.
    unsafe { *pending = p as nvmlEnableState_t };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    d: nvmlDevice_t,
    corr: *mut c_uint,
    unc: *mut c_uint,
    pending: *mut c_uint,
    failure: *mut c_uint,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    let Some((c1, u1, p1, f1)) = c.remapped else {
        return NOT_SUPPORTED;
    };
    // SAFETY: as the caller's contract.
    unsafe {
        *corr = c1;
        *unc = u1;
        *pending = p1 as c_uint;
        *failure = f1 as c_uint;
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPersistenceMode(
    d: nvmlDevice_t,
    out: *mut nvmlEnableState_t,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    // SAFETY: as the caller's contract.
    unsafe { *out = c.persistence as nvmlEnableState_t };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    d: nvmlDevice_t,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    let Some((cur, pend)) = c.mig else {
        return NOT_SUPPORTED;
    };
    // SAFETY: as the caller's contract.
    unsafe {
        *current = cur as c_uint;
        *pending = pend as c_uint;
    }
    OK
}

/// Live processes whose `comm` is `name`.
fn pids_named(name: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim_end() == name)
        })
        .collect();
    pids.sort_unstable();
    pids
}

fn expand(list: &[ProcessConfig]) -> Vec<nvmlProcessInfo_t> {
    let mut out = Vec::new();
    for p in list {
        let pids = match (&p.pid, &p.comm) {
            (Some(pid), _) => vec![*pid],
            (None, Some(name)) => pids_named(name),
            (None, None) => Vec::new(),
        };
        for pid in pids {
            out.push(nvmlProcessInfo_t {
                pid,
                usedGpuMemory: p.used.unwrap_or(u64::MAX),
                gpuInstanceId: u32::MAX,
                computeInstanceId: u32::MAX,
            });
        }
    }
    out
}

unsafe fn processes(
    list: &[ProcessConfig],
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let found = expand(list);
    // SAFETY: as the caller's contract: `*count` entries at `infos` when non-null.
    unsafe {
        let room = *count as usize;
        *count = found.len() as c_uint;
        if found.is_empty() {
            return OK;
        }
        if infos.is_null() || room < found.len() {
            return TOO_SMALL;
        }
        for (i, p) in found.into_iter().enumerate() {
            *infos.add(i) = p;
        }
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    d: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    // SAFETY: forwarded.
    unsafe { processes(&c.compute, count, infos) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v3(
    d: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let Some(c) = device(d) else { return INVALID };
    // SAFETY: forwarded.
    unsafe { processes(&c.graphics, count, infos) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetSupportedEventTypes(
    d: nvmlDevice_t,
    types: *mut c_ulonglong,
) -> nvmlReturn_t {
    if device(d).is_none() {
        return INVALID;
    }
    // SAFETY: as the caller's contract.
    unsafe {
        *types = u64::from(
            nvmlEventTypeXidCriticalError
                | nvmlEventTypeSingleBitEccError
                | nvmlEventTypeDoubleBitEccError,
        )
    };
    OK
}

/// Which devices a set listens to, and which of their events it has handed out.
struct EventSet {
    devices: Vec<usize>,
    delivered: Vec<(usize, usize)>,
}

#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetCreate(set: *mut nvmlEventSet_t) -> nvmlReturn_t {
    let boxed = Box::new(EventSet {
        devices: Vec::new(),
        delivered: Vec::new(),
    });
    // SAFETY: as the caller's contract.
    unsafe { *set = Box::into_raw(boxed).cast() };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceRegisterEvents(
    d: nvmlDevice_t,
    _types: c_ulonglong,
    set: nvmlEventSet_t,
) -> nvmlReturn_t {
    let Some(index) = (d as usize).checked_sub(1) else {
        return INVALID;
    };
    // SAFETY: `set` came from nvmlEventSetCreate and is not freed.
    unsafe { (*set.cast::<EventSet>()).devices.push(index) };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    set: nvmlEventSet_t,
    data: *mut nvmlEventData_t,
    timeout_ms: c_uint,
) -> nvmlReturn_t {
    let Some(s) = state() else {
        return nvmlReturn_enum_NVML_ERROR_UNINITIALIZED;
    };
    let deadline = Instant::now() + Duration::from_millis(u64::from(timeout_ms));
    // SAFETY: `set` came from nvmlEventSetCreate and is not freed.
    let set = unsafe { &mut *set.cast::<EventSet>() };
    loop {
        let elapsed = s.started.elapsed();
        for &index in &set.devices {
            let Some(dev) = s.config.devices.get(index) else {
                continue;
            };
            for (n, ev) in dev.xid_events.iter().enumerate() {
                if set.delivered.contains(&(index, n))
                    || elapsed < Duration::from_millis(ev.after_ms)
                {
                    continue;
                }
                set.delivered.push((index, n));
                // SAFETY: as the caller's contract.
                unsafe {
                    *data = nvmlEventData_t {
                        device: handle(index),
                        eventType: u64::from(nvmlEventTypeXidCriticalError),
                        eventData: ev.xid,
                        gpuInstanceId: u32::MAX,
                        computeInstanceId: u32::MAX,
                    };
                }
                return OK;
            }
        }
        if Instant::now() >= deadline {
            return nvmlReturn_enum_NVML_ERROR_TIMEOUT;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetFree(set: nvmlEventSet_t) -> nvmlReturn_t {
    if !set.is_null() {
        // SAFETY: made by nvmlEventSetCreate's Box and freed once.
        drop(unsafe { Box::from_raw(set.cast::<EventSet>()) });
    }
    OK
}
