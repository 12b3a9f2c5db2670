//! Native crashes: segmentation faults, aborts, heap corruption, uncaught C++
//! exceptions, and Python's faulthandler output of them.

use std::sync::OnceLock;

use regex::Regex;

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::model::finding::Certainty::Likely;
use crate::model::finding::Severity::Error;
use crate::model::ids;

pub(super) static RULES: &[Rule] = &[
    // ---- native crashes ----------------------------------------------------------
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        faulthandler_block: true,
        ..rule(
            "python.faulthandler-bus-error",
            C::MmapBusError,
            Error,
            &["Fatal Python error: "],
            r"(?:^|\] )Fatal Python error: (?P<error>Bus error)",
            "Python died of a bus error (SIGBUS) in {site}",
        )
    },
    Rule {
        faulthandler_block: true,
        ..rule(
            "python.faulthandler",
            C::NativeCrash,
            Error,
            &["Fatal Python error: "],
            // pytest's progress (`test_glove.py .`) may stand before it on its line.
            r"(?:^|^\S+\.py [.sFExX]*)Fatal Python error: (?P<error>.+?)\s*$",
            "Python crashed: {error} in {site}",
        )
    },
    rule(
        // Unreal Engine's crash handler on Linux (CARLA, games): `Signal 11 caught.`,
        // then `CommonUnixCrashHandler: Signal=11`.
        "unreal.crash-handler",
        C::NativeCrash,
        Error,
        &["CrashHandler: Signal"],
        r"CommonUnixCrashHandler: Signal=(?P<signal>11|6|4|8)\b",
        "The Unreal Engine program crashed on signal {signal}",
    ),
    rule(
        "kernel.segfault",
        C::NativeCrash,
        Error,
        &["segfault at "],
        r"^(?:(?P<comm>.+?)\[(?P<pid>\d+)\]: )?segfault at (?P<address>[0-9a-f]+) ip (?P<ip>[0-9a-f]+) sp [0-9a-f]+ error (?P<error>\d+)(?:.*? in (?P<object>[^\[\s]+)\[)?",
        "{comm} (pid {pid}) segfaulted at address 0x{address} in {object}",
    ),
    rule(
        "kernel.trap",
        C::NativeCrash,
        Error,
        &["traps: "],
        r"^traps: (?P<comm>.+?)\[(?P<pid>\d+)\] (?P<trap>general protection(?: fault)?|trap invalid opcode|trap divide error)",
        "{comm} (pid {pid}) crashed: {trap}",
    ),
    rule(
        // powerpc's kernel says it with the instruction pointer's name there (`nip`).
        "kernel.powerpc-signal",
        C::NativeCrash,
        Error,
        &["illegal instruction (", "unhandled signal "],
        r"^(?P<comm>.+?)\[(?P<pid>\d+)\]: (?P<trap>illegal instruction|unhandled signal \d+) \(\d+\) at [0-9a-f]+ nip\b",
        "{comm} (pid {pid}) crashed: {trap}",
    ),
    rule(
        "signal.sigsegv-report",
        C::NativeCrash,
        Error,
        &["SIGSEGV", "signal 11", "Signal 11", "fault (11)", "Segmentation fault", "SIGABRT", "AddressSanitizer", "Signal: 6 (ABRT)", "Signal: 11 (SEGV)", "Received signal", "crashed by signal"],
        // gdb on a live process or a core file, coredumpctl's `Signal:` row, a core
        // reader's summary, srun's report of a task, Julia's (`signal (11.1): Segmentation
        // fault`), ClickHouse's BaseDaemon (`Received signal Segmentation fault (11)`),
        // Envoy's (`Caught Segmentation fault, suspect faulting address 0x0`).
        r"\bCaught Segmentation fault, suspect faulting address\b|(?:Program|Thread \d+ \x22[^\x22]*\x22) (?:received|terminated with) signal SIG(?:SEGV|ABRT)|^\s*Signal: (?:11 \(SEGV\)|6 \(ABRT\))\s*$|died due(?: to)? receiving signal SIG(?:SEGV|ABRT)|\btask \d+: Segmentation fault\b|\*\*\* Received signal (?:11|6) \*\*\*|AddressSanitizer: SEGV|\*\*\* SIGSEGV \(@0x[0-9a-f]+\) received by PID (?P<pid>\d+)|\*\*\* SIG(?:SEGV|ABRT) received at time=|Caught signal 11 \(Segmentation fault|crashed by signal: 11\b|Signal: Segmentation fault \(11\)|Signal 11 \(SIGSEGV\) received by PID (?P<pid2>\d+)|terminated by signal SIGSEGV|(?:killed|terminated) by signal(?: 11\b|:? SIGSEGV)|died with <Signals\.SIGSEGV: 11>|interrupted by signal 11: SIGSEGV|received signal SIGSEGV|\bprocess \d+ terminated with signal SIG(?:SEGV|ABRT)\b|Segmentation fault: address not mapped|\bSIGSEGV: segmentation violation|\(signal: 11, SIGSEGV: invalid memory reference\)|^#?\s*SIGSEGV \(0xb\) at pc=0x[0-9a-f]+|(?:^|\]\s)signal (?:\(11(?:\.\d+)?\)|11 \(\d+\)): Segmentation fault|\bReceived signal (?:Segmentation fault \(11\)|Aborted \(6\))",
        "The process crashed with a segmentation fault (SIGSEGV)",
    ),
    rule(
        "shell.segfault",
        C::NativeCrash,
        Error,
        &["Segmentation fault", "segmentation fault", "Speicherzugriffsfehler", "Erreur de segmentation", "Violación de segmento", "Ошибка сегментирования", "段错误", "セグメンテーション違反", "Naruszenie ochrony", "egmenta", "zsh: "],
        // glibc's name for SIGSEGV in the shell's locale (a mangled letter of Polish's
        // `pamięci` is still the message).
        shell_signal!("Segmentation fault|segmentation fault|Speicherzugriffsfehler|Erreur de segmentation|Violación de segmento|Ошибка сегментирования|段错误|セグメンテーション違反(?:です)?|Naruszenie ochrony pami\\S{1,3}ci|Errore di segmentazione|Falha de segmentação|Segmentatiefout"),
        "The process crashed with a segmentation fault (SIGSEGV)",
    ),
    Rule {
        extract: Some(extract_quoted_not_explained),
        certainty: Likely,
        ..rule(
            // The shell's line quoted in a report: with its note of the core dump after
            // a double quote (a code span is how a page mentions it), a colon or words
            // of Chinese or Japanese, or their full-width colon (`并显示Segmentation
            // fault (core dumped)`, `提示：段错误 (核心已转储)`, retyped with a comma
            // for the brackets: `出现问题：段错误，核心已转储`, `lanza el error: "Violación de segmento (`core'
            // generado)"`), the two halves swapped (`bị lỗi core dump (Segmentation
            // fault)`, I hit a core dump error), or an issue's tagged title (`[Bug]:
            // Segmentation fault: 11`).
            "shell.segfault-quoted",
            C::NativeCrash,
            Error,
            &["Segmentation fault", "Violación de segmento", "Speicherzugriffsfehler", "Erreur de segmentation", "段错误"],
            r"(?P<quoted>(?:[\x{3040}-\x{30FF}\x{4E00}-\x{9FFF}]|[:：\x22“]\s*)(?:Segmentation fault|Violación de segmento|Speicherzugriffsfehler|Erreur de segmentation|段错误)(?:: \d+)?\s*[(（][^()（）]{0,12}(?:core|吐核|核心|Speicherabzug|コア)[^()（）]{0,20}[)）]|段错误\s*[，,]\s*(?:吐核|核心已转储)|(?i:\bcore dump(?:ed)?\s*\(Segmentation fault\)))|(?i:^#{0,6}\s*\[(?:bug|crash|issue|bug report)\]:?\s*(?:Segmentation fault|Violación de segmento|Speicherzugriffsfehler|Erreur de segmentation)(?:: \d+)?\s*$)",
            "The text quotes the shell's report of a segmentation fault (SIGSEGV)",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            "prose.reported-segfault",
            C::NativeCrash,
            Error,
            &["Segmentation fault", "segmentation fault", "Segmentation Fault", "segmentation Fault"],
            // Past tense only: documentation says what a program does in the present
            // ("importing it prints `Segmentation fault`").
            reported!("showed|got|saw|failed|printed|reported|gave|returned|display(?:ed)?|said", "segmentation fault"),
            "The text reports a segmentation fault (SIGSEGV)",
        )
    },
    rule(
        // Android's debuggerd, Rust's stack guard, systemd-coredump.
        "crash.runtime-reports",
        C::NativeCrash,
        Error,
        &["Fatal signal 11", "Fatal signal 6", "has overflowed its stack", "fatal runtime error: stack overflow", "terminated abnormally with signal", "with signal SIGSEGV", "Segmentation fault at ", "segmentation fault occurred", "Exception - stack overflow", "PANIC (pid", "terminating due to StackOverflowException", "caught signal (SIGSEGV)", "caught signal (SIGABRT)"],
        // Ruby's `[BUG] Segmentation fault at 0x0000000000000000` and Bun's `panic:
        // Segmentation fault at address 0x0`: a runtime's crash report with the address.
        // Intel Fortran's `forrtl: severe (174): SIGSEGV, segmentation fault occurred`
        // and `(170): Program Exception - stack overflow`; Samba's smb_panic (`PANIC
        // (pid 11707): Bad talloc magic value`), which aborts; .NET's (`Process is
        // terminating due to StackOverflowException.`); Fluent Bit's engine (`[engine]
        // caught signal (SIGSEGV)`, then its backtrace).
        r"\bProcess is terminating due to StackOverflowException\b|\bforrtl: \w+ \(174\): SIGSEGV, segmentation fault occurred|\bforrtl: \w+ \(170\): Program Exception - stack overflow|\bPANIC \(pid \d+\): \S|\bSegmentation fault at (?:address )?0x[0-9a-fA-F]+|\bFatal signal (?P<signal>11 \(SIGSEGV\)|6 \(SIGABRT\)), code|thread '(?P<thread>[^']*)' has overflowed its stack|fatal runtime error: stack overflow|terminated abnormally with signal (?:11/SEGV|6/ABRT)|\b(?:failed|died|crashed|terminated) with signal SIGSEGV\b|\[engine\] caught signal \((?:SIGSEGV|SIGABRT)\)",
        "The process crashed (a segmentation fault, an abort or a stack overflow)",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // Memcheck reports the access and lets the program run on: a bug in native
            // code, not yet a crash.
            "valgrind.invalid-access",
            C::NativeCrash,
            crate::model::finding::Severity::Warn,
            &["Invalid read of size", "Invalid write of size"],
            r"==\d+== Invalid (?P<access>read|write) of size (?P<size>\d+)",
            "Valgrind found an invalid {access} of {size} bytes in native code",
        )
    },
    rule(
        // MIPS and other kernels that say it as they send it.
        "kernel.do-page-fault-sigsegv",
        C::NativeCrash,
        Error,
        &["sending SIGSEGV to"],
        r"do_page_fault\(\): sending SIGSEGV to (?P<comm>\S+) for invalid (?P<access>read|write|exec) access from (?P<address>[0-9a-fx]+)",
        "{comm} segfaulted: invalid {access} access at {address}",
    ),
    rule(
        // Crash reporters' and runtimes' words for a process dead of a signal:
        // systemd-coredump and abrt, breakpad's minidump_stackwalk, ASan's deadly
        // signal, Go's runtime (a SIGBUS is a bus error's, bus.rs).
        "crash.reported",
        C::NativeCrash,
        Error,
        &["dumped core", "dumping core", "Crash reason:", "Sanitizer:DEADLYSIGNAL", "unexpected signal during runtime"],
        r"\bProcess \d+ \([^)]*\) of user \d+ (?:dumped core|killed by SIG(?:SEGV|ABRT|ILL|FPE)\b.{0,20}dumping core)|^Crash reason:\s+SIG(?:SEGV|ABRT|ILL|FPE)\b|Sanitizer:DEADLYSIGNAL|\bfatal error: unexpected signal during runtime execution",
        "A process crashed (a crash reporter's or a runtime's report)",
    ),
    rule(
        // VirtualBox's VMM stopping a guest it can no longer run (`VCPU0: Guru
        // Meditation -2701 (VERR_VMM_RING0_ASSERTION)`, `aborted by a Guru Meditation
        // triple fault`); not Varnish's `Guru Meditation:` error page, which names no
        // status and no fault.
        "virtualbox.guru-meditation",
        C::NativeCrash,
        Error,
        &["Guru Meditation"],
        r"\bGuru Meditation (?:-?\d+ \(VERR_\w+\)|\(?triple fault\b)|\b(?:aborted|stopped|halted) (?:by|with) (?:a |the )?Guru Meditation\b",
        "VirtualBox stopped the guest with a Guru Meditation (the VM crashed)",
    ),
    rule(
        // The sanitizers' reports (ASan, and HWASan's and MSan's, which say it alike).
        "sanitizer.report",
        C::NativeCrash,
        Error,
        &["AddressSanitizer:", "MemorySanitizer:", "LeakSanitizer:"],
        r"(?:ERROR|WARNING): (?P<tool>AddressSanitizer|HWAddressSanitizer|MemorySanitizer|LeakSanitizer): (?P<kind>[\w-]+(?: [\w-]+)*?)(?: on (?:unknown )?address\b| in |:|\s*$| \()",
        "{tool}: {kind}",
    ),
    rule(
        // A macOS crash report.
        "macos.exc-bad-access",
        C::NativeCrash,
        Error,
        &["EXC_BAD_ACCESS", "EXC_CRASH (SIGABRT)"],
        // Its SIGBUS form is a bus error's (bus.rs). Crashlytics and PLCrashReporter
        // print the exception and its code on one line.
        r"Exception Type:\s+(?P<exception>EXC_BAD_ACCESS \(SIGSEGV\)|EXC_CRASH \(SIGABRT\))|^(?P<exception2>EXC_BAD_ACCESS KERN_(?:INVALID_ADDRESS|PROTECTION_FAILURE)) 0x[0-9a-f]+",
        "The process crashed: {exception} (a macOS crash report)",
    ),
    rule(
        // Android's debuggerd opens each tombstone with this banner (logcat's DEBUG
        // tag), whatever the signal; GLib's allocator ends the process on a refusal.
        "android.tombstone",
        C::NativeCrash,
        Error,
        &["*** *** *** *** *** ***"],
        r"\*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\* \*\*\*",
        "A native crash: Android's debuggerd wrote a tombstone",
    ),
    rule(
        // macOS's libmalloc finds its free lists corrupt and aborts.
        "macos.malloc-corruption",
        C::NativeCrash,
        Error,
        &["incorrect checksum for freed object", "pointer being freed was not allocated", "_checksum_botch"],
        r"malloc: \*\*\* error for object 0x[0-9a-f]+: (?P<message>incorrect checksum for freed object|pointer being freed was not allocated)|\bfree_list_checksum_botch\b",
        "The heap was corrupted: macOS's malloc aborted the process",
    ),
    rule(
        // Microcontrollers' own crash banners: ESP32's panic handler (`Guru Meditation
        // Error: Core  0 panic'ed (LoadProhibited)`), its heap checks (`CORRUPT HEAP:
        // Bad tail at 0x3ffe04d1`) and stack canary (`***ERROR*** A stack overflow in
        // task eventTask has been detected.`), its abort (`abort() was called at PC
        // 0x400889bb on core 0`); Zephyr's Cortex-M faults (`***** MPU FAULT *****`).
        "firmware.fault",
        C::NativeCrash,
        Error,
        &["Guru Meditation Error", "CORRUPT HEAP", "***ERROR*** A stack overflow", "abort() was called at PC", "MPU FAULT", "HARD FAULT", "BUS FAULT", "USAGE FAULT"],
        r"(?-i:\bGuru Meditation Error: Core\s+\d+ panic'ed \((?P<reason>\w+)\)|\bCORRUPT HEAP: (?:Bad (?:head|tail) at 0x|multi_heap\.c:\d+ detected)|\*{3}ERROR\*{3} A stack overflow in task \S+ has been detected|\babort\(\) was called at PC 0x[0-9a-f]+ on core \d|\*{3,} (?:MPU|HARD|BUS|USAGE) FAULT \*{3,})",
        "A microcontroller's firmware crashed (a fault, a corrupted heap or an abort)",
    ),
    rule(
        "glibc.heap-corruption",
        C::NativeCrash,
        Error,
        &["(): ", "double free or corruption", "corrupted size vs", "*** Error in `", "malloc_printerr (str=", "corrupted double-linked", "malloc assertion failure"],
        // Also as gdb shows it, the argument of glibc's malloc_printerr in a frame;
        // glibc 2.37's failed assertion (`Fatal glibc error: malloc assertion failure
        // in __libc_calloc: …`).
        r"^(?P<message>(?:free|malloc|realloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): [a-z][^\n]*|double free or corruption.*|corrupted size vs\. prev_size.*|corrupted double-linked list.*)$|\bmalloc_printerr \(str=[^\x22]*\x22(?P<gmessage>[^\x22]+)\x22|\*\*\* Error in `[^`]*': (?P<emessage>[^*]+?) ?(?::? 0x[0-9a-f]+)? \*\*\*|(?:^|[^`'\x22])(?P<dmessage>double free or corruption.*)$|\bFatal glibc error: (?P<fmessage>malloc assertion failure in \w+)|\b(?P<pmessage>(?:malloc|free|realloc)\(\): (?:corrupted top size|invalid size \(unsorted\)|invalid pointer|invalid next size \((?:fast|normal)\)|corrupted unsorted chunks|unaligned tcache chunk detected|double free detected in tcache 2|memory corruption))",
        "glibc detected heap corruption: {message}",
    ),
    rule(
        "cxx.terminate",
        C::NativeCrash,
        Error,
        &["terminate called"],
        r"^terminate called (?:after throwing an instance of '(?P<exception>[^']+)'|without an active exception|recursively)",
        "A C++ exception was not caught: terminate called after throwing {exception}",
    ),
    rule(
        "cxx.what",
        C::NativeCrash,
        Error,
        &["(): "],
        r"^\s*what\(\):\s+(?P<what>.+?)\s*$",
        "A C++ exception was not caught: {what}",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // glibc's backtrace(3) as a crash handler prints it, a frame in abort
            // (`libggml-base.so.0(ggml_abort+0x11d)[0x7ff0089d272d]`): the program
            // aborted on a failed check of its own.
            "crash.abort-frame",
            C::NativeCrash,
            Error,
            &["abort+0x"],
            r"\((?P<frame>(?:\w+_)?abort)\+0x[0-9a-f]+\)\s*\[0x[0-9a-f]+\]",
            "The program aborted ({frame} in its backtrace)",
        )
    },
    rule(
        // gcc's own crash while compiling; R's report of a signal in native code.
        "crash.tool-reports",
        C::NativeCrash,
        Error,
        &["internal compiler error: Segmentation fault", "internal compiler error (segmentation fault)", "*** caught "],
        r"\binternal compiler error: Segmentation fault\b|(?i:\binternal compiler error \(segmentation fault\))|^\s*\*\*\* caught (?P<what>segfault|bus error|illegal operation) \*\*\*",
        "The program crashed in native code (a segmentation fault, a bus error or an illegal instruction)",
    ),
    rule(
        "glibc.stack-smashing",
        C::NativeCrash,
        Error,
        &["stack smashing detected", "buffer overflow detected"],
        // _FORTIFY_SOURCE's check of a copy's bounds says `buffer overflow`.
        // Only glibc says `stack smashing detected`: a report quotes it without the stars.
        r"\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*|\bstack smashing detected\b",
        "A native buffer overflow was detected (stack smashing or a fortified copy)",
    ),
    rule(
        // Octave's handler of a fatal signal saves the workspace and names the signal
        // in glibc's words (`panic: Segmentation fault -- stopping myself...`).
        "octave.panic-signal",
        C::NativeCrash,
        Error,
        &["fault -- stopping myself", "aborted -- stopping myself"],
        r"^panic: (?:Segmentation fault|Aborted) -- stopping myself\b",
        "Octave crashed on a fatal signal (a segmentation fault or an abort)",
    ),
    rule(
        // SIGILL: most often a binary built for a CPU feature this one lacks
        // (TensorFlow's AVX builds, `/entrypoint.sh: line 94:    19 Illegal
        // instruction     (core dumped) "$@"`).
        "shell.illegal-instruction",
        C::NativeCrash,
        Error,
        &["Illegal instruction"],
        shell_signal!("Illegal instruction"),
        super::signals::SIGILL_TITLE,
    ),
    rule(
        "shell.aborted",
        C::NativeCrash,
        Error,
        &["Aborted", "zsh: ", "Abgebrochen", "Abandon", "Abortado", "已放弃", "Аварийный останов"],
        // zsh alone says `abort`, after its name.
        concat!(
            shell_signal!("Aborted|Abgebrochen|Abandon|Abortado|已放弃|Аварийный останов"),
            r"|^zsh: abort(?: \(core dumped\))?(?:\s+(?P<command_zsh>.*?))?\s*$"
        ),
        "The process aborted (SIGABRT)",
    ),
];

