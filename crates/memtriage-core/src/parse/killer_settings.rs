//! The settings of the userspace OOM killers, from the text they are set in: earlyoom's
//! command line (and Debian's `/etc/default/earlyoom`), systemd-oomd's `oomd.conf`,
//! nohang's config, the kubelet's flags and `KubeletConfiguration`, Ray's environment
//! variables and Slurm's `slurm.conf`. Defaults are each tool's own, where its text
//! leaves a setting out.

/// earlyoom's thresholds and victim choice.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlyoomArgs {
    /// `-m PERCENT[,KILL_PERCENT]`: of MemTotal (default 10, and half of it to kill).
    pub mem_term_percent: f64,
    pub mem_kill_percent: f64,
    /// `-M SIZE[,KILL_SIZE]` in KiB; where both `-m` and `-M` are given, the lower wins.
    pub mem_term_kib: Option<u64>,
    pub mem_kill_kib: Option<u64>,
    /// `-s PERCENT[,KILL_PERCENT]`: of SwapTotal that must be free at most as well.
    pub swap_term_percent: f64,
    pub swap_kill_percent: f64,
    pub prefer: Option<String>,
    pub avoid: Option<String>,
    /// `--sort-by-rss`: the largest resident process, not the highest oom_score.
    pub by_rss: bool,
    /// `--dryrun`: it only says what it would kill.
    pub dry_run: bool,
    /// The flags that set a threshold, as given, for display (`-m 10,5 -s 100`).
    pub shown: String,
}

impl Default for EarlyoomArgs {
    fn default() -> Self {
        EarlyoomArgs {
            mem_term_percent: 10.0,
            mem_kill_percent: 5.0,
            mem_term_kib: None,
            mem_kill_kib: None,
            swap_term_percent: 10.0,
            swap_kill_percent: 5.0,
            prefer: None,
            avoid: None,
            by_rss: false,
            dry_run: false,
            shown: String::new(),
        }
    }
}

impl EarlyoomArgs {
    /// Bytes of MemAvailable at or under which it sends SIGTERM, and SIGKILL, on a
    /// machine with `mem_total` bytes.
    pub fn floors(&self, mem_total: u64) -> (u64, u64) {
        let of_total = |percent: f64| (mem_total as f64 * percent / 100.0) as u64;
        let lower = |percent: f64, kib: Option<u64>| {
            let by_percent = of_total(percent);
            kib.map_or(by_percent, |k| by_percent.min(k.saturating_mul(1024)))
        };
        (
            lower(self.mem_term_percent, self.mem_term_kib),
            lower(self.mem_kill_percent, self.mem_kill_kib),
        )
    }
}

/// earlyoom's arguments (without the program's name). An option it does not know is
/// left alone: earlyoom itself would refuse to start with it, and a running earlyoom
/// did not.
pub fn earlyoom_args(args: &[String]) -> Result<EarlyoomArgs, String> {
    let mut out = EarlyoomArgs::default();
    let mut shown = Vec::new();
    let mut m_given = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let (flag, inline) = split_flag(arg);
        let takes_value = matches!(
            flag,
            "-m" | "-s" | "-M" | "-S" | "-r" | "-N" | "--prefer" | "--avoid" | "--ignore"
        );
        let value = if takes_value {
            match inline {
                Some(v) => Some(v.to_string()),
                None => {
                    i += 1;
                    Some(
                        args.get(i)
                            .ok_or_else(|| format!("{flag} needs a value"))?
                            .clone(),
                    )
                }
            }
        } else {
            None
        };
        let value = value.as_deref();
        match flag {
            "-m" => {
                let (term, kill) = pair(value.unwrap_or_default(), flag)?;
                out.mem_term_percent = term;
                out.mem_kill_percent = kill.unwrap_or(term / 2.0);
                m_given = true;
                shown.push(format!("-m {}", value.unwrap_or_default()));
            }
            "-s" => {
                let (term, kill) = pair(value.unwrap_or_default(), flag)?;
                out.swap_term_percent = term;
                out.swap_kill_percent = kill.unwrap_or(term / 2.0);
                shown.push(format!("-s {}", value.unwrap_or_default()));
            }
            "-M" => {
                let (term, kill) = pair(value.unwrap_or_default(), flag)?;
                out.mem_term_kib = Some(term as u64);
                out.mem_kill_kib = Some(kill.unwrap_or(term / 2.0) as u64);
                shown.push(format!("-M {}", value.unwrap_or_default()));
            }
            "-S" => shown.push(format!("-S {}", value.unwrap_or_default())),
            "--prefer" => out.prefer = value.map(str::to_string),
            "--avoid" => out.avoid = value.map(str::to_string),
            "--sort-by-rss" => out.by_rss = true,
            "--dryrun" => out.dry_run = true,
            _ => {}
        }
        i += 1;
    }
    // `-M` alone sets the memory floor; the percentage's default then does not apply.
    if out.mem_term_kib.is_some() && !m_given {
        out.mem_term_percent = 100.0;
        out.mem_kill_percent = 100.0;
    }
    out.shown = if shown.is_empty() {
        "defaults".into()
    } else {
        shown.join(" ")
    };
    Ok(out)
}

