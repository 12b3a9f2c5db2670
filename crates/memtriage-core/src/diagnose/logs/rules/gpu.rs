//! The GPU driver's Xid errors (and what each means) and NCCL's collectives.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::diagnose::xid;
use crate::model::finding::CauseKind::Hardware;
use crate::model::finding::Severity::{Error, Warn};
use crate::model::ids;

/// The meaning of the Xid, from the catalogue.
/// An Xid named in words counts only where NVIDIA's catalogue has it (`XID 1` in a
/// table of ids is no fault).
fn extract_catalogued_xid(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let known = out
        .iter()
        .find(|(k, _)| k == "xid")
        .and_then(|(_, v)| v.parse::<u32>().ok())
        .and_then(xid::lookup)
        .is_some();
    known && extract_xid(msg, out)
}

fn extract_xid(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let xid = out
        .iter()
        .find(|(k, _)| k == "xid")
        .and_then(|(_, v)| v.parse::<u32>().ok());
    // Xid 45 says which Xid it cleans up after: that one is the fault.
    let detail = out
        .iter()
        .find(|(k, _)| k == "detail")
        .map(|(_, v)| v.clone());
    if let Some(cause) = detail
        .map(|d| d.to_ascii_lowercase())
        .as_deref()
        .and_then(|d| d.split("caused by previous xid ").nth(1))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u32>().ok())
    {
        out.push(("caused_by_xid".into(), cause.to_string()));
    }
    let meaning = xid
        .and_then(xid::lookup)
        .map_or("see NVIDIA's Xid catalog", |x| x.meaning.as_str());
    out.push(("meaning".into(), meaning.into()));
    true
}

/// NCCL warnings it recovers from on its own: no InfiniBand, so it uses sockets.
fn extract_nccl_warning(msg: &str, _out: &mut Vec<(String, String)>) -> bool {
    const RECOVERED: &[&str] = &[
        "No device found",
        "Failed to open libibverbs",
        "Could not find real path",
        "libnccl-net.so",
        "NET/Plugin",
        "No plugin found",
        "Failed to load libnccl-net",
        "NCCL_SOCKET_IFNAME",
        "Unable to load library",
        "falling back",
        "using internal implementation",
        "Using internal network plugin",
        "No IB devices found",
        "Attempt to use a closed",
        "Cuda failure 'out of memory'",
    ];
    // Rules match in any case; so does what excuses a line.
    let msg = msg.to_ascii_lowercase();
    !RECOVERED
        .iter()
        .any(|r| msg.contains(&r.to_ascii_lowercase()))
}

