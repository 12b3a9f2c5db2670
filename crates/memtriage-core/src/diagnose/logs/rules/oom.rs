//! OOM kills: the kernel's own lines, and the same kill as Kubernetes, Slurm, a shell
//! or an exit code of 137 report it.

use super::{rule, ClassInfo, FailureClass as C, Rule};
use crate::diagnose::oom;
use crate::model::finding::CauseKind::{Capacity, Configuration};
use crate::model::finding::Certainty::{Likely, Possible};
use crate::model::finding::Severity::{Error, Info, Warn};
use crate::model::ids;
use crate::model::system::OomConstraint;
use crate::model::units::iec;
use crate::parse::kmsg;

/// The kernel's `Killed process` line, and its `oom-kill:constraint=` line (4.19+):
/// the two the kernel-log parser joins into one kill.
pub const KILLED_PROCESS: &str = "kernel.oom-killed-process";
pub const KILL_CONSTRAINT: &str = "kernel.oom-kill-constraint";
/// cgroup v1's `memory: usage … limit … failcnt` at the kill.
pub const MEMCG_USAGE: &str = "kernel.memcg-usage";
/// A shell's `Killed` in zsh's, fish's or another language's words.
pub const SHELL_KILLED_ELSEWHERE: &str = "shell.killed-elsewhere";
/// An exit status of 137 or -9, a launcher's report of SIGKILL.
pub const EXIT_SIGKILL: &str = "exit.sigkill";
/// The runtime says the container was not OOM-killed (Docker `OOMKilled: false`,
/// Kubernetes `Reason: Error`): a SIGKILL beside it is not known to be an OOM kill.
pub const NOT_OOM_MARKER: &str = "runtime.not-oom-killed";
/// The task table the OOM killer dumps: read row by row, summed by command.
pub const TASK_TABLE: &str = "kernel.oom-task-table";