/// `-m10` and `--prefer=x` carry their value; `-m 10` does not.
fn split_flag(arg: &str) -> (&str, Option<&str>) {
    if let Some(long) = arg.strip_prefix("--") {
        return match long.split_once('=') {
            Some((name, value)) => (&arg[..2 + name.len()], Some(value)),
            None => (arg, None),
        };
    }
    if arg.len() > 2 && arg.starts_with('-') && arg.is_char_boundary(2) {
        return (&arg[..2], Some(&arg[2..]));
    }
    (arg, None)
}

/// `10` or `10,5`.
fn pair(value: &str, flag: &str) -> Result<(f64, Option<f64>), String> {
    let number = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .ok_or_else(|| format!("{flag} {value:?} is not a number"))
    };
    match value.split_once(',') {
        Some((term, kill)) => Ok((number(term)?, Some(number(kill)?))),
        None => Ok((number(value)?, None)),
    }
}

/// The arguments Debian's service passes: `EARLYOOM_ARGS="-m 5 -r 60"` in
/// `/etc/default/earlyoom`, words split as the shell would (quotes kept together).
/// `None` when the file sets none.
pub fn earlyoom_default_file(text: &str) -> Option<Vec<String>> {
    let value = text.lines().map(str::trim).find_map(|line| {
        line.strip_prefix("export ")
            .unwrap_or(line)
            .strip_prefix("EARLYOOM_ARGS=")
    })?;
    Some(shell_words(unquote(value)))
}

fn unquote(value: &str) -> &str {
    let v = value.trim();
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// Words split at blanks, a quoted stretch kept whole without its quotes.
pub fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

/// systemd-oomd's `[OOM]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct OomdConf {
    /// `SwapUsedLimit=`: swap used, percent of the total (default 90%).
    pub swap_used_limit_percent: f64,
    /// `DefaultMemoryPressureLimit=` (default 60%).
    pub pressure_limit_percent: f64,
    /// `DefaultMemoryPressureDurationSec=` (default 30 s).
    pub pressure_duration_seconds: f64,
    /// The settings the files changed, for display; empty for the defaults.
    pub shown: Vec<String>,
}

impl Default for OomdConf {
    fn default() -> Self {
        OomdConf {
            swap_used_limit_percent: 90.0,
            pressure_limit_percent: 60.0,
            pressure_duration_seconds: 30.0,
            shown: Vec::new(),
        }
    }
}

