//! SIGBUS outside shared memory: a memory-mapped file truncated under its mapping, or
//! a disk that failed a read.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::model::finding::Certainty::Likely;
use crate::model::finding::Severity::Error;
use crate::model::ids;

pub(super) static RULES: &[Rule] = &[
    Rule {
        certainty: Likely,
        ..rule(
            // An unaligned access the ARM kernel will not fix up: SIGBUS follows.
            "kernel.alignment-trap",
            C::MmapBusError,
            Error,
            &["Alignment trap: not handling"],
            r"\bAlignment trap: not handling instruction [0-9a-f]+ at\b",
            "The ARM kernel refused an unaligned access (alignment trap): the process gets SIGBUS",
        )
    },
    // ---- SIGBUS and disks --------------------------------------------------------
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            "shell.bus-error",
            C::MmapBusError,
            Error,
            &["Bus error", "bus error", "Bus-Zugriffsfehler", "Erreur du bus", "总线错误", "Error del bus", "Error en el bus", "Erro de barramento", "Errore di bus", "バスエラー", "Błąd szyny", "Ошибка шины", "zsh: "],
            shell_signal!("Bus error|bus error|Bus-Zugriffsfehler|Erreur du bus|总线错误|Error del bus|Error en el bus|Erro de barramento|Errore di bus|バスエラー|Błąd szyny|Ошибка шины"),
            "The process died of a bus error (SIGBUS)",
        )
    },
    // Also PostgreSQL's postmaster's report of a backend, aide's mapping of a file
    // that shrank, and Windows' in-page error
    // (0xC0000006: a page of a mapped file could not be read in), its SIGBUS. Beside
    // evidence that shared memory ran short (/dev/shm full, the thread's word that it was
    // too small: NCCL's and UCX's `Caught signal 7 (Bus error: nonexistent physical
    // address)` in a container), it is shared memory's.
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
        "signal.sigbus-report",
        C::MmapBusError,
        Error,
        &[
            "SIGBUS",
            "Signal 7",
            "signal 7",
            "Bus error (7)",
            "exitcode",
            "Bus error (core",
            "Bus error(",
            "总线错误",
            "): Bus error",
            "signal 7: Bus error",
            "Fatal signal 7",
            "signal 7/BUS",
            "recent unsafe memory access",
            "c0000006",
            "IN_PAGE_ERROR",
            "BUS_ADRERR",
            "BUS_OBJERR",
            "Bus Error at ",
            "Bus error at address",
            "Received signal Bus error",
        ],
        // Ruby's `[BUG] Bus Error at 0x…`, Bun's `panic: Bus error at address 0x…`,
        // ClickHouse's `Received signal Bus error (7)`.
        r"\bReceived signal Bus error \(7\)|\[BUG\] Bus Error at 0x[0-9a-fA-F]+|\bBus error at address 0x[0-9a-fA-F]+|EXC_BAD_ACCESS \(SIGBUS\)|\bCaught SIGBUS(?:/SEGV)? while mmapping|interrupted by signal (?:10|7): SIGBUS|(?:^|[^`'\x22A-Za-z0-9_])(?:Bus error|Bus Error|总线错误)\s*\((?:core dumped|core dump|吐核|核心已转储)\)|(?:Program|Thread \d+ \x22[^\x22]*\x22) received signal SIGBUS|Signal 7 \(SIGBUS\) received by PID (?P<pid>\d+)|\bexitcode\s*:\s*-7\b|terminated by signal SIGBUS|killed by signal(?: 7\b|:? SIGBUS)|Signal: Bus error \(7\)|\*\*\* SIGBUS (?:\(@0x[0-9a-f]+\) received by PID|received at time=)|Caught signal 7 \(Bus error|stop reason = signal SIGBUS|(?:crashed|died|was killed|terminated) (?:with|by|of) (?:a )?SIGBUS\b|^#\s+SIGBUS \(0x7\) at pc=0x[0-9a-f]+|si_signo: 7 \(SIGBUS\), si_code: \d+ \(BUS_ADRERR\)|^SIGBUS: bus error\s*$|\[signal SIGBUS: bus error code=|(?:^|\]\s)signal (?:\((?:7|10)(?:\.\d+)?\)|(?:7|10) \(\d+\)): Bus error|\(signal: 7, SIGBUS: access to undefined memory\)|\bwas terminated by signal 7: Bus error|\bFatal signal 7 \(SIGBUS\), code|terminated abnormally with signal 7/BUS|a fault occurred in a recent unsafe memory access operation|\b(?:0xc0000006|STATUS_IN_PAGE_ERROR|EXCEPTION_IN_PAGE_ERROR)\b|\bBUS_(?:ADRERR|OBJERR)\b",
        "The process died of a bus error (SIGBUS)",
        )
    },
    Rule {
        certainty: crate::model::finding::Certainty::Likely,
        ..rule(
            "prose.reported-bus-error",
            C::MmapBusError,
            Error,
            &["Bus error", "bus error", "Bus Error"],
            reported!("shows?|showed|got|gets?|getting|see|saw|fails?|failed|prints?|printed|reports?|reported|gives?|gave|returns?|returned", "bus error"),
            "The text reports a bus error (SIGBUS)",
        )
    },
    rule(
        "kernel.block-io-error",
        C::MmapBusError,
        Error,
        &[" error, dev ", " error dev "],
        r"^(?:(?:blk_update_request|blk_print_req_error|print_req_error): )?(?:critical )?(?:I/O|medium|target|space allocation) error,? dev (?P<device>[\w\-]+), sector (?P<sector>\d+)",
        "The disk failed a read: I/O error on {device}",
    ),
    rule(
        "kernel.buffer-io-error",
        C::MmapBusError,
        Error,
        &["Buffer I/O error"],
        r"^Buffer I/O error on dev(?:ice)? (?P<device>[\w\-]+), logical block (?P<block>\d+)",
        "The disk failed a read: Buffer I/O error on {device}",
    ),
];

pub(super) const MMAP_BUS_ERROR: ClassInfo = ClassInfo {
    class: C::MmapBusError,
    name: "mmap_bus_error",
    id: ids::LOG_MMAP_BUS_ERROR,
    title: "SIGBUS: a memory-mapped file could not be read",
    why: "A bus error outside DataLoader shared memory means a page of a memory-mapped file could not be \
          supplied: the file was truncated or rewritten while mapped (a checkpoint overwritten in place, a \
          dataset replaced), or the disk or network filesystem failed the read.",
    fix: "Never overwrite a file that a running job maps: write the new one beside it and rename(2) it into \
          place (os.replace), so the old mapping keeps its pages.\nCheck the disk: dmesg -T | grep -iE 'I/O \
          error|blk_update_request'; smartctl -a /dev/DEV.\nCopy the file to local disk before mapping it \
          (numpy.memmap, safetensors, torch.load(mmap=True)) when it lives on a network filesystem.",    cause: crate::model::finding::CauseKind::Configuration,
    confirm: "dmesg -T | grep -iE 'I/O error|bus error'; check whether the mapped file changed size (ls -l) or the disk filled (df -h).",
};
