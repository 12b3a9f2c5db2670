//! Finds the OOM killers of the machine and reads how each is set: the daemons by
//! their processes (earlyoom's command line, systemd-oomd's `oomd.conf`, nohang's
//! config, the kubelet's flags and config file, the raylet's environment), those
//! installed but not running by their files, and the kernel's per job: the limit of
//! the job's memory cgroup and its `memory.oom.group`. Also reads whom a killer that
//! goes by `oom_score` would pick now.

use std::path::{Path, PathBuf};

use crate::model::killers::{KillerKind, LoggedKill, OomKiller, Trigger, VictimRule};
use crate::model::process::CgroupMemory;
use crate::parse::killer_settings as settings;
use crate::parse::userspace_oom::{parse_line, ray_kill, Killer, UserspaceKill};
use crate::probe::cgroup::CgroupReader;
use crate::probe::command::bounded_output;
use crate::probe::files::tail;
use crate::probe::procdir::ProcDir;
use crate::probe::process::all_pids;
use crate::probe::root::Root;
use crate::probe::system::read_meminfo;

const EARLYOOM_DEFAULTS: &str = "/etc/default/earlyoom";
const EARLYOOM_BINARIES: [&str; 2] = ["/usr/bin/earlyoom", "/usr/local/bin/earlyoom"];
const OOMD_BINARIES: [&str; 2] = ["/usr/lib/systemd/systemd-oomd", "/lib/systemd/systemd-oomd"];
const OOMD_CONF: &str = "/etc/systemd/oomd.conf";
const OOMD_DROP_INS: [&str; 3] = [
    "/usr/lib/systemd/oomd.conf.d",
    "/run/systemd/oomd.conf.d",
    "/etc/systemd/oomd.conf.d",
];
const NOHANG_CONFIGS: [&str; 2] = [
    "/etc/nohang/nohang.conf",
    "/usr/local/etc/nohang/nohang.conf",
];
/// The comms of the killers' daemons (nohang is a Python script: its comm is the
/// script's name).
const KILLER_NAMES: [&str; 5] = ["earlyoom", "systemd-oomd", "kubelet", "raylet", "nohang"];
const KUBELET_CONFIG: &str = "/var/lib/kubelet/config.yaml";
const SLURM_CONF: [&str; 2] = ["/etc/slurm/slurm.conf", "/etc/slurm-llnl/slurm.conf"];

/// Every killer that may act on `job` (its cgroup's limit; `None`: the machine's
/// killers only), running ones first in the order they were found, then those
/// installed but not running. The kernel's is always there.
pub fn find(root: &Root, job: Option<i32>) -> Vec<OomKiller> {
    let named: Vec<(i32, String)> = all_pids(root)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|pid| Some((pid, ProcDir::open(root, pid).ok()?.comm()?)))
        .collect();
    find_among(
        root,
        job,
        named.iter().map(|(pid, comm)| (*pid, comm.as_str())),
    )
}

