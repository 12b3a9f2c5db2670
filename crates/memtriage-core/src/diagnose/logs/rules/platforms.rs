//! Memory limits that a hosting platform or a phone's OS enforces by ending the
//! process: AWS ECS's and Google Cloud Run's and App Engine's container limits,
//! Heroku's dyno quota, Vertex AI's training replicas, Android's low-memory killer. Each is the platform's own
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
                "R15 (Memory quota vastly exceeded)",
                "ran out-of-memory and exited",
            ],
            r"OutOfMemoryError: Container killed due to memory usage|Memory limit of (?P<limit>[\d.]+ ?[KMG]i?B?) exceeded with (?P<used>[\d.]+ ?[KMG]i?B?) used|Exceeded (?:soft|hard) memory limit of (?P<limit2>[\d.]+ ?[KMG]i?B) with (?P<used2>[\d.]+ ?[KMG]i?B)|Error R15 \(Memory quota vastly exceeded\)|\bThe replica (?P<replica>\S+) ran out-of-memory and exited with a non-zero status",
            "The platform ended the container at its memory limit",
        )
    },
    Rule {
        cause: Some(Configuration),
        ..rule(
            "heroku.memory-quota-exceeded",
            C::MemoryPressure,
            Warn,
            &["R14 (Memory quota exceeded)"],
            r"Error R14 \(Memory quota exceeded\)",
            "Heroku: the dyno exceeded its memory quota and is swapping (R14)",
        )
    },
    rule(
        // Android's lmkd (and the kernel driver it replaced).
        "android.lowmemorykiller",
        C::UserspaceOomKill,
        Error,
        &["lowmemorykiller: Kill", "lowmemorykiller: Killing"],
        r"lowmemorykiller: Kill(?:ing)? '(?P<comm>[^']+)' \((?P<pid>\d+)\)",
        "Android's low-memory killer killed {comm} (pid {pid})",
    ),
];
