//! One tick of sampling, without a thread: finds the scope's processes, reads each
//! one's `stat`, reads one `smaps_rollup` within the budget, and builds a [`Sample`].

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::time::Instant;

use crate::parse::smaps_rollup;
use crate::parse::stat;
use crate::probe::procdir::ProcDir;

use super::budget::PssLedger;
use super::sample::{CgroupSample, ProcessSample, PssAttempt, PssReading, Sample};
use super::scope::Members;
use super::{system, SamplerConfig};

/// `PF_KTHREAD` in `/proc/PID/stat` flags.
const PF_KTHREAD: u32 = 0x0020_0000;

struct Tracked {
    dir: ProcDir,
    /// `stat`, opened once and re-read from offset 0 (the kernel regenerates it):
    /// no open and close per tick. `None` where it could not be opened.
    stat: Option<OwnedFd>,
    last: Option<ProcessSample>,
    /// Minor faults at the last `smaps_rollup` attempt, successful or not: a process
    /// whose reading fails (not ours to read) waits its turn like the others instead
    /// of being picked first at every tick.
    minor_faults_at_attempt: Option<u64>,
}

/// The state sampling keeps between ticks.
pub struct Collector {
    config: SamplerConfig,
    members: Members,
    page_size: u64,
    tracked: HashMap<i32, Tracked>,
    /// Pids in the order first seen.
    order: Vec<i32>,
    /// Kernel threads met in the scope: not followed, not opened again.
    kernel_threads: HashSet<i32>,
    ledger: Option<PssLedger>,
    seq: u64,
    /// (t, minor, major) of the last tick, for fault rates.
    last_faults: Option<(f64, u64, u64)>,
    buf: Vec<u8>,
}

impl Collector {
    pub fn new(config: SamplerConfig) -> Self {
        let started = Instant::now();
        Collector {
            members: Members::new(&config.root, config.scope.clone()),
            ledger: config.pss.map(|b| PssLedger::new(b, started)),
            config,
            page_size: rustix::param::page_size() as u64,
            tracked: HashMap::new(),
            order: Vec::new(),
            kernel_threads: HashSet::new(),
            seq: 0,
            last_faults: None,
            buf: vec![0; 1024],
        }
    }

    pub fn config(&self) -> &SamplerConfig {
        &self.config
    }

    /// One complete sample of the scope now.
    pub fn sample(&mut self) -> Sample {
        let t = self.config.epoch.elapsed().as_secs_f64();
        self.discover();

        let mut processes = Vec::with_capacity(self.order.len());
        let mut gone = Vec::new();
        for &pid in &self.order {
            let Some(tr) = self.tracked.get_mut(&pid) else {
                continue;
            };
            let exe = self.config.exe;
            match read_process(tr, pid, &mut self.buf, self.page_size, exe, &mut processes) {
                Read::Live => {}
                Read::KernelThread => {
                    self.kernel_threads.insert(pid);
                    gone.push(pid);
                }
                Read::Gone => gone.push(pid),
            }
        }
        if !gone.is_empty() {
            for pid in &gone {
                self.tracked.remove(pid);
            }
            self.order.retain(|pid| self.tracked.contains_key(pid));
        }

        let pss_attempt = self.read_one_pss(t, &mut processes);
        for p in &processes {
            if let Some(tr) = self.tracked.get_mut(&p.pid) {
                tr.last = Some(p.clone());
            }
        }

        let (minor, major) = processes.iter().fold((0u64, 0u64), |(mi, ma), p| {
            (mi + p.minor_faults, ma + p.major_faults)
        });
        let (minor_rate, major_rate) = match self.last_faults {
            Some((t0, min0, maj0)) if t > t0 => (
                minor.saturating_sub(min0) as f64 / (t - t0),
                major.saturating_sub(maj0) as f64 / (t - t0),
            ),
            _ => (0.0, 0.0),
        };
        self.last_faults = Some((t, minor, major));

        let system = self.config.system.then(|| system::read(&self.config.root));
        let cgroup = self.config.cgroup.as_ref().map(|cg| CgroupSample {
            usage: cg.usage(),
            oom_kills: cg.oom_kills(),
        });
        let seq = self.seq;
        self.seq += 1;
        Sample {
            t,
            seq,
            processes,
            minor_faults_per_second: minor_rate,
            major_faults_per_second: major_rate,
            pss_attempt,
            system,
            cgroup,
        }
    }