pub(super) static RULES: &[Rule] = &[
    rule(
        // The Windows driver's events for what Linux logs as an Xid: 13 a graphics
        // engine's exception, 14 a channel's, 153 a reset after the GPU stopped
        // answering (a timeout detection and recovery).
        "windows.nvlddmkm-event",
        C::GpuXid,
        Warn,
        &["from source nvlddmkm"],
        r"\bEvent ID (?P<event>13|14|153) from source nvlddmkm\b",
        "The NVIDIA driver on Windows logged event {event} (nvlddmkm): the GPU faulted or was reset",
    ),
    // ---- GPU memory ECC ----------------------------------------------------------
    Rule {
        extract: Some(extract_xid),
        ..rule(
            "nvidia.xid-ecc",
            C::GpuEcc,
            Error,
            &["Xid ("],
            r"NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>48|63|64|92|94|95),\s*(?:pid=(?P<pid>[^,\s]+),\s*)?(?:name=(?P<name>[^,]*),\s*)?(?P<detail>.*?)\s*$",
            "GPU Xid {xid} on {pci}: {meaning}",
        )
    },
    Rule {
        extract: Some(extract_xid),
        certainty: crate::model::finding::Certainty::Possible,
        ..rule(
            // The memory Xids named in words (`Xid 48/171 DBE, Xid 63 row remapper`).
            // Their anchors are 4 bytes at least: a 3-byte one slows every pass.
            "prose.xid-ecc",
            C::GpuEcc,
            Error,
            &["Xid ", "XID "],
            r"\b(?-i:Xid|XID)(?: error)? #?(?P<xid>48|63|64|92|94|95)\b",
            "GPU Xid {xid}: {meaning}",
        )
    },
    Rule {
        optional: &[r"(?P<what>(?:SRAM |DRAM |)Uncorrectable(?: Error)?|Double Bit(?: ECC)?|Device Memory|Remapping Failure Occurred|Pending(?: Page Blacklist| Page Retirement)?)"],
        ..rule(
            "nvidia-smi.ecc-figures",
            C::GpuEcc,
            Error,
            &["ncorrectable", "Double Bit", "Pending", "Remapping Failure"],
            r"^\s*(?:(?:SRAM |DRAM |Volatile |Aggregate )?Uncorrectable(?: Error| Parity| SEC-DED)?|Double Bit(?: ECC)?|Remapping Failure Occurred|Pending(?: Page Blacklist| Page Retirement)?)\s*:\s*(?P<value>[1-9]\d*|Yes)\s*$",
            "nvidia-smi reports GPU memory errors: {what} {value}",
        )
    },
    // ---- other Xids, NCCL ----------------------------------------------------------
    Rule {
        extract: Some(extract_xid),
        ..rule(
            "nvidia.xid",
            C::GpuXid,
            Error,
            &["Xid ("],
            r"NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>\d+),\s*(?:pid=(?P<pid>[^,\s]+),\s*)?(?:name=(?P<name>[^,]*),\s*)?(?P<detail>.*?)\s*$",
            "GPU Xid {xid} on {pci}: {meaning}",
        )
    },
    Rule {
        extract: Some(extract_xid),
        ..rule(
            // NVIDIA's Kubernetes device plugin, which watches the driver's Xid events.
            "nvidia.xid-device-plugin",
            C::GpuXid,
            Error,
            &["XidCriticalError"],
            r"XidCriticalError: Xid=(?P<xid>\d+) on Device=(?P<pci>[^,\s]+)",
            "GPU Xid {xid} on {pci}: {meaning}",
        )
    },
    Rule {
        extract: Some(extract_catalogued_xid),
        certainty: crate::model::finding::Certainty::Possible,
        ..rule(
            // An Xid named in words (`fatal GPU loss (Xid 79)`), in the case NVIDIA
            // writes it: PostgreSQL's lower-case `xid` is a transaction id.
            "prose.xid",
            C::GpuXid,
            Error,
            &["Xid ", "XID "],
            r"\b(?-i:Xid|XID)(?: error)? #?(?P<xid>\d{1,3})\b",
            "GPU Xid {xid}: {meaning}",
        )
    },
    rule(
        // The GPU System Processor's firmware stopped answering the driver (Xid 119's
        // failure); the driver dumps the falcon core's trace as it gives up.
        "nvidia.gsp-timeout",
        C::GpuXid,
        Error,
        &["Timeout waiting for RPC", "kflcnCoreDump"],
        r"Timeout waiting for RPC from GSP|NVRM: kflcnCoreDumpNondestructive",
        "The GPU's GSP firmware stopped answering the driver (the failure of Xid 119)",
    ),
    rule(
        // The driver's own status when a channel or the GSP can only be recovered by a
        // GPU reset (it comes with or instead of an Xid line).
        "nvidia.reset-required",
        C::GpuXid,
        Error,
        &["Assertion failed: Reset required"],
        r"Assertion failed: Reset required \[NV_ERR_RESET_REQUIRED\]",
        "The GPU driver needs a GPU reset (NV_ERR_RESET_REQUIRED)",
    ),
    rule(
        // A miner's own check of the GPU's memory (lolMiner): `Unrecoverable memory
        // error by GPU 2. Reset of all Cuda GPUs required.`, most often memory
        // overclocked past what the chips hold.
        "miner.gpu-memory-error",
        C::GpuEcc,
        Error,
        &["Unrecoverable memory error by GPU"],
        r"\bUnrecoverable memory error by GPU (?P<gpu>\d+)\b",
        "GPU {gpu} reported an unrecoverable memory error",
    ),
    rule(
        "nvidia.init-failed",
        C::GpuXid,
        Error,
        &["RmInitAdapter failed", "rm_init_adapter failed"],
        r"NVRM: GPU (?P<gpu>[0-9a-fA-F:.]+): (?:RmInitAdapter|rm_init_adapter) failed",
        "The NVIDIA driver could not bring up GPU {gpu} (RmInitAdapter failed): the GPU is absent to CUDA",
    ),
    rule(
        "nvidia.gpu-lost",
        C::GpuXid,
        Error,
        &["fallen off the bus", "Unable to determine the device handle", "GPU is lost", "GPU has fallen off", "NV_ERR_GPU_IS_LOST"],
        r"fallen off the bus|Unable to determine the device handle for GPU|GPU is lost|\bNV_ERR_GPU_IS_LOST\b",
        "The GPU has fallen off the bus: it no longer answers over PCIe",
    ),
    rule(
        // nvidia-smi's line for a GPU whose driver logged a critical Xid (`GPU
        // 00000000:04:00.0: Detected Critical Xid Error`): which Xid, the kernel's log
        // tells.
        "nvidia.critical-xid-detected",
        C::GpuXid,
        Error,
        &["Detected Critical Xid Error"],
        r"\bGPU [0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]: Detected Critical Xid Error\b",
        "nvidia-smi reports a critical Xid error on a GPU: the kernel log (dmesg) names which",
    ),
    Rule {
        optional: &[r"\[Rank (?P<rank>\d+)\]"],
        ..rule(
            "nccl.watchdog-timeout",
            C::NcclFailure,
            Error,
            &["Watchdog caught collective operation timeout"],
            r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)(?:.*?Timeout\(ms\)=(?P<timeout_ms>\d+))?.*?\) ran for (?P<ran_ms>\d+) milliseconds before timing out",
            "NCCL collective {op} (SeqNum {seq}) timed out after {ran_ms} ms",
        )
    },
    Rule {
        optional: &[r"\[Rank (?P<rank>\d+)\]"],
        ..rule(
            // The same with its `WorkNCCL(…)` on the lines after (a paste wrapped it), or
            // cut where a report quotes it (`I get the message "Watchdog caught
            // collective operation timeout: WorkNCCL".`).
            "nccl.watchdog-timeout-wrapped",
            C::NcclFailure,
            Error,
            &["Watchdog caught collective operation timeout"],
            r"Watchdog caught collective operation timeout:?(?:\s*$|\s*WorkNCCL[\x22'`”]?\s*(?:[.,;)]|$))",
            "An NCCL collective timed out (ProcessGroupNCCL's watchdog)",
        )
    },
    rule(
        // NCCL's shared-memory transport cannot create its segment: /dev/shm is too
        // small in a container (`--shm-size`, `--ipc=host`).
        "nccl.shm-segment",
        C::NcclFailure,
        Error,
        &["creating shared memory segment"],
        r"\bError while creating shared memory segment (?P<segment>/dev/shm/nccl-\S+) \(size \d+\)",
        "NCCL could not create its shared-memory segment {segment}: /dev/shm is too small (docker run --shm-size or --ipc=host)",
    ),
    rule(
        "nccl.error",
        C::NcclFailure,
        Error,
        &["unhandled system error", "unhandled cuda error", "remote process exited", "communicator was aborted", "NCCL operation", "ncclSystemError", "ncclInternalError", "ncclUnhandledCudaError", "ncclRemoteError", "NCCL error", "NCCL Error", "NCCL failure", "internal error - please report", "Check failed"],
        // nccl-tests say `Test NCCL failure common.cu:777 'unhandled system error'`.
        r"(?i:NCCL (?:error|failure)\b).*?(?P<error>unhandled system error|unhandled cuda error|internal error|invalid usage|remote process exited or there was a network error|invalid argument)|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclRemoteError|NCCL communicator was aborted|Check failed: \w+ == ncclSuccess \(\d+ vs\. 0\)|(?P<error2>unhandled system error|unhandled cuda error), NCCL version|\bError invoking NCCL: (?P<error5>unhandled system error|unhandled cuda error)|\bnccl[A-Z]\w+ failed: (?P<error4>unhandled system error|unhandled cuda error)|NCCL operation \w+\([^)]*\) failed: (?P<error3>unhandled system error|unhandled cuda error|internal error|invalid usage|remote process exited or there was a network error|invalid argument)",
        "NCCL failed: {error}",
    ),
    rule(
        // The InfiniBand transport's failed work completion: a link or peer problem.
        "nccl.ib-completion-error",
        C::NcclFailure,
        Error,
        &["Got completion from peer"],
        r"NET/IB\w*\s*:\s*Got completion from peer (?P<peer>\S+) with (?:error |status=)(?P<status>\d+).*?vendor err (?P<vendor_err>\d+)",
        "NCCL's InfiniBand transport failed a transfer with {peer} (status {status}, vendor error {vendor_err})",
    ),
    rule(
        "nccl.timeout",
        C::NcclFailure,
        Error,
        &["imed out", "Timeout at NCCL work", "watchdog got stuck", "detected by watchdog", "ocket Timeout", "Connection reset by peer", "DistStoreError"],
        r"Some NCCL operations have failed or timed out|Exception \(either an error or timeout\) detected by watchdog|Timeout at NCCL work: (?P<work>\d+)|watchdog got stuck for (?P<stuck_s>\d+) seconds|ProcessGroupNCCL.*\b(?:timed out|Timed out)\b|(?:NCCL|collective|barrier|allreduce|all_reduce|broadcast).{0,80}(?:timed out|Timed out)|(?i:Socket Timeout)|DistStoreError: .*?timeout|Connection reset by peer.*(?:NCCL|Gloo|c10d)|(?:NCCL|c10d).*Connection reset by peer",
        "NCCL operations timed out",
    ),
    Rule {
        why: Some("NCCL warned; a warning right before a hang or crash is usually its cause."),
        fix: Some(
            "Rerun with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET) to see which transport and peer failed; \
             read the warning's text: 'Cuda failure' is a GPU error on that rank, 'NET/IB' or 'NET/Socket' a network \
             problem between nodes.",
        ),
        extract: Some(extract_nccl_warning),
        ..rule(
            "nccl.warn",
            C::NcclFailure,
            Warn,
            &["NCCL WARN"],
            r"NCCL WARN (?P<warning>.+?)\s*$",
            "NCCL warned: {warning}",
        )
    },
];

