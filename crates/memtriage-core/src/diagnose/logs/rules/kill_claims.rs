//! A kill told in the writer's words: memory said to rise until the process was
//! killed, read before the claims of a rise alone (`claims`), and the process said to
//! be killed with no sender named, a SIGKILL as the shell's `Killed` is; with the same
//! guards.

use std::sync::OnceLock;

use regex::Regex;

use super::super::prose::{first_person, matches};
use super::claims::{claim, extract_claim, sentence_of};
use super::{rule, FailureClass as C, Rule};
use crate::model::finding::Certainty::Possible;
use crate::model::finding::Severity::Warn;

/// The writer's word that the process was killed, no sender named.
pub const PROCESS_KILLED: &str = "prose.process-killed";

/// A kill told as it came: passive (`was killed`, `got randomly killed`) or past
/// active with its object (`killed it`), not a page's present (`kills the process`).
macro_rules! killed_in_a_story {
    () => {
        r"(?:(?:is|was|were|are|be|been|being|got|gets|get|getting)\s+(?:(?:\w+ly|still|then|just|also)\s+)?killed|killed\s+(?:it|them|the|my|our|its|his|her|their|every|all|processes)\b)"
    };
}

/// Memory named as used up: the OOM killer's words, out of memory, a limit, all of
/// it, too little of it.
macro_rules! memory_used_up {
    () => {
        r"oom(?:[-_ ]?kill(?:ed|er)|'?ed|'d)?|out[- ]of[- ](?:memory|ram)|memory (?:limits?|exhaustion)|(?:all|too much|so much|more) (?:of )?(?:the |my |its |available |system )*(?:memory|ram)|low memory|insufficient memory|lack of (?:memory|ram)|memory (?:issues?|problems?)|(?:high|excessive|huge) memory (?:usage|consumption)"
    };
}

pub(super) static RULES: &[Rule] = &[
    Rule {
        extract: Some(extract_killed_for_memory),
        certainty: Possible,
        ..rule(
            // A kill and memory as its cause in one clause, in whatever words: the
            // kill, then why (`the os who killed it because of memory consumption`,
            // `burst to 27GB of memory which causes it to be killed by memory
            // limits`, `it sometimes still be killed by system oom killer`), or memory
            // used up, then the kill (`it hogs all memory and the my whole session is
            // killed`): the mechanism, where the claims above read its commonest
            // phrasings. A kill in the present active (`the OOM killer kills the
            // process with the highest score`) is a page's, and not read.
            "prose.killed-for-memory",
            C::OomKill,
            Warn,
            &[
                "is killed",
                "was killed",
                "were killed",
                "are killed",
                "be killed",
                "been killed",
                "being killed",
                "got killed",
                "gets killed",
                "get killed",
                "getting killed",
                "ly killed",
                "still killed",
                "then killed",
                "just killed",
                "also killed",
                "killed it",
                "killed them",
                "killed the",
                "killed my",
                "killed our",
                "killed its",
                "killed his",
                "killed her",
                "killed their",
                "killed every",
                "killed all",
                "killed processes",
            ],
            concat!(
                r"(?i:(?P<claim>\b",
                killed_in_a_story!(),
                r",? (?:because(?: of)?|due to|for|from|as|since|by)\b[^,.;!?。！？\n]{0,40}?\b(?:",
                memory_used_up!(),
                r"|memory (?:consumption|usage|pressure))\b|\b(?:us(?:es|ed|ing)|consum(?:es|ed|ing)|hog(?:s|ged|ging)|fill(?:s|ed|ing)(?: up)?|exhaust(?:s|ed|ing)|exceed(?:s|ed|ing)|eat(?:s|ing)(?: up)?|ate(?: up)?|runs?|ran|running|t[ao]ok|takes|occup(?:ies|ied|y)) (?:[\w-]+ ){0,3}?(?:",
                memory_used_up!(),
                r")\b[^.;!?。！？\n]{3,60}?\b",
                killed_in_a_story!(),
                "))",
            ),
            "The report says the process was killed for memory ({claim})",
        )
    },
    Rule {
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
    },
    Rule {
        extract: Some(extract_process_killed),
        certainty: Possible,
        fix: Some(super::oom::SIGKILL_FIX),
        ..rule(
            // `after few iterations, the process get killed`, `It gets killed every
            // night`, `the process was auto-killed`: a SIGKILL whose sender the
            // text may tell elsewhere (the thread's `you are running out of memory`), as
            // for the shell's own `Killed`, which a writer quotes in lower case (`i get
            // kicked out and says "killed"`), where the retold `Killed` of `claims`, read
            // in its own case only, cannot see it; a page's present (`The shell prints
            // \`killed\``) tells what happens any time.
            PROCESS_KILLED,
            C::OomKill,
            Warn,
            &[
                "is killed",
                "gets killed",
                "get killed",
                "got killed",
                "was killed",
                "were killed",
                "been killed",
                "getting killed",
                "auto-killed",
                "\"killed\"",
                "'killed'",
                "`killed`",
                "“killed”",
            ],
            r"(?i:(?P<claim>\b(?:process|job|program|script|task|container|pod|worker|training|build|server|app|application|kernel|run|it)\s+(?:(?:always|just|simply|then|eventually|finally|sometimes|randomly|suddenly|silently|immediately|also) )?(?:(?:gets?|got|was|is|were|keeps getting|getting|has been|had been) killed|(?:was|is|got|gets) auto-killed)\b|\b(?:says?|said|showed|printed|see|saw|displayed|outputs?|outputted|status|with) (?:(?:the|a|just|only) )?(?:(?:status|message|word|text|output) )?[\x22'`“](?-i:killed)[\x22'`”]))",
            "The report says the process was killed ({claim})",
        )
    },
];

