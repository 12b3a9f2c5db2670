//! One tick of sampling, without a thread: finds the scope's processes, reads each
//! one's `stat`, reads one `smaps_rollup` within the budget, and builds a [`Sample`].

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::model::gpu::PidJoin;
use crate::parse::smaps_rollup;
use crate::parse::stat;
use crate::probe::fork;
use crate::probe::gpu::{self, Gpus};
use crate::probe::procdir::ProcDir;
use crate::probe::root::Root;

use super::budget::PssLedger;
use super::sample::{CgroupSample, GpuSample, ProcessSample, PssAttempt, PssReading, Sample};
use super::scope::Members;
use super::{system, SamplerConfig};

/// `PF_KTHREAD` in `/proc/PID/stat` flags.
const PF_KTHREAD: u32 = 0x0020_0000;
/// Processes whose `stat` is kept open between ticks, unless the config says more.
/// Past this (a machine-wide scope) each is read through its directory instead:
/// with the usual soft limit of 1024 open files, two descriptors per process would
/// run out. A front end that raised its limit says so in [`SamplerConfig::keep_open`].
pub const KEEP_OPEN_UP_TO: usize = 256;
/// How long a process's reading may be kept while its `statm` stays the same
/// ([`super::SamplerConfig::skip_unchanged`]).
pub const FULL_READ_EVERY: f64 = 5.0;

struct Tracked {
    /// The process's directory, held open while few processes are followed (reads
    /// through it cannot reach another process that reuses the pid); past
    /// the config's `keep_open` opened again at each read.
    dir: Option<ProcDir>,
    /// `starttime` of `stat` when first seen: a pid whose process has another start
    /// time is a new process that reused it.
    started: Option<u64>,
    /// `stat`, opened once and re-read from offset 0 (the kernel regenerates it):
    /// no open and close per tick. `None` where it could not be opened.
    stat: Option<OwnedFd>,
    /// `statm`, held the same way where unchanged processes keep their reading.
    statm: Option<OwnedFd>,
    /// `statm` as it read just before the last full reading, and when that was.
    statm_at_full_read: Vec<u8>,
    full_read_at: f64,
    last: Option<ProcessSample>,
    /// Minor faults at the last `smaps_rollup` attempt, successful or not: a process
    /// whose reading fails (not ours to read) waits its turn like the others instead
    /// of being picked first at every tick.
    minor_faults_at_attempt: Option<u64>,
    /// When that attempt was (`Sample::t`), and the major faults then.
    attempted: Option<(f64, u64)>,
    /// When the sampler first saw it: a process never read for [`FIRST_READING_DUE`]
    /// goes before newer ones.
    seen: Instant,
    /// Readings of a forked worker taken past the PSS budget (see [`WORKER_READINGS`]).
    readings_past_budget: u8,
}

