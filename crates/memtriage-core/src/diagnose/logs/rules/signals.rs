//! A process that died of a signal, in the words of whoever reports it: shells,
//! language runtimes, launchers, MPI, container runtimes, CI runners, debuggers and
//! crash handlers. Each signal's forms are generated from one template
//! (`died_of_signal`, `exit_status`) rather than copied from samples, so a program
//! that reports a signal as its peers do is read the same way. The family comes last:
//! a specific rule (a DataLoader worker's `killed by signal: Killed`, a shell's bare
//! `Bus error`) names the line first.

use super::oom::SIGKILL_FIX;
use super::{rule, FailureClass as C, Rule};
use crate::model::finding::Certainty::Likely;
use crate::model::finding::Severity::Error;

/// How programs say that a process died of one signal, written once for every signal
/// from its name (`SEGV`), its number (`11`), the exit status a shell or a runtime
/// reports for it (`139`, 128 plus the number) and glibc's word for it (`Segmentation
/// fault`). The notations are the programs' own, not a sample's:
/// - the name after who reports it: `terminated by signal SIGSEGV` (fish), `died with
///   <Signals.SIGSEGV: 11>` (Python's subprocess), `{SIGSEGV(-11)}` (loky), `(signal:
///   11, SIGSEGV: …)` (Rust), `[signal SIGSEGV: …` (Go), `npm ERR! signal SIGSEGV`,
///   `*** SIGSEGV (@0x0) received by PID` (glog), `+++ killed by SIGSEGV +++`
///   (strace), `#  SIGSEGV (0xb) at pc=` (HotSpot),
///   `return code Negsignal.SIGKILL` (Airflow), `(terminated by SIGKILL;` (supervisord),
///   `signal=SIGKILL` (Playwright), `code=dumped, signal=ABRT` (systemd), `*** Unhandled
///   SIGBUS at 0x7b53e7b75d4a ***` (a crash handler's banner);
/// - the number after a verb: `exited on signal 11` (Open MPI), `Received signal 11`
///   (Chromium), `fatal signal 11` (the kernel), `(signal 11)` (MPICH),
///   `status=11/SEGV` (systemd), `exitcode: -11` (torch elastic), `threw signal 9`
///   (Verilator), `child 144 killed with signal 11` (Dovecot), `DIED, signal 7
///   (0007)` (SpamAssassin's spamd), `Container terminated on signal 9.` (Cloud Run),
///   `rank 19 died from signal 9` (Cray's PALS), `Caught signal number 11 SEGV`
///   (PETSc), `Handling signal 11` (Manticore), `command failed due to signal 9`
///   (Swift's driver), `Fork server crashed with signal 6` (AFL), `ExitFailure (-9)`
///   (Haskell's process library), `Oops, IDA has almost crashed! (signum=11)` (IDA),
///   `chain 1 returned error code -11` (CmdStanPy);
/// - glibc's word after who reports it: `task 0: Segmentation fault` (srun), `EXIT
///   STRING: Segmentation fault` (MPICH), `unable to execute command: Segmentation
///   fault` (clang), `error: signal: segmentation fault` (Go's os/exec), `Fatal Python
///   error: Segmentation fault`, `Segmentation fault signal terminated program` (gcc),
///   `exit signal Segmentation fault (11)` (Apache httpd), `*** Caught signal
///   (Segmentation fault) **` (Ceph), gcc's in a translation (`Terminado (killed)
///   signal terminated program`), dub's `Error executing /usr/bin/ldc2: Killed`.
macro_rules! died_of_signal {
    ($name:literal, $number:literal, $words:literal) => {
        concat!(
            // `(SIGSEGV)` after the signal's number or a Mach exception only: a page writes
            // `a segmentation fault (SIGSEGV) occurs when …`.
            r"(?:(?:^|[^-])\bsignal(?::?\s+\x22?|=)|\bSignals\.|\bNegsignal\.|\{|\d \(|\bEXC_[A-Z_]+ \(|\[signal |\*\*\* |^#\s+|\(signal: \d+, |\+\+\+ killed by )SIG",
            $name,
            // supervisord's unexpected exit only: `stopped: web (terminated by SIGKILL)`
            // is its own stop; a child it did not start (`reaped unknown pid 72
            // (terminated by SIGKILL)`) is no stop of its own either.
            r"\b|\(terminated by SIG",
            $name,
            r"\b[^;]{0,20}; not expected\)|\breaped unknown pid \d+ \(terminated by SIG",
            $name,
            r"\)|(?-i:\bUnhandled SIG",
            $name,
            r") at 0x|\bcode=(?:dumped|killed), signal=",
            $name,
            r"\b|(?i:\b(?:exited on|killed (?:by|with)|terminated (?:by|with|on)|interrupted by|caught|got|received|died(?: of| with| from|,)|crashed with|action of|fatal|threw|failed due to|handling) signal(?: number)?:? ",
            $number,
            r"\b)|(?i:\(signal ",
            $number,
            r"\))|\bhas almost crashed! \(signum=",
            $number,
            r"\)|\bstatus=",
            $number,
            r"/",
            $name,
            // GlusterFS's crash report (`gf_print_trace`): `signal received: 7`.
            r"\b|^\s*signal received: ",
            $number,
            r"\b|(?i:\b(?:exit[ _]?code|exit[ _]?status|return[ _]?(?:code|value)|(?:exited|terminated) with code|\bchain \d+ returned error code)\x22?\s*[:=]?\s*(?:ExitFailure\s*)?\(?-",
            $number,
            r"\b)|(?:: task \d+: |EXIT STRING: |unable to execute command: |(?:^|: |\berror:? )signal: |Fatal Python error: |\bexit signal |\bCaught signal \()(?:",
            $words,
            r")\b|(?:",
            $words,
            r")\)? signal terminated program\b|\bError executing \S+: (?:",
            $words,
            r")\s*$"
        )
    };
}