/// A kill for memory its clause neither denies nor supposes, where no page speaks of
/// what happens any time (`if a process uses too much memory, it is killed`), its
/// sentence names no killer of another kind (`the watchdog`, `Slurm`, `PM2`, the
/// writer's own `I killed it`: their own claims read those), and does not hedge,
/// generalise or tell a fix (`either due to out of memory or by explicit kill`, `exit
/// code 137 typically means …`, `Resolved an issue where the worker was killed …`).
#[allow(clippy::ptr_arg)]
fn extract_killed_for_memory(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static ANOTHER_KILLER_OR_HEDGED: OnceLock<Option<Regex>> = OnceLock::new();
    static UNTIL_OR_FINE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some((told, (start, at, end))) = told_in_its_sentence(msg, out) else {
        return false;
    };
    // `memory usage is much lower now and nothing gets killed anymore`, `was killed
    // while memory usage was only at 30%`: the claim's own words deny the memory's
    // part; `… until it was Killed` is the rise's, which its own claims read.
    let denied_within = matches(
        &UNTIL_OR_FINE,
        r"(?i)\b(?:until|no|not|nothing|never|no longer|anymore|only|normal|fine|stable|flat|reduc\w*|lower)\b|n't\b",
        told,
    );
    !supposed_any_time(&msg[start..at], told)
        && !denied_within
        && !matches(
            &ANOTHER_KILLER_OR_HEDGED,
            r"(?i)\b(?:systemd-oomd|oomd|earlyoom|nohang|watchdog|low ?memory ?killer|lmkd?|slurm\w*|kubelet|evict\w*|by yarn|scheduler|supervisor\w*|pm2|ray|memory monitor|task manager|chrome|ctrl-c|kill -9|manually|either|probabl\w*|likely|maybe|perhaps|possibl\w*|guess|suspect\w*|assum\w*|resolv\w*|to (?:verify|confirm|check)|typically|usually|generally|normally|often|means?)\b|\b(?:i|we)\s+(?:\w+ly\s+)?killed\b|\bjob\b[^.;]*\blimits?\b",
            &msg[start..end],
        )
        && extract_claim(msg, out)
}

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

/// A kill told with no sender, where the line names no other signal (`exit code 135
/// (128 + SIGBUS, signal 7). Because the GEN worker is killed mid-load` was SIGBUS's),
/// no rise that led to it (`increasing memory usage until it was Killed`: the rise's
/// own claims tell that one), no sender or cause after it (`killed by Slurm`, `killed
/// because of exceeding …`: the claims of senders read those), and no case a page
/// supposes (`If a process uses too much memory, it is killed`).
#[allow(clippy::ptr_arg)]
fn extract_process_killed(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static OTHER_SIGNAL: OnceLock<Option<Regex>> = OnceLock::new();
    static ROSE_UNTIL: OnceLock<Option<Regex>> = OnceLock::new();
    static SENDER_TOLD: OnceLock<Option<Regex>> = OnceLock::new();
    let Some((told, (start, at, _))) = told_in_its_sentence(msg, out) else {
        return false;
    };
    let after = &msg[at + told.len()..];
    !supposed_any_time(&msg[start..at], told)
        && !matches(
            &SENDER_TOLD,
            r"(?i)^\s*(?:by|because|due to|for (?:exceeding|using|going over|oom|running out)|as a result|(?:after|on|when|for) exceeding)\b|^\s*(?:,|or\b|and\b)\s*[\x22'`“]",
            after,
        )
        && !matches(
            &ROSE_UNTIL,
            r"(?i)\b(?:increas|grow|grew|ris|rose|climb|blow|blew)\w*\b[^.\n]{0,60}?\buntil\b",
            msg,
        )
        && !matches(
            &OTHER_SIGNAL,
            r"\bSIG(?:BUS|SEGV|ABRT|TERM|INT|HUP|ILL|FPE|QUIT|USR1|USR2|PIPE|ALRM)\b|(?i:\bsignal (?:[1-8]|1[0-5])\b)",
            msg,
        )
        && extract_claim(msg, out)
}

/// The claim and its sentence's bounds ([`sentence_of`]).
pub(super) fn told_in_its_sentence<'a>(
    msg: &str,
    out: &'a [(String, String)],
) -> Option<(&'a str, (usize, usize, usize))> {
    let told = claim(out)?;
    Some((told, sentence_of(msg, told)?))
}

/// A kill in the present after `if`, `when` or `once` anywhere before it in its
/// sentence (`When a container exceeds its memory limit, the process is killed`): what
/// happens any time it is, a page's, not one that came (`When I ran it, the process
/// was killed`) nor one the writer meets (`when I try to map the reads the process gets
/// killed`). A `will` before it is a page's habit too (`A process that exceeds its
/// memory will exit with "Killed"`).
fn supposed_any_time(before: &str, told: &str) -> bool {
    static HABIT: OnceLock<Option<Regex>> = OnceLock::new();
    static PAST: OnceLock<Option<Regex>> = OnceLock::new();
    (supposes_a_case(before) || (matches(&HABIT, r"(?i)\bwill\b", before) && !first_person(before)))
        && !matches(&PAST, r"(?i)\b(?:was|were|got|had been)\b", told)
}

/// Words before a claim, in its sentence, that open a case any time it comes (`if`,
/// `when`, `once`), where the writer does not speak of themselves.
pub(super) fn supposes_a_case(before: &str) -> bool {
    static ANY_TIME: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &ANY_TIME,
        r"(?i)\b(?:if|unless|when|whenever|once|in case)\b",
        before,
    ) && !first_person(before)
}
