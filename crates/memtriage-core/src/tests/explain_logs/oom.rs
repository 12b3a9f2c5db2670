//! OOM kills as the kernel, Kubernetes, Slurm and shells report them: plain dmesg,
//! `dmesg -T`, journalctl, syslog, `kubectl describe`, `srun`, and exit code 137.

use crate::diagnose::logs::FailureClass;
use crate::model::finding::Severity;

use super::{evidence, first_match, only_finding, quoted, scan_fixture};

#[test]
fn oom_kill_in_plain_dmesg_names_the_victim_its_size_and_the_constraint() {
    let s = scan_fixture("oom-dmesg.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        f.title,
        "The kernel's OOM killer killed python (pid 48213) holding 244 GiB of anonymous memory"
    );
    assert_eq!(evidence(&f, "killed"), "python (pid 48213)");
    assert_eq!(evidence(&f, "anon-rss"), "244 GiB"); // 256032492 kB
    assert_eq!(evidence(&f, "total-vm"), "268 GiB");
    assert_eq!(evidence(&f, "shmem-rss"), "2.0 MiB");
    assert!(evidence(&f, "constraint").contains("CONSTRAINT_NONE"));
    assert_eq!(evidence(&f, "when"), "612301.1 s after boot");
    // The kill is quoted from the line the kernel wrote, with its number.
    assert!(quoted(&f, 14).contains("Out of memory: Killed process 48213 (python)"));
    assert!(f.fix.contains("memtriage run -- python train.py"));
    assert!(f.fix.contains("torch.load(path, mmap=True)"));
    let m = first_match(&s, "kernel.oom-killed-process");
    assert_eq!(m.line_no, 14);
    assert_eq!(m.capture("pid"), Some("48213"));
    assert_eq!(m.capture("anon_rss"), Some("244 GiB"));
}

#[test]
fn memcg_oom_kill_in_dmesg_t_names_the_cgroup_whose_limit_was_hit() {
    let s = scan_fixture("oom-dmesg-T.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert!(
        f.title.starts_with(
            "The kernel's OOM killer killed pt_main_thread (pid 7731) holding 31.5 GiB"
        ),
        "{}",
        f.title
    );
    assert!(f.title.ends_with(
        "cgroup /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d.slice hit its memory limit"
    ));
    assert!(evidence(&f, "constraint").contains("CONSTRAINT_MEMCG"));
    assert!(evidence(&f, "victim's cgroup").ends_with("cri-containerd-3f9a.scope"));
    assert_eq!(evidence(&f, "when"), "Sat Nov 21 06:16:42 2026");
    assert!(f.fix.contains("resources.limits.memory"));
    assert_eq!(
        first_match(&s, "kernel.oom-kill-constraint").capture("constraint"),
        Some("cgroup")
    );
}

#[test]
fn oom_kill_in_journalctl_and_syslog() {
    let s = scan_fixture("oom-journalctl.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert!(
        f.title.contains("python3 (pid 90210) holding 60.0 GiB"),
        "{}",
        f.title
    );
    assert_eq!(evidence(&f, "shmem-rss"), "1.0 GiB");
    assert_eq!(
        evidence(&f, "cgroup whose limit was hit"),
        "/system.slice/slurmstepd.scope/job_4411"
    );
    assert_eq!(evidence(&f, "when"), "Nov 21 06:16:42");

    let s = scan_fixture("oom-syslog.log");
    let f = only_finding(&s, FailureClass::OomKill);
    assert!(
        f.title.contains("python (pid 5150) holding 16.0 GiB"),
        "{}",
        f.title
    );
    // The CRON line that follows is not evidence.
    assert_eq!(s.matches().len(), 3);
}

#[test]
fn kubectl_describe_oomkilled_and_exit_code_137() {
    let s = scan_fixture("oom-kubectl-describe.txt");
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(
        f.title,
        "Kubernetes: the container was OOMKilled (it reached its memory limit)"
    );
    assert_eq!(quoted(&f, 12).trim(), "Reason:       OOMKilled");
    assert_eq!(quoted(&f, 13).trim(), "Exit Code:    137");
    assert_eq!(
        evidence(&f, "matching lines"),
        "2 lines (first at line 12, last at line 13)"
    );
}

#[test]
fn slurm_oom_kill_event_and_srun_out_of_memory() {
    let s = scan_fixture("oom-slurm.out");
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(
        f.title,
        "Slurm: 1 OOM kill in step 4411.0 (the job's memory cgroup limit was hit)"
    );
    assert!(f.fix.contains("#SBATCH --mem="));
    let m = first_match(&s, "slurm.task-out-of-memory");
    assert_eq!(
        (m.capture("node"), m.capture("task")),
        (Some("gpu-node-3"), Some("0"))
    );
    assert_eq!(m.line_no, 3);
}

#[test]
fn shell_killed_and_exit_code_137() {
    let s = scan_fixture("oom-shell-killed.log");
    let f = only_finding(&s, FailureClass::Sigkill);
    let m = first_match(&s, "shell.killed");
    assert_eq!(m.capture("pid"), Some("77120"));
    assert_eq!(
        m.capture("command"),
        Some("python train.py --config big.yaml")
    );
    assert_eq!(first_match(&s, "exit.sigkill").line_no, 4);
    // `killed_frac=0.00` on lines 1 and 2 is a metric, not a kill.
    assert!(s.matches().iter().all(|m| m.line_no >= 3));
    assert!(f.fix.contains("dmesg -T"), "{}", f.fix);

    let s = scan_fixture("oom-bare-killed.log");
    let f = only_finding(&s, FailureClass::Sigkill);
    assert_eq!(quoted(&f, 2), "Killed");
}
