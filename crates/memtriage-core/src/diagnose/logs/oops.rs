//! A crash report read as a whole, its headline's match held until it ends: a Windows
//! bug check's by [`super::windbg`], a Linux oops's here.
//!
//! A Linux oops, BUG, GPF or panic read as a whole: the lines after its headline name
//! the code that faulted (`RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]`), the process that
//! was running (`CPU: 33 PID: 4564 Comm: sbatchd`), the taint flags, the kind of access
//! (`#PF: supervisor read access in kernel mode`) and the call trace. The module that
//! holds the faulting code is the suspect; who made it says whom to call.
//!
//! ```text
//! BUG: unable to handle page fault for address: ffffb8a1c0e3f000
//! #PF: supervisor read access in kernel mode
//! #PF: error_code(0x0000) - not-present page
//! Oops: 0000 [#1] PREEMPT SMP NOPTI
//! CPU: 3 PID: 4242 Comm: python Tainted: P           OE     6.5.0-14-generic
//! RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]
//! Call Trace:
//!  <TASK>
//!  ? _nv012345rm+0x1c/0x30 [nvidia]
//! ```

use std::sync::OnceLock;

use regex::Regex;

use super::engine::{lazy_regex, normalize};
use super::{FailureClass, LogMatch};
use crate::model::finding::{CauseKind, Evidence};

/// An oops's report is a few dozen lines; a call trace a few dozen more. Past this the
/// lines are another story.
const MAX_LINES: u32 = 160;
/// Reports read whole per input; later ones are counted as any match.
pub(super) const MAX_REPORTS: usize = 4;
/// Lines above the headline read with it (a WARN's own line, 2.6's `Pid:` line).
const LINES_BEFORE: usize = 8;

/// A report's headline (its match held until the report ends) and the lines after it,
/// read by the reader of its kind.
#[derive(Debug, Clone)]
pub(super) struct Watch {
    opened: LogMatch,
    lines: u32,
    reader: Reader,
}

#[derive(Debug, Clone)]
enum Reader {
    Oops(OopsReader),
    BugCheck(super::windbg::Details),
}

/// An oops's lines: what it says about itself, and whether the call trace has begun.
#[derive(Debug, Clone, Default)]
struct OopsReader {
    in_trace: bool,
    details: Details,
}

/// What an oops says about itself; each field as printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Details {
    function: Option<String>,
    module: Option<String>,
    /// The first frame of the call trace inside a module (`?` frames are guesses).
    trace_function: Option<String>,
    trace_module: Option<String>,
    /// `kernel BUG at fs/ext4/inode.c:2422!`, `WARNING: … at drivers/gpu/drm/…`.
    source_file: Option<String>,
    process: Option<String>,
    pid: Option<String>,
    taint: Option<String>,
    kernel: Option<String>,
    access: Option<String>,
    page: Option<String>,
}

impl Watch {
    /// `msg` is the headline's message (without the prefix a tool put on the line);
    /// the match comes back for a class whose reports are not read whole.
    pub(super) fn new(opened: LogMatch, msg: &str) -> Result<Self, LogMatch> {
        let mut reader = match opened.class {
            FailureClass::KernelOops => Reader::Oops(OopsReader::default()),
            FailureClass::WindowsMemoryFault => Reader::BugCheck(Default::default()),
            _ => return Err(opened),
        };
        reader.read(msg);
        Ok(Watch {
            opened,
            lines: 0,
            reader,
        })
    }

    /// The lines just above the headline (`context`, as the scanner keeps them): a
    /// WARN names its source file, a 2.6 oops its process, WhoCrashed its module there.
    /// Not past the end of an earlier oops, whose lines are its own.
    pub(super) fn read_context(&mut self, context: &[u8]) {
        let before = String::from_utf8_lossy(context);
        let lines: Vec<&str> = before.lines().collect();
        let from = lines
            .iter()
            .rposition(|l| l.contains("---[ end trace"))
            .map_or(0, |i| i + 1)
            .max(lines.len().saturating_sub(LINES_BEFORE));
        for line in &lines[from..] {
            let msg = normalize(line);
            match &mut self.reader {
                // The faulting instruction and the trace are the headline's own lines'.
                Reader::Oops(o) => {
                    let t = msg.trim();
                    if !o.read_task(t) {
                        o.read_source(t);
                    }
                }
                Reader::BugCheck(b) => b.read_above(&msg),
            }
        }
    }