/// The exit status a shell, a container runtime or a CI runner reports for a process
/// that a signal ended: 128 plus the signal's number (`exited with code 139`,
/// `Exit Code: 139`, `returned a non-zero code: 139`, `exit status 139`, `código de
/// salida 139`). `docker ps`'s
/// `Exited (137)` is also what `docker stop` leaves, so only the crashes' statuses add it.
macro_rules! exit_status {
    ($status:literal) => {
        concat!(
            r"(?i:\b(?:exit[ _]?code|exit[ _]?status|return[ _]?code|returned a non-zero code|non-zero (?:exit )?status|exited with(?: exit)? (?:code|status)|exited with|c[óo]digo(?: de (?:salida|sa[ií]da))?)\x22?\s*[:=]?\s*[(\x22]?",
            $status,
            r"\b|\bstatus[ =:]+",
            $status,
            // Gradle's `Process 'command 'node'' finished with non-zero exit value 137`.
            r"\b|\bProcess 'command '.*?'' finished with non-zero exit value ",
            $status,
            r"\b)"
        )
    };
}

/// The literals of a signal's rule: its own (its name, number and words as the
/// reporters print them) and those every signal shares (the reporters' words, exit
/// statuses written as negative numbers).
macro_rules! signal_literals {
    ($($own:literal),*) => {
        &[
            $($own,)*
            ": task ", "exit string: ", "unable to execute command", "fatal python error: ",
            "exit signal ", "caught signal (", "signal number", "error executing", "signal received: ",
            "code=dumped, signal=", "code=killed, signal=", "has almost crashed", "returned error code",
            "signal terminated program", "xitcode", "xit code", "xit_code", "xitstatus", "xit status",
            "xit_status", "eturncode", "eturn code", "eturn_code", "eturn value", "eturnvalue", "eturn_value",
            "xited with code", "terminated with code",
        ]
    };
}

/// Lines that hold an exit status a rule of `exit_status` reads.
const EXIT_STATUS_LITERALS: &[&str] = &[
    "xitcode",
    "xit code",
    "xit_code",
    "xitstatus",
    "xit status",
    "xit_status",
    "eturncode",
    "eturn code",
    "eturn_code",
    "non-zero code",
    "non-zero status",
    "non-zero exit status",
    "xited with",
    "xited (",
    "status 13",
    "status=13",
    "status: 13",
    "status:13",
    "código",
    "codigo",
    "Process 'command '",
];

