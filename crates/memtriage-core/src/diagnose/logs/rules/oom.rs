//! OOM kills: the kernel's own lines, and the same kill as Kubernetes, Slurm, a shell
//! or an exit code of 137 report it.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::diagnose::{ids, oom};
use crate::model::finding::Severity::Error;
use crate::model::system::OomConstraint;
use crate::model::units::iec;
use crate::parse::kmsg;

/// The kernel's `Killed process` line, and its `oom-kill:constraint=` line (4.19+):
/// the two the kernel-log parser joins into one kill.
pub const KILLED_PROCESS: &str = "kernel.oom-killed-process";
pub const KILL_CONSTRAINT: &str = "kernel.oom-kill-constraint";

/// Captures from the kernel-log parser, which already reads these lines.
fn extract_oom_kill(msg: &str, out: &mut Vec<(String, String)>) {
    let Some(kill) = kmsg::oom_kills([msg]).into_iter().next() else {
        return;
    };
    let mut push = |k: &str, v: String| out.push((k.to_string(), v));
    push("pid", kill.pid.to_string());
    push("comm", kill.comm.clone());
    for (name, v) in oom::sizes(&kill) {
        if let Some(v) = v {
            push(&name.replace('-', "_"), iec(v));
        }
    }
    if let Some(adj) = kill.oom_score_adj {
        push("oom_score_adj", adj.to_string());
    }
    if msg.contains("oom-kill:") || kill.constraint != OomConstraint::Global {
        push("constraint", kill.constraint.as_str().to_string());
    }
    if let Some(m) = kill.oom_memcg {
        push("oom_memcg", m);
    }
    if let Some(m) = kill.memcg {
        push("task_memcg", m);
    }
}

pub(super) static RULES: &[Rule] = &[
    // ---- kernel OOM killer -------------------------------------------------------
    Rule {
        extract: Some(extract_oom_kill),
        ..rule(
            KILLED_PROCESS,
            C::OomKill,
            Error,
            &["Killed process "],
            r"^(?:(?:Memory cgroup )?[Oo]ut of memory(?: \([a-z_]+\))?: )?Killed process \d+ \(",
            "The kernel's OOM killer killed {comm} (pid {pid}) holding {anon_rss} of anonymous memory",
        )
    },
    Rule {
        extract: Some(extract_oom_kill),
        ..rule(
            KILL_CONSTRAINT,
            C::OomKill,
            Error,
            &["oom-kill:constraint="],
            r"^oom-kill:constraint=\w+,",
            "The kernel's OOM killer killed {comm} (pid {pid})",
        )
    },
    rule(
        "kernel.oom-killer-invoked",
        C::OomKill,
        Error,
        &["invoked oom-killer"],
        r"^(?P<trigger>.+?) invoked oom-killer: gfp_mask=\S+,? order=(?P<order>\d+)",
        "{trigger} ran the kernel out of memory and the OOM killer was invoked",
    ),
    // ---- the same kill as others report it ---------------------------------------
    rule(
        "kubernetes.oomkilled",
        C::OomKill,
        Error,
        &["OOMKilled"],
        r"\bOOMKilled\b",
        "Kubernetes: the container was OOMKilled (it reached its memory limit)",
    ),
    rule(
        "slurm.oom-kill-event",
        C::OomKill,
        Error,
        &["kill event"],
        r"Detected (?P<count>\d+) oom[-_]kill events? in (?:StepId=|step )(?P<step>\d+(?:\.\w+)?)",
        "Slurm: {count} OOM kill in step {step} (the job's memory cgroup limit was hit)",
    ),
    rule(
        "slurm.task-out-of-memory",
        C::OomKill,
        Error,
        &["Out Of Memory"],
        r"^srun: error: (?P<node>[^:\s]+): tasks? (?P<task>[\d,\-\[\]]+): Out Of Memory",
        "Slurm: task {task} on {node} ran out of memory and was killed",
    ),
    rule(
        "slurm.exceeded-memory-limit",
        C::OomKill,
        Error,
        &["xceeded"],
        r"(?:Job|Step|StepId=)\s*(?P<step>\S+?) exceeded memory limit|Exceeded job memory limit",
        "Slurm: the job exceeded its memory limit",
    ),
    Rule {
        fix: Some(SIGKILL_FIX),
        ..rule(
        "exit.sigkill",
        C::OomKill,
        Error,
        &["xit Code", "xit code", "xit status", "exitcode", "with code 137", "SIGKILL"],
        r"(?i:\bexit(?:ed with)?[ _]?(?:code|status)\s*:?\s*137\b)|\bexitcode\s*:\s*-9\b|Signal 9 \(SIGKILL\) received by PID (?P<pid>\d+)",
        "The process was killed by SIGKILL (exit code 137), the mark of an OOM kill",
    )
    },
    Rule {
        fix: Some(SIGKILL_FIX),
        ..rule(
            "shell.killed",
            C::OomKill,
            Error,
            &["Killed", "zsh: "],
            // Bare `Killed` only when it is all the line says, so prose is not a kill.
            r"^(?:\[\d+\][+-]?\s+|[+-]\s+|\S[^:]*: line \d+:\s+(?P<pid>\d+)\s+)Killed(?:\s+(?P<command>.*?))?\s*$|^zsh: killed(?:\s+(?P<zsh_command>.*?))?\s*$|^Killed\s*$",
            "The shell reports the job was Killed (SIGKILL), most often by the OOM killer",
        )
    },
];

pub(super) const OOM_KILL: ClassInfo = ClassInfo {
    class: C::OomKill,
    name: "oom_kill",
    id: ids::LOG_OOM_KILL,
    title: "A process was killed for running out of memory",
    why: "The kernel (or the memory cgroup of a container, pod or Slurm job) ran out of memory and killed \
          the process using the most; a SIGKILL leaves no Python traceback, only 'Killed' or exit code 137.",
    fix: oom::fix(oom::Limit::Unknown),
};

const SIGKILL_FIX: &str = concat!(
    "Confirm it was the OOM killer in the node's kernel log: dmesg -T | grep -iE 'killed process|out of memory' \
     (or journalctl -k).\n",
    oom::unknown_limit_fix!()
);