/// `oomd.conf` and its drop-ins, in the order systemd reads them (a later file's
/// setting wins). A value that does not parse leaves the earlier one.
pub fn oomd_conf(files: &[&str]) -> OomdConf {
    let mut conf = OomdConf::default();
    for text in files {
        let mut in_oom = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                in_oom = line == "[OOM]";
                continue;
            }
            if !in_oom || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            let parsed = match key {
                "SwapUsedLimit" => percent(value).map(|p| conf.swap_used_limit_percent = p),
                "DefaultMemoryPressureLimit" => {
                    percent(value).map(|p| conf.pressure_limit_percent = p)
                }
                "DefaultMemoryPressureDurationSec" => {
                    systemd_seconds(value).map(|s| conf.pressure_duration_seconds = s)
                }
                _ => None,
            };
            if parsed.is_some() {
                conf.shown.retain(|s| !s.starts_with(&format!("{key}=")));
                conf.shown.push(format!("{key}={value}"));
            }
        }
    }
    conf
}

/// `60%`, `60.5%`, or systemd's permille `605‰`.
fn percent(value: &str) -> Option<f64> {
    if let Some(p) = value.strip_suffix('%') {
        return p.trim().parse().ok();
    }
    if let Some(p) = value.strip_suffix('‰') {
        return p.trim().parse::<f64>().ok().map(|p| p / 10.0);
    }
    None
}

/// systemd's time spans: `30s`, `1min 30s`, `20`, `500ms`.
pub fn systemd_seconds(value: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut any = false;
    for word in value.split_whitespace() {
        let split = word
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(word.len());
        let (n, unit) = word.split_at(split);
        let n: f64 = n.parse().ok()?;
        let scale = match unit {
            "" | "s" | "sec" | "second" | "seconds" => 1.0,
            "ms" | "msec" => 0.001,
            "us" | "usec" => 0.000_001,
            "m" | "min" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hour" | "hours" => 3600.0,
            _ => return None,
        };
        total += n * scale;
        any = true;
    }
    any.then_some(total)
}

/// What a running systemd-oomd says it watches (`oomctl`, its default verb `dump`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OomctlDump {
    /// `Default Memory Pressure Duration: 20s`.
    pub pressure_duration_seconds: Option<f64>,
    /// `Swap Used Limit: 90%`.
    pub swap_used_limit_percent: Option<f64>,
    /// Each cgroup watched for memory pressure, with its limit (`Memory Pressure
    /// Limit: 50.00%`).
    pub pressure_cgroups: Vec<(String, Option<f64>)>,
    /// Each cgroup watched for swap use.
    pub swap_cgroups: Vec<String>,
}

/// `oomctl`'s dump: the settings lines, then the cgroups under `Swap Monitored
/// CGroups:` and `Memory Pressure Monitored CGroups:`, each a `Path:` line with its
/// figures indented below it.
pub fn oomctl_dump(text: &str) -> OomctlDump {
    #[derive(PartialEq)]
    enum Section {
        Top,
        Swap,
        Pressure,
    }
    let mut dump = OomctlDump::default();
    let mut section = Section::Top;
    for line in text.lines().map(str::trim) {
        match line {
            "Swap Monitored CGroups:" => section = Section::Swap,
            "Memory Pressure Monitored CGroups:" => section = Section::Pressure,
            _ => {}
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match (key.trim(), &section) {
            ("Default Memory Pressure Duration", _) => {
                dump.pressure_duration_seconds = systemd_seconds(value)
            }
            ("Swap Used Limit", _) => dump.swap_used_limit_percent = percent(value),
            ("Path", Section::Swap) => dump.swap_cgroups.push(value.to_string()),
            ("Path", Section::Pressure) => dump.pressure_cgroups.push((value.to_string(), None)),
            ("Memory Pressure Limit", Section::Pressure) => {
                if let Some(last) = dump.pressure_cgroups.last_mut() {
                    last.1 = percent(value);
                }
            }
            _ => {}
        }
    }
    dump
}

/// One of nohang's floors: a percent of MemTotal (`10 %`) or a size in MiB (`500 M`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Floor {
    Percent(f64),
    Bytes(u64),
}

impl Floor {
    pub fn bytes(self, mem_total: u64) -> u64 {
        match self {
            Floor::Percent(p) => (mem_total as f64 * p / 100.0) as u64,
            Floor::Bytes(b) => b,
        }
    }
}