/// [`find`] among processes whose names a caller has read already (a sampler of
/// every process): only the killers' own directories are opened.
pub fn find_among<'a>(
    root: &Root,
    job: Option<i32>,
    processes: impl IntoIterator<Item = (i32, &'a str)>,
) -> Vec<OomKiller> {
    let mem = read_meminfo(root).ok();
    let mem_total = mem.as_ref().and_then(|m| m.total).unwrap_or(0);
    // earlyoom 1.8 and later: percentages of the memory user space can have.
    let user_memory = mem
        .as_ref()
        .and_then(|m| Some(m.available? + m.anon_pages?))
        .unwrap_or(mem_total);
    let has_swap = mem
        .as_ref()
        .and_then(|m| m.swap_total)
        .is_some_and(|s| s > 0);
    let mut found = Vec::new();
    for (pid, comm) in processes {
        if !KILLER_NAMES.contains(&comm) {
            continue;
        }
        let Ok(dir) = ProcDir::open(root, pid) else {
            continue;
        };
        let args = || dir.args().unwrap_or_default();
        let killer = match comm {
            "earlyoom" => {
                let base = match earlyoom_version(root, pid) {
                    Some(v) if v >= (1, 8) => user_memory,
                    _ => mem_total,
                };
                Some(earlyoom(pid, &args(), base, has_swap, true))
            }
            "systemd-oomd" => Some(systemd_oomd(root, Some(pid))),
            "kubelet" => Some(kubelet(root, pid, &args(), mem_total)),
            "raylet" => ray(&dir, pid, mem_total),
            // A Python script: its comm is the script's name.
            "nohang" => Some(nohang(root, Some(pid), &args(), mem_total)),
            _ => None,
        };
        found.extend(killer);
    }
    let running = |kind| found.iter().any(|k: &OomKiller| k.kind == kind);
    let mut idle = Vec::new();
    if !running(KillerKind::Earlyoom) && EARLYOOM_BINARIES.iter().any(|b| exists(root, b)) {
        // As the service would start it: the program's name, then EARLYOOM_ARGS.
        let mut args = vec!["earlyoom".to_string()];
        args.extend(
            root.read_string(EARLYOOM_DEFAULTS)
                .ok()
                .and_then(|t| settings::earlyoom_default_file(&t))
                .unwrap_or_default(),
        );
        let mut k = earlyoom(0, &args, mem_total, has_swap, false);
        k.settings_from = EARLYOOM_DEFAULTS.into();
        idle.push(k);
    }
    if !running(KillerKind::SystemdOomd) && OOMD_BINARIES.iter().any(|b| exists(root, b)) {
        idle.push(systemd_oomd(root, None));
    }
    if !running(KillerKind::Nohang) && NOHANG_CONFIGS.iter().any(|c| exists(root, c)) {
        idle.push(nohang(root, None, &[], mem_total));
    }
    found.extend(kernel(root, job));
    found.extend(idle);
    found
}

fn exists(root: &Root, rel: &str) -> bool {
    root.path(rel).exists()
}

fn earlyoom(pid: i32, args: &[String], mem_total: u64, has_swap: bool, running: bool) -> OomKiller {
    let from = format!("/proc/{pid}/cmdline");
    let parsed = settings::earlyoom_args(args.get(1..).unwrap_or_default());
    let (trigger, victim, shown) = match parsed {
        Ok(a) => {
            let (term, kill) = a.floors(mem_total);
            let trigger = Trigger::AvailableFloor {
                term_bytes: term,
                kill_bytes: kill,
                swap_term_percent: has_swap.then_some(a.swap_term_percent),
                swap_kill_percent: has_swap.then_some(a.swap_kill_percent),
                mem_total,
            };
            let victim = VictimRule::HighestOomScore {
                prefer: a.prefer.clone(),
                avoid: a.avoid.clone(),
                by_rss: a.by_rss,
            };
            let shown = match a.dry_run {
                true => format!("{} --dryrun", a.shown),
                false => a.shown,
            };
            (Some(trigger), victim, shown)
        }
        Err(why) => (
            None,
            default_victim(),
            format!("unreadable arguments: {why}"),
        ),
    };
    OomKiller {
        kind: KillerKind::Earlyoom,
        pid: running.then_some(pid),
        running,
        settings_from: from,
        settings: shown,
        trigger,
        victim,
        poll_seconds: Some(1.0),
    }
}

