//! What a report says crashed or hit a limit, in its writer's words: a segmentation
//! fault, a bus error, file descriptors run out, a blue screen of memory management.
//! The same guards as `claims` (no denial, no supposition, no question), beside it
//! because that module is at its size limit.

use std::sync::OnceLock;

use regex::Regex;

use super::super::prose::matches;
use super::claims::{extract_claim, extract_crash_claim};
use super::kill_claims::told_in_its_sentence;
use super::{rule, FailureClass as C, Rule};
use crate::model::finding::Certainty::Possible;
use crate::model::finding::Severity::Warn;

pub(super) static RULES: &[Rule] = &[
    Rule {
        extract: Some(extract_out_of_memory_error_met),
        certainty: Possible,
        ..rule(
            // An out-of-memory error the writer met, in whatever verb (`I got an out
            // of memory error and the program crashed`, `fails with an out of memory
            // error`, `we receive out-of-memory errors`), or a crash put on
            // too little memory (`the slicer crashes due to too little memory`): the program's
            // own allocation failed, where no GPU or container is named.
            "prose.out-of-memory-error-met",
            C::HostAllocFailure,
            Warn,
            &[
                "out of memory error",
                "out-of-memory error",
                "outofmemory error",
                "out of memory exception",
                "out-of-memory exception",
                "outofmemory exception",
                "low memory",
                "little memory",
            ],
            r"(?i:(?P<claim>\b(?:got|get|gets|getting|receive[ds]?|receiving|hit|hits|hitting|fail(?:s|ed|ing)? with|crash(?:es|ed|ing)? with|end(?:s|ed)? with|encounter(?:s|ed|ing)?|(?:run|ran|running) into) (?:me |us )?(?:an? |the |this |that |some |these )?[`'\x22]?(?:out[- ]of[- ]memory|OutOfMemory)[`'\x22]? (?:errors?|exceptions?)\b|\bcrash(?:es|ed|ing)? (?:\w+ )?(?:due to|because of) (?:too )?(?:low|little) memory\b))",
            "The report says the program ran out of memory ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // `causes gnome-shell to segfault on start`, `GNOME components segfault`:
            // the verb is what people write of a crash they had; `运行时会出现段错误`
            // (a segmentation fault appears when I run it); `se me cae y me dice la típica
            // violación de segmento` (it crashes and tells me the usual segmentation fault); `one
            // of them which reproducibly gives me a Segmentation fault (core dumped) error`;
            // `I get a problem of segmentation fault when training`, `the Segmentation
            // fault happened`, `el Kernel da un seg fault` (the kernel gives a seg fault), `jupyter gives
            // segfault for every command`, `fallisce con un core dump` (fails with a core
            // dump), `A worker process crashed roughly once an hour with a segfault`,
            // Japanese `Segmentation fault: 11 で落ちる` (falls over with).
            "prose.segfault-claim",
            C::NativeCrash,
            Warn,
            &[
                "segfault",
                "seg fault",
                "段错误",
                "violación de segmento",
                "segmentation fault",
                "with core dump",
                "with a core dump",
                "con core dump",
                "con un core dump",
            ],
            r"(?i:(?P<claim>\b(?:gets?|got|getting|hit|hits|encounter(?:s|ed)?|have|had|da|dio|tira|tiró|lanza|lanzó) (?:me |us |un |una )?(?:a |an |the )?(?:problem (?:of|with) |error (?:of )?)?(?:seg ?fault|segmentation fault)\b|\b(?:the |a )?segmentation fault (?:happen(?:s|ed)?|occur(?:s|red)?|appear(?:s|ed)?)\b|\b(?:gives?|gave|giving|throws?|threw|produces?|produced) (?:me |us )?(?:a )?[`'\x22]?(?:segmentation fault|seg ?fault)\b|\b(?:fails?|failed|crash(?:es|ed)?|ends?|ended|exits?|exited|dies|died|aborts?|aborted|fallisce|termina|terminato|crasha) (?:with (?:a )?|con (?:un )?)core dump\b|(?:出现|报|发生|产生|遇到)了?段错误|\bsegfault(?:s|ed|ing)\b|\bto segfault\b|\bsegfaults? (?:on|at|when|while|after|during) (?:start|startup|launch|exit|load|boot)|\b(?:me|nos) (?:dice|da|sale|tira|lanza|aparece)\b[^.\n]{0,20}?violación de segmento|\bcrash(?:es|ed)\b(?: \w+){0,4}? with (?:an? )?(?:seg ?fault|segmentation fault)\b|(?:segmentation fault|seg ?fault)(?::\s*\d+)?\s*(?:で|により)\s*(?:落ち|クラッシュ|異常終了|強制終了)))",
            "The report says the program crashed with a segmentation fault ({claim})",
        )
    },
    Rule {
        extract: Some(super::growth_claims::extract_unsupposed),
        certainty: Possible,
        ..rule(
            // `we get a too many files open error after several epochs`: the limit's
            // error as people retell it, its words out of strerror's order, or the
            // descriptors said to run out.
            "prose.too-many-files-claim",
            C::TooManyOpenFiles,
            Warn,
            &[
                "too many files open",
                "out of file descriptors",
                "out of file handles",
                "number of open files",
            ],
            // `Open MPI crashes due to the operating system being out of file handles`,
            // `the server runs out of file descriptors`, `The indexer has hit the
            // maximum permitted number of open files`.
            r"(?i:(?P<claim>\btoo many files open\b|\b(?:runs?|ran|running|being|is|are|was|were|goes|went|go) out of file (?:descriptors|handles)\b|\b(?:has hit|hit|reached|has reached|exceeded|has exceeded) (?:the )+(?:maximum|max) (?:permitted |allowed )?number of open files\b))",
            "The report says the process ran out of file descriptors ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // A run said to end in the program's own out-of-memory exception (`it
            // always ends with an out of memory exception`, Czech `vždy skončí s out of
            // memory exception`): raised inside the process, as a JVM's or .NET's is,
            // not a kill from outside; a JVM's heap run out, met (`pods began
            // experiencing Java Heap OOM`).
            "prose.out-of-memory-exception-claim",
            C::HostAllocFailure,
            Warn,
            &[
                "out of memory exception",
                "outofmemory exception",
                "out-of-memory exception",
                "heap oom",
                "heap out of memory",
                "heap out-of-memory",
            ],
            r"(?i:(?P<claim>\b(?:ends?|ended|fails?|failed|crash(?:es|ed)?|dies|died|terminat(?:es|ed)|exits?|exited|stops?|stopped|aborts?|aborted|skončí|končí|skončil[aoy]?|spadne|padá) (?:with|s|se) (?:an? )?(?:out of memory|outofmemory|out-of-memory) exception\b|\b(?:experienc(?:e|ed|ing)|hit|hitting|got|get|getting|having|had) (?:an? |the )?(?:java )?heap (?:OOM|out[- ]of[- ]memory)\b))",
            "The report says the program ended in an out-of-memory exception ({claim})",
        )
    },
    Rule {
        extract: Some(extract_crash_claim),
        certainty: Possible,
        ..rule(
            // `Could you please check why charon crashes due to SIGBUS error?` asks why,
            // not whether: the crash is the writer's.
            "prose.sigbus-claim",
            C::MmapBusError,
            Warn,
            &["SIGBUS", "bus error"],
            // `Hi, I got a Bus error when executing the evaluation codes`, `The message
            // \`Bus error\` appears and the program exits`.
            r"(?i:(?P<claim>\b(?:crash(?:es|ed)?|dies|died|aborts|aborted) (?:due to|because of|from|on) (?:a |an )?SIGBUS\b|\b(?:i|we) (?:got|get|am getting|keep getting|hit|encountered|see|saw) (?:a |an |the )?[`'\x22]?(?:bus error|SIGBUS)\b|\bthe message [`'\x22](?:bus error|SIGBUS)[`'\x22] (?:appears|appeared|is printed|was printed)\b|\bthere (?:is|was) a bus error (?:shortly |right |just )?(?:after|when|while|during)\b))",
            "The report says the program crashed of a bus error ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // The bug check told in words beside the blue screen (`Windows 10 Memory
            // Management Error Blue Screen`, `a BSOD with memory management`): the
            // code's name in capitals is `windows.bugcheck-memory`'s.
            "prose.memory-management-bsod-claim",
            C::WindowsMemoryFault,
            Warn,
            &["memory management", "memory_management"],
            r"(?i:(?P<claim>\bmemory[ _]management\b[^.\n]{0,30}?\b(?:bsod|blue ?screen|stop (?:code|error))\b|\b(?:bsod|blue ?screen(?: of death)?|stop (?:code|error))\b[^.\n]{0,40}?\bmemory[ _]management\b))",
            "The report says Windows stopped with the MEMORY_MANAGEMENT bug check ({claim})",
        )
    },
];

