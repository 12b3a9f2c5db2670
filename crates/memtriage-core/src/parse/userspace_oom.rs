//! Kills by userspace OOM killers, from their log lines (journal or syslog, any
//! prefix): systemd-oomd kills a whole cgroup; earlyoom signals one process; Ray's
//! memory monitor tells the driver which worker it killed.

/// Who killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Killer {
    SystemdOomd,
    Earlyoom,
    Ray,
}

impl Killer {
    pub fn name(self) -> &'static str {
        match self {
            Killer::SystemdOomd => "systemd-oomd",
            Killer::Earlyoom => "earlyoom",
            Killer::Ray => "Ray's memory monitor",
        }
    }
}

/// One kill a userspace killer logged. Each field is `None` where its line lacks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserspaceKill {
    pub killer: Killer,
    pub pid: Option<i32>,
    pub comm: Option<String>,
    /// The cgroup killed (systemd-oomd).
    pub cgroup: Option<String>,
    /// Resident bytes of the victim when it was chosen (earlyoom's VmRSS).
    pub rss: Option<u64>,
    /// The signal, for earlyoom (`SIGTERM` first, `SIGKILL` if it does not exit).
    pub signal: Option<String>,
}

/// A kill in one log line, if the line reports one. Read: systemd-oomd's `Killed
/// CGROUP due to …` and, from systemd 256, `Marked CGROUP for killing`; earlyoom's
/// `sending SIGTERM to process PID uid UID "NAME": …, VmRSS N MiB` (1.2 and later),
/// `killing process PID "NAME" with signal 15: …` (1.1 to 1.2), `Killing process
/// 'NAME' with signal 15, pid: PID, …` (1.0) and `Killing process PID NAME` (0.x).
pub fn parse_line(line: &str) -> Option<UserspaceKill> {
    systemd_oomd(line).or_else(|| earlyoom(line))
}

fn systemd_oomd(line: &str) -> Option<UserspaceKill> {
    let (at, prefix) = ["Killed /", "Marked /"]
        .iter()
        .find_map(|p| line.find(p).map(|i| (i, *p)))?;
    let rest = &line[at + prefix.len() - 1..];
    let oomd = line[..at].contains("systemd-oomd");
    let wording = match prefix {
        "Killed /" => rest.contains(" due to "),
        _ => rest.contains(" for killing"),
    };
    if !(oomd || wording) {
        return None;
    }
    let cgroup = rest.split_whitespace().next()?.to_string();
    Some(UserspaceKill {
        killer: Killer::SystemdOomd,
        pid: None,
        comm: cgroup.rsplit('/').next().map(str::to_string),
        cgroup: Some(cgroup),
        rss: None,
        signal: None,
    })
}

fn earlyoom(line: &str) -> Option<UserspaceKill> {
    let lower = line.to_ascii_lowercase();
    let (pid, comm, signal) = if let Some(i) = line.find("sending SIG") {
        let rest = &line[i + "sending ".len()..];
        let (signal, rest) = rest.split_once(" to process ")?;
        (first_number(rest)?, quoted(rest, '"'), signal.to_string())
    } else if let Some(i) = lower.find("killing process ") {
        let rest = &line[i + "killing process ".len()..];
        let signal = match rest.contains("with signal 9") {
            true => "SIGKILL",
            false => "SIGTERM",
        }
        .to_string();
        if let Some(name) = quoted(rest, '\'') {
            // 1.0: `Killing process 'bash' with signal 15, pid: 5874, …`
            let pid = rest.split_once("pid:").and_then(|(_, p)| first_number(p))?;
            (pid, Some(name), signal)
        } else {
            let pid = first_number(rest)?;
            let after = rest
                .trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit());
            let comm = quoted(after, '"').or_else(|| {
                // 0.x: `Killing process 8230 sudo`, the whole line.
                let words: Vec<&str> = after.split_whitespace().collect();
                (words.len() == 1).then(|| words[0].to_string())
            });
            comm.as_ref()?;
            (pid, comm, signal)
        }
    } else {
        return None;
    };
    Some(UserspaceKill {
        killer: Killer::Earlyoom,
        pid: Some(pid),
        comm,
        cgroup: None,
        rss: vm_rss(line),
        signal: Some(signal),
    })
}