    /// Reads one more line's message; `false` once the report has ended (the line is
    /// then not part of it).
    pub(super) fn observe(&mut self, msg: &str) -> bool {
        self.lines += 1;
        let (limit, ended) = match self.reader {
            Reader::Oops(_) => (MAX_LINES, msg.contains("---[ end trace")),
            Reader::BugCheck(_) => (super::windbg::MAX_LINES, false),
        };
        if self.lines > limit || ended {
            return false;
        }
        self.reader.read(msg);
        true
    }

    /// The headline's match, with what the report said about itself as captures.
    pub(super) fn to_match(&self) -> LogMatch {
        let mut m = self.opened.clone();
        match &self.reader {
            Reader::Oops(o) => o.details.captures(&mut m.captures),
            Reader::BugCheck(b) => b.captures(&mut m.captures),
        }
        m
    }
}

impl Reader {
    fn read(&mut self, msg: &str) {
        match self {
            Reader::Oops(o) => o.read(msg),
            Reader::BugCheck(b) => b.read(msg),
        }
    }
}

impl OopsReader {
    fn read(&mut self, msg: &str) {
        let t = msg.trim();
        if t.starts_with("Call Trace:") || t.starts_with("Backtrace:") || t == "Call trace:" {
            self.in_trace = true;
            return;
        }
        if t.starts_with("WARNING:") {
            self.read_warning(t);
            return;
        }
        let d = &mut self.details;
        if d.function.is_none() {
            if let Some(c) = lazy_regex(&FAULTING, FAULTING_PATTERN).and_then(|re| re.captures(t)) {
                d.function = c.name("func").map(|m| m.as_str().to_string());
                d.module = c.name("module").map(|m| m.as_str().to_string());
                return;
            }
        }
        if self.in_trace && d.trace_module.is_none() {
            if let Some(c) = lazy_regex(&FRAME, FRAME_PATTERN).and_then(|re| re.captures(t)) {
                if let (Some(module), None) = (c.name("module"), c.name("guess")) {
                    d.trace_function = c.name("func").map(|m| m.as_str().to_string());
                    d.trace_module = Some(module.as_str().to_string());
                }
                return;
            }
        }
        if self.read_task(t) || self.read_access(t) {
            return;
        }
        self.read_source(t);
    }

    /// `CPU: 3 PID: 4242 Comm: python Tainted: …`: `true` when `t` is that line.
    fn read_task(&mut self, t: &str) -> bool {
        let d = &mut self.details;
        if d.process.is_some() {
            return false;
        }
        let Some(c) = lazy_regex(&TASK, TASK_PATTERN).and_then(|re| re.captures(t)) else {
            return false;
        };
        let get = |n: &str| c.name(n).map(|m| m.as_str().trim().to_string());
        d.process = get("comm").or_else(|| get("comm2"));
        d.pid = get("pid").or_else(|| get("pid2"));
        d.taint = get("taint").filter(|t| !t.is_empty());
        d.kernel = get("kernel");
        true
    }

    /// A WARN's own line: the function and module it warned in, the pid, the source.
    fn read_warning(&mut self, t: &str) {
        if let Some(c) = lazy_regex(&WARNING, WARNING_PATTERN).and_then(|re| re.captures(t)) {
            let d = &mut self.details;
            if d.function.is_none() {
                d.function = c.name("func").map(|m| m.as_str().to_string());
                d.module = c.name("module").map(|m| m.as_str().to_string());
            }
            d.pid = d
                .pid
                .take()
                .or(c.name("pid").map(|m| m.as_str().to_string()));
        }
        self.read_source(t);
    }

    /// `#PF: supervisor read access in kernel mode`, `#PF: error_code(…) - not-present page`.
    fn read_access(&mut self, t: &str) -> bool {
        let Some(c) = lazy_regex(&ACCESS, ACCESS_PATTERN).and_then(|re| re.captures(t)) else {
            return false;
        };
        let d = &mut self.details;
        if let Some(a) = c.name("access") {
            d.access = Some(a.as_str().to_string());
        }
        if let Some(p) = c.name("page") {
            d.page = Some(p.as_str().trim().to_string());
        }
        true
    }

    fn read_source(&mut self, t: &str) {
        let d = &mut self.details;
        if d.source_file.is_none() {
            if let Some(c) = lazy_regex(&SOURCE, SOURCE_PATTERN).and_then(|re| re.captures(t)) {
                d.source_file = c
                    .name("path")
                    .or(c.name("path2"))
                    .map(|m| m.as_str().to_string());
            }
        }
    }
}