pub(super) const GPU_XID: ClassInfo = ClassInfo {
    class: C::GpuXid,
    name: "gpu_xid",
    id: ids::LOG_GPU_XID,
    title: "The NVIDIA driver reported an Xid error",
    why: "Xid errors are the driver's reports of GPU faults; some are application bugs, others hardware that \
          needs a reset or service.",
    fix: "See the driver's state: nvidia-smi -q | grep -iA5 -E 'retired|remapp|ecc'.",    cause: crate::model::finding::CauseKind::Hardware,
    confirm: "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT; dcgmi diag -r 2 after draining the node.",
};

pub(super) const GPU_ECC: ClassInfo = ClassInfo {
    class: C::GpuEcc,
    name: "gpu_ecc",
    id: ids::LOG_GPU_ECC,
    title: "GPU memory has ECC errors",
    why: "An uncorrectable (double-bit) ECC error means the GPU's memory returned wrong data: the job that read \
          it dies, and a row or page is retired or remapped. A pending remap takes effect only after a GPU \
          reset; until then the error can recur. A rising rate of corrected errors is memory wearing out.",
    fix: "Drain the node (no new jobs), then see the state: nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT.\n\
          Reset the GPU when it is idle to apply pending remaps: nvidia-smi -r -i GPU (or reboot).\n\
          Run NVIDIA's diagnostic after a failure: dcgmi diag -r 2 (level 3 for burn-in); a GPU that fails it, \
          or whose remapping failed (Remapping Failure Occurred: Yes), needs service (RMA).",
    cause: Hardware,
    confirm: "nvidia-smi -q -d ECC,ROW_REMAPPER shows the uncorrectable count and any pending remap.",
};

pub(super) const NCCL_FAILURE: ClassInfo = ClassInfo {
    class: C::NcclFailure,
    name: "nccl_failure",
    id: ids::LOG_NCCL_FAILURE,
    title: "NCCL collective timed out",
    why: "A collective waits for every rank; it times out when one rank never joins: that rank crashed, was \
          OOM-killed, hangs (a deadlock, a data-loading stall) or runs different code (a rank-dependent branch).",
    fix: "Find the rank that did not join: look for an earlier error on another rank or node (an OOM kill in \
          dmesg, a Python exception).\nRecord what each rank was doing: TORCH_NCCL_TRACE_BUFFER_SIZE=2000 \
          TORCH_NCCL_DUMP_ON_TIMEOUT=1 (flight recorder), NCCL_DEBUG=INFO.\nOnly for a step that is \
          legitimately slow: init_process_group(timeout=timedelta(minutes=30)).",    cause: crate::model::finding::CauseKind::Configuration,
    confirm: "NCCL_DEBUG=INFO TORCH_NCCL_DUMP_ON_TIMEOUT=1 names the rank and operation; look for an earlier error on another rank.",
};
