//! What Slurm says about a job, in its own formats: `scontrol show job -o` (one line of
//! `Key=Value` fields), its memory sizes (`300M`, `4G`; a bare number is MiB), the
//! cgroup paths of a job's steps (v1 `/slurm/uid_U/job_J/step_S`, v2
//! `/system.slice/slurmstepd.scope/job_J/step_S/user/task_T`), and the line slurmstepd
//! writes into a job's output when its cgroup had an OOM kill, in every version's words.

/// A job as `scontrol show job -o` shows it; each field `None` where absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScontrolJob {
    pub job_id: Option<u64>,
    pub user: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `COMPLETING`, `OUT_OF_MEMORY`, `FAILED`, …
    pub state: Option<String>,
    /// `OutOfMemory`, `NonZeroExitCode`, `None`.
    pub reason: Option<String>,
    /// `0:125`: the batch script's exit status and signal (253 reads as 0:125).
    pub exit_code: Option<String>,
    pub derived_exit_code: Option<String>,
    pub std_out: Option<String>,
    pub std_err: Option<String>,
    pub work_dir: Option<String>,
    /// The memory asked for: `--mem` (per node) or `--mem-per-cpu`, as written.
    pub mem_per_node: Option<String>,
    pub mem_per_cpu: Option<String>,
    /// `cpu=2,mem=300M,node=1,billing=2`.
    pub tres: Option<String>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub node_list: Option<String>,
}

/// Reads `scontrol show job -o ID`'s line (or its multi-line form). Values run to the
/// next ` Key=`; a path with a space in it survives where the next word has no `=`.
pub fn scontrol_job(text: &str) -> ScontrolJob {
    let mut job = ScontrolJob::default();
    // The first of a key wins: a later one is inside a value the job's owner wrote.
    let mut seen = std::collections::HashSet::new();
    for (key, value) in fields(text) {
        if !seen.insert(key) {
            continue;
        }
        let value = value.trim();
        let owned = || Some(value.to_string()).filter(|v| !v.is_empty() && v != "(null)");
        match key {
            "JobId" => job.job_id = value.parse().ok(),
            "UserId" => {
                // `alice(1000)`
                let (name, id) = value.split_once('(').unwrap_or((value, ""));
                job.user = Some(name.to_string()).filter(|n| !n.is_empty());
                job.uid = id.trim_end_matches(')').parse().ok();
            }
            "GroupId" => {
                let id = value.split_once('(').map_or("", |(_, id)| id);
                job.gid = id.trim_end_matches(')').parse().ok();
            }
            "JobState" => job.state = owned(),
            "Reason" => job.reason = owned(),
            "ExitCode" => job.exit_code = owned(),
            "DerivedExitCode" => job.derived_exit_code = owned(),
            "StdOut" => job.std_out = owned(),
            "StdErr" => job.std_err = owned(),
            "WorkDir" => job.work_dir = owned(),
            "MinMemoryNode" => job.mem_per_node = owned(),
            "MinMemoryCPU" => job.mem_per_cpu = owned(),
            "TRES" => job.tres = owned(),
            "StartTime" => job.start_time = owned(),
            "EndTime" => job.end_time = owned(),
            "NodeList" => job.node_list = owned(),
            _ => {}
        }
    }
    job
}

/// `Key=Value` pairs; a word without `=` belongs to the value before it.
fn fields(text: &str) -> Vec<(&str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for word in text.split_whitespace() {
        match word.split_once('=') {
            Some((key, value)) if is_key(key) => out.push((key, value.to_string())),
            _ => {
                if let Some((_, value)) = out.last_mut() {
                    value.push(' ');
                    value.push_str(word);
                }
            }
        }
    }
    out
}

fn is_key(key: &str) -> bool {
    !key.is_empty()
        && key.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '_'))
}

/// A Slurm memory size in bytes: `300M`, `4G`, `1.5T`, `512K`; a bare number is MiB
/// (`--mem=300`); `0` is "all the node's memory", which is no limit of its own.
pub fn mem_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], t[i..].to_ascii_uppercase()),
        None => (t, "M".to_string()),
    };
    let n: f64 = number.parse().ok()?;
    let scale: u64 = match unit.trim_end_matches('B') {
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    (n > 0.0 && n.is_finite()).then_some((n * scale as f64) as u64)
}