/// The quoted message is not the subject a page explains (`"Segmentation fault (core
/// dumped)" means …`).
#[allow(clippy::ptr_arg)]
fn extract_quoted_not_explained(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static EXPLAINED: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(quoted) = out.iter().find(|(k, _)| k == "quoted").map(|(_, v)| v) else {
        return true;
    };
    let after = msg
        .find(quoted.as_str())
        .map_or("", |at| &msg[at + quoted.len()..]);
    !super::super::prose::matches(
        &EXPLAINED,
        r"(?i)^\W{0,3}\s*(?:means?|is|indicates?|occurs?|happens?|signifie|significa|bedeutet|означает|表示|意味)\b",
        after,
    )
}

pub(super) const NATIVE_CRASH: ClassInfo = ClassInfo {
    class: C::NativeCrash,
    name: "native_crash",
    id: ids::LOG_NATIVE_CRASH,
    title: "Native code crashed (segmentation fault or abort)",
    why: "Code outside Python (a C/C++/CUDA extension, a library, glibc) faulted or aborted; Python cannot \
          catch it, and without faulthandler the log has no Python stack.",
    fix: "Get the Python stack of the crash: PYTHONFAULTHANDLER=1 python train.py (or python -X faulthandler).\n\
          Get the native stack: ulimit -c unlimited, then gdb -batch -ex bt python core; or run under \
          gdb -ex run --args python train.py.\nHeap corruption: rerun with MALLOC_CHECK_=3, or under \
          valgrind/AddressSanitizer; check that every extension was built against the installed torch/numpy \
          (pip check; reinstall the wheel that crashes).",    cause: crate::model::finding::CauseKind::UserCode,
    confirm: "The native stack: gdb -batch -ex bt python core, or PYTHONFAULTHANDLER=1 for the Python one.",
};