/// An out-of-memory error met, on a line that names no GPU or model run (CUDA's own
/// claims read those: `with batch size 16 I get an out of memory error`), and no
/// container, pod, cluster or job, where it is most often a limit's kill that the kill
/// claims and the thread's word read (`the esfc job fails with an out-of-memory
/// error` over the shell's `Killed`); not a page's habit (`Users will get an out of
/// memory error when …`), a guess, nor a fix (`Resolves an issue where users got …`).
#[allow(clippy::ptr_arg)]
fn extract_out_of_memory_error_met(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static ELSEWHERE: OnceLock<Option<Regex>> = OnceLock::new();
    static HABIT_OR_FIX: OnceLock<Option<Regex>> = OnceLock::new();
    let Some((_, (start, at, _))) = told_in_its_sentence(msg, out) else {
        return false;
    };
    !matches(
        &ELSEWHERE,
        r"(?i)\b(?:cuda|gpus?|vram|container|pod|kubernetes|k8s|docker|cluster|job|batch size|epochs?|model|colab|torch|tensorflow|a100|h100|mps|rocm)\b",
        msg,
    ) && !matches(
        &HABIT_OR_FIX,
        r"(?i)\b(?:will|would|resolv\w*|suspect\w*|assum\w*|see)\b",
        &msg[start..at],
    ) && extract_claim(msg, out)
}
