//! Native crashes: segmentation faults, aborts, heap corruption, uncaught C++
//! exceptions, and Python's faulthandler output of them.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::diagnose::ids;
use crate::model::finding::Severity::Error;

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
            r"^Fatal Python error: (?P<error>Bus error)",
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
            r"^Fatal Python error: (?P<error>.+?)\s*$",
            "Python crashed: {error} in {site}",
        )
    },
    rule(
        "kernel.segfault",
        C::NativeCrash,
        Error,
        &["segfault at "],
        r"^(?P<comm>.+?)\[(?P<pid>\d+)\]: segfault at (?P<address>[0-9a-f]+) ip (?P<ip>[0-9a-f]+) sp [0-9a-f]+ error (?P<error>\d+)(?:.*? in (?P<object>[^\[\s]+)\[)?",
        "{comm} (pid {pid}) segfaulted at address 0x{address} in {object}",
    ),
    rule(
        "kernel.trap",
        C::NativeCrash,
        Error,
        &["traps: "],
        r"^traps: (?P<comm>.+?)\[(?P<pid>\d+)\] (?P<trap>general protection fault|trap invalid opcode|trap divide error)",
        "{comm} (pid {pid}) crashed: {trap}",
    ),
    rule(
        "shell.segfault",
        C::NativeCrash,
        Error,
        &["Segmentation fault", "zsh: "],
        shell_signal!("Segmentation fault|segmentation fault"),
        "The process crashed with a segmentation fault (SIGSEGV)",
    ),
    rule(
        "glibc.heap-corruption",
        C::NativeCrash,
        Error,
        &["(): ", "double free or corruption", "corrupted size vs"],
        r"^(?P<message>(?:free|malloc|realloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): [a-z][^\n]*|double free or corruption.*|corrupted size vs\. prev_size.*)$",
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
    rule(
        "glibc.stack-smashing",
        C::NativeCrash,
        Error,
        &["stack smashing detected"],
        r"\*\*\* stack smashing detected \*\*\*",
        "A native stack buffer overflow was detected (stack smashing)",
    ),
    rule(
        "shell.aborted",
        C::NativeCrash,
        Error,
        &["Aborted", "zsh: "],
        shell_signal!("Aborted|abort"),
        "The process aborted (SIGABRT)",
    ),
];

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
          (pip check; reinstall the wheel that crashes).",
};
