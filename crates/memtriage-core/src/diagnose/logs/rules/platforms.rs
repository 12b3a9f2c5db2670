//! Memory limits that a hosting platform or a phone's OS enforces by ending the
//! process: AWS ECS's and Google Cloud Run's, Cloud Functions' and App Engine's container limits,
//! Heroku's dyno quota, Bitbucket Pipelines' build containers, Render's instances, Vertex AI's training replicas, Android's
//! low-memory killer, runtimes' watchdogs (osquery, Deno Deploy, Cloudflare Workers). Each is the platform's own
//! message; what the platform did (killed, warned) decides the class.

use super::{rule, FailureClass as C, Rule};
use crate::model::finding::CauseKind::Configuration;
use crate::model::finding::Severity::{Error, Warn};

const PLATFORM_FIX: &str = "The platform's memory limit for the task or instance ended it: raise the limit \
     (ECS task memory, Cloud Run --memory, App Engine instance class, a larger Heroku dyno) or lower the \
     peak (fewer workers or threads per instance, smaller batches, stream instead of loading whole).";

pub(super) static RULES: &[Rule] = &[
    Rule {
        fix: Some(PLATFORM_FIX),
        cause: Some(Configuration),
        ..rule(
            "platform.container-memory-limit",
            C::OomKill,
            Error,
            &[
                "Container killed due to memory usage",
                "Memory limit of",
                "Exceeded soft memory limit",
                "Exceeded hard memory limit",
                "Exceeded soft private memory limit",
                "Exceeded hard private memory limit",
                "too much memory and was terminated",
                "ran out-of-memory and exited",
                "session crashed after using all available RAM",
                "모두 사용한 후 세션이",
                "tried to allocate more memory than is available",
                "Ran out of memory (used over",
                "Function killed. Error: memory limit exceeded",
                "exceeded the memory limit of",
                "' exceeded memory limit",
            ],
            // Colab says it in the browser's language: `사용 가능한 RAM을 모두 사용한 후
            // 세션이 다운되었습니다` is its Korean `Your session crashed after using all
            // available RAM`.
            r"OutOfMemoryError: Container killed due to memory usage|Memory limit of (?P<limit>[\d.]+ ?[KMG]i?B?) exceeded with (?P<used>[\d.]+ ?[KMG]i?B?) used|Exceeded (?:soft|hard)(?: private)? memory limit of (?P<limit2>[\d.]+ ?[KMG]i?B) with (?P<used2>[\d.]+ ?[KMG]i?B)|\bThe replica (?P<replica>\S+(?: \d+)?) ran out-of-memory and exited with a non-zero status|\bYour session crashed after using all available RAM\b|사용 가능한 RAM을 모두 사용한 후 세션이 (?:다운|중단|종료)되었습니다|\bYour notebook tried to allocate more memory than is available\b|\bRan out of memory \(used over (?P<limit3>\d+ ?[KMG]i?B)\)|\bFunction killed\. Error: memory limit exceeded\b|\bthe process that handled this request was found to be using too much memory and was terminated\b|\bYour build has exceeded the memory limit of (?P<limit4>[\d.]+ ?[KMGT]i?B?) on \d+ container|\bContainer '[^'\n]{1,40}' exceeded memory limit\b",
            "The platform ended the container at its memory limit",
        )
    },
    Rule {
        fix: Some(PLATFORM_FIX),
        cause: Some(Configuration),
        ..rule(
            // Heroku's dyno manager, not the kernel, kills a dyno at twice its quota;
            // its code is quoted with or without the word `Error`.
            "heroku.memory-quota-vastly-exceeded",
            C::UserspaceOomKill,
            Error,
            &["R15 (Memory quota vastly exceeded)"],
            r"(?:^|[\s`'\x22])(?:Error )?R15 \(Memory quota vastly exceeded\)",
            "Heroku killed the dyno at twice its memory quota (R15)",
        )
    },
    Rule {
        cause: Some(Configuration),
        ..rule(
            "heroku.memory-quota-exceeded",
            C::MemoryPressure,
            Warn,
            // Its router logs the dyno's memory beside: `Process running mem=540M(105.6%)`.
            &["R14 (Memory quota exceeded)", "Process running mem="],
            r"(?:^|[\s`'\x22])(?:Error )?R14 \(Memory quota exceeded\)|\bProcess running mem=\d+M\((?:1\d\d|[2-9]\d\d)(?:\.\d+)?%\)",
            "Heroku: the dyno exceeded its memory quota and is swapping (R14)",
        )
    },
    Rule {
        cause: Some(Configuration),
        ..rule(
            // The OpenTelemetry collector's memory_limiter near the limit it was given:
            // it drops data past the soft limit and forces a GC past the hard one.
            "otelcol.memory-limiter",
            C::MemoryPressure,
            Warn,
            &["Memory usage is above"],
            r"\bMemory usage is above (?P<which>soft|hard) limit\. (?:Dropping data|Forcing a GC|Refusing data)\b",
            "The OpenTelemetry collector's memory use is above its {which} limit (memory_limiter)",
        )
    },
    rule(
        // Android's lmkd (and the kernel driver it replaced).
        "android.lowmemorykiller",
        C::UserspaceOomKill,
        Error,
        &["lowmemorykiller", ", oom_score_adj"],
        // logcat's threadtime format puts the tag and its level between the name
        // and the message (`lowmemorykiller   lmkd   I  Kill '…' (15964), uid …`);
        // lmkd's own tag names no killer, and a later lmkd says it reclaims
        // (`lmkd    : Reclaim '…' (591), uid 10112, oom_score_adj 975, state 19 to
        // free 19252kB rss`).
        r"lowmemorykiller: Kill(?:ing)? '(?P<comm>[^']+)' \((?P<pid>\d+)\)|\blowmemorykiller\b.{0,80}?\bKill '(?P<comm2>[^']+)' \((?P<pid2>\d+)\), uid \d+, oom_score_adj|\blmkd\b.{0,40}?\b(?:Kill|Reclaim) '(?P<comm3>[^']+)' \((?P<pid3>\d+)\), uid \d+, oom_score_adj -?\d+",
        "Android's low-memory killer killed an app to free memory",
    ),
    rule(
        // A runtime's own watch over its workers' memory: osquery's watchdog
        // (`osqueryd worker (19455) stopping: Memory limits exceeded: 240160000`), Deno
        // Deploy's isolate limit (`memory soft limit exceeded, terminated`), Cloudflare
        // Workers' (`"outcome": "exceededMemory"`, `Worker exceeded memory limit.`).
        "runtime.memory-watchdog",
        C::UserspaceOomKill,
        Error,
        &[
            "stopping: Memory limits exceeded",
            "memory soft limit exceeded, terminated",
            "Worker exceeded memory limit",
            "exceededMemory",
        ],
        r"\bworker \((?P<pid>\d+)\) stopping: Memory limits exceeded\b|\bmemory soft limit exceeded, terminated\b|\bWorker exceeded memory limit\b|\x22outcome\x22:\s*\x22exceededMemory\x22",
        "A runtime's watchdog stopped a worker over its memory limit",
    ),
    rule(
        // iOS's and macOS's jetsam: the crash report's reason, the EXC_RESOURCE a
        // process gets at its memory limit, Xcode's word for the app it killed, the
        // kernel's own log (`memorystatus: exceeded mem limit: ActiveHard 50 MB
        // (fatal)`, then `killing_specific_process pid 1879 [Tunnel]`).
        "ios.jetsam",
        C::UserspaceOomKill,
        Error,
        &[
            "jetsam memory limit",
            "RESOURCE_TYPE_MEMORY",
            "Terminated due to memory issue",
            "killed by jetsam",
            "memorystatus: exceeded mem limit",
            "killing_specific_process pid",
        ],
        r"terminated for exceeding jetsam memory limits?|\bEXC_RESOURCE RESOURCE_TYPE_MEMORY(?: \(limit=(?P<limit>\d+ ?[KMG]B))?|\bTerminated due to memory issue\b|\bMemory level is not normal or this app was killed by jetsam\b|\bmemorystatus: exceeded mem limit: \w+ (?P<limit2>\d+ ?[KMG]B) \(fatal\)|\bkilling_specific_process pid \d+ \[",
        "Jetsam (iOS, macOS) killed the process at its memory limit",
    ),
];
