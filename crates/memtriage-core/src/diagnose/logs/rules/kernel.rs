//! The kernel itself: stalled reclaim, failed page allocations, oopses and panics.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::model::finding::Certainty::{Likely, Possible};
use crate::model::finding::Severity::{Error, Warn};
use crate::model::ids;

pub(super) static RULES: &[Rule] = &[
    // ---- kernel memory pressure and faults --------------------------------------
    rule(
        "kernel.reclaim-hung-task",
        C::MemoryPressure,
        Warn,
        &["blocked for more than"],
        r"INFO: task (?P<comm>[^:]+):(?P<pid>\d+) blocked for more than (?P<seconds>\d+) seconds",
        "Memory reclaim stalled: {comm} was blocked for more than {seconds} s",
    ),
    rule(
        // journald frees its caches when the kernel signals memory pressure (PSI).
        "journald.memory-pressure",
        C::MemoryPressure,
        Warn,
        &["Under memory pressure, flushing caches"],
        r"systemd-journald(?:\[\d+\])?: Under memory pressure, flushing caches",
        "systemd-journald flushed its caches under memory pressure",
    ),
    rule(
        "kernel.page-allocation-failure",
        C::MemoryPressure,
        Warn,
        &[
            "page allocation failure",
            "page allocation stalls",
            "-order allocation failed",
            "kswapd",
        ],
        r"(?:(?P<comm>\S+?):? |^)page allocation (?:failure[.:]|stalls for \d+ms,) order:\s?(?P<order>\d+)|__alloc_pages: (?P<order2>\d+)-order allocation failed|^\s*\d+\s+\w+\s+\d+\s+-?\d+\s+\d+\s+\d+\s+\d+\s+[RSD]\s+(?:[5-9]\d|100)\.\d\s+[\d.]+\s+[\d:.]+\s+\[?kswapd\d",
        "The kernel failed an order-{order} page allocation for {comm}",
    ),
    rule(
        // The call trace of that failure pasted without its first line: the kernel's
        // warning function as a frame (`warn_alloc_failed+0x110/0x180`, `warn_alloc+0x…`).
        "kernel.allocation-failure-trace",
        C::MemoryPressure,
        Warn,
        &["warn_alloc"],
        r"\bwarn_alloc(?:_failed)?\+0x[0-9a-f]+/0x[0-9a-f]+",
        "A kernel call trace shows a failed page allocation (warn_alloc)",
    ),
    Rule {
        certainty: Possible,
        ..rule(
            "prose.kswapd-busy",
            C::MemoryPressure,
            Warn,
            &["kswap"],
            // kswapd named with the CPU it burns, in words or a figure: reclaim that
            // cannot keep up. (A `top` row is read by the page-allocation rule above.)
            r"(?i:\bkswap(?:d\d*)?\b[^\n]{0,60}?(?:\b(?:[5-9]\d|100)(?:[.,]\d+)?\s?%|\bhigh (?:cpu|load)|\bcpu\b|\bspin\w*|\bbusy\b|\bhog\w*|\bskyrocket\w*|使用率|高负[荷载]|負荷|高く|高い|占用|飙升|飆升)|\b(?:high|100\s?%)[^.\n]{0,20}\bcpu\b[^.\n]{0,30}\bkswap|\bcpu (?:is |was )?at (?:[5-9]\d|100)\s?%[^.\n]{0,40}?\bkswap)",
            "The text says kswapd was burning CPU: reclaim could not keep up",
        )
    },
    Rule {
        extract: Some(extract_psi_stalled),
        certainty: Possible,
        ..rule(
            "psi.memory-stalled",
            C::MemoryPressure,
            Warn,
            &["avg10"],
            // /proc/pressure/memory's lines as printed or pasted, or a monitor's `PSI mem`.
            r"(?i:^(?:(?:psi\s+)?mem\w*\s+)?(?P<kind>some|full)\s+avg10[=:]\s*(?P<avg10>\d+(?:\.\d+)?)(?:\s+avg60[=:]\s*(?P<avg60>\d+(?:\.\d+)?))?|\bpsi\s+mem\w*\s+(?P<kind2>some|full)\s+avg10[=:]?\s*(?P<avg10b>\d+(?:\.\d+)?))",
            "Tasks stalled on memory {avg10}% of the last 10 s (PSI)",
        )
    },
    rule(
        "kernel.page-fault-bug",
        C::KernelOops,
        Error,
        &[
            "BUG: unable to handle",
            "BUG unable to handle",
            "BUG: kernel NULL pointer",
        ],
        r"BUG:? unable to handle (?P<what>page fault|kernel NULL pointer dereference|kernel paging request) (?:for|at) (?:address:? ?)?\s*(?P<address>[0-9a-fx]+|\(null\))|BUG: (?P<what2>kernel NULL pointer dereference), address: (?P<address2>[0-9a-fx]+)",
        "Kernel oops: unable to handle {what} at {address}",
    ),
    rule(
        // ZFS's kernel module (SPL) stops the thread at a failed assertion and dumps its
        // stack: `VERIFY3(…) failed (a <= b)`, then `PANIC at range_tree.c:498:…()`.
        // The assertion is read: `PANIC at ` and `VERIFY` alone would be anchors that
        // ordinary text (` at `, `verify`) hits all the time.
        "zfs.spl-panic",
        C::KernelOops,
        Error,
        &["VERIFY3(", "VERIFY0(", "VERIFY("],
        r"(?-i:\bVERIFY(?:3|0)?\(.{1,300}\) failed\b)",
        "ZFS's kernel module failed an assertion and stopped the thread (SPL panic)",
    ),
    rule(
        // arm64 and 32-bit arm (and x86 before 4.x) say it without `BUG:`; MIPS names
        // the CPU first (`CPU 2 Unable to handle kernel paging request at virtual
        // address …, epc == …`).
        "kernel.unable-to-handle",
        C::KernelOops,
        Error,
        &["Unable to handle kernel"],
        r"(?:^|\bCPU \d+ )Unable to handle kernel (?P<what>paging request(?: for (?:data|instruction fetch))?|NULL pointer dereference|execute from non-executable memory|access to user memory[\w ]*|read from unreadable memory|write to read-only memory) at (?:virtual address |address )?(?P<address>[0-9a-fx]+)",
        "Kernel oops: unable to handle kernel {what} at {address}",
    ),
    rule(
        "kernel.internal-error-oops",
        C::KernelOops,
        Error,
        // ARM's die(): `Internal error: Oops: 17 [#1]`, or with the fault's own
        // string, empty for some aborts (`Internal error: : 1008 [#1] PREEMPT SMP ARM`).
        &["Internal error: "],
        r"^Internal error: (?:Oops(?: - [\w ]+)?|[\w ]{0,40}): (?P<detail>[0-9a-f]+ \[#\d+\].*?)\s*$",
        "Kernel oops: {detail}",
    ),
    // PowerPC and other architectures' oops line (x86 says `Oops: 0000 [#1]`).
    rule(
        "kernel.oops-line",
        C::KernelOops,
        Error,
        &["Oops: "],
        r"^Oops: (?P<detail>[^\[]*?\[#\d+\].*?)\s*$",
        "Kernel oops: {detail}",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // The NMIs a platform raises for a hardware error (nmi.c's io_check_error
            // and pci_serr_error): the machine freezes or panics with them, and the
            // report names neither an oops nor a BUG.
            "kernel.hardware-nmi",
            C::KernelOops,
            Error,
            &["NMI: IOCK error", "NMI: PCI system error"],
            r"\bNMI: (?P<kind>IOCK error \(debug interrupt\?\)|PCI system error \(SERR\)) for reason [0-9a-f]+\b",
            "The kernel received a hardware error NMI ({kind}): a device or the platform reported an error it could not recover",
        )
    },
    rule(
        "kernel.bug",
        C::KernelOops,
        Error,
        &["kernel BUG at"],
        r"^kernel BUG at (?P<location>\S+?)!?$",
        "Kernel BUG at {location}",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // macOS and FreeBSD when swap runs out: macOS starts ending apps ("no
            // paging space action"), FreeBSD's pager finds no swap to write to.
            "kernel.swap-exhausted",
            C::MemoryPressure,
            Warn,
            &[
                "low swap: ",
                "swap_pager_getswapspace",
                "swap_pager: out of swap",
            ],
            r"\blow swap: (?P<what>triggering no paging space action|failed to create swapfile|unable to find a swap file)|\bswap_pager_getswapspace\(\d+\): failed|\bswap_pager: out of swap space",
            "Swap ran out: the system is short of memory",
        )
    },
    rule(
        // The kernel's own checks that found its memory corrupted: a page freed in a
        // bad state, a list whose links were overwritten, KASAN's and KFENCE's reports.
        "kernel.memory-corruption",
        C::KernelOops,
        Error,
        &[
            "BUG: Bad page",
            "BUG: Bad rss-counter",
            "list_del corruption",
            "list_add corruption",
            "BUG: KASAN:",
            "BUG: KFENCE:",
        ],
        r"^BUG: Bad page (?:state|map) in process (?P<process>\S+)|^BUG: Bad rss-counter state|^list_(?:del|add) corruption\b|^BUG: (?:KASAN|KFENCE): (?P<kind>[\w-]+(?: [\w-]+)*?) in (?P<function>\S+)",
        "The kernel found its memory state corrupted (a BUG report)",
    ),
    rule(
        "kernel.gpf",
        C::KernelOops,
        Error,
        &["general protection fault"],
        r"^general protection fault(?:,|:)?\s*(?P<detail>.*)$",
        "Kernel oops: general protection fault",
    ),
    rule(
        "kernel.oops",
        C::KernelOops,
        Error,
        &["Oops: "],
        // The crash utility quotes it on its `PANIC:` line.
        r#"^(?:PANIC: ")?(?:Oops: )+(?P<detail>[0-9a-f]{4}\b[^"]*|[\w :-]+ \[#\d+\][^"]*)"?\s*$"#,
        "Kernel oops: {detail}",
    ),
    Rule {
        certainty: crate::model::finding::Certainty::Likely,
        ..rule(
            // The register dump of an oops, a BUG or a WARN, in the 2.6/3.x form
            // (`RIP: 0010:[<ffffffff8124e424>]  [<…>] blk_requeue_request+0x94/0xa0`) and
            // the later one (`RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]`): the line
            // that names the faulting function, when the headline is not in the text.
            "kernel.register-dump",
            C::KernelOops,
            Error,
            &["RIP: ", "RIP  [<"],
            // 2.6 to 4.x also end the oops with it: `RIP  [<ffffffff81014ec3>] func+0x63/0x80`.
            r"^RIP: [0-9a-f]{4}:(?:\[<[0-9a-f]+>\]\s+\[<[0-9a-f]+>\] )?(?P<function>[\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[(?P<module>\w+)\])?|^RIP  \[<[0-9a-f]+>\] (?P<function2>[\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[(?P<module2>\w+)\])?",
            "The kernel dumped its registers in {function} (an oops, a BUG or a WARN)",
        )
    },
    Rule {
        certainty: Likely,
        // An OOM kill's report dumps the registers and code of the task that asked for
        // memory too (`RIP: 0033:…`, a user page fault): there the line is the kill's.
        absorbed_by: Some(C::OomKill),
        ..rule(
            // The instruction bytes an oops, BUG or WARN dumps, the faulting one in
            // angle brackets: the dump's own line when its headline was cut.
            "kernel.code-line",
            C::KernelOops,
            Error,
            &["Code: "],
            r"^Code: (?:[0-9a-f]{2} ){8,}<[0-9a-f]{2}>",
            "The kernel dumped the instructions where it faulted (an oops, a BUG or a WARN)",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            // The kernel's memory dump (show_mem) without the lines before it: it is
            // printed when memory ran out, for an OOM kill (most often) or a failed
            // page allocation, whose own lines claim the log where they are pasted.
            "kernel.show-mem",
            C::OomKill,
            Warn,
            // Its first line (`active_anon:N inactive_anon:N isolated_anon:N`) behind a
            // prefix the rules do not know (OpenWrt's `… kern.warn kernel:`).
            &["lowmem_reserve[]", "total pagecache pages", "pages in swap cache", "hugepages_total=", "isolated_anon:"],
            r"^lowmem_reserve\[\]:(?: \d+)+\s*$|^\d+ total pagecache pages\s*$|^\d+ pages in swap cache\s*$|^Node \d+ hugepages_total=\d+ hugepages_free=\d+|\bactive_anon:\d+ inactive_anon:\d+ isolated_anon:\d+",
            "The kernel dumped its memory state, as it does when memory ran out (an OOM kill, most often)",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            // A backtrace through oops_end: the kernel was ending an oops there, when
            // its headline is not in the text (a photo's transcript, a cut paste).
            "kernel.oops-end-frame",
            C::KernelOops,
            Error,
            &["oops_end+0x"],
            r"(?:^|[\s\]>])oops_end\+0x[0-9a-f]+/0x[0-9a-f]+",
            "The kernel's backtrace passes through oops_end: the kernel oopsed",
        )
    },
    rule(
        // A WARN: a condition the kernel's code says must not happen; it goes on. The
        // reader of the report names the module from the line and its register dump.
        "kernel.warning",
        C::KernelOops,
        Warn,
        &["WARNING: CPU:", "WARNING: at "],
        r"^WARNING: (?:CPU: \d+ PID: \d+ )?at (?P<location>\S+)",
        "Kernel warning at {location}",
    ),
    rule(
        // A filesystem that found its own structures corrupt shuts down; the source
        // file names it.
        "kernel.fs-internal-error",
        C::KernelOops,
        Error,
        &[": Internal error "],
        r"^XFS(?: \([\w-]+\))?: Internal error (?P<check>\w+) at line \d+ of file (?P<file>fs/xfs/(?:[\w.-]+/)*[\w.-]+\.c)",
        "XFS found its own structures corrupt ({check} in {file}) and shut the filesystem down",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // The watchdogs' reports: a CPU that did not schedule, or RCU that saw a
            // CPU hold it up; the kernel goes on, but something in it is stuck.
            "kernel.lockup",
            C::KernelOops,
            Error,
            &[
                "soft lockup - CPU#",
                "hard LOCKUP",
                "detected stall",
                "detected expedited stall",
            ],
            r"\bBUG: soft lockup - CPU#(?P<cpu>\d+) stuck for (?P<seconds>\d+)s!|\bWatchdog detected hard LOCKUP on cpu (?P<cpu2>\d+)|\b(?:rcu: )?INFO: rcu_(?:sched|preempt|bh) (?:self-)?detected (?:expedited )?stalls? on CPU",
            "The kernel's watchdog found a CPU stuck (a soft or hard lockup, an RCU stall)",
        )
    },
    rule(
        "kernel.panic",
        C::KernelOops,
        Error,
        &["Kernel panic", "PANIC: double fault"],
        r"^(?i:kernel panic) - not syncing ?: ?(?P<reason>.+?)\s*$|^PANIC: (?P<reason2>double fault, error_code: \S+)",
        "Kernel panic: {reason}",
    ),
    rule(
        // FreeBSD's kernel (pfSense, OPNsense, TrueNAS CORE) where its memory faults:
        // `Fatal trap 12: page fault while in kernel mode`, or a panic in the pager
        // (`panic: swap_pager_force_pagein: read from swap failed`). Other panics'
        // words (`panic: runtime error` is Go's) are no kernel's.
        "kernel.freebsd-memory-panic",
        C::KernelOops,
        Error,
        &["page fault while in kernel mode", "panic: swap_pager", "panic: page fault"],
        r"^Fatal trap \d+: page fault while in kernel mode|^panic: (?:swap_pager\w*|page fault)\b",
        "FreeBSD's kernel faulted in its memory management (a trap or a panic in the pager)",
    ),
    rule(
        // MikroTik RouterOS logs, after the reboot, why the last boot ended
        // (`system,error,critical out of memory condition was detected` beside
        // `kernel failure in previous boot`).
        "routeros.out-of-memory-condition",
        C::MemoryPressure,
        Error,
        &["out of memory condition was detected"],
        r"\bout of memory condition was detected\b",
        "RouterOS found that the previous boot ran out of memory (the router rebooted)",
    ),
];

