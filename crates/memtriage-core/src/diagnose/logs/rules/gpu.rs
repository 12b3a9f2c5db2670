//! The GPU driver's Xid errors (and what each means) and NCCL's collectives.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::diagnose::ids;
use crate::model::finding::Severity;
use crate::model::finding::Severity::{Error, Info, Warn};

/// The meaning of the Xid, from the table below.
fn extract_xid(_msg: &str, out: &mut Vec<(String, String)>) {
    let xid = out
        .iter()
        .find(|(k, _)| k == "xid")
        .and_then(|(_, v)| v.parse::<u32>().ok());
    let meaning = xid
        .and_then(xid_info)
        .map_or("see NVIDIA's Xid catalog", |x| x.meaning);
    out.push(("meaning".into(), meaning.into()));
}

pub(super) static RULES: &[Rule] = &[
    // ---- GPU, NCCL ---------------------------------------------------------------
    Rule {
        extract: Some(extract_xid),
        ..rule(
            "nvidia.xid",
            C::GpuXid,
            Error,
            &["NVRM: Xid"],
            r"NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>\d+),\s*(?:pid=(?P<pid>[^,\s]+),\s*)?(?:name=(?P<name>[^,]*),\s*)?(?P<detail>.*?)\s*$",
            "GPU Xid {xid} on {pci}: {meaning}",
        )
    },
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
    rule(
        "nccl.timeout",
        C::NcclFailure,
        Error,
        &["imed out", "Timeout at NCCL work", "watchdog got stuck"],
        r"Some NCCL operations have failed or timed out|Timeout at NCCL work: (?P<work>\d+)|watchdog got stuck for (?P<stuck_s>\d+) seconds|ProcessGroupNCCL.*\b(?:timed out|Timed out)\b",
        "NCCL operations timed out",
    ),
    Rule {
        why: Some("NCCL warned; a warning right before a hang or crash is usually its cause."),
        fix: Some(
            "Rerun with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET) to see which transport and peer failed; \
             read the warning's text: 'Cuda failure' is a GPU error on that rank, 'NET/IB' or 'NET/Socket' a network \
             problem between nodes.",
        ),
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
    fix: "See the driver's state: nvidia-smi -q | grep -iA5 -E 'retired|remapp|ecc'.",
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
          legitimately slow: init_process_group(timeout=timedelta(minutes=30)).",
};

/// What each NVIDIA Xid means, how bad it is, and what to do (NVIDIA's Xid catalog).
pub struct XidInfo {
    pub xid: u32,
    pub meaning: &'static str,
    pub severity: Severity,
    pub fix: &'static str,
}

const XID_APP_FIX: &str = "Usually a bug in the application's kernels: rerun with CUDA_LAUNCH_BLOCKING=1 and \
     compute-sanitizer --tool memcheck python train.py. If it recurs across different programs on this GPU, \
     suspect the hardware.";
const XID_RESET_FIX: &str =
    "Drain the node and reset the GPU: nvidia-smi -r -i GPU (or reboot); check \
     nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT. If it recurs, the GPU needs service (RMA).";

pub static XIDS: &[XidInfo] = &[
    XidInfo {
        xid: 13,
        meaning: "graphics engine exception (typically an out-of-range access in a kernel)",
        severity: Error,
        fix: XID_APP_FIX,
    },
    XidInfo {
        xid: 31,
        meaning: "GPU memory page fault (a kernel accessed an invalid address)",
        severity: Error,
        fix: XID_APP_FIX,
    },
    XidInfo {
        xid: 43,
        meaning: "GPU stopped processing (the application hit a fault and was stopped; the GPU is healthy)",
        severity: Warn,
        fix: "Look for the application's own error (an illegal memory access, an assert) just before it.",
    },
    XidInfo {
        xid: 45,
        meaning: "preemptive cleanup after earlier errors (the driver tore down a process that was killed or crashed)",
        severity: Info,
        fix: "A consequence, not a cause: look for the earlier Xid, OOM kill or crash that ended the process.",
    },
    XidInfo {
        xid: 48,
        meaning: "double-bit ECC error (an uncorrectable GPU memory error)",
        severity: Error,
        fix: XID_RESET_FIX,
    },
    XidInfo {
        xid: 63,
        meaning: "ECC page retirement or row remapping recorded",
        severity: Warn,
        fix: "Reset the GPU when it is idle to apply the remapping: nvidia-smi -r -i GPU. Watch for it recurring.",
    },
    XidInfo {
        xid: 64,
        meaning: "ECC page retirement or row remapping failed",
        severity: Error,
        fix: XID_RESET_FIX,
    },
    XidInfo {
        xid: 74,
        meaning: "NVLink error",
        severity: Error,
        fix: "Check the links: nvidia-smi nvlink -s and -e; drain the node, reset the GPUs or reboot; recurring \
              errors need the NVLink bridge or baseboard serviced.",
    },
    XidInfo {
        xid: 79,
        meaning: "GPU has fallen off the bus (no longer reachable over PCIe)",
        severity: Error,
        fix: "Drain the node and reboot it; check power, thermals (nvidia-smi -q -d TEMPERATURE,POWER before it \
              happens) and the PCIe link (lspci -vv, reseat the card). Recurring: service the GPU or the slot.",
    },
    XidInfo {
        xid: 92,
        meaning: "high single-bit ECC error rate (GPU memory is degrading)",
        severity: Warn,
        fix: "Watch it: nvidia-smi -q -d ECC; plan to replace the GPU if the rate keeps rising.",
    },
    XidInfo {
        xid: 94,
        meaning: "contained ECC error (an uncorrectable error, confined to the application that hit it)",
        severity: Error,
        fix: "Restart the affected job; the GPU stays usable. Reset it when idle (nvidia-smi -r) to remap the row.",
    },
    XidInfo {
        xid: 95,
        meaning: "uncontained ECC error (every application on the GPU is affected)",
        severity: Error,
        fix: XID_RESET_FIX,
    },
];

pub fn xid_info(xid: u32) -> Option<&'static XidInfo> {
    XIDS.iter().find(|x| x.xid == xid)
}