/// The memory in a TRES string: `cpu=2,mem=300M,node=1` gives 300 MiB.
pub fn tres_mem(tres: &str) -> Option<u64> {
    tres.split(',')
        .find_map(|kv| kv.strip_prefix("mem="))
        .and_then(mem_size)
}

/// The job and step a cgroup path belongs to: `/slurm/uid_1000/job_42/step_batch/task_0`
/// gives (42, `batch`); `/slurm/uid_1000/job_42` gives (42, None).
pub fn job_of_cgroup(path: &str) -> Option<(u64, Option<String>)> {
    let mut parts = path.split('/').skip_while(|p| !p.starts_with("job_"));
    let job = parts.next()?.strip_prefix("job_")?.parse().ok()?;
    let step = parts
        .next()
        .and_then(|p| p.strip_prefix("step_"))
        .map(str::to_string);
    Some((job, step))
}

/// slurmstepd's report that a step's cgroup had OOM kills, as the job's output holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepdOom {
    /// Kills counted; `None` for the oldest form, which counts none.
    pub kills: Option<u64>,
    /// `123.batch`, where the line names the step.
    pub step: Option<String>,
    /// Slurm killed the step itself, having polled its memory past the limit
    /// (`OverMemoryKill`): the usage and limit it compared, in bytes.
    pub polled: Option<(u64, u64)>,
}