/// A forked worker is read past the PSS budget at its first sight and whenever it
/// has touched [`WORKER_COPY_FAULTS`] pages since its last reading, this many times at
/// most: what it copied from its parent is what its readings are for, and one
/// expensive reading of another worker must not starve it.
const WORKER_READINGS: u8 = 4;
/// How long a process may wait for its first PSS reading behind newer ones.
const FIRST_READING_DUE: Duration = Duration::from_secs(5);
/// 32 MiB of 4 KiB pages: a worker that copies 96 MiB is read at least once after
/// most of its copying, however the ticks fall.
const WORKER_COPY_FAULTS: u64 = 8 * 1024;

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
    /// Pids of a `Scope::Pids` that ended: a process that later gets the same pid is
    /// another process, not the one asked for.
    ended: HashSet<i32>,
    ledger: Option<PssLedger>,
    seq: u64,
    /// When the last tick was taken, for fault rates.
    last_tick: Option<f64>,
    buf: Vec<u8>,
    /// The `statm` of the process being read (see [`unchanged`]).
    statm_buf: Vec<u8>,
    /// NVML and how its pids join ours, when the config asked for GPUs and there are.
    gpus: Option<(&'static Gpus, PidJoin)>,
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
            ended: HashSet::new(),
            seq: 0,
            last_tick: None,
            buf: vec![0; 1024],
            statm_buf: Vec::with_capacity(128),
            gpus: None,
        }
        .with_gpus()
    }

    fn with_gpus(mut self) -> Self {
        // Where NVML's pids cannot be joined to the scope's (a container's pid
        // namespace), nothing read per tick could be attributed: not read at all.
        if self.config.gpu {
            let join = gpu::pid_join(&self.config.root);
            if join.joinable() {
                self.gpus = gpu::gpus().ok().map(|g| (g, join));
            }
        }
        self
    }

    /// What readings within the PSS budget have cost so far.
    #[cfg(test)]
    pub(crate) fn pss_spent(&self) -> Option<Duration> {
        self.ledger.as_ref().map(|l| l.spent())
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
            if let Some(same) = unchanged(tr, t, &mut self.statm_buf) {
                processes.push(same);
                continue;
            }
            let exe = self.config.exe;
            let root = &self.config.root;
            match read_process(
                tr,
                root,
                pid,
                &mut self.buf,
                self.page_size,
                exe,
                &mut processes,
            ) {
                Read::Live if tr.statm.is_some() => {
                    tr.statm_at_full_read.clear();
                    tr.statm_at_full_read.extend_from_slice(&self.statm_buf);
                    tr.full_read_at = t;
                }
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
            if matches!(self.config.scope, super::Scope::Pids(_)) {
                self.ended.extend(gone.iter().copied());
            }
            self.order.retain(|pid| self.tracked.contains_key(pid));
        }

        mark_forks(&mut processes);
        let pss_attempts = self.read_pss(t, &mut processes);
        // Each process's own faults since the last tick: the scope's sum would jump
        // when a long-lived process joins it and hide faults when one leaves.
        let (mut minor, mut major) = (0u64, 0u64);
        for p in &processes {
            let Some(tr) = self.tracked.get_mut(&p.pid) else {
                continue;
            };
            match &tr.last {
                Some(last) => {
                    minor += p.minor_faults.saturating_sub(last.minor_faults);
                    major += p.major_faults.saturating_sub(last.major_faults);
                }
                // Met after the first tick: it started since the last one (or joined
                // the scope; its count is then an overestimate of one interval).
                None if self.last_tick.is_some() => {
                    minor += p.minor_faults;
                    major += p.major_faults;
                }
                None => {}
            }
            tr.last = Some(p.clone());
        }
        let (minor_rate, major_rate) = match self.last_tick {
            Some(t0) if t > t0 => (minor as f64 / (t - t0), major as f64 / (t - t0)),
            _ => (0.0, 0.0),
        };
        self.last_tick = Some(t);

        let system = self.config.system.then(|| system::read(&self.config.root));
        let cgroup = self.config.cgroup.as_ref().map(|cg| CgroupSample {
            usage: cg.usage(),
            oom_kills: cg.oom_kills(),
        });
        let gpu = self.gpus.as_ref().map(|(g, join)| {
            let started = Instant::now();
            let devices = g.tick(&self.config.root, join);
            GpuSample {
                devices,
                cost: started.elapsed(),
            }
        });
        let seq = self.seq;
        self.seq += 1;
        Sample {
            t,
            seq,
            processes,
            minor_faults_per_second: minor_rate,
            major_faults_per_second: major_rate,
            pss_attempts,
            system,
            cgroup,
            gpu,
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
            if self.tracked.contains_key(&pid)
                || self.kernel_threads.contains(&pid)
                || self.ended.contains(&pid)
            {
                continue;
            }
            let Ok(dir) = ProcDir::open(&self.config.root, pid) else {
                continue;
            };
            let hold = self.tracked.len() < self.config.keep_open;
            let stat = hold.then(|| dir.open_file("stat").ok()).flatten();
            let statm = (hold && self.config.skip_unchanged)
                .then(|| dir.open_file("statm").ok())
                .flatten();
            self.tracked.insert(
                pid,
                Tracked {
                    dir: hold.then_some(dir),
                    started: None,
                    stat,
                    statm,
                    statm_at_full_read: Vec::new(),
                    full_read_at: f64::NEG_INFINITY,
                    last: None,
                    minor_faults_at_attempt: None,
                    attempted: None,
                    seen: Instant::now(),
                    readings_past_budget: 0,
                },
            );
            self.order.push(pid);
        }
    }

    /// Reads `smaps_rollup` of the processes whose memory moved most since their
    /// last attempt (never-tried processes first), while the budget allows.
    fn read_pss(&mut self, t: f64, processes: &mut [ProcessSample]) -> Vec<PssAttempt> {
        let per_tick = self.ledger.as_ref().map_or(0, |l| l.budget().per_tick);
        let mut attempts = Vec::new();
        let mut read_now = HashSet::new();
        let mut past_budget = false;
        while attempts.len() < per_tick as usize {
            match self.read_one_pss(t, processes, &read_now, &mut past_budget) {
                Some(a) => {
                    read_now.insert(a.pid);
                    attempts.push(a);
                }
                None => break,
            }
        }
        attempts
    }

    fn read_one_pss(
        &mut self,
        t: f64,
        processes: &mut [ProcessSample],
        read_now: &HashSet<i32>,
        past_budget: &mut bool,
    ) -> Option<PssAttempt> {
        let moved = |tr: &Tracked, p: &ProcessSample| match tr.minor_faults_at_attempt {
            None => u64::MAX,
            Some(at) => p.minor_faults.saturating_sub(at) + 1,
        };
        let copying = |tr: &Tracked, p: &ProcessSample| {
            p.forked_without_exec == Some(true)
                && moved(tr, p) > WORKER_COPY_FAULTS
                && tr.readings_past_budget < WORKER_READINGS
        };
        let keeps = self
            .ledger
            .as_ref()
            .map_or(0.0, |l| l.budget().unmoved_keeps.as_secs_f64());
        // A process that has not faulted (minor or major) since its last attempt
        // waits until that attempt is `keeps` old.
        let due = |tr: &Tracked, p: &ProcessSample| match (tr.minor_faults_at_attempt, tr.attempted)
        {
            (Some(minor), Some((when, major)))
                if p.minor_faults == minor && p.major_faults == major =>
            {
                t - when >= keeps
            }
            _ => true,
        };
        let candidates = || {
            processes
                .iter()
                .enumerate()
                .filter(|(_, p)| !read_now.contains(&p.pid))
                .filter_map(|(i, p)| Some((i, self.tracked.get(&p.pid)?, p)))
                .filter(|(_, tr, p)| due(tr, p))
        };
        // Processes never tried all stand tied at the top: the largest first, since
        // a view sorted by size shows them first and their PSS is most of what
        // sharing changes (newest first, a machine-wide view's first readings went
        // to a stream of small new processes, and a busy machine's deficit kept a
        // job's 190 MiB parent unread for a minute). One that waited
        // FIRST_READING_DUE goes before them, the longest waiting first, so that a
        // stream of new processes (a build) cannot keep an older one unread.
        let now = Instant::now();
        let rank = |i: usize, tr: &Tracked, p: &ProcessSample| {
            let never_tried = tr.minor_faults_at_attempt.is_none();
            let overdue = never_tried && now.duration_since(tr.seen) >= FIRST_READING_DUE;
            let (size, order) = match overdue {
                true => (0, -(i as i64)),
                false => (p.rss, i as i64),
            };
            (moved(tr, p), overdue, size, order)
        };
        let most_moved = candidates()
            .max_by_key(|(i, tr, p)| rank(*i, tr, p))
            .map(|(i, ..)| i)?;
        // Chosen among the workers that may still be read past the budget: one that
        // used its readings, or another process, would otherwise stand first for
        // ever (its faults since its last attempt only grow) and starve them.
        let most_copying = candidates()
            .filter(|(_, tr, p)| copying(tr, p))
            .max_by_key(|(i, tr, p)| rank(*i, tr, p))
            .map(|(i, ..)| i);
        let within_budget = self.ledger.as_mut()?.allows(Instant::now());
        let i = if within_budget {
            most_moved
        } else {
            // One reading past the budget per tick at most, however many workers copy.
            let (Some(i), false) = (most_copying, *past_budget) else {
                return None;
            };
            *past_budget = true;
            if let Some(tr) = self.tracked.get_mut(&processes[i].pid) {
                tr.readings_past_budget += 1;
            }
            i
        };
        let parent = match processes[i].forked_without_exec {
            Some(true) => Some(processes[i].ppid),
            _ => None,
        };
        let p = &mut processes[i];
        let tr = self.tracked.get(&p.pid)?;
        let began = Instant::now();
        let cpu_began = thread_cpu_time();
        // A worker forked without exec is read whole (smaps, and its parent's maps),
        // so what it copied is told from what it allocated; a job without such
        // workers reads only smaps_rollup, as before.
        let reading = match parent {
            Some(ppid) => {
                let parent_dir = self
                    .tracked
                    .get(&ppid)
                    .and_then(|parent| parent.dir(&self.config.root, ppid));
                match (tr.dir(&self.config.root, p.pid), parent_dir) {
                    (Some(child), Some(parent)) => {
                        fork::read(&child, &parent).map(|r| (r.rollup, Some(r.copied)))
                    }
                    _ => None,
                }
            }
            None => tr
                .dir(&self.config.root, p.pid)
                .and_then(|d| d.read("smaps_rollup").ok())
                .and_then(|b| smaps_rollup::parse(&b))
                .map(|rollup| (rollup, None)),
        };
        // A reading costs what it took of a core (its walk of the page tables, in the
        // kernel), not the wall time, which on a busy machine is mostly waiting for a
        // CPU and would starve every later reading; the budget and the sampler's
        // reported cost both count that.
        let wall = began.elapsed();
        let cost = match (cpu_began, thread_cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a).min(wall),
            _ => wall,
        };
        // A reading past the budget is not booked against it: booked, each forked
        // subshell's first sight (one a tick, on a machine running a build) kept the
        // ledger in debt, and a machine-wide view read nothing else for minutes.
        // Their own bounds hold them: one a tick, WORKER_READINGS a worker.
        if let (Some(ledger), true) = (self.ledger.as_mut(), within_budget) {
            ledger.charge(began, cost);
        }
        if let Some(tr) = self.tracked.get_mut(&p.pid) {
            tr.minor_faults_at_attempt = Some(p.minor_faults);
            tr.attempted = Some((t, p.major_faults));
        }
        if let Some((rollup, copied)) = reading {
            p.pss = Some(PssReading {
                pss: rollup.pss,
                uss: rollup.uss(),
                swap: rollup.swap,
                at: t,
                minor_faults_at: p.minor_faults,
            });
            p.rollup = Some(rollup);
            p.copied_after_fork = copied;
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

/// A process's directory for one tick: the one held, or one opened for the tick.
enum Dir<'a> {
    Held(&'a ProcDir),
    Opened(ProcDir),
}

impl std::ops::Deref for Dir<'_> {
    type Target = ProcDir;

    fn deref(&self) -> &ProcDir {
        match self {
            Dir::Held(d) => d,
            Dir::Opened(d) => d,
        }
    }
}