pub(super) static RULES: &[Rule] = &[
    Rule {
        fix: Some(SIGKILL_FIX),
        certainty: Likely,
        absorbed_by: Some(C::DataloaderWorkerKilled),
        ..rule(
            KILL,
            C::OomKill,
            Error,
            signal_literals![
                "sigkill",
                "signal 9",
                "signal: 9",
                "9/kill",
                "signal: killed",
                "child killed: kill signal"
            ],
            // Tcl's exec names the signal in words: `child killed: kill signal`. BSD
            // make prints its child's signal alone: `*** Signal 9`.
            concat!(
                died_of_signal!("KILL", "9", "(?i:killed)"),
                r"|\bchild killed: kill signal\b|^\*\*\* Signal 9\s*$"
            ),
            "The process was killed by SIGKILL, most often by the OOM killer",
        )
    },
    Rule {
        absorbed_by: Some(C::DataloaderWorkerKilled),
        ..rule(
            "signal.sigsegv-reported",
            C::NativeCrash,
            Error,
            signal_literals![
                "sigsegv",
                "signal 11",
                "signal: 11",
                "11/segv",
                "signal: segmentation",
                "child killed: segmentation violation",
                "stop reason = exc_bad_access"
            ],
            concat!(
                died_of_signal!(
                    "SEGV",
                    "11",
                    "(?i:segmentation fault|segmentation violation)"
                ),
                // lldb's stop; Tcl's exec.
                r"|stop reason = EXC_BAD_ACCESS \(code=|\bchild killed: segmentation violation\b",
            ),
            "The process crashed with a segmentation fault (SIGSEGV)",
        )
    },
    Rule {
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            "signal.sigbus-reported",
            C::MmapBusError,
            Error,
            signal_literals![
                "sigbus",
                "signal 7",
                "signal: 7",
                "7/bus",
                "signal: bus error"
            ],
            died_of_signal!("BUS", "7", "(?i:bus error)"),
            "The process died of a bus error (SIGBUS)",
        )
    },
    Rule {
        absorbed_by: Some(C::DataloaderWorkerKilled),
        ..rule(
            "signal.sigabrt-reported",
            C::NativeCrash,
            Error,
            signal_literals![
                "sigabrt",
                "signal 6",
                "signal: 6",
                "6/abrt",
                "signal: aborted"
            ],
            died_of_signal!("ABRT", "6", "(?i:aborted)"),
            "The process aborted (SIGABRT)",
        )
    },
    Rule {
        absorbed_by: Some(C::DataloaderWorkerKilled),
        ..rule(
            "signal.sigill-reported",
            C::NativeCrash,
            Error,
            // Only the reporters that say `signal`: the others' forms (`{SIGILL`,
            // `4/ILL`) would each cost the prefilter an anchor.
            &[
                "signal sigill",
                "signal=sigill",
                "signal: sigill",
                "signal 4",
                "signal: 4",
                "signal: illegal",
                "code=dumped, signal=ill",
                "code=killed, signal=ill",
            ],
            r"(?:^|[^-])\bsignal(?::?\s+\x22?|=)SIGILL\b|(?i:\b(?:exited on|killed by|terminated (?:by|with)|interrupted by|caught|got|received|died (?:of|with)|fatal|threw) signal:? 4\b|\(signal 4\)|(?:^|: |\berror:? )signal: illegal instruction\b)|\bcode=(?:dumped|killed), signal=ILL\b",
            SIGILL_TITLE,
        )
    },
    // An exit status may also be the program's own `exit(139)`: likely, not certain.
    Rule {
        fix: Some(SIGKILL_FIX),
        certainty: Likely,
        absorbed_by: Some(C::DataloaderWorkerKilled),
        ..rule(
            KILL_STATUS,
            C::OomKill,
            Error,
            EXIT_STATUS_LITERALS,
            // Compose names the container that died starting (`dependency failed to
            // start: container kafka-1 exited (137)`); docker ps's `Exited (137)` may be a stop.
            concat!(exit_status!("137"), r"|(?i:\bcontainer \S+ exited \(137\))"),
            "The process exited with status 137: killed by SIGKILL, most often by the OOM killer",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            "exit.status-139",
            C::NativeCrash,
            Error,
            EXIT_STATUS_LITERALS,
            concat!(exit_status!("139"), r"|(?i:\bexited \(139\))"),
            "The process exited with status 139: a segmentation fault (SIGSEGV)",
        )
    },
    Rule {
        certainty: Likely,
        absorbed_by: Some(C::DataloaderShm),
        ..rule(
            "exit.status-135",
            C::MmapBusError,
            Error,
            EXIT_STATUS_LITERALS,
            concat!(exit_status!("135"), r"|(?i:\bexited \(135\))"),
            "The process exited with status 135: a bus error (SIGBUS)",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            "exit.status-134",
            C::NativeCrash,
            Error,
            EXIT_STATUS_LITERALS,
            concat!(exit_status!("134"), r"|(?i:\bexited \(134\))"),
            "The process exited with status 134: it aborted (SIGABRT)",
        )
    },
];

/// SIGILL, from the shell or a reporter: most often a binary built for a CPU feature
/// this CPU lacks.
pub(super) const SIGILL_TITLE: &str = "The process died of an illegal instruction (SIGILL): the binary uses a CPU feature (AVX) this CPU lacks, or ran corrupted code";

/// A SIGKILL reported without its sender.
pub const KILL: &str = "signal.sigkill-reported";
/// An exit status of 137 reported without its sender.
pub const KILL_STATUS: &str = "exit.status-137";