impl Details {
    fn captures(&self, out: &mut Vec<(String, String)>) {
        let culprit = culprit(self);
        for (name, value) in [
            (
                "oops_function",
                self.function.as_ref().or(self.trace_function.as_ref()),
            ),
            ("oops_module", culprit.as_ref().map(|c| &c.name)),
            ("oops_source_file", self.source_file.as_ref()),
            ("oops_process", self.process.as_ref()),
            ("oops_pid", self.pid.as_ref()),
            ("oops_taint", self.taint.as_ref()),
            ("oops_kernel", self.kernel.as_ref()),
            ("oops_access", self.access.as_ref()),
            ("oops_page", self.page.as_ref()),
        ] {
            if let Some(v) = value {
                out.push((name.to_string(), v.clone()));
            }
        }
        if let Some(c) = culprit {
            out.push(("oops_culprit_kind".into(), c.kind.as_str().into()));
            out.push(("oops_culprit_from".into(), c.from.into()));
        }
    }
}

/// `RIP: 0010:func+0x1c/0x30 [mod]`, `IP: [<ffffffffc03e3dba>] func+0x1a/0x30 [mod]`,
/// arm64's `pc : func+0x…`, arm's `PC is at func+0x…`, PowerPC's `NIP [c…] func+0x…`.
const FAULTING_PATTERN: &str = r"^(?:RIP|IP|EIP|NIP|pc|PC is at)\b[\s:]*(?:[0-9a-f]{4}:)?(?:\[<?[0-9a-f]+>?\]\s*)*(?P<func>[A-Za-z_$][\w.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+(?:\s+\[(?P<module>[\w-]+)\])?";
/// A call trace's frame (`[<ffffffff…>] func+0x…/0x… [mod]`); `? ` marks a guess.
const FRAME_PATTERN: &str = r"^(?:\[<?[0-9a-f]+>?\]\s*)*(?P<guess>\?\s+)?(?P<func>[A-Za-z_$][\w.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+(?:\s+\[(?P<module>[\w-]+)\])?";
/// `CPU: 3 PID: 4242 Comm: python Tainted: P OE 6.5.0-14-generic`, 2.6's `Pid: 1124,
/// comm: xfsalloc/6 Not tainted 2.6.32-358.el6.x86_64`.
const TASK_PATTERN: &str = r"(?:CPU: \d+,? (?:UID: \d+ )?PID: (?P<pid>\d+),? Comm: (?P<comm>\S+)|Pid: (?P<pid2>\d+), comm: (?P<comm2>\S+))(?: Kdump: \w+)?\s+(?:Not tainted|Tainted: (?P<taint>[A-Z ]*?))\s+(?:-+ - - )?(?P<kernel>\d[\w.+~-]*)";
const ACCESS_PATTERN: &str = r"^#PF: (?:(?P<access>(?:supervisor|user) (?:read|write|instruction fetch) access in (?:kernel|user) mode)|error_code\(0x[0-9a-f]+\) - (?P<page>[\w -]+page))";
/// `kernel BUG at fs/ext4/inode.c:2422!`, `WARNING: … at drivers/…/x.c:123`, and a
/// filesystem's own check: `XFS: Internal error … at line 342 of file fs/xfs/xfs_alloc.c`.
const SOURCE_PATTERN: &str = r"(?:kernel BUG at|WARNING:.*? at) (?P<path>/?(?:[\w.-]+/)*[\w.-]+\.[ch]):\d+|Internal error \S+ at line \d+ of file (?P<path2>(?:[\w.-]+/)*[\w.-]+\.[ch])";

/// `WARNING: CPU: 3 PID: 295 at drivers/gpu/drm/i915/display/intel_bw.c:125
/// icl_get_bw_info+0x48e/0x540 [i915]`; 2.6's `WARNING: at fs/x.c:12 func+0x…()`.
const WARNING_PATTERN: &str = r"^WARNING: (?:CPU: \d+ PID: (?P<pid>\d+) )?at (?:/?(?:[\w.-]+/)*[\w.-]+\.[ch]:\d+ )?(?:(?P<func>[A-Za-z_$][\w.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+(?:\s+\[(?P<module>[\w-]+)\])?)?";
/// The rule whose headline is a WARN.
const WARNING_RULE: &str = "kernel.warning";

