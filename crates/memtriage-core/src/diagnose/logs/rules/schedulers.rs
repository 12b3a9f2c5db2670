//! Batch schedulers that end a job over its memory or its time, in their own words:
//! PBS Pro and Torque, IBM Spectrum LSF, HTCondor and Grid Engine (Slurm's, YARN's and
//! the kubelet's are in `oom`). Each message is the one the scheduler's source prints:
//! a memory limit is a userspace killer's kill, a time limit a SIGKILL for no memory.

use super::{rule, FailureClass as C, Rule};
use crate::model::finding::CauseKind::Configuration;
use crate::model::finding::Certainty::Possible;
use crate::model::finding::Severity::{Error, Info, Warn};

const SCHEDULER_FIX: &str = "The scheduler ended the job at the memory it requested: request more (PBS \
     -l mem=/vmem=, LSF -M and -R rusage[mem=], HTCondor request_memory, Grid Engine -l h_vmem=), or need \
     less (fewer workers, smaller batches). Note that vmem limits count virtual memory: CUDA and many \
     allocators reserve far more address space than they use, so prefer a limit on mem (RSS).";

pub(super) static RULES: &[Rule] = &[
    Rule {
        fix: Some(SCHEDULER_FIX),
        cause: Some(Configuration),
        ..rule(
            "scheduler.memory-limit",
            C::UserspaceOomKill,
            Error,
            &[
                "PBS: job killed: ",
                "exceeded MEM usage",
                "exceeded a memory resource limit",
                "TERM_MEMLIMIT",
                "TERM_SWAP",
                "gone over",
                "SYSTEM_PERIODIC_HOLD",
                "exceeds job hard limit",
            ],
            concat!(
                // PBS's and Torque's MOM (in kb or in bytes), PBS's server's mail.
                r"PBS: job killed: (?P<resource>p?vmem|mem)(?:(?: job total)? \d+ ?(?:[kmg]?b)?)? exceeded limit (?P<limit>\d+) ?(?P<limit_unit>[kmg]?b)?|exceeded MEM usage hard limit \(\d+ > (?P<limit_mb>\d+)\)|\bJob exceeded a memory resource limit \((?:p?vmem|mem)\b",
                // LSF's exit reasons.
                r"|(?P<lsf>TERM_MEMLIMIT|TERM_SWAP): job killed after reaching LSF (?:memory|swap) usage limit",
                // HTCondor's hold reason, with or without cgroups, or a site's periodic hold.
                r"|Job has gone over (?:cgroup )?memory limit of (?P<condor_mb>\d+) megabytes|\bput on hold by SYSTEM_PERIODIC_HOLD due to memory\b",
                // Grid Engine's execd.
                r#"|exceeds job hard limit "(?P<sge>h_vmem|h_rss|h_data|h_stack|s_vmem|s_rss|mem_free|virtual_free)" of queue"#,
            ),
            "The batch scheduler killed the job for exceeding its memory limit",
        )
    },
    Rule {
        certainty: Possible,
        ..rule(
            "scheduler.time-limit",
            C::Sigkill,
            Info,
            &[
                "PBS: job killed: walltime",
                "PBS: job killed: cput",
                "TERM_RUNLIMIT",
                "TERM_CPULIMIT",
                "exceeds job hard limit",
            ],
            r#"PBS: job killed: (?:walltime|cput)(?: job total)? \d+(?: secs)? exceeded limit \d+|(?:TERM_RUNLIMIT|TERM_CPULIMIT): job killed after reaching LSF (?:run time|CPU usage) limit|exceeds job hard limit "(?:h_rt|h_cpu|s_rt|s_cpu)" of queue"#,
            "The batch scheduler killed the job at its time limit, not for memory",
        )
    },
    Rule {
        certainty: Possible,
        ..rule(
            // LSF's record of a job that a signal from outside it ended (`kill -9`, a
            // node's own OOM killer, an administrator): the sender is not LSF's to say.
            "scheduler.external-signal",
            C::Sigkill,
            Warn,
            &["TERM_EXTERNAL_SIGNAL"],
            r"TERM_EXTERNAL_SIGNAL: job killed by a signal external to LSF",
            "The job was killed by a signal from outside the batch scheduler; who sent it is not said",
        )
    },
];