    /// Opens the scope's processes not followed yet.
    fn discover(&mut self) {
        let pids = self.members.pids();
        if matches!(self.config.scope, super::Scope::All) {
            // Kernel threads end rarely, but their pids come back.
            let live: HashSet<i32> = pids.iter().copied().collect();
            self.kernel_threads.retain(|pid| live.contains(pid));
        }
        for pid in pids {
            if self.tracked.contains_key(&pid) || self.kernel_threads.contains(&pid) {
                continue;
            }
            let Ok(dir) = ProcDir::open(&self.config.root, pid) else {
                continue;
            };
            let stat = dir.open_file("stat").ok();
            self.tracked.insert(
                pid,
                Tracked {
                    dir,
                    stat,
                    last: None,
                    minor_faults_at_attempt: None,
                },
            );
            self.order.push(pid);
        }
    }

    /// Reads `smaps_rollup` of the process whose memory moved most since its last
    /// attempt (never-tried processes first), if the budget allows.
    fn read_one_pss(&mut self, t: f64, processes: &mut [ProcessSample]) -> Option<PssAttempt> {
        let ledger = self.ledger.as_mut()?;
        if !ledger.allows(Instant::now()) {
            return None;
        }
        let (i, _) = processes
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, self.tracked.get(&p.pid)?, p)))
            .max_by_key(|(_, tr, p)| match tr.minor_faults_at_attempt {
                None => u64::MAX,
                Some(at) => p.minor_faults.saturating_sub(at) + 1,
            })
            .map(|(i, _, p)| (i, p.pid))?;
        let p = &mut processes[i];
        let tr = self.tracked.get_mut(&p.pid)?;
        let began = Instant::now();
        let bytes = tr.dir.read("smaps_rollup").ok();
        let cost = began.elapsed();
        ledger.charge(began, cost);
        tr.minor_faults_at_attempt = Some(p.minor_faults);
        if let Some(rollup) = bytes.and_then(|b| smaps_rollup::parse(&b)) {
            p.pss = Some(PssReading {
                pss: rollup.pss,
                uss: rollup.uss(),
                at: t,
                minor_faults_at: p.minor_faults,
            });
            p.rollup = Some(rollup);
        }
        Some(PssAttempt { pid: p.pid, cost })
    }
}

enum Read {
    /// Its sample was added.
    Live,
    KernelThread,
    /// Exited (a zombie included: its memory is gone).
    Gone,
}

/// Adds the process's sample to `out`.
fn read_process(
    tr: &mut Tracked,
    pid: i32,
    buf: &mut Vec<u8>,
    page_size: u64,
    with_exe: bool,
    out: &mut Vec<ProcessSample>,
) -> Read {
    let len = match &tr.stat {
        Some(fd) => pread_all(fd, buf),
        None => tr.dir.read_into("stat", buf, true).ok(),
    };
    let Some(s) = len.and_then(|len| stat::parse(&buf[..len]).ok()) else {
        return Read::Gone;
    };
    if s.flags & PF_KTHREAD != 0 {
        return Read::KernelThread;
    }
    if s.state == 'Z' {
        return Read::Gone;
    }
    let previous = tr.last.as_ref();
    let pss = previous.and_then(|p| p.pss);
    let uss_estimate = match &pss {
        Some(r) => r.uss + s.minflt.saturating_sub(r.minor_faults_at) * page_size,
        None => s.minflt * page_size,
    };
    let exe = if with_exe {
        tr.dir
            .read_link("exe")
            .ok()
            .map(|b| crate::parse::text::escape_bytes(&b))
    } else {
        None
    };
    out.push(ProcessSample {
        pid,
        ppid: s.ppid,
        comm: s.comm,
        exe,
        rss: s.rss_pages * page_size,
        minor_faults: s.minflt,
        major_faults: s.majflt,
        rollup: None,
        pss,
        uss_estimate,
    });
    Read::Live
}

/// The whole file, read from offset 0 into `buf`; `None` once the process is gone.
fn pread_all(fd: &OwnedFd, buf: &mut Vec<u8>) -> Option<usize> {
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = rustix::io::pread(fd, &mut buf[len..], len as u64).ok()?;
        if n == 0 {
            return (len > 0).then_some(len);
        }
        len += n;
    }
}