static WARNING: OnceLock<Option<Regex>> = OnceLock::new();
static FAULTING: OnceLock<Option<Regex>> = OnceLock::new();
static FRAME: OnceLock<Option<Regex>> = OnceLock::new();
static TASK: OnceLock<Option<Regex>> = OnceLock::new();
static ACCESS: OnceLock<Option<Regex>> = OnceLock::new();
static SOURCE: OnceLock<Option<Regex>> = OnceLock::new();

/// Whom an oops points at: who wrote the faulting code, so whom to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CulpritKind {
    GpuDriver,
    Filesystem,
    Network,
    OtherDriver,
    Kernel,
}

impl CulpritKind {
    fn as_str(self) -> &'static str {
        match self {
            CulpritKind::GpuDriver => "GPU driver",
            CulpritKind::Filesystem => "filesystem",
            CulpritKind::Network => "network or RDMA driver",
            CulpritKind::OtherDriver => "driver",
            CulpritKind::Kernel => "kernel",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [
            CulpritKind::GpuDriver,
            CulpritKind::Filesystem,
            CulpritKind::Network,
            CulpritKind::OtherDriver,
            CulpritKind::Kernel,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

struct Culprit {
    name: String,
    kind: CulpritKind,
    /// Which line named it: the faulting instruction's, the trace's, the source file's.
    from: &'static str,
}

const GPU_MODULES: &[&str] = &[
    "nvidia",
    "nvidia_uvm",
    "nvidia_drm",
    "nvidia_modeset",
    "nvidia_peermem",
    "amdgpu",
    "amdkfd",
    "radeon",
    "nouveau",
    "i915",
    "xe",
    "drm",
    "ttm",
    "drm_kms_helper",
    "gpu_sched",
    "nvgpu",
];
const FS_MODULES: &[&str] = &[
    "ext4", "ext3", "jbd2", "xfs", "btrfs", "nfs", "nfsv4", "nfsv3", "nfsd", "zfs", "spl", "aufs",
    "overlay", "fuse", "ceph", "cifs", "f2fs", "lustre", "lnet", "ptlrpc", "mmfs26", "squashfs",
];
const NET_MODULES: &[&str] = &[
    "mlx5_core",
    "mlx5_ib",
    "mlx4_core",
    "mlx4_en",
    "mlx4_ib",
    "ib_core",
    "ib_uverbs",
    "ib_ipoib",
    "rdma_rxe",
    "ib_rxe",
    "rdma_cm",
    "iw_cm",
    "nv_peer_mem",
    "efa",
    "ice",
    "i40e",
    "ixgbe",
    "igb",
    "e1000e",
    "bnxt_en",
    "bnxt_re",
    "tg3",
    "r8169",
    "ib_iser",
    "ib_srp",
    "hfi1",
    "qedr",
    "irdma",
];

fn kind_of_module(module: &str) -> CulpritKind {
    if GPU_MODULES.contains(&module) {
        CulpritKind::GpuDriver
    } else if FS_MODULES.contains(&module) {
        CulpritKind::Filesystem
    } else if NET_MODULES.contains(&module) {
        CulpritKind::Network
    } else {
        CulpritKind::OtherDriver
    }
}

/// The module of the faulting code, else of the trace's first frame in a module, else
/// the subsystem of the source file a BUG or WARNING names, else built-in kernel code.
fn culprit(d: &Details) -> Option<Culprit> {
    let named = |name: &str, from| Culprit {
        name: name.to_string(),
        kind: kind_of_module(name),
        from,
    };
    if let Some(m) = &d.module {
        return Some(named(m, "the faulting instruction"));
    }
    if let Some(path) = &d.source_file {
        if let Some(c) = subsystem_of(path) {
            return Some(c);
        }
    }
    if let Some(m) = &d.trace_module {
        return Some(named(m, "the call trace"));
    }
    d.function.as_ref().map(|f| Culprit {
        name: f.clone(),
        kind: CulpritKind::Kernel,
        from: "the faulting instruction (built-in code)",
    })
}

/// `fs/ext4/inode.c` is ext4's, `drivers/gpu/drm/i915/…` i915's: built-in code still
/// has an author.
fn subsystem_of(path: &str) -> Option<Culprit> {
    // A kernel built elsewhere names its sources from the build directory
    // (`/home/user/rpmbuild/BUILD/…/linux-4.4.14/fs/ext4/inode.c`).
    const TOP: &[&str] = &[
        "fs", "drivers", "mm", "kernel", "net", "arch", "block", "lib", "include", "sound",
        "security", "ipc", "init", "crypto", "virt",
    ];
    let all: Vec<&str> = path.split('/').collect();
    let from = all.iter().position(|p| TOP.contains(p)).unwrap_or(0);
    let parts = &all[from..];
    let path = parts.join("/");
    let path = path.as_str();
    let at = |i: usize| parts.get(i).copied().filter(|p| !p.contains('.'));
    let (name, kind) = match (at(0), at(1)) {
        (Some("fs"), Some(fs)) => (fs.to_string(), CulpritKind::Filesystem),
        (Some("drivers"), Some("gpu")) => (
            at(3).or(at(2)).unwrap_or("gpu").to_string(),
            CulpritKind::GpuDriver,
        ),
        (Some("drivers"), Some("net" | "infiniband")) => (
            parts[..parts.len() - 1]
                .last()
                .copied()
                .unwrap_or("net")
                .to_string(),
            CulpritKind::Network,
        ),
        (Some("drivers"), Some(d)) => (d.to_string(), CulpritKind::OtherDriver),
        (Some(_), _) => (path.to_string(), CulpritKind::Kernel),
        _ => return None,
    };
    Some(Culprit {
        name,
        kind,
        from: "the source file the kernel named",
    })
}

/// The kernel's taint flags (Documentation/admin-guide/tainted-kernels.rst), the ones
/// that bear on whom to suspect spelled out.
fn taint_meaning(flag: char) -> Option<&'static str> {
    Some(match flag {
        'G' => "no proprietary module",
        'P' => "a proprietary module is loaded",
        'O' => "an out-of-tree module is loaded",
        'E' => "an unsigned module is loaded",
        'F' => "a module was force-loaded",
        'R' => "a module was force-unloaded",
        'M' => "the CPU reported a machine check (hardware)",
        'B' => "the kernel found a bad page (memory)",
        'D' => "the kernel died recently (an earlier oops)",
        'W' => "the kernel warned earlier",
        'C' => "a staging driver is loaded",
        'L' => "a soft lockup occurred earlier",
        'S' => "the CPU is out of specification",
        'A' => "ACPI tables were overridden",
        'I' => "a firmware bug is being worked around",
        'U' => "taint requested by user space",
        'K' => "the kernel is live-patched",
        _ => return None,
    })
}

/// What a crash report says, for the finding: its title, evidence, fix and whom it
/// points at.
pub(super) struct Verdict {
    pub title: String,
    pub evidence: Vec<Evidence>,
    pub fix: String,
    pub cause: CauseKind,
}

/// An oops's or a Windows bug check's report, read whole, for the finding.
pub(super) fn crash_verdict(
    class: FailureClass,
    group: &[&LogMatch],
    source: &str,
) -> Option<Verdict> {
    match class {
        FailureClass::KernelOops => verdict(group, source),
        FailureClass::WindowsMemoryFault => super::windbg::verdict(group, source),
        _ => None,
    }
}

fn verdict(group: &[&LogMatch], source: &str) -> Option<Verdict> {
    let m = group.iter().find(|m| m.capture("oops_module").is_some())?;
    let at = format!("{source}:{}", m.line_no);
    let module = m.capture("oops_module")?;
    let kind = m
        .capture("oops_culprit_kind")
        .and_then(CulpritKind::parse)
        .unwrap_or(CulpritKind::Kernel);
    let mut evidence = Vec::new();
    let mut push =
        |label: &str, value: String| evidence.push(Evidence::text(label, value, at.clone()));
    let suspect = match kind {
        CulpritKind::Kernel => format!("built-in kernel code ({module})"),
        _ => format!("{module} ({})", kind.as_str()),
    };
    push("suspect", suspect.clone());
    if let Some(from) = m.capture("oops_culprit_from") {
        push("named by", from.to_string());
    }
    if let Some(f) = m.capture("oops_function") {
        push("function", f.to_string());
    }
    if let Some(p) = m.capture("oops_source_file") {
        push("source file", p.to_string());
    }
    let running = m
        .capture("oops_process")
        .map(|p| match m.capture("oops_pid") {
            Some(pid) => format!("{p} (pid {pid})"),
            None => p.to_string(),
        });
    if let Some(r) = &running {
        push("running", r.clone());
    }
    if let Some(a) = m.capture("oops_access") {
        let page = m
            .capture("oops_page")
            .map(|p| format!(", {p}"))
            .unwrap_or_default();
        push("access", format!("{a}{page}"));
    }
    if let Some(t) = m.capture("oops_taint") {
        push("tainted", spelled_taint(t));
    }
    if let Some(k) = m.capture("oops_kernel") {
        push("kernel", k.to_string());
    }
    let where_ = running
        .map(|r| format!(" while {r} ran"))
        .unwrap_or_default();
    // Oopses in unrelated built-in functions are what flipped bits look like: no one
    // piece of code is wrong everywhere.
    let mut sites: Vec<&str> = group
        .iter()
        .filter(|m| m.rule != WARNING_RULE)
        .filter(|m| m.capture("oops_culprit_kind") == Some(CulpritKind::Kernel.as_str()))
        .filter_map(|m| m.capture("oops_module"))
        .collect();
    sites.sort_unstable();
    sites.dedup();
    let scattered = kind == CulpritKind::Kernel && sites.len() >= 3;
    // A WARN: the kernel's own check failed and it went on.
    let warned = m.rule == WARNING_RULE;
    let noun = if warned {
        "Kernel warning"
    } else {
        "Kernel oops"
    };
    let title = match kind {
        _ if scattered => format!(
            "Kernel oopses in {} unrelated kernel functions: failing RAM is the likely cause",
            sites.len()
        ),
        CulpritKind::Kernel => format!("{noun} in built-in kernel code ({module}){where_}"),
        // The comma closes the apposition: "the nvidia module, a GPU driver, while …".
        _ => format!(
            "{noun} in the {module} module, a {}{}{where_}",
            kind.as_str(),
            if where_.is_empty() { "" } else { "," }
        ),
    };
    let fix = fix_for(kind, module);
    let fix = match warned {
        // Nothing crashed yet: what the driver's fix says, without the reboot.
        true => format!(
            "The kernel went on after this warning, but a condition its code says must not happen often \
             comes before a hang or an oops. {}",
            fix.lines().next().unwrap_or_default().replace("faulted", "warned")
        ),
        false => fix,
    };
    Some(Verdict {
        title,
        evidence,
        fix,
        cause: if scattered {
            CauseKind::Hardware
        } else {
            CauseKind::Driver
        },
    })
}

fn spelled_taint(flags: &str) -> String {
    let meanings: Vec<String> = flags
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match taint_meaning(c) {
            Some(m) => format!("{c} ({m})"),
            None => c.to_string(),
        })
        .collect();
    meanings.join(", ")
}

fn fix_for(kind: CulpritKind, module: &str) -> String {
    match kind {
        CulpritKind::GpuDriver if module.starts_with("nvidia") => format!(
            "The NVIDIA driver ({module}) faulted: check its version against what CUDA and PyTorch need \
             (nvidia-smi; python -c 'import torch; print(torch.version.cuda)'), update it (the distribution's \
             nvidia-driver package or NVIDIA's installer, the same version for every nvidia* module), and \
             report it to NVIDIA with nvidia-bug-report.sh.\nReboot the node: the GPU is unusable until then."
        ),
        CulpritKind::GpuDriver => format!(
            "The GPU driver {module} faulted: update the kernel (the driver ships with it) or the ROCm/DKMS \
             driver package, and report the whole oops to the driver's tracker (drm/amd, drm/i915, nouveau).\n\
             Reboot the node."
        ),
        CulpritKind::Filesystem => format!(
            "The {module} filesystem code faulted: update the kernel (or the out-of-tree module: zfs, lustre, \
             gpfs), check the filesystem (unmounted: fsck / xfs_repair -n / btrfs check --readonly) and the \
             disk (smartctl -a, dmesg -T | grep -i 'I/O error'); for a network filesystem, the client and the \
             server's logs.\nReboot the node."
        ),
        CulpritKind::Network => format!(
            "The network/RDMA driver {module} faulted: update the driver stack (MLNX_OFED/DOCA or the \
             kernel's) and the adapter's firmware (mlxfwmanager, ethtool -i), and report the oops to the \
             vendor.\nReboot the node; NCCL jobs on it fail until then."
        ),
        CulpritKind::OtherDriver => format!(
            "The driver {module} faulted: update it or the kernel, or unload it (modprobe -r {module}) if the \
             job does not need it, and report the oops to its maintainer.\nReboot the node."
        ),
        CulpritKind::Kernel => "Built-in kernel code faulted: update the kernel and report the whole oops to \
             the distribution. If oopses recur in unrelated functions, suspect the RAM: run memtest86+, and \
             read the ECC counters (edac-util -v, or ras-mc-ctl --errors).\nReboot the node."
            .to_string(),
    }
}

#[cfg(test)]
#[path = "oops_tests.rs"]
mod tests;