/// earlyoom's version, from the `earlyoom v1.7` its binary carries; `None` where the
/// binary cannot be read.
fn earlyoom_version(root: &Root, pid: i32) -> Option<(u32, u32)> {
    const MARK: &[u8] = b"earlyoom v";
    let binary = std::fs::read(root.path(&format!("/proc/{pid}/exe"))).ok()?;
    let at = memchr::memmem::find(&binary, MARK)? + MARK.len();
    let text: String = binary[at..]
        .iter()
        .take(12)
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .map(|b| *b as char)
        .collect();
    let mut parts = text.split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

fn default_victim() -> VictimRule {
    VictimRule::HighestOomScore {
        prefer: None,
        avoid: None,
        by_rss: false,
    }
}

fn systemd_oomd(root: &Root, pid: Option<i32>) -> OomKiller {
    let mut texts: Vec<String> = root.read_string(OOMD_CONF).ok().into_iter().collect();
    for dir in OOMD_DROP_INS {
        let Ok(entries) = std::fs::read_dir(root.path(dir)) else {
            continue;
        };
        let mut names: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "conf"))
            .collect();
        names.sort();
        texts.extend(names.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
    }
    let conf = settings::oomd_conf(&texts.iter().map(String::as_str).collect::<Vec<_>>());
    // The running daemon says what it watches, and the settings it runs with.
    let dump = match (pid, root.is_host()) {
        (Some(_), true) => {
            bounded_output("oomctl", &[], COMMAND_TIMEOUT).map(|t| settings::oomctl_dump(&t))
        }
        _ => None,
    };
    let seconds = dump
        .as_ref()
        .and_then(|d| d.pressure_duration_seconds)
        .unwrap_or(conf.pressure_duration_seconds);
    let cgroups = dump
        .as_ref()
        .map(|d| {
            d.pressure_cgroups
                .iter()
                .map(|(path, limit)| match limit {
                    Some(l) => format!("{path} ({l:.0}%)"),
                    None => path.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    OomKiller {
        kind: KillerKind::SystemdOomd,
        pid,
        running: pid.is_some(),
        settings_from: OOMD_CONF.into(),
        settings: match conf.shown.is_empty() {
            true => "defaults".into(),
            false => conf.shown.join(" "),
        },
        trigger: Some(Trigger::Pressure {
            percent: conf.pressure_limit_percent,
            seconds,
            swap_used_percent: conf.swap_used_limit_percent,
            cgroups,
        }),
        victim: VictimRule::WholeCgroup,
        poll_seconds: Some(1.0),
    }
}

fn nohang(root: &Root, pid: Option<i32>, args: &[String], mem_total: u64) -> OomKiller {
    let named = args
        .iter()
        .position(|a| a == "-c" || a == "--config")
        .and_then(|i| args.get(i + 1).cloned());
    let path = named.or_else(|| {
        NOHANG_CONFIGS
            .iter()
            .find(|c| exists(root, c))
            .map(|c| c.to_string())
    });
    let text = path.as_deref().and_then(|p| root.read_string(p).ok());
    let trigger = text.as_deref().and_then(|t| {
        let (soft, hard) = settings::nohang_floors(t);
        let term = soft?.bytes(mem_total);
        Some(Trigger::AvailableFloor {
            term_bytes: term,
            kill_bytes: hard.map_or(term / 2, |h| h.bytes(mem_total)),
            swap_term_percent: None,
            swap_kill_percent: None,
            mem_total,
        })
    });
    OomKiller {
        kind: KillerKind::Nohang,
        pid,
        running: pid.is_some(),
        settings_from: path.unwrap_or_else(|| NOHANG_CONFIGS[0].into()),
        settings: "its config's soft/hard_threshold_min_mem".into(),
        trigger,
        victim: default_victim(),
        poll_seconds: None,
    }
}

fn kubelet(root: &Root, pid: i32, args: &[String], mem_total: u64) -> OomKiller {
    let config_path = args
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--config=") {
            Some(p) => Some(p.to_string()),
            None => (a == "--config")
                .then(|| args.get(i + 1).cloned())
                .flatten(),
        })
        .unwrap_or_else(|| KUBELET_CONFIG.into());
    let config = root.read_string(&config_path).ok();
    let set = settings::kubelet_eviction_hard(args, config.as_deref(), mem_total);
    let bytes = set.unwrap_or(settings::KUBELET_DEFAULT_EVICTION);
    OomKiller {
        kind: KillerKind::Kubelet,
        pid: Some(pid),
        running: true,
        settings_from: match config {
            Some(_) => config_path,
            None => format!("/proc/{pid}/cmdline"),
        },
        settings: match set {
            Some(_) => format!(
                "evictionHard memory.available<{}",
                crate::model::units::iec(bytes)
            ),
            None => "defaults (memory.available<100Mi)".into(),
        },
        trigger: Some(Trigger::NodeAvailable { bytes }),
        victim: VictimRule::PodByUseOverRequest,
        poll_seconds: Some(10.0),
    }
}

fn ray(dir: &ProcDir, pid: i32, mem_total: u64) -> Option<OomKiller> {
    let environ = dir.read_to_end("environ").unwrap_or_default();
    let m = settings::ray_monitor(&environ);
    Some(OomKiller {
        kind: KillerKind::Ray,
        pid: Some(pid),
        running: m.refresh_ms > 0,
        settings_from: format!("/proc/{pid}/environ"),
        settings: match m.set {
            true => format!(
                "RAY_memory_usage_threshold={} RAY_memory_monitor_refresh_ms={}",
                m.threshold, m.refresh_ms
            ),
            false => "defaults (0.95, every 250 ms)".into(),
        },
        trigger: Some(Trigger::UsedShare {
            share: m.threshold,
            mem_total,
        }),
        victim: VictimRule::NewestRetriableTask,
        poll_seconds: Some(m.refresh_ms as f64 / 1000.0),
    })
}

/// The kernel's OOM killer for `job`: its memory cgroup's limit where one is set (a
/// Slurm step's is Slurm's), with `memory.oom.group`; else the machine's memory.
fn kernel(root: &Root, job: Option<i32>) -> Vec<OomKiller> {
    let cgroup = job.and_then(|pid| CgroupReader::discover(root).for_pid(pid).ok().flatten());
    let machine = OomKiller {
        kind: KillerKind::Kernel,
        pid: None,
        running: true,
        settings_from: "/proc/meminfo".into(),
        settings: String::new(),
        trigger: Some(Trigger::Limit {
            bytes: None,
            cgroup: None,
            group_kill: false,
        }),
        victim: default_victim(),
        poll_seconds: None,
    };
    let Some(cg) = cgroup.filter(|cg| cg.limit.is_some()) else {
        return vec![machine];
    };
    let limited_at = cg.limit_set_by.clone().unwrap_or_else(|| cg.path.clone());
    let group_kill = oom_group_between(&cg, &limited_at);
    let slurm = is_slurm_step(&limited_at);
    let over_memory_kill = slurm
        && SLURM_CONF
            .iter()
            .filter_map(|p| root.read_string(p).ok())
            .any(|t| settings::slurm_over_memory_kill(&t));
    let by_cgroup = OomKiller {
        kind: if slurm {
            KillerKind::Slurm
        } else {
            KillerKind::Kernel
        },
        pid: None,
        running: true,
        settings_from: format!("{limited_at}/memory.max"),
        settings: match (slurm, over_memory_kill) {
            (true, true) => "the step's cgroup limit, and OverMemoryKill polling".into(),
            (true, false) => "the step's cgroup limit".into(),
            _ => String::new(),
        },
        trigger: Some(Trigger::Limit {
            bytes: cg.limit,
            cgroup: Some(limited_at),
            group_kill,
        }),
        victim: match group_kill {
            true => VictimRule::WholeCgroup,
            false => default_victim(),
        },
        poll_seconds: None,
    };
    vec![by_cgroup, machine]
}

/// `…/job_123/step_0` (cgroup v2) or `…/slurm/uid_1000/job_123/step_0` (v1).
fn is_slurm_step(path: &str) -> bool {
    path.split('/').any(|p| p.starts_with("job_"))
        && path.split('/').any(|p| p.starts_with("step_"))
}

/// Whether `memory.oom.group` is 1 in the job's cgroup or an ancestor up to the one
/// whose limit it is: an OOM kill there then ends every process below it.
fn oom_group_between(cg: &CgroupMemory, limited_at: &str) -> bool {
    let dir = Path::new(&cg.dir);
    let depth_below = cg
        .path
        .trim_end_matches('/')
        .strip_prefix(limited_at.trim_end_matches('/'))
        .map(|rest| rest.split('/').filter(|p| !p.is_empty()).count())
        .unwrap_or(0);
    dir.ancestors()
        .take(depth_below + 1)
        .any(|d| std::fs::read_to_string(d.join("memory.oom.group")).is_ok_and(|v| v.trim() == "1"))
}

/// What the kill lines are looked for in: the last bytes of a log file.
const LOG_TAIL: u64 = 256 << 10;
/// journalctl and oomctl are asked once, and not waited for longer than this.
const COMMAND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The kills the running userspace killers logged since `since_unix` (seconds): from
/// the file their output goes to where it is one (a daemon started by hand with its
/// output redirected), else from the journal where journalctl can read it. Best
/// effort: a log that cannot be read gives nothing.
pub fn logged_kills(root: &Root, killers: &[OomKiller], since_unix: u64) -> Vec<LoggedKill> {
    let mut found = Vec::new();
    for k in killers.iter().filter(|k| k.running) {
        let ident = match k.kind {
            KillerKind::Earlyoom => "earlyoom",
            KillerKind::SystemdOomd => "systemd-oomd",
            KillerKind::Nohang => "nohang",
            _ => continue,
        };
        let from_file = k
            .pid
            .map(|pid| output_file_kills(root, pid))
            .unwrap_or_default();
        if !from_file.is_empty() {
            found.extend(from_file);
        } else if root.is_host() {
            found.extend(journal_kills(ident, since_unix));
        }
    }
    found
}

fn output_file_kills(root: &Root, pid: i32) -> Vec<LoggedKill> {
    let mut kills = Vec::new();
    for (link, file) in output_files(root, pid) {
        let Some(text) = std::fs::File::open(&link)
            .and_then(|mut f| tail(&mut f, LOG_TAIL))
            .ok()
        else {
            continue;
        };
        let shown = link.strip_prefix(root.path("/")).map_or_else(
            |_| link.display().to_string(),
            |l| format!("/{}", l.display()),
        );
        let source = format!("{shown} ({})", file.display());
        kills.extend(text.lines().filter_map(|line| logged(line, &source)));
    }
    kills
}

/// The regular files a daemon's stderr and stdout go to, each once: the path to
/// read it by (`/proc/PID/fd/N`, good after a rename) and the file it names.
pub fn output_files(root: &Root, pid: i32) -> Vec<(PathBuf, PathBuf)> {
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    for fd in [2, 1] {
        let link = root.path(&format!("/proc/{pid}/fd/{fd}"));
        if !std::fs::metadata(&link).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Ok(file) = std::fs::read_link(&link) else {
            continue;
        };
        if !files.iter().any(|(_, f)| *f == file) {
            files.push((link, file));
        }
    }
    files
}

/// The workers Ray's memory monitor says it killed, in the lines of the job's output
/// that report a userspace killer's kill (the driver prints Ray's `OutOfMemoryError`).
pub fn ray_kills<'a>(lines: impl Iterator<Item = &'a str>, source: &str) -> Vec<LoggedKill> {
    lines
        .filter_map(|line| Some(logged_kill(ray_kill(line)?, line, source)))
        .collect()
}

fn logged(line: &str, source: &str) -> Option<LoggedKill> {
    Some(logged_kill(parse_line(line)?, line, source))
}

fn logged_kill(kill: UserspaceKill, line: &str, source: &str) -> LoggedKill {
    LoggedKill {
        kind: match kill.killer {
            Killer::Earlyoom => KillerKind::Earlyoom,
            Killer::SystemdOomd => KillerKind::SystemdOomd,
            Killer::Ray => KillerKind::Ray,
        },
        pid: kill.pid,
        comm: kill.comm,
        cgroup: kill.cgroup,
        line: line.trim().to_string(),
        source: source.to_string(),
    }
}

fn journal_kills(ident: &str, since_unix: u64) -> Vec<LoggedKill> {
    let source = format!("journalctl -t {ident}");
    journal_lines(ident, since_unix)
        .iter()
        .filter_map(|line| logged(line, &source))
        .collect()
}

/// What the journal holds under `ident` since `since_unix` (seconds), waited for at
/// most [`COMMAND_TIMEOUT`]; nothing where journalctl cannot be run.
pub fn journal_lines(ident: &str, since_unix: u64) -> Vec<String> {
    let since = format!("--since=@{since_unix}");
    bounded_output(
        "journalctl",
        &["-q", "--no-pager", "-o", "cat", "-t", ident, &since],
        COMMAND_TIMEOUT,
    )
    .map(|out| out.lines().map(str::to_string).collect())
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_entry(base: &Path, pid: i32, comm: &str, cmdline: &[&str]) {
        let d = base.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        let mut c = cmdline.join("\0");
        c.push('\0');
        std::fs::write(d.join("cmdline"), c).unwrap();
    }

    #[test]
    fn a_running_earlyoom_is_read_from_its_command_line_and_the_kernel_is_always_there() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir_all(base.join("proc")).unwrap();
        std::fs::write(
            base.join("proc/meminfo"),
            "MemTotal: 25165824 kB\nMemAvailable: 20971520 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
        )
        .unwrap();
        proc_entry(
            base,
            812,
            "earlyoom",
            &["/usr/bin/earlyoom", "-m", "72", "--prefer", "^python$"],
        );
        proc_entry(base, 900, "bash", &["bash"]);
        let root = Root::at(base);
        let killers = find(&root, None);
        assert_eq!(killers.len(), 2, "{killers:?}");
        let e = &killers[0];
        assert_eq!(
            (e.kind, e.pid, e.running),
            (KillerKind::Earlyoom, Some(812), true)
        );
        assert_eq!(e.label(), "earlyoom (pid 812, -m 72)");
        match e.trigger.as_ref().unwrap() {
            Trigger::AvailableFloor {
                term_bytes,
                kill_bytes,
                swap_term_percent,
                ..
            } => {
                assert_eq!(*term_bytes, (24u64 << 30) * 72 / 100);
                assert_eq!(*kill_bytes, (24u64 << 30) * 36 / 100);
                assert_eq!(*swap_term_percent, None, "no swap: memory alone decides");
            }
            t => panic!("{t:?}"),
        }
        assert_eq!(killers[1].kind, KillerKind::Kernel);
    }

    #[test]
    fn an_installed_earlyoom_that_is_not_running_is_said_so_with_debians_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir_all(base.join("proc")).unwrap();
        std::fs::create_dir_all(base.join("usr/bin")).unwrap();
        std::fs::create_dir_all(base.join("etc/default")).unwrap();
        std::fs::write(base.join("usr/bin/earlyoom"), "").unwrap();
        std::fs::write(
            base.join("etc/default/earlyoom"),
            "EARLYOOM_ARGS=\"-m 5\"\n",
        )
        .unwrap();
        std::fs::write(base.join("proc/meminfo"), "MemTotal: 1048576 kB\n").unwrap();
        let killers = find(&Root::at(base), None);
        let e = killers
            .iter()
            .find(|k| k.kind == KillerKind::Earlyoom)
            .unwrap();
        assert!(!e.running);
        assert_eq!(e.pid, None);
        assert_eq!(e.settings, "-m 5");
        assert_eq!(e.settings_from, EARLYOOM_DEFAULTS);
        assert_eq!(killers[0].kind, KillerKind::Kernel, "running ones first");
    }

    #[test]
    fn a_slurm_step_is_told_by_its_cgroup_path() {
        assert!(is_slurm_step(
            "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0"
        ));
        assert!(is_slurm_step("/slurm/uid_1000/job_7/step_batch"));
        assert!(!is_slurm_step(
            "/user.slice/user-1000.slice/session-3.scope"
        ));
    }
}