impl Tracked {
    fn dir(&self, root: &Root, pid: i32) -> Option<Dir<'_>> {
        match &self.dir {
            Some(d) => Some(Dir::Held(d)),
            None => ProcDir::open(root, pid).ok().map(Dir::Opened),
        }
    }
}

/// The process's last reading again, where its `statm` is what it was just before
/// that reading and that is recent: a process whose sizes did not move did not
/// fault pages in or out. Leaves the `statm` read in `statm_buf` (empty where none).
fn unchanged(tr: &Tracked, t: f64, statm_buf: &mut Vec<u8>) -> Option<ProcessSample> {
    statm_buf.clear();
    let fd = tr.statm.as_ref()?;
    statm_buf.resize(128, 0);
    let len = pread_all(fd, statm_buf);
    statm_buf.truncate(len.unwrap_or(0));
    let fresh = t - tr.full_read_at < FULL_READ_EVERY;
    if !fresh || statm_buf.is_empty() || *statm_buf != tr.statm_at_full_read {
        return None;
    }
    let mut same = tr.last.clone()?;
    // What belongs to the tick it was read at.
    same.rollup = None;
    same.copied_after_fork = None;
    same.forked_without_exec = None;
    same.execed = false;
    Some(same)
}

/// Adds the process's sample to `out`.
fn read_process(
    tr: &mut Tracked,
    root: &Root,
    pid: i32,
    buf: &mut Vec<u8>,
    page_size: u64,
    with_exe: bool,
    out: &mut Vec<ProcessSample>,
) -> Read {
    let mut first_start = None;
    let dir = tr.dir(root, pid);
    let len = match (&tr.stat, &dir) {
        (Some(fd), _) => pread_all(fd, buf),
        (None, Some(dir)) => dir.read_into("stat", buf, true).ok(),
        (None, None) => None,
    };
    let Some(s) = len.and_then(|len| stat::parse(&buf[..len]).ok()) else {
        return Read::Gone;
    };
    match tr.started {
        // Only a directory opened anew can reach a process that reused the pid.
        Some(started) if started != s.starttime => return Read::Gone,
        Some(_) => {}
        None => first_start = Some(s.starttime),
    }
    if s.flags & PF_KTHREAD != 0 {
        return Read::KernelThread;
    }
    if s.state == 'Z' {
        return Read::Gone;
    }
    let exe = if with_exe {
        dir.as_ref()
            .and_then(|d| d.read_link("exe").ok())
            .map(|b| crate::parse::text::escape_bytes(&b))
    } else {
        None
    };
    let execed = tr
        .last
        .as_ref()
        .is_some_and(|last| exec_between(last, exe.as_deref(), s.layout.as_ref()));
    // A reading before exec was the parent's image (a wrapper's, or memtriage's own
    // between fork and exec): dropped, and the new program read soon, as a process
    // never read is. Fault counters carry across exec, so `last` still gives deltas.
    let pss = match execed {
        true => None,
        false => tr.last.as_ref().and_then(|p| p.pss),
    };
    let uss_estimate = match &pss {
        Some(r) => r.uss + s.minflt.saturating_sub(r.minor_faults_at) * page_size,
        None => s.minflt * page_size,
    }
    .min(s.rss_pages * page_size);
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
        layout: s.layout,
        forked_without_exec: None,
        copied_after_fork: None,
        execed,
    });
    drop(dir);
    if execed {
        tr.minor_faults_at_attempt = None;
    }
    if first_start.is_some() {
        tr.started = first_start;
    }
    Read::Live
}