pub(super) const MEMORY_PRESSURE: ClassInfo = ClassInfo {
    class: C::MemoryPressure,
    name: "memory_pressure",
    id: ids::LOG_MEMORY_PRESSURE,
    title: "The kernel struggled to reclaim memory",
    why: "Reclaim stalls and failed allocations mean memory ran out and the machine thrashed (swapping or \
          re-reading file pages) before or instead of an OOM kill; jobs slow to a crawl.",
    fix: "Measure the job's fault rate and pressure: memtriage run -- python train.py; cat \
          /proc/pressure/memory.\nGive the job headroom (lower its peak, fewer jobs per node) and consider \
          swap off on dedicated training nodes (swapoff -a) so it fails fast instead of thrashing.",    cause: crate::model::finding::CauseKind::Capacity,
    confirm: "cat /proc/pressure/memory and vmstat 1 while it happens.",
};

pub(super) const KERNEL_OOPS: ClassInfo = ClassInfo {
    class: C::KernelOops,
    name: "kernel_oops",
    id: ids::LOG_KERNEL_OOPS,
    title: "The Linux kernel faulted (oops)",
    why: "The kernel itself touched memory it must not (the Linux counterpart of Windows' \
          PAGE_FAULT_IN_NONPAGED_AREA): a driver or kernel bug, or failing RAM. Processes in the faulting \
          path hang or die, and the kernel is tainted until reboot.",
    fix: "Read the whole oops (dmesg -T, from the 'BUG:' or 'Oops:' line to the end of its call trace): the \
          module in the RIP line is the suspect (nvidia, a filesystem, a network driver).\nReboot the node; \
          update that driver or kernel; if oopses recur at random addresses, test the RAM (memtest86+, \
          edac-util).",    cause: crate::model::finding::CauseKind::Driver,
    confirm: "The module in the oops's RIP line and the taint flags (dmesg -T, from BUG:/Oops: to the end of the trace).",
};

/// Time stalled on memory this large (percent of the last 10 s or 60 s, some task) is
/// a machine reclaiming instead of working; a healthy one reads 0.00.
const PSI_STALLED_PCT: f64 = 10.0;

/// A PSI line whose stall share is large: `avg10` (or `avg60`) at [`PSI_STALLED_PCT`]
/// or more. The figure is kept under `avg10`.
fn extract_psi_stalled(_msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let figure = |name: &str| {
        out.iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse::<f64>().ok())
    };
    let avg10 = figure("avg10").or_else(|| figure("avg10b"));
    let worst = avg10.into_iter().chain(figure("avg60")).fold(0.0, f64::max);
    if worst < PSI_STALLED_PCT {
        return false;
    }
    if let Some(v) = avg10 {
        out.retain(|(k, _)| k != "avg10");
        out.push(("avg10".into(), format!("{v:.1}")));
    }
    true
}