/// `slurmstepd: error: Detected 1 oom_kill event in StepId=123.batch. …` (23.02 on),
/// `Detected 2 oom-kill event(s) in StepId=123.0. …` (20.11 to 22.05), `… in step
/// 123.batch cgroup.` (17.11 to 20.02), `Exceeded job memory limit at some point.`
/// (before 17.11.3) and OverMemoryKill's `StepId=123.0 exceeded memory limit (…)`.
pub fn stepd_oom(line: &str) -> Option<StepdOom> {
    let i = line.find("slurmstepd")?;
    let message = line[i..].split_once("error: ")?.1;
    if let Some(rest) = message.strip_prefix("Detected ") {
        let (count, rest) = rest.split_once(' ')?;
        if !rest.starts_with("oom") {
            return None;
        }
        let step = rest
            .split_once("StepId=")
            .or_else(|| rest.split_once(" in step "))
            .map(|(_, s)| {
                s.split(|c: char| c.is_whitespace())
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('.')
                    .to_string()
            })
            .filter(|s| !s.is_empty());
        return Some(StepdOom {
            kills: count.parse().ok(),
            step,
            polled: None,
        });
    }
    if message.starts_with("Exceeded job memory limit")
        || message.starts_with("Exceeded step memory limit")
    {
        return Some(StepdOom {
            kills: None,
            step: None,
            polled: None,
        });
    }
    let (step, rest) = message.split_once(' ')?;
    if rest.starts_with("exceeded memory limit")
        || rest.starts_with("exceeded virtual memory limit")
    {
        // `(322961408 > 314572800), being killed`
        let polled = rest
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .and_then(|(inside, _)| inside.split_once(" > "))
            .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
        return Some(StepdOom {
            kills: None,
            step: Some(step.trim_start_matches("StepId=").to_string()),
            polled,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scontrol show job -o` of an OOM-killed batch job, as 22.05 prints it during
    /// the epilog (the job still COMPLETING).
    const OOM_JOB: &str = "JobId=7 JobName=grow.sh UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=4294901754 Nice=0 Account=(null) QOS=(null) JobState=COMPLETING Reason=OutOfMemory Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:125 DerivedExitCode=0:0 RunTime=00:00:04 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-11-28T21:00:00 EligibleTime=2026-11-28T21:00:00 AccrueTime=Unknown StartTime=2026-11-28T21:00:01 EndTime=2026-11-28T21:00:05 Deadline=N/A Partition=test AllocNode:Sid=host:123 NodeList=localhost BatchHost=localhost NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,mem=300M,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=300M MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/home/alice/my jobs/grow.sh WorkDir=/home/alice/my jobs StdErr=/home/alice/my jobs/slurm-7.out StdIn=/dev/null StdOut=/home/alice/my jobs/slurm-7.out Power=";

    #[test]
    fn an_oom_killed_jobs_fields_are_read_with_paths_that_hold_spaces() {
        let job = scontrol_job(OOM_JOB);
        assert_eq!(job.job_id, Some(7));
        assert_eq!(
            (job.user.as_deref(), job.uid, job.gid),
            (Some("alice"), Some(1000), Some(1000))
        );
        assert_eq!(job.reason.as_deref(), Some("OutOfMemory"));
        assert_eq!(job.exit_code.as_deref(), Some("0:125"));
        assert_eq!(
            job.std_err.as_deref(),
            Some("/home/alice/my jobs/slurm-7.out")
        );
        assert_eq!(job.work_dir.as_deref(), Some("/home/alice/my jobs"));
        assert_eq!(job.mem_per_node.as_deref(), Some("300M"));
        assert_eq!(tres_mem(job.tres.as_deref().unwrap()), Some(300 << 20));
        assert_eq!(job.mem_per_cpu, None);
    }

    /// A working directory whose name imitates fields does not change the job's owner
    /// or its output: the first of a key is scontrol's own.
    #[test]
    fn regression_a_value_that_imitates_a_field_changes_nothing() {
        let spoofed = OOM_JOB.replace(
            "WorkDir=/home/alice/my jobs",
            "WorkDir=/home/alice/x UserId=root(0) GroupId=root(0) StdErr=/etc/ld.so.preload",
        );
        let job = scontrol_job(&spoofed);
        assert_eq!((job.uid, job.gid), (Some(1000), Some(1000)));
        assert_eq!(
            job.std_err.as_deref(),
            Some("/etc/ld.so.preload"),
            "StdErr comes after WorkDir: a path never decides the owner"
        );
    }

    #[test]
    fn slurm_sizes_are_mib_unless_told() {
        assert_eq!(mem_size("300M"), Some(300 << 20));
        assert_eq!(mem_size("300"), Some(300 << 20));
        assert_eq!(mem_size("4G"), Some(4 << 30));
        assert_eq!(mem_size("1.5T"), Some(3 << 39));
        assert_eq!(mem_size("512K"), Some(512 << 10));
        assert_eq!(mem_size("0"), None, "all of the node: no limit of its own");
        assert_eq!(mem_size("lots"), None);
    }

    #[test]
    fn a_steps_cgroup_names_its_job_in_v1_and_v2() {
        assert_eq!(
            job_of_cgroup("/slurm/uid_1000/job_42/step_batch/task_0"),
            Some((42, Some("batch".into())))
        );
        assert_eq!(
            job_of_cgroup("/system.slice/slurmstepd.scope/job_42/step_0/user/task_0"),
            Some((42, Some("0".into())))
        );
        assert_eq!(job_of_cgroup("/slurm/uid_1000/job_42"), Some((42, None)));
        assert_eq!(job_of_cgroup("/user.slice/session-3.scope"), None);
        assert_eq!(job_of_cgroup("/job_x/step_0"), None);
    }

    #[test]
    fn slurmstepds_oom_line_is_read_in_every_versions_words() {
        let cases = [
            ("slurmstepd: error: Detected 1 oom_kill event in StepId=123.batch. Some of the step tasks have been OOM Killed.", Some(1), Some("123.batch")),
            ("slurmstepd: error: Detected 2 oom_kill events in StepId=123.0. Some of the step tasks have been OOM Killed.", Some(2), Some("123.0")),
            ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=5.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.", Some(1), Some("5.batch")),
            ("slurmstepd: error: Detected 3 oom-kill event(s) in step 9.batch cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.", Some(3), Some("9.batch")),
            ("slurmstepd-node17: error: Detected 1 oom_kill event in StepId=8.extern. Some of the step tasks have been OOM Killed.", Some(1), Some("8.extern")),
            ("slurmstepd: error: Exceeded job memory limit at some point.", None, None),
            ("slurmstepd: error: StepId=11.0 exceeded memory limit (322961408 > 314572800), being killed", None, Some("11.0")),
        ];
        for (line, kills, step) in cases {
            let got = stepd_oom(line).unwrap_or_else(|| panic!("not read: {line}"));
            assert_eq!((got.kills, got.step.as_deref()), (kills, step), "{line}");
        }
        let polled = stepd_oom(
            "slurmstepd: error: StepId=11.0 exceeded memory limit (322961408 > 314572800), being killed",
        )
        .unwrap();
        assert_eq!(polled.polled, Some((322961408, 314572800)));
        assert_eq!(
            stepd_oom("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-11-28T21:00:00 ***"),
            None
        );
        assert_eq!(stepd_oom("python: error: Detected 1 oom_kill event"), None);
    }
}