/// nohang's config (`key = value` lines, `#` comments). `None` for a floor it does not
/// set.
pub fn nohang_floors(text: &str) -> (Option<Floor>, Option<Floor>) {
    let mut soft = None;
    let mut hard = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let slot = match key.trim() {
            "soft_threshold_min_mem" => &mut soft,
            "hard_threshold_min_mem" => &mut hard,
            _ => continue,
        };
        *slot = nohang_floor(value);
    }
    (soft, hard)
}

fn nohang_floor(value: &str) -> Option<Floor> {
    let v = value.trim();
    if let Some(p) = v.strip_suffix('%') {
        return p.trim().parse().ok().map(Floor::Percent);
    }
    let mib = v.strip_suffix('M')?.trim().parse::<f64>().ok()?;
    Some(Floor::Bytes((mib * 1048576.0) as u64))
}

/// The kubelet's hard eviction floor for `memory.available`, from its
/// `--eviction-hard` flag (which wins) or its config file's `evictionHard:` map: bytes
/// (`100Mi`, `1Gi`, `500M`) or a percent of the node's memory. `None` where neither
/// sets it (the kubelet then uses 100Mi: [`KUBELET_DEFAULT_EVICTION`]).
pub fn kubelet_eviction_hard(
    flags: &[String],
    config: Option<&str>,
    mem_total: u64,
) -> Option<u64> {
    let flag = flags.iter().enumerate().find_map(|(i, a)| {
        if let Some(v) = a.strip_prefix("--eviction-hard=") {
            Some(v.to_string())
        } else if a == "--eviction-hard" {
            flags.get(i + 1).cloned()
        } else {
            None
        }
    });
    if let Some(list) = flag {
        return list.split(',').find_map(|item| {
            let value = item.trim().strip_prefix("memory.available<")?;
            quantity(value, mem_total)
        });
    }
    let config = config?;
    let mut in_map = false;
    for line in config.lines() {
        let trimmed = line.trim();
        if !line.starts_with(' ') && !line.starts_with('\t') {
            in_map = trimmed.starts_with("evictionHard:");
            continue;
        }
        if in_map {
            if let Some(v) = trimmed
                .strip_prefix("memory.available:")
                .or_else(|| trimmed.strip_prefix("\"memory.available\":"))
            {
                return quantity(v.trim().trim_matches(|c| c == '"' || c == '\''), mem_total);
            }
        }
    }
    None
}

/// The kubelet's default hard eviction floor for `memory.available`.
pub const KUBELET_DEFAULT_EVICTION: u64 = 100 << 20;

/// A Kubernetes quantity (`100Mi`, `1Gi`, `500M`, `1e9`) or a percent of `total`.
fn quantity(value: &str, total: u64) -> Option<u64> {
    let v = value.trim();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.parse().ok()?;
        return Some((total as f64 * p / 100.0) as u64);
    }
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().ok()?;
    let scale: f64 = match unit {
        "" => 1.0,
        "Ki" => 1024.0,
        "Mi" => 1048576.0,
        "Gi" => 1073741824.0,
        "Ti" => 1099511627776.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    Some((n * scale) as u64)
}

/// Ray's memory monitor, from the raylet's environment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayMonitor {
    /// `RAY_memory_usage_threshold` (default 0.95): the share of the node's memory in
    /// use at which it kills.
    pub threshold: f64,
    /// `RAY_memory_monitor_refresh_ms` (default 250); 0 turns the monitor off.
    pub refresh_ms: u64,
    /// Whether either was set (else Ray's defaults).
    pub set: bool,
}

