//! Memory told to rise until the process was killed, in the writer's words: read
//! before the claims of a rise alone (`claims`), with the same guards.

use std::sync::OnceLock;

use regex::Regex;

use super::super::prose::matches;
use super::claims::{claim, extract_claim};
use super::{rule, FailureClass as C, Rule};
use crate::model::finding::Certainty::Possible;
use crate::model::finding::Severity::Warn;

pub(super) static RULES: &[Rule] = &[Rule {
    extract: Some(extract_grew_until_killed),
    certainty: Possible,
    ..rule(
        // Memory told to rise until the process was killed (`the memory and swap
        // usage increases until it runs out and the job is killed`, `system memory
        // blows up and the process is killed`): the kill is the verdict, before the
        // rise's own claims read the line.
        "prose.grew-until-killed",
        C::OomKill,
        Warn,
        &[
            "is killed",
            "gets killed",
            "got killed",
            "was killed",
            "were killed",
        ],
        r"(?i:(?P<claim>\b(?:memory|ram|swap)\b[^.\n]{0,40}?\b(?:increas(?:es|ed|ing)|grows?|grew|growing|ris(?:es|ing)|rose|climbs?|climbed|blows? up|blew up|explod(?:es|ed)|spik(?:es|ed)|shoots? up|shot up)\b[^.\n]{0,40}?\b(?:until|and(?: then)?|then)\b[^.\n]{0,60}?\b(?:is|gets|got|was|were) killed\b))",
        "The report says memory rose until the process was killed ({claim})",
    )
}];

/// A rise that ended in a kill the text gives to a killer of its own (`the memory
/// usage spikes and the job is killed by the scheduler`) is that killer's, which its
/// own claim reads: the kernel's OOM killer is the one meant only where none is named.
#[allow(clippy::ptr_arg)]
fn extract_grew_until_killed(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static BY_ANOTHER: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(after) = claim(out).and_then(|told| msg.find(told).map(|at| &msg[at + told.len()..]))
    else {
        return false;
    };
    !matches(
        &BY_ANOTHER,
        r"(?i)^\s+by (?:the |a )?(?:job |batch |cluster(?:'s)? )?(?:scheduler|slurm|pbs|lsf|yarn|systemd-oomd|oomd|earlyoom|kubelet|kubernetes|k8s|ray|user|admin\w*|sysadmin\w*|watchdog)\b",
        after,
    ) && extract_claim(msg, out)
}
