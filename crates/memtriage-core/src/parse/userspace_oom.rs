//! Kills by userspace OOM killers, from their log lines (journal or syslog, any
//! prefix): systemd-oomd kills a whole cgroup; earlyoom signals one process.

/// Who killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Killer {
    SystemdOomd,
    Earlyoom,
}

impl Killer {
    pub fn name(self) -> &'static str {
        match self {
            Killer::SystemdOomd => "systemd-oomd",
            Killer::Earlyoom => "earlyoom",
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

/// A kill in one log line, if the line reports one.
pub fn parse_line(line: &str) -> Option<UserspaceKill> {
    if let Some(i) = line.find("Killed /") {
        if line[..i].contains("systemd-oomd") || line[i..].contains(" due to ") {
            let rest = &line[i + "Killed ".len()..];
            let cgroup = rest.split_whitespace().next()?.to_string();
            let comm = cgroup.rsplit('/').next().map(str::to_string);
            return Some(UserspaceKill {
                killer: Killer::SystemdOomd,
                pid: None,
                comm,
                cgroup: Some(cgroup),
                rss: None,
                signal: None,
            });
        }
    }
    // earlyoom: `sending SIGTERM to process 1234 uid 1000 "python": oom_score 900,
    // VmRSS 12345 MiB, cmdline "…"`, before 1.3 `… process 1234 "python": badness …`.
    let i = line.find("sending SIG")?;
    let rest = &line[i + "sending ".len()..];
    let (signal, rest) = rest.split_once(" to process ")?;
    let mut words = rest.split_whitespace();
    let pid = words.next()?.parse::<i32>().ok()?;
    let comm = rest
        .split_once('"')
        .and_then(|(_, after)| after.split_once('"'))
        .map(|(name, _)| name.to_string());
    let rss = rest.find("VmRSS ").and_then(|j| {
        let mut it = rest[j + "VmRSS ".len()..].split_whitespace();
        let n: f64 = it.next()?.trim_end_matches(',').parse().ok()?;
        let unit = it.next()?.trim_end_matches(',');
        let scale = match unit {
            "MiB" => 1u64 << 20,
            "KiB" | "kB" => 1 << 10,
            "GiB" => 1 << 30,
            _ => return None,
        };
        (n.is_finite() && n >= 0.0).then_some((n * scale as f64) as u64)
    });
    Some(UserspaceKill {
        killer: Killer::Earlyoom,
        pid: Some(pid),
        comm,
        cgroup: None,
        rss,
        signal: Some(signal.to_string()),
    })
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
}