/// Captures from the kernel-log parser, which already reads these lines.
fn extract_oom_kill(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let Some(kill) = kmsg::oom_kills([msg]).into_iter().next() else {
        // A pasted line with the pid anonymised (`pid XXX`) is still the kill.
        return true;
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
    if let Some(anon) = kill.anon_rss {
        push("anon_rss_bytes", anon.to_string());
    }
    true
}

/// A number as the kernel or a user printed it, thousands separators and all.
fn plain_number(s: &str) -> Option<u64> {
    let digits: String = s
        .chars()
        .filter(|c| !matches!(c, ',' | '.' | '\'' | '_'))
        .collect();
    digits.parse().ok()
}

/// cgroup v1's `memory: usage 2097152kB, limit 2097152kB, failcnt 1234`: the limit
/// that was hit, as a size.
fn extract_memcg_usage(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let msg = msg.to_ascii_lowercase();
    let field = |name: &str| {
        let at = msg.find(name)? + name.len();
        let rest = msg[at..].trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ','))
            .unwrap_or(rest.len());
        let n = plain_number(&rest[..end])?;
        // `kB` follows, or nothing on kernels that printed pages' worth in kB anyway.
        n.checked_mul(1024)
    };
    // A value a poster replaced (`usage NkB`) is unknown, not a reason to doubt the line.
    if let Some(usage) = field("usage ") {
        out.push(("usage".into(), iec(usage)));
    }
    if let Some(limit) = field("limit ") {
        out.push(("limit".into(), iec(limit)));
        out.push(("limit_bytes".into(), limit.to_string()));
    }
    if let Some(f) = field("failcnt ") {
        out.push(("failcnt".into(), (f / 1024).to_string()));
    }
    true
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
            // 2.6.32 (RHEL 6) puts the uid between: `Killed process 11726, UID 498, (mysqld)`.
            r"(?:^|[Oo]ut of memory(?: \([a-z_]+\))?: |\s)Killed process (?:\d+|[A-Za-z<>_#*]+)(?:, UID \d+,)? \(",
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
            r"oom-kill:constraint=\w+,",
            "The kernel's OOM killer killed {comm} (pid {pid})",
        )
    },
    rule(
        // FreeBSD's kernel names the reason it killed.
        "freebsd.killed-out-of-memory",
        C::OomKill,
        Error,
        &["was killed: out of swap", "was killed: failed to reclaim", "was killed: a thread waited too long"],
        r"\bpid (?P<pid>\d+) \((?P<comm>[^)]*)\)(?:, jid \d+)?(?:, uid (?P<uid>\d+))?, was killed: (?P<why>out of swap space|failed to reclaim memory|a thread waited too long to allocate a page)",
        "FreeBSD's kernel killed {comm} (pid {pid}): {why}",
    ),
    rule(
        "kernel.oom-kill-process-score",
        C::OomKill,
        Error,
        &["Kill process ", "VM: killing process", "oom_kill_process", "out_of_memory+0x"],
        r"(?:Out of memory|Memory cgroup out of memory)(?: \([a-z_]+\))?: Kill process (?P<pid>\d+|\S+)(?: >)? \((?P<comm>.*)\) score (?P<score>\d+)|^VM: killing process (?P<comm2>\S+)|\boom_kill_process\b|\bout_of_memory\+0x",
        "The kernel's OOM killer killed {comm} (pid {pid}, badness score {score})",
    ),
    // systemd reads the unit's cgroup's memory.events: the kernel's kill, seen from
    // the unit (`user@1000.service: A process of this unit has been killed by the OOM killer.`).
    rule(
        "systemd.unit-oom-killed",
        C::OomKill,
        Error,
        &["killed by the OOM killer", "result 'oom-kill'", "(Result: oom-kill)"],
        // `systemctl status` says it in the unit's state: `Active: failed (Result:
        // oom-kill) since …`.
        r"(?P<unit>\S+): A process of this unit has been killed by the OOM killer|(?P<unit2>\S+): Failed with result 'oom-kill'|\(Result: oom-kill\)",
        "The kernel's OOM killer killed a process of {unit}",
    ),
    rule(
        "kernel.oom-killer-invoked",
        C::OomKill,
        Error,
        &["invoked oom-killer"],
        // A digest of the kernel's lines keeps its words and drops the details
        // (`[nov. 3 02:03] renderd invoked oom-killer`): only the kernel says so.
        r"(?P<trigger>\S+?) invoked oom-killer(?:: (?:gfp_mask=(?P<gfp_mask>[^,\s]+)|.*?order=(?P<order>-?\d+))|\s*$)",
        "{trigger} ran the machine or its cgroup out of memory and the OOM killer was invoked",
    ),
    Rule {
        extract: Some(extract_memcg_usage),
        ..rule(
            MEMCG_USAGE,
            C::OomKill,
            Error,
            &["memory: usage "],
            r"^memory: usage (?:[\d,]+kB|<n>(?:kB)?), limit (?:[\d,]+kB|<n>(?:kB)?), failcnt (?:[\d,]+|<n>)",
            "A memory cgroup reached its limit of {limit} and the OOM killer was invoked",
        )
    },
    Rule {
        extract: Some(|_, _| false),
        table_rows: Some(TASK_TABLE),
        ..rule(
            TASK_TABLE,
            C::OomKill,
            Error,
            &["total_vm"],
            r"\[\s*pid\s*\]\s+uid\s+tgid\s+total_vm\s+rss",
            "At the kill, {largest_holder} held the most memory: {holders}",
        )
    },
    rule(
        "kernel.memcg-task-killed",
        C::OomKill,
        Error,
        &["killed as a result of limit of"],
        r"Task in (?P<task_memcg>\S+) killed as a result of limit of (?P<oom_memcg>\S+)",
        "The memory cgroup {oom_memcg} reached its limit and the kernel killed a task in it",
    ),
    rule(
        "kernel.oom-reaper",
        C::OomKill,
        Error,
        &["oom_reaper: reaped process"],
        r"oom_reaper: reaped process (?P<pid>\d+) \((?P<comm>.*?)\)",
        "The kernel's OOM killer killed {comm} (pid {pid})",
    ),
    rule(
        "kernel.memcg-oom",
        C::OomKill,
        Error,
        &["Memory cgroup out of memory"],
        r"Memory cgroup out of memory",
        "A memory cgroup ran out of memory and the OOM killer killed a process in it",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            "kernel.out-of-memory",
            C::OomKill,
            Error,
            &["Out of memory: ", "out of memory: Kill", "Out of memory and no killable"],
            r"^(?:Out of memory: (?:Kill|Killed) process|Out of memory and no killable processes)",
            "The kernel ran out of memory and the OOM killer was invoked",
        )
    },
    // ---- the same kill as others report it ---------------------------------------
    rule(
        "docker.oom-killed-true",
        C::OomKill,
        Error,
        &["OOMKilled"],
        r#""OOMKilled":\s*true"#,
        "Docker: the container was OOM-killed (it reached its memory limit)",
    ),
    rule(
        "kubernetes.oomkilled",
        C::OomKill,
        Error,
        &["OOMKilled", "OOM Killed", "init was OOM-killed"],
        // runc's own words when the container's first process is killed at start.
        r#"\bcontainer init was OOM-killed\b|Reason:\s+OOMKilled|"reason":\s*"OOM ?Killed"|\bOOMKilled\s+\d+\s|\b\d+/\d+\s+OOMKilled\b|(?:[Tt]erminated|State|state|status|Status).{0,40}\bOOMKilled(?:[^=:"\w]|$)|\bOOMKilled\s*$|reason:\s*OOMKilled|\bwith (?:an? |the )?OOMKilled (?:status|error|reason|state)\b|\bOOMKilled \(exit code 137\)|(?:^\s*|[,\x60])OOMKilled[=:]\s*true\b"#,
        "Kubernetes: the container was OOMKilled (it reached its memory limit)",
    ),
    rule(
        "slurm.oom-kill-event",
        C::OomKill,
        Error,
        &["kill event"],
        r"Detected (?P<count>\d+) oom[-_ ]kill event(?:s|\(s\))? in (?:StepId=|step |job )?(?P<step>\S+?)[.,]?(?:\s|$)",
        "Slurm: {count} OOM kill in step {step} (the job's memory cgroup limit was hit)",
    ),
    Rule {
        extract: Some(extract_slurm_state),
        ..rule(
            "slurm.task-out-of-memory",
            C::OomKill,
            Error,
            &["Out Of Memory", "OUT_OF_MEMORY"],
            r"srun: error: (?P<node>[^:\s]+): tasks? (?P<task>[\d,\-\[\]]+): Out Of Memory|(?-i:\b(?P<state>OUT_OF_MEMORY)\b)",
            "Slurm: the job ran out of memory and was killed",
        )
    },
    Rule {
        cause: Some(Configuration),
        ..rule(
            "ray.memory-monitor",
            C::UserspaceOomKill,
            Error,
            &["killed due to memory pressure", "due to memory pressure", "Ray killed", "OutOfMemoryError", "NODE_OUT_OF_MEMORY", "running low on memory", "ray-oom-prevention", "Selected to kill: ("],
            // Ray 2.56+: `2 worker(s) were killed due to the node running low on memory`;
            // the raylet's summary points at its OOM page. `Selected to kill: (Task: …` and
            // (before 2.56) `Ray killed this worker`'s line name the worker's pid, which
            // `run` reads as Ray's own word.
            r"Worker exit type: NODE_OUT_OF_MEMORY|(?:Task|Worker|Actor).{0,200}?(?:killed|failed) due to (?:the node running low on |)memory pressure|ray\.exceptions\.OutOfMemoryError|\bRayOutOfMemoryError: More than \d+% of the memory on node|Ray killed (?:\d+ worker|this worker)|Selected to kill: \((?:Task|Actor)\b|(?:Task|Worker) was killed due to the node running low on memory|worker\(s\) were killed due to the node running low on memory|\(raylet\).{0,200}ray-oom-prevention\.html",
            "Ray's memory monitor killed a worker: the node ran low on memory",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            // Ray Tune's status block: `Memory usage on this node: 7.4/7.5 GiB: ***LOW
            // MEMORY*** less than 10% of the memory on this node is available for use`.
            "ray.low-memory",
            C::MemoryPressure,
            Warn,
            &["LOW MEMORY"],
            r"Memory usage on this node: (?P<used>[\d.]+)/(?P<total>[\d.]+) GiB: \*{3}LOW MEMORY\*{3}",
            "Ray: {used} of {total} GiB of the node's memory in use, under 10% available",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            // RabbitMQ's memory alarm: the node passed its high watermark and blocks its
            // publishers until memory falls (`memory resource limit alarm set on node
            // rabbit@ctl001.`, then `*** Publishers will be blocked until this alarm
            // clears ***`). Its clearing says nothing.
            "rabbitmq.memory-alarm",
            C::MemoryPressure,
            Warn,
            &["memory resource limit alarm set"],
            r"\bmemory resource limit alarm set on node (?P<node>\S+?)\.?\s*$",
            "RabbitMQ's node {node} passed its memory high watermark: publishers are blocked",
        )
    },
    rule(
        // Cray's ALPS tells the job the kernel's OOM killer ended one of its processes
        // (`[NID 00865] 2017-07-11 22:36:25 Apid 1351768: OOM killer terminated this
        // process.`).
        "cray.oom-killer-terminated",
        C::OomKill,
        Error,
        &["OOM killer terminated this process"],
        r"\bApid \d+: OOM killer terminated this process\b",
        "The kernel's OOM killer ended a process of the job (Cray ALPS)",
    ),
    Rule {
        certainty: Likely,
        ..rule(
            // GitLab's Sidekiq memory killer: a worker over its RSS limit is stopped
            // after a grace time (`Sidekiq worker RSS out of range`; before 13.0,
            // `Sidekiq worker PID-123 current RSS 2100000 exceeds maximum RSS 2000000`).
            "gitlab.sidekiq-memory-killer",
            C::UserspaceOomKill,
            Warn,
            &["Sidekiq worker RSS", "exceeds maximum RSS"],
            r"\bSidekiq worker RSS out of range\b|\bSidekiq worker PID-\d+ current RSS \d+ exceeds maximum RSS \d+",
            "GitLab's Sidekiq memory killer found a worker over its RSS limit: it stops and restarts it",
        )
    },
    Rule {
        certainty: Likely,
        fix: Some(SIGKILL_FIX),
        ..rule(
            // Gradle's client sees its daemon gone without a word: a SIGKILL (most often
            // the OOM killer's on a CI runner) or a crash.
            "gradle.daemon-disappeared",
            C::Sigkill,
            Warn,
            &["daemon disappeared unexpectedly"],
            r"\bGradle build daemon disappeared unexpectedly\b",
            "Gradle's daemon disappeared unexpectedly: killed (most often for memory) or crashed",
        )
    },
    Rule {
        certainty: Likely,
        ..rule(
            "gunicorn.perhaps-oom",
            C::OomKill,
            Error,
            &["Perhaps out of memory"],
            r"Worker \(pid:?(?P<pid>\d+)\) was sent SIGKILL! Perhaps out of memory\?",
            "gunicorn: worker {pid} was killed by SIGKILL, most likely by the OOM killer",
        )
    },
    Rule {
        certainty: Possible,
        ..rule(
            // Jupyter's own words, and Databricks' for its notebooks' Python kernel
            // (`Fatal error: The Python kernel is unresponsive.`, most often the driver
            // out of memory).
            "jupyter.kernel-died",
            C::OomKill,
            Warn,
            &["appears to have died", "Kernel died", "Kernel Restarting", "kernel restarting", "has died, restarting", "KernelRestarter", "restarted", "died, removing from map", "kernel is unresponsive"],
            r"[Kk]ernel(?: for \S+)? appears to have died|\bFatal error: The Python kernel is unresponsive\b|Kernel died|Kernel Restarting|KernelRestarter: restarting kernel|Kernel [0-9a-f-]+ died, removing from map|has died, restarting|kernel [0-9a-f]{8}-[0-9a-f-]{27} restarted",
            "The Jupyter kernel died: most often the OOM killer ended it",
        )
    },
    Rule {
        fix: Some(SIGKILL_FIX),
        certainty: Likely,
        ..rule(
            EXIT_SIGKILL,
            C::OomKill,
            Error,
            &["xit Code", "xit code", "xit status", "XIT CODE", "xitCode", "xitcode", "ExitCode", "with code 137", "exited with 137", "SIGKILL", "return code = -9", "returncode=-9", "code -9", "code: -9", "code = -9", "xitstatus", "xit_status", "status 137", "status=137", "status: 137", "status:137", "signal 9", "Signal 9", "unexpected, 137", "signal terminated program", "internal compiler error: Killed", "signal: killed", "returned 137", "java failed with [137]"],
            r"(?i:\bexit(?:ed with)?[ _]?(?:code|status)\x22?\s*[:=]?\s*\(?(?:137|247)\b)|EXIT CODE: 9\b|Exiting \(unexpected, 137\)|terminated with signal SIGKILL|(?:was|job) terminated due to signal 9\b|(?i:\bexitcode\s*[:=]\s*-9\b)|Signal 9 \(SIGKILL\) received by PID (?P<pid>\d+)|(?:return|exit|exited with) ?code(?: =|:)? -9\b|returncode=-9\b|died with <Signals\.SIGKILL: 9>|(?:killed|terminated) by signal(?: 9|:? SIGKILL)\b|(?i:status[ =:]+137\b)|exited with code 137|\bexited with 137\b|\(signal 9\)|terminated with signal 9\b|exited unexpectedly \(code -9\)|(?:Killed|已杀死|已殺死|Getötet|Unicestwiony|Processus arrêté|Matado|Убито|強制終了) signal terminated program (?P<program>\S+)|\(signal: 9, SIGKILL: kill\)|Command failed with signal \x22?SIGKILL\x22?|internal compiler error: Killed \(program (?P<compiler>\S+)\)|(?:exited with error|Error): signal: killed\b|\breturned 137\b|\bstarting java failed with \[137\]",
            "The process was killed by SIGKILL (exit code 137), most often the OOM killer",
        )
    },
    // bash and sh print `Killed` in this case only (macOS's `Killed: 9`), and healthy
    // logs hold `killed` on every line (`killed_frac=0.95`): this form is matched in
    // its case. Printed after a progress bar that ended without a newline, it follows
    // its `]`, `%` or count (`69/4190Killed`); a report that pastes the output as
    // inline code ends it there (`… [00:00<?, ?seconds/s]Killed\` on my terminal`), as
    // a report quoting the job's line does (`"./launch.sh: line 217: 15912 Killed"`),
    // and output quoted over several lines ends on it (`Killed\`,so could anyone …`).
    // Bars drawn with block elements end in `▏` (DuckDB's `45% ▕███▏ Killed`); Vite's
    // progress names the module it was transforming (`transforming (438) …/nth.mjsKilled`).
    Rule {
        fix: Some(SIGKILL_FIX),
        certainty: Likely,
        exact_case: true,
        ..rule(
            "shell.killed",
            C::OomKill,
            Error,
            &["Killed"],
            r"^\s*(?:\[\d+\]\s*[+-]?\s+(?:\d+\s+)?|[+-]\s+|(?:.*?[|\]%:]\s+)?\S[^:]*: line \d+:\s+(?P<pid>\d+)\s+)Killed(?:: 9)?(?:\s+(?P<command>.*?))?\s*$|^(?:.*?[|\]%:]\s+)?[\x22\x60']\S[^:]*: line \d+:\s+(?P<pid2>\d+)\s+Killed(?:: 9)?[\x22\x60']|^(?:.*?(?:[|\])%▏▕│]|\b\d+/\d+|\.\.\.|…|: [-\\/])\s*)?Killed(?:: 9)?\s*$|^(?:.*?(?:[|\])%▏▕│]|\b\d+/\d+|\.\.\.|…)\s*)?Killed(?:: 9)?\x60|^\*\*Killed\*\*$|^transforming \(\d+\) \S*?Killed\s*$",
            "The shell reports the job was Killed (SIGKILL), most often by the OOM killer",
        )
    },
    // zsh's and fish's words (zsh's job table says `[1]  + 9301 killed     cmd`), and
    // shells in other languages.
    Rule {
        fix: Some(SIGKILL_FIX),
        certainty: Likely,
        ..rule(
            SHELL_KILLED_ELSEWHERE,
            C::OomKill,
            Error,
            &["zsh: killed", " killed ", "fish: Job", "Getötet", "Процесс убит", "Убито", "已杀死", "已殺死", "強制終了", "Processus arrêté", "Matado", "Terminado (killed)"],
            r"^\s*(?:\[\d+\][+-]?\s+(?:\d+\s+)?|[+-]\s+|\S[^:]*: (?:line|Zeile|ligne|línea|строка|riga|行) \d+:\s+(?P<pid>\d+)\s+)(?:Getötet|Процесс убит|Убито|已杀死|已殺死|強制終了|Processus arrêté|Matado|Terminado \(killed\))(?:\s+(?P<command>.*?))?\s*$|^zsh: killed(?:\s+(?P<zsh_command>.*?))?\s*$|^\s*\[\d+\]\s*[+-]?\s+\d+ killed\s+(?P<zsh_job>.+?)\s*$|fish: Job \d+, .* terminated by signal SIGKILL|^(?:.*?(?:[|\]%]|\d(?:s|it/s|s/it)))?\s*(?:Getötet|Processus arrêté|Убито|Процесс убит|已杀死|已殺死|強制終了|Matado|Terminado \(killed\))\s*$",
            "The shell reports the job was Killed (SIGKILL), most often by the OOM killer",
        )
    },
    // `docker events`: the kernel's OOM killer fired in the container's cgroup.
    rule(
        "docker.event-container-oom",
        C::OomKill,
        Error,
        &["container oom "],
        r"\bcontainer oom (?P<container>[0-9a-f]{12,64})\b",
        "Docker reports an OOM kill in container {container}",
    ),
    // ---- SIGKILL that is known not to be (or not known to be) an OOM kill ----------
    Rule {
        certainty: Possible,
        ..rule(
            NOT_OOM_MARKER,
            C::Sigkill,
            Info,
            &["OOMKilled", "Reason:", "\"reason\"", "Reason ["],
            r#""OOMKilled":\s*false|OOMKilled[=:]\s*false|^\s*Reason:\s+Error\s*$|"reason":\s*"Error"|Reason \[Error\]"#,
            "A process died of SIGKILL; the container runtime does not say it was the OOM killer",
        )
    },
    // slurmctld's record of a batch job that ended by SIGKILL: a cgroup OOM kill, a
    // time limit and an scancel all end so; the job's own output tells which.
    Rule {
        certainty: Possible,
        ..rule(
            "slurmctld.job-sigkill",
            C::Sigkill,
            Info,
            &["WTERMSIG 9"],
            r"_job_complete: JobId=(?P<job>\d+) WTERMSIG 9\b",
            "Slurm job {job} ended by SIGKILL; slurmctld does not say why",
        )
    },
    Rule {
        certainty: Possible,
        ..rule(
            "sigkill.by-timeout-or-preemption",
            C::Sigkill,
            Info,
            &["DUE TO TIME LIMIT", "DUE TO PREEMPTION", "DUE TO JOB REQUEUE", "DUE TO NODE FAILURE", "iveness probe", "WORKER TIMEOUT", "KILL request", "kill request", "with signal SIGKILL", "result 'timeout'", "timed out. Killing"],
            r"CANCELLED AT \S+ DUE TO (?P<why>TIME LIMIT|PREEMPTION|JOB REQUEUE|NODE FAILURE)|(?i:\bhandling (?:a )?kill request\b|\breceived (?:a )?kill request\b)|(?P<probe>[Ll]iveness probe failed|failed liveness probe, will be restarted)|(?P<gunicorn>WORKER TIMEOUT) \(pid:?\d+\)|(?P<systemd>Killing process \d+ \([^)]*\) with signal SIGKILL|Failed with result 'timeout'|State '[\w-]+' timed out\. Killing)",
            "A process was killed by its supervisor (a time limit, a preemption or a failed health check), not for memory",
        )
    },
    // Ray's report of a worker that vanished: its own words list the OOM killer, `ray
    // stop --force` and a crash as the causes it cannot tell apart.
    rule(
        // Databricks' chauffeur ends a driver that stopped answering (most often a
        // driver stuck in garbage collection near its heap's end): a SIGKILL it sent,
        // no OOM kill it saw.
        "databricks.driver-hard-killed",
        C::Sigkill,
        Error,
        &["Hard killed Driver"],
        r"\bHard killed Driver \(pid=(?P<pid>\d+)\) after unresponsive for (?P<seconds>\d+) seconds",
        "Databricks killed its driver (pid {pid}) after it stopped answering for {seconds} s",
    ),
    Rule {
        certainty: Possible,
        ..rule(
            "ray.worker-died-unexpectedly",
            C::Sigkill,
            Error,
            &["by an unexpected system error", "Worker unexpectedly exits"],
            r"A worker died or was killed while executing (?:a|the) task by an unexpected system error|Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits",
            "A Ray worker died unexpectedly (SIGKILL, `ray stop --force` or a crash); Ray does not say which",
        )
    },
    // ---- userspace killers, evictions, schedulers' limits -------------------------
    rule(
        // A site's resource watchdog on shared nodes, which kills a process over its
        // memory limit and says so on the process's terminal (`exceeded memory limit
        // (3006140416 > 2684354560), being killed`): a userspace killer, not the kernel.
        "watchdog.memory-limit-kill",
        C::UserspaceOomKill,
        Error,
        &["exceeded memory limit ("],
        r"\bexceeded memory limit \((?P<used>\d+) > (?P<limit>\d+)\), being killed\b",
        "A watchdog killed the process over its memory limit ({used} > {limit} bytes)",
    ),
    rule(
        "systemd-oomd.killed",
        C::UserspaceOomKill,
        Error,
        &["systemd-oomd", "due to memory pressure", "due to memory used", "due to swap used", "cgroups for killing", "Memory pressure for "],
        r"systemd-oomd(?:\[\d+\])?: (?:Killed|Considered) (?P<unit>\S+).*?due to (?:memory pressure|memory used|swap used)|Considered \d+ cgroups for killing|Memory pressure for \S+ is (?:[\d.]+% > |greater than [\d.]+ for more than [\d.]+ seconds)|Killed (?P<scope>\S+) due to (?:memory pressure|memory used|swap used)|systemd-oomd(?:\[\d+\])?: .*(?:killed|Killed)|: systemd-oomd killed \d+ process\(es\) in this unit",
        "systemd-oomd killed {unit} for memory pressure",
    ),
    rule(
        "earlyoom.kill",
        C::UserspaceOomKill,
        Error,
        &["earlyoom", "sending SIG", "ow memory! ", "Invoking oom killer", "Out of memory! avail"],
        // Its desktop notification says `Low memory! Killing process 997 name`.
        r"(?i:low memory! (?:at or below SIG(?:TERM|KILL) limits|mem avail|killing process (?P<pid_notified>\d+)))|Invoking oom killer|earlyoom.*(?:sending SIG(?:TERM|KILL)|[Kk]illing process|killed)|^(?:[-*] )?sending SIG(?:TERM|KILL) to process (?P<pid>\d+) uid \d+ \x22(?P<comm>[^\x22]*)\x22|low memory! at least one of the following is under threshold|mem avail:.*sending SIG(?:TERM|KILL)|^Out of memory! avail: \d+ MiB < min: \d+ MiB",
        "earlyoom killed a process because memory ran low",
    ),
    rule(
        "nohang.kill",
        C::UserspaceOomKill,
        Error,
        &["nohang", "Implement a corrective action", "corrective action", "_threshold_min_"],
        // Its own words stand without its name: a journal's prefix may be gone.
        r"\bnohang\b.*(?:[Cc]orrective action|SIGKILL|SIGTERM|[Kk]illed)|Implement a corrective action|[Cc]orrective action applied|Memory status that requires corrective actions|<= (?:soft|hard)_threshold_min_(?:mem|swap)\b",
        "nohang killed a process because memory ran low",
    ),
    rule(
        // The kubelet's OOM watcher turns the kernel's kills into node and pod events.
        "kubelet.oom-event",
        C::OomKill,
        Error,
        &["OOM encountered"],
        r"(?:System|Cgroup) OOM encountered(?:, victim process: (?P<comm>[^,]+), pid: (?P<pid>\d+))?",
        "The kubelet saw the kernel's OOM killer act on the node",
    ),
    rule(
        // Dask's nanny restarts its worker past the memory budget (95% of its limit by
        // default): a userspace killer.
        "dask.nanny-restart",
        C::UserspaceOomKill,
        Error,
        &["xceeded"],
        r"Worker (?:\S+ \(pid=(?P<pid>\d+)\) )?exceeded (?P<percent>\d+)% memory budget",
        "Dask's nanny restarted a worker past {percent}% of its memory limit",
    ),
    rule(
        // puma_worker_killer's reaper past its RAM budget: `PumaWorkerKiller: Out of
        // memory. 3 workers consuming total: 540.8 mb out of max: 501.7 mb. Sending TERM
        // to #<Puma::Cluster::Worker …>`.
        "puma-worker-killer.term",
        C::UserspaceOomKill,
        Error,
        &["PumaWorkerKiller: Out of memory"],
        r"PumaWorkerKiller: Out of memory\. \d+ workers consuming total: (?P<total>[\d.]+) mb out of max: (?P<max>[\d.]+) mb",
        "PumaWorkerKiller sent TERM to a Puma worker: the workers used {total} MB, over its {max} MB",
    ),
    rule(
        // unicorn-worker-killer's check before it sends SIGQUIT: `#<Unicorn::HttpServer:
        // 0x…>: worker (pid: 833) exceeds memory limit (458501632.0 bytes > 334369369
        // bytes)`.
        "unicorn-worker-killer.quit",
        C::UserspaceOomKill,
        Error,
        &["exceeds memory limit ("],
        r"\bworker \(pid: (?P<pid>\d+)\) exceeds memory limit \((?P<used>\d+)(?:\.\d+)? bytes > (?P<limit>\d+) bytes\)",
        "unicorn-worker-killer stopped worker {pid}: {used} bytes, over its limit of {limit}",
    ),
    Rule {
        certainty: Possible,
        cause: Some(Capacity),
        ..rule(
            // `kubectl get pods` rows in the Evicted state: the kubelet evicts for
            // memory most often, for disk too, and the row does not say which.
            "kubectl.pod-evicted",
            C::UserspaceOomKill,
            Error,
            &["Evicted"],
            r"(?-i:^\S+\s+\d+/\d+\s+Evicted\s+\d+)",
            "The kubelet evicted pods (kubectl shows them Evicted); memory pressure is the commonest reason",
        )
    },
    Rule {
        cause: Some(Capacity),
        ..rule(
            "kubelet.eviction",
            C::UserspaceOomKill,
            Error,
            &["low on resource: memory", "MemoryPressure", "InsufficientMemory", "Evicted", "Eviction"],
            r"(?:The node was low on resource: memory|low on resource: memory)|Reason:\s+Evicted|(?-i:\bEvicted\b).*\bmemory\b|\bmemory\b.*(?-i:\bEvicted\b)|\bmemory\b.*\b(?:kubelet|kubernetes|k8s)\b[^.\n]{0,30}\bevicted\b|\b(?:kubelet|kubernetes|k8s)\b[^.\n]{0,30}\bevicted\b.*\bmemory\b|\bevicted by (?:the )?(?:kubelet|kubernetes)\b.*\bmemory\b|(?:[Ee]viction manager|eviction_manager).*(?:memory|pod)|\bEvictionThresholdMet\b.*memory|NodeHasInsufficientMemory|\bMemoryPressure\b.*(?:True|evict)",
            "The kubelet evicted the pod: the node was low on memory",
        )
    },
    Rule {
        cause: Some(Configuration),
        ..rule(
            // Hadoop YARN's NodeManager ends a container over its memory (Spark's
            // executors, TensorFlowOnSpark), and DMLC's application master (XGBoost,
            // MXNet on YARN) retells it: `[DMLC] Task 26 killed because of exceeding
            // allocated physical memory`.
            "yarn.container-killed",
            C::UserspaceOomKill,
            Error,
            &["for exceeding memory limits", "beyond physical memory limits", "beyond virtual memory limits", "for exceeding physical memory limits", "for exceeding virtual memory limits", "memory limit. Current usage", "exceeding allocated physical memory"],
            // Hadoop 2 says by how much; Hadoop 1 and some 2.x only that it is; Hadoop 3
            // names the limit in capitals.
            r"Container killed by YARN for exceeding (?:physical |virtual )?memory limits|is running (?:(?:[\d.]+\w*|<n>) )?beyond (?:physical|virtual) memory limits|is running (?:\d+B )?beyond the '(?:PHYSICAL|VIRTUAL)' memory limit\. Current usage|\[DMLC\] Task \d+ killed because of exceeding allocated physical memory",
            "YARN killed a container for exceeding its memory limit",
        )
    },
    rule(
        // ClickHouse refuses an allocation past its own limits (MEMORY_LIMIT_EXCEEDED,
        // code 241): the query fails, the server lives. Before Slurm's rule, whose
        // `memory limit exceeded` its words hold.
        "clickhouse.memory-limit-exceeded",
        C::HostAllocFailure,
        Error,
        &["memory limit (", ") memory limit exceeded"],
        r"(?i:\bmemory limit \((?P<scope>total|for query|for user)\) exceeded|\((?P<scope2>total)\) memory limit exceeded): would use (?P<would>[\d.]+ [KMGT]iB)",
        "ClickHouse refused memory past its {scope} limit (would use {would})",
    ),
    rule(
        // Trino and Presto fail the query at their per-node or distributed limit
        // (`Query exceeded per-node memory limit of 4.80GB [Allocated: …]`,
        // `ExceededMemoryLimitException`); the workers live.
        "trino.exceeded-memory-limit",
        C::HostAllocFailure,
        Error,
        &["Query exceeded", "ExceededMemoryLimitException"],
        r"\bQuery exceeded (?:per-node |distributed |local )?(?:user |total )?memory limit of (?P<limit>[\d.]+\s?[KMGTP]?B)\b|\bExceededMemoryLimitException\b",
        "The query engine failed the query at its memory limit",
    ),
    Rule {
        cause: Some(Configuration),
        ..rule(
            "slurm.exceeded-memory-limit",
            C::UserspaceOomKill,
            Error,
            &["xceeded", "EXCEEDED"],
            r"(?:Job|Step|StepId=)\s*(?P<step>\S+?) exceeded (?:job |step )?memory limit|[Ee]xceeded (?:job|step) memory limit|exceeded virtual memory limit|MEMORY LIMIT EXCEEDED|[Mm]emory limit exceeded",
            "Slurm: the job exceeded its memory limit and was killed",
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
    cause: Capacity,
    confirm: "The kernel log of the node at that time says so: dmesg -T | grep -iE 'killed process|out of memory' \
              (or journalctl -k --since …).",
};

pub(super) const SIGKILL: ClassInfo = ClassInfo {
    class: C::Sigkill,
    name: "sigkill",
    id: ids::LOG_SIGKILL,
    title: "A process was killed by SIGKILL; nothing says it was the OOM killer",
    why: "Exit code 137 is 128 + 9, SIGKILL. The OOM killer sends it, but so do a timeout (kubelet's \
          liveness probe, Slurm's time limit, docker stop after its grace period), a preemption, and a user's \
          kill -9; nothing here records an OOM kill (the kernel's kill line, the runtime's OOMKilled).",
    fix: "Find who sent it: the node's kernel log for an OOM kill (dmesg -T | grep -i 'killed process'), the \
          pod's events (kubectl get events --field-selector involvedObject.name=POD), liveness probe failures, \
          and the scheduler's record (sacct -j JOB -o State,ExitCode,Reason).",
    cause: Configuration,
    confirm: "dmesg -T | grep -iE 'killed process|out of memory' on the node where it ran.",
};

pub(super) const USERSPACE_OOM_KILL: ClassInfo = ClassInfo {
    class: C::UserspaceOomKill,
    name: "userspace_oom_kill",
    id: ids::LOG_USERSPACE_OOM_KILL,
    title: "A userspace OOM killer or the scheduler ended the job for memory",
    why: "Before the kernel's OOM killer acts, userspace can: systemd-oomd and earlyoom kill on memory \
          pressure or low free memory, the kubelet evicts pods when the node runs low, and Slurm enforces the \
          job's requested memory. The kernel log then shows no OOM kill.",
    fix: "Give the job the memory it needs, or need less: request more (sbatch --mem=…, the pod's memory request \
          and limit), run fewer jobs per node; for systemd-oomd, see oomctl and the unit's ManagedOOMMemoryPressure=; \
          for earlyoom, its -m/-s thresholds. Measure the job's peak: memtriage run -- python train.py.",
    cause: Capacity,
    confirm: "The killer's own log: journalctl -u systemd-oomd / -u earlyoom, kubectl describe node (MemoryPressure), \
              sacct -j JOB -o State,MaxRSS,ReqMem.",
};

/// `OUT_OF_MEMORY` is Slurm's state for the job; other programs name an error so
/// (`Gurobi will fail with an OUT_OF_MEMORY error`), which is no Slurm job's, and a
/// table of the states gives its meaning in the next cell (`OUT_OF_MEMORY | 出现内存不足错误
/// |`, `OUT_OF_MEMORY  Job experienced out of memory error.`), where `sacct` and
/// `squeue` give a job's figures.
#[allow(clippy::ptr_arg)]
fn extract_slurm_state(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    if !out.iter().any(|(k, _)| k == "state") {
        return true;
    }
    msg.find("OUT_OF_MEMORY").is_none_or(|at| {
        let after = &msg[at + "OUT_OF_MEMORY".len()..];
        let named = after.trim_start().to_lowercase();
        let names_an_error = ["error", "exception", "code", "status code"]
            .iter()
            .any(|name| named.starts_with(name));
        !names_an_error && !describes_the_state(after)
    })
}

/// The cell after a state in a table, when it is the state's meaning: words about
/// memory or an error, in English or in the languages Slurm's pages are translated to.
fn describes_the_state(after: &str) -> bool {
    let cell_break =
        after.trim_start_matches(' ').starts_with(['|', '\t']) || after.starts_with("  ");
    let cell = after
        .trim_start_matches(|c: char| c == '|' || c.is_whitespace())
        .split('|')
        .next()
        .unwrap_or("")
        .to_lowercase();
    cell_break
        && [
            "memory",
            "error",
            "内存",
            "記憶體",
            "メモリ",
            "память",
            "памяти",
        ]
        .iter()
        .any(|word| cell.contains(word))
}

pub(super) const SIGKILL_FIX: &str = concat!(
    "Confirm it was the OOM killer in the node's kernel log: dmesg -T | grep -iE 'killed process|out of memory' \
     (or journalctl -k).\n",
    oom::unknown_limit_fix!()
);