/// Ray's monitor settings from a NUL-separated environment (`/proc/PID/environ`).
pub fn ray_monitor(environ: &[u8]) -> RayMonitor {
    let mut monitor = RayMonitor {
        threshold: 0.95,
        refresh_ms: 250,
        set: false,
    };
    for entry in environ.split(|b| *b == 0) {
        let Ok(entry) = std::str::from_utf8(entry) else {
            continue;
        };
        let Some((key, value)) = entry.split_once('=') else {
            continue;
        };
        match key {
            "RAY_memory_usage_threshold" => {
                if let Some(t) = value.trim().parse::<f64>().ok().filter(|t| *t > 0.0) {
                    monitor.threshold = t.min(1.0);
                    monitor.set = true;
                }
            }
            "RAY_memory_monitor_refresh_ms" => {
                if let Ok(ms) = value.trim().parse() {
                    monitor.refresh_ms = ms;
                    monitor.set = true;
                }
            }
            _ => {}
        }
    }
    monitor
}

/// Whether `slurm.conf` has Slurm poll jobs' memory and kill those over their limit
/// (`JobAcctGatherParams=…OverMemoryKill…`), as opposed to the cgroup alone.
pub fn slurm_over_memory_kill(slurm_conf: &str) -> bool {
    slurm_conf.lines().map(str::trim).any(|line| {
        !line.starts_with('#')
            && line.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("JobAcctGatherParams")
                    && v.split(',')
                        .any(|p| p.trim().eq_ignore_ascii_case("OverMemoryKill"))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shell_words(s)
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn earlyoom_defaults_are_ten_percent_and_half_of_it_to_kill() {
        let a = earlyoom_args(&[]).unwrap();
        assert_eq!(a.floors(24 * GIB), (24 * GIB / 10, 24 * GIB / 20));
        assert_eq!(a.shown, "defaults");
    }

    #[test]
    fn earlyoom_thresholds_in_every_spelling() {
        let a = earlyoom_args(&words("-m 72 -s 100 -r 60 --prefer '^(python|java)$' -n")).unwrap();
        assert_eq!((a.mem_term_percent, a.mem_kill_percent), (72.0, 36.0));
        assert_eq!((a.swap_term_percent, a.swap_kill_percent), (100.0, 50.0));
        assert_eq!(a.prefer.as_deref(), Some("^(python|java)$"));
        assert_eq!(a.shown, "-m 72 -s 100");
        let a = earlyoom_args(&words("-m5,2 --avoid=sshd --sort-by-rss")).unwrap();
        assert_eq!((a.mem_term_percent, a.mem_kill_percent), (5.0, 2.0));
        assert_eq!(a.avoid.as_deref(), Some("sshd"));
        assert!(a.by_rss);
        // -M in KiB: the lower of it and -m.
        let a = earlyoom_args(&words("-m 50 -M 1048576")).unwrap();
        assert_eq!(a.floors(24 * GIB).0, GIB);
        let a = earlyoom_args(&words("-M 2097152,1048576")).unwrap();
        assert_eq!(a.floors(24 * GIB), (2 * GIB, GIB));
        assert!(earlyoom_args(&words("-m ten")).is_err());
        assert!(earlyoom_args(&words("-m")).is_err());
    }

    #[test]
    fn debians_default_file() {
        let text = "# Options to pass to earlyoom\nEARLYOOM_ARGS=\"-r 3600 -n --avoid '(^|/)(init|systemd|Xorg|sshd)$'\"\n";
        assert_eq!(
            earlyoom_default_file(text).unwrap(),
            vec![
                "-r",
                "3600",
                "-n",
                "--avoid",
                "(^|/)(init|systemd|Xorg|sshd)$"
            ]
        );
        assert_eq!(earlyoom_default_file("# nothing set\n"), None);
    }

    #[test]
    fn oomd_conf_with_a_drop_in_that_wins() {
        let main = "[OOM]\n#SwapUsedLimit=90%\nDefaultMemoryPressureLimit=60%\n";
        let drop_in =
            "[OOM]\nDefaultMemoryPressureLimit=50%\nDefaultMemoryPressureDurationSec=20s\n";
        let c = oomd_conf(&[main, drop_in]);
        assert_eq!(c.pressure_limit_percent, 50.0);
        assert_eq!(c.pressure_duration_seconds, 20.0);
        assert_eq!(c.swap_used_limit_percent, 90.0);
        assert_eq!(
            c.shown,
            vec![
                "DefaultMemoryPressureLimit=50%",
                "DefaultMemoryPressureDurationSec=20s"
            ]
        );
        assert_eq!(oomd_conf(&[]), OomdConf::default());
        assert_eq!(systemd_seconds("1min 30s"), Some(90.0));
        assert_eq!(systemd_seconds("soon"), None);
    }

    /// `oomctl` on a Fedora machine (systemd/systemd#26253), verbatim.
    #[test]
    fn oomctl_names_the_cgroups_it_watches_and_their_limits() {
        let text = "Dry Run: no\nSwap Used Limit: 90%\nDefault Memory Pressure Duration: 20s\nSystem Context:\n         Memory: Used: 1.5G Total: 3.7G\n         Swap: Used: 914.5M Total: 43.7G\nSwap Monitored CGroups:\nMemory Pressure Monitored CGroups:\n          Path: /user.slice/user-1000.slice/user@1000.service\n                 Memory Pressure Limit: 50.00%\n                 Pressure: Avg10: 0.22 Avg60: 0.33 Avg300: 0.64 Total: 9min 17s\n                 Current Memory usage: 1.1G\n                 Memory Min: 0B\n                 Memory Low: 0B\n";
        let d = oomctl_dump(text);
        assert_eq!(d.pressure_duration_seconds, Some(20.0));
        assert_eq!(d.swap_used_limit_percent, Some(90.0));
        assert!(d.swap_cgroups.is_empty());
        assert_eq!(
            d.pressure_cgroups,
            vec![(
                "/user.slice/user-1000.slice/user@1000.service".to_string(),
                Some(50.0)
            )]
        );
        assert_eq!(oomctl_dump(""), OomctlDump::default());
    }

    #[test]
    fn kubelet_flag_wins_over_its_config() {
        let flags = words("--config=/var/lib/kubelet/config.yaml --eviction-hard=nodefs.available<10%,memory.available<500Mi");
        let config = "kind: KubeletConfiguration\nevictionHard:\n  memory.available: \"200Mi\"\n  nodefs.available: \"10%\"\n";
        assert_eq!(
            kubelet_eviction_hard(&flags, Some(config), 16 * GIB),
            Some(500 << 20)
        );
        assert_eq!(
            kubelet_eviction_hard(&[], Some(config), 16 * GIB),
            Some(200 << 20)
        );
        let percent = "evictionHard:\n  memory.available: 5%\n";
        assert_eq!(
            kubelet_eviction_hard(&[], Some(percent), 20 * GIB),
            Some(GIB)
        );
        assert_eq!(
            kubelet_eviction_hard(&[], Some("kind: KubeletConfiguration\n"), GIB),
            None
        );
    }

    #[test]
    fn ray_reads_its_two_variables() {
        let env = b"PATH=/bin\0RAY_memory_usage_threshold=0.6\0RAY_memory_monitor_refresh_ms=100\0";
        let m = ray_monitor(env);
        assert_eq!((m.threshold, m.refresh_ms, m.set), (0.6, 100, true));
        let m = ray_monitor(b"PATH=/bin\0");
        assert_eq!((m.threshold, m.refresh_ms, m.set), (0.95, 250, false));
    }

    #[test]
    fn nohang_and_slurm() {
        let (soft, hard) =
            nohang_floors("soft_threshold_min_mem = 8 %\nhard_threshold_min_mem = 500 M\n");
        assert_eq!(soft, Some(Floor::Percent(8.0)));
        assert_eq!(hard.unwrap().bytes(GIB), 500 << 20);
        assert!(slurm_over_memory_kill(
            "JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherParams=NoShared,OverMemoryKill\n"
        ));
        assert!(!slurm_over_memory_kill(
            "#JobAcctGatherParams=OverMemoryKill\n"
        ));
    }
}