/// Whether the process exec'd since `last` was read: its executable changed, or the
/// stack or heap start that exec lays out anew did.
fn exec_between(
    last: &ProcessSample,
    exe: Option<&str>,
    layout: Option<&crate::parse::stat::MemoryLayout>,
) -> bool {
    let exe_changed = matches!((last.exe.as_deref(), exe), (Some(a), Some(b)) if a != b);
    // Only what nothing but exec moves: a program may rewrite its argument area
    // (prctl PR_SET_MM, setproctitle).
    let layout_changed = matches!((last.layout.as_ref(), layout),
        (Some(a), Some(b)) if a.start_stack != b.start_stack || a.start_brk != b.start_brk);
    exe_changed || layout_changed
}

/// Marks each process forked without exec from its parent, where the parent is in
/// the same sample: its layout is compared with the parent's of the same tick.
fn mark_forks(processes: &mut [ProcessSample]) {
    let layouts: HashMap<i32, Option<stat::MemoryLayout>> =
        processes.iter().map(|p| (p.pid, p.layout)).collect();
    for p in processes.iter_mut() {
        if let Some(parent) = layouts.get(&p.ppid).filter(|_| p.ppid != p.pid) {
            p.forked_without_exec = fork::forked_without_exec(p.layout.as_ref(), parent.as_ref());
        }
    }
}

/// The whole of `stat`, read from offset 0 into `buf`; `None` once the process is
/// gone. The kernel makes `stat` in one piece, so a read that leaves room is all of
/// it: reading on to the end would have the kernel make the whole file again to
/// find that offset (seq_file), doubling the cost of every process at every tick.
fn pread_all(fd: &OwnedFd, buf: &mut Vec<u8>) -> Option<usize> {
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let room = buf.len() - len;
        let n = rustix::io::pread(fd, &mut buf[len..], len as u64).ok()?;
        len += n;
        if n < room {
            return (len > 0).then_some(len);
        }
    }
}

/// This thread's CPU time (user and system), where the clock can be read.
fn thread_cpu_time() -> Option<Duration> {
    // SAFETY: clock_gettime fills a local timespec.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}