/// The worker Ray's memory monitor killed, from what the driver prints: Ray 2.56 and
/// later `Selected to kill: (Task: job ID=…, task name=grow, required resources={CPU:
/// 1}, pid=21340, actual memory used=2.73GB, worker ID=…)`; Ray 2.2 to 2.55 `… where the
/// task (task ID: …, name=grow, pid=548, memory used=12.18GB) was running was 21.91GB /
/// 33.28GB (0.658192), which exceeds the memory usage threshold of 0.65. Ray killed this
/// worker …`. Ray kills with SIGKILL. Ray 2.1's message names no pid: nothing is read.
pub fn ray_kill(line: &str) -> Option<UserspaceKill> {
    let (_, task) = line.split_once("Selected to kill: (").or_else(|| {
        match line.contains("Ray killed this worker") {
            true => line.split_once("where the task ("),
            false => None,
        }
    })?;
    let pid = task.split_once("pid=")?.1;
    let digits = pid.find(|c: char| !c.is_ascii_digit()).unwrap_or(pid.len());
    let name = task
        .split_once("name=")
        .and_then(|(_, n)| n.split([',', ')']).next())
        .map(str::to_string);
    Some(UserspaceKill {
        killer: Killer::Ray,
        pid: Some(pid[..digits].parse().ok()?),
        comm: name,
        cgroup: None,
        rss: None,
        signal: Some("SIGKILL".to_string()),
    })
}

fn first_number(s: &str) -> Option<i32> {
    s.split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())?
        .parse()
        .ok()
}

fn quoted(s: &str, q: char) -> Option<String> {
    let (_, after) = s.split_once(q)?;
    let (name, _) = after.split_once(q)?;
    Some(name.to_string())
}

/// `VmRSS 4962 MiB` or `VmRSS: 3160 MiB`.
fn vm_rss(line: &str) -> Option<u64> {
    let j = line.find("VmRSS")?;
    let mut it = line[j + "VmRSS".len()..]
        .trim_start_matches(':')
        .split_whitespace();
    let n: f64 = it.next()?.trim_end_matches(',').parse().ok()?;
    crate::model::units::bytes_of(n, it.next()?.trim_end_matches(','))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systemd_oomd_names_the_cgroup() {
        let k = parse_line(
            "Nov 21 06:16:42 box systemd-oomd[812]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/app-python-1234.scope due to memory pressure for /user.slice/user-1000.slice/user@1000.service being 73.71% > 50.00% for > 20s with reclaim activity",
        )
        .unwrap();
        assert_eq!(k.killer, Killer::SystemdOomd);
        assert_eq!(k.comm.as_deref(), Some("app-python-1234.scope"));
        assert!(k.cgroup.unwrap().ends_with("app-python-1234.scope"));
    }

    #[test]
    fn earlyoom_old_and_new_lines() {
        let k = parse_line(
            "earlyoom[55]: sending SIGTERM to process 4321 uid 1000 \"python\": oom_score 912, VmRSS 11834 MiB, cmdline \"python train.py\"",
        )
        .unwrap();
        assert_eq!((k.pid, k.comm.as_deref()), (Some(4321), Some("python")));
        assert_eq!(k.rss, Some(11834 << 20));
        assert_eq!(k.signal.as_deref(), Some("SIGTERM"));
        let k = parse_line("sending SIGKILL to process 99 \"java\": badness 800, VmRSS 2048 MiB")
            .unwrap();
        assert_eq!((k.pid, k.rss), (Some(99), Some(2048 << 20)));
        assert_eq!(parse_line("earlyoom: mem avail: 1000 of 2000 MiB"), None);
    }

    #[test]
    fn rays_message_names_the_worker_it_killed() {
        let k = ray_kill("Memory on the node (IP: 192.168.0.107, ID: fc2b) where the task (actor ID: f9cc, name=SimEnv.__init__, pid=4331, memory used=2.22GB) was running was 59.49GB / 62.58GB (0.950744), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: d98a) because it was the most recently scheduled task")
            .unwrap();
        assert_eq!(k.killer, Killer::Ray);
        assert_eq!(
            (k.pid, k.comm.as_deref()),
            (Some(4331), Some("SimEnv.__init__"))
        );
        let k = ray_kill("Selected to kill: (Task: job ID=01000000, lease ID=00000000, task name=grow, required resources={CPU: 1, memory: 2.0}, pid=21340, actual memory used=2.73GB, worker ID=0849)").unwrap();
        assert_eq!((k.pid, k.comm.as_deref()), (Some(21340), Some("grow")));
        // Ray 2.1 names no task's pid.
        assert_eq!(
            ray_kill("Memory on the node (IP: 172.31.69.247, ID: 5bf8) where the task was running was 54.86GB / 57.60GB (0.952354), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 0c7d) because it was the most recently scheduled task"),
            None
        );
    }
}
