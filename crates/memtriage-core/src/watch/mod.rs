//! The machine watched over time, for front ends that stay up (`memtriage serve`,
//! and the recorder): the engine's sampler over every process, grouped into jobs;
//! the memory cgroups that hold them; OOM kills as they happen, attributed to the
//! cgroup, pod, container, Slurm job or unit; the machine's memory figures; watched
//! files' page-cache residency; GPUs; and `doctor`'s findings.
//!
//! A [`Watcher`] runs two threads (the sampler, and a slow loop for the logs, the
//! cgroups' event counters, files and doctor) and keeps one [`MachineView`], replaced
//! whole when anything changes: a reader takes the latest with [`Watcher::view`] and
//! never waits on a reading in progress.
//!
//! - `identity`: each process's command line and cgroup, kept past its end
//! - `groups`: processes into jobs (or cgroups, or patterns), with a cap
//! - `cgroups`: the cgroups reported and their counters
//! - `oom`: OOM kills from the kernel log, `memory.events` and userspace killers
//! - `files`: page-cache residency of watched files
//! - `killer_view`: the OOM killers as a live view shows them: which acts first, when
//! - `processes`: every process as a live view shows it (`top`): rates, growth,
//!   history, findings
//! - `intervals`: the view as one interval of the machine's history

mod cgroup_names;
mod cgroups;
mod files;
mod groups;
mod identity;
pub mod intervals;
mod killer_view;
pub mod largest;
mod live;
mod oom;
mod processes;

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::diagnose::doctor::Profile;
use crate::model::finding::Severity;
use crate::model::gpu::GpuTick;
use crate::model::system::{HugePagePool, MemoryPressure};
use crate::probe::root::Root;
use crate::probe::system::{
    hugetlb_pools, read_meminfo, read_pressure, read_thp_setting, THP_DEFRAG, THP_ENABLED,
};
use crate::sampler::{PssBudget, Sample, SamplerConfig, SamplerThread, Scope};

pub use cgroups::CgroupView;
pub use files::{FileView, TensorView};
pub use groups::{job_roots, GroupView, Grouping, OTHER};
pub use killer_view::KillersNow;
pub use live::{Focus, Live, LiveFrame, MachineHeader, FOCUS_EVERY, LIVE_SCHEMA};
pub use oom::{KillKey, KillRecord, OomCounts};
pub use processes::{mark_text, ProcessRow, HISTORY_POINTS};

/// What to watch and how.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    pub grouping: Grouping,
    /// Groups reported, `other` included.
    pub max_groups: usize,
    pub max_cgroups: usize,
    /// How long an ended group's counters, and an ended process's identity, are kept.
    pub grace: Duration,
    /// The sampler's interval.
    pub interval: Duration,
    pub pss: Option<PssBudget>,
    pub gpu: bool,
    pub watch_files: Vec<PathBuf>,
    /// Residency per tensor of watched `.safetensors` files.
    pub watch_tensors: bool,
    /// How often watched files' residency is read.
    pub files_interval: Duration,
    /// Log files where userspace OOM killers write (syslog, a journal export).
    pub killer_logs: Vec<PathBuf>,
    /// Keep the kernel's crash reports (an oops, BUG, panic) for `why`: reading them
    /// takes the log rules (about 8 MiB), which an exporter has no use for.
    pub kernel_crashes: bool,
    /// How often `doctor` runs; `None`: never.
    pub doctor: Option<(Profile, Duration)>,
    pub root: Root,
}

impl WatchConfig {
    /// Every process by job, sampled every 10 s with PSS on the machine budget.
    pub fn new(root: Root) -> Self {
        WatchConfig {
            grouping: Grouping::Job,
            max_groups: 100,
            max_cgroups: 200,
            grace: Duration::from_secs(300),
            interval: Duration::from_secs(10),
            pss: Some(PssBudget::MACHINE),
            gpu: true,
            watch_files: Vec::new(),
            watch_tensors: false,
            files_interval: Duration::from_secs(30),
            killer_logs: Vec::new(),
            kernel_crashes: false,
            doctor: Some((Profile::Training, Duration::from_secs(300))),
            root,
        }
    }
}

/// The machine-wide figures of one sample; each `None` where unreadable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineFigures {
    pub mem_available: Option<u64>,
    /// `Cached` in /proc/meminfo.
    pub page_cache: Option<u64>,
    pub pressure: Option<MemoryPressure>,
    pub swap_used: Option<u64>,
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    pub thp_anon: Option<u64>,
    pub hugetlb: Vec<HugePagePool>,
    pub shm_size: Option<u64>,
    pub shm_used: Option<u64>,
}

/// The sampler's own cost, for the exporter's self-metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SamplerStats {
    pub samples: u64,
    /// What the last sample took to read.
    pub last_duration: Duration,
    pub pss_reads: u64,
    pub pss_read_seconds: f64,
    /// Whether every user's processes can have a PSS reading, and some has one (else:
    /// not permitted for other users' processes, or not tried yet).
    pub pss_readable: bool,
    /// Whether this process may read other users' PSS at all (CAP_SYS_PTRACE).
    pub reads_every_users_pss: bool,
}

/// Everything the watcher knows now, replaced whole at each change.
#[derive(Debug, Clone, Default)]
pub struct MachineView {
    /// When the sample behind the process figures was taken; `None` before the first.
    pub sampled_at: Option<SystemTime>,
    pub sampler: SamplerStats,
    pub groups: Vec<GroupView>,
    pub groups_folded: usize,
    /// The largest processes, by RSS, with their jobs and cgroups.
    pub largest: Vec<crate::model::history::ProcessBrief>,
    pub cgroups: Vec<CgroupView>,
    pub cgroups_dropped: usize,
    pub oom: OomCounts,
    pub machine: MachineFigures,
    pub files: Vec<FileView>,
    /// `None` where NVML is absent (or GPUs were not asked for).
    pub gpus: Option<Vec<GpuTick>>,
    /// `doctor`'s findings at its last run (id, severity), and when it ran.
    pub findings: Option<(SystemTime, Vec<(String, Severity)>)>,
}

struct State {
    identities: identity::Identities,
    groups: groups::Groups,
    stats: SamplerStats,
}

/// The latest view, behind a lock of its own held only to swap or take it: a reader
/// never waits for a sample or a walk of the cgroups in progress.
type Published = Mutex<Arc<MachineView>>;

/// Replaces the view with a changed copy; the change is computed from readings made
/// before, so the lock is held only for the copy.
fn publish(published: &Published, change: impl FnOnce(&mut MachineView)) {
    let mut current = published.lock().unwrap_or_else(|e| e.into_inner());
    let mut view = (**current).clone();
    change(&mut view);
    *current = Arc::new(view);
}

/// The running watch. Dropping it stops both threads.
pub struct Watcher {
    published: Arc<Published>,
    sampler: Option<SamplerThread>,
    slow: Option<JoinHandle<()>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
}

/// How often the slow loop reads the logs.
const LOG_POLL: Duration = Duration::from_secs(1);
/// How often it walks the cgroups' OOM counters.
const EVENTS_POLL: Duration = Duration::from_secs(2);

impl Watcher {
    pub fn start(config: WatchConfig) -> std::io::Result<Self> {
        let identities = identity::Identities::new(&config.root, config.grace);
        let hierarchy = identities.hierarchy().cloned();
        let oom = oom::OomWatcher::new(
            &config.root,
            hierarchy,
            &config.killer_logs,
            config.kernel_crashes,
        );
        let state = Arc::new(Mutex::new(State {
            identities,
            groups: groups::Groups::new(config.grouping.clone(), config.max_groups, config.grace),
            stats: SamplerStats {
                reads_every_users_pss: crate::probe::system::reads_every_users_pss(&config.root),
                ..SamplerStats::default()
            },
        }));
        let published: Arc<Published> = Arc::new(Mutex::new(Arc::new(MachineView::default())));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));

        let slow = {
            let state = Arc::clone(&state);
            let published = Arc::clone(&published);
            let stop = Arc::clone(&stop);
            let config = config.clone();
            std::thread::Builder::new()
                .name("memtriage-watch".into())
                .spawn(move || slow_loop(&config, oom, &state, &published, &stop))?
        };

        let mut sampler_config = SamplerConfig::new(Scope::All, config.interval);
        sampler_config.pss = config.pss;
        sampler_config.exe = false;
        sampler_config.gpu = config.gpu;
        sampler_config.keep_open = crate::sampler::open_files_for();
        sampler_config.root = config.root.clone();
        let sink_published = Arc::clone(&published);
        let sink_config = config.clone();
        let sampler = SamplerThread::spawn(sampler_config, move |sample| {
            absorb(&sink_config, &state, &sink_published, &sample);
            true
        })?;
        Ok(Watcher {
            published,
            sampler: Some(sampler),
            slow: Some(slow),
            stop,
        })
    }

    /// Takes a sample at once, outside the interval (a recorder while memory
    /// pressure rises); the view is replaced when it is read.
    pub fn sample_now(&self) {
        if let Some(sampler) = &self.sampler {
            sampler.sample_now();
        }
    }

    /// The latest view; cheap, never waits on a reading.
    pub fn view(&self) -> Arc<MachineView> {
        Arc::clone(&self.published.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Stops both threads and waits for them.
    pub fn stop(mut self) -> crate::Result<()> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> crate::Result<()> {
        {
            let (flag, cv) = &*self.stop;
            *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
            cv.notify_all();
        }
        let sampled = self
            .sampler
            .take()
            .map(SamplerThread::stop)
            .unwrap_or(Ok(()));
        if let Some(slow) = self.slow.take() {
            slow.join().map_err(|p| {
                crate::Error::internal(format!(
                    "the watch thread panicked: {}",
                    crate::Error::panic_message(&*p)
                ))
            })?;
        }
        sampled
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}

/// A poisoned lock means a thread panicked mid-update; the view it left is still
/// whole (it is replaced, never edited), so reading goes on.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn absorb(config: &WatchConfig, state: &Mutex<State>, published: &Published, sample: &Sample) {
    let began = Instant::now();
    let machine = machine_figures(&config.root, sample);
    let mut s = lock(state);
    let now = Instant::now();
    s.identities.update(
        sample.processes.iter().map(|p| (p.pid, p.comm.as_str())),
        now,
    );
    let State {
        identities, groups, ..
    } = &mut *s;
    let (group_views, folded) = groups.absorb(sample, identities, now);
    let largest = groups.largest().to_vec();
    let (cgroup_views, dropped) = match identities.hierarchy() {
        Some(h) => cgroups::read(&config.root, h, identities, config.max_cgroups),
        None => (Vec::new(), 0),
    };
    s.stats.samples += 1;
    for a in &sample.pss_attempts {
        s.stats.pss_reads += 1;
        s.stats.pss_read_seconds += a.cost.as_secs_f64();
    }
    s.stats.pss_readable =
        s.stats.reads_every_users_pss && sample.processes.iter().any(|p| p.pss.is_some());
    s.stats.last_duration = began.elapsed() + sample_cost(sample);
    let stats = s.stats;
    drop(s);
    let gpus = sample.gpu.as_ref().map(|g| g.devices.clone());
    publish(published, move |view| {
        view.sampled_at = Some(SystemTime::now());
        view.sampler = stats;
        view.groups = group_views;
        view.groups_folded = folded;
        view.largest = largest;
        view.cgroups = cgroup_views;
        view.cgroups_dropped = dropped;
        view.machine = machine;
        view.gpus = gpus;
    });
}

/// What reading the sample cost the sampler, as far as it reports it.
fn sample_cost(sample: &Sample) -> Duration {
    sample.pss_attempts.iter().map(|a| a.cost).sum::<Duration>()
        + sample.gpu.as_ref().map_or(Duration::ZERO, |g| g.cost)
}

fn machine_figures(root: &Root, sample: &Sample) -> MachineFigures {
    let meminfo = read_meminfo(root).ok();
    MachineFigures {
        mem_available: meminfo.as_ref().and_then(|m| m.available),
        page_cache: meminfo.as_ref().and_then(|m| m.cached),
        pressure: read_pressure(root).ok().flatten(),
        swap_used: meminfo.as_ref().and_then(|m| m.swap_used()),
        thp_enabled: read_thp_setting(root, THP_ENABLED).ok().flatten(),
        thp_defrag: read_thp_setting(root, THP_DEFRAG).ok().flatten(),
        thp_anon: meminfo.as_ref().and_then(|m| m.anon_huge_pages),
        hugetlb: hugetlb_pools(root),
        shm_size: sample.system.as_ref().and_then(|s| s.shm_size),
        shm_used: sample.system.as_ref().and_then(|s| s.shm_used),
    }
}

fn slow_loop(
    config: &WatchConfig,
    mut oom: oom::OomWatcher,
    state: &Mutex<State>,
    published: &Published,
    stop: &(Mutex<bool>, Condvar),
) {
    let mut last_counts: Option<OomCounts> = None;
    let mut last_events: Option<Instant> = None;
    let mut last_files: Option<Instant> = None;
    let mut last_doctor: Option<Instant> = None;
    loop {
        let now = Instant::now();
        let walk = last_events.is_none_or(|t| now.duration_since(t) >= EVENTS_POLL);
        if walk {
            last_events = Some(now);
        }
        // The logs and the cgroup walk are read without the lock; only matching a
        // kill to the processes seen takes it.
        oom.read(now, walk);
        oom.settle(&lock(state).identities, now);
        let counts = oom.counts();
        if last_counts.as_ref() != Some(&counts) {
            last_counts = Some(counts.clone());
            publish(published, |view| view.oom = counts);
        }
        if !config.watch_files.is_empty()
            && last_files.is_none_or(|t| now.duration_since(t) >= config.files_interval)
        {
            last_files = Some(now);
            let files = files::read(&config.watch_files, config.watch_tensors);
            publish(published, |view| view.files = files);
        }
        if let Some((profile, every)) = config.doctor {
            if last_doctor.is_none_or(|t| now.duration_since(t) >= every) {
                last_doctor = Some(now);
                let system = crate::probe::system::read(&config.root);
                let findings = crate::diagnose::doctor::audit(&system, profile)
                    .into_iter()
                    .filter(|f| f.severity != Severity::Ok)
                    .map(|f| (f.id, f.severity))
                    .collect();
                publish(published, |view| {
                    view.findings = Some((SystemTime::now(), findings))
                });
            }
        }
        let (flag, cv) = stop;
        let stopped = flag.lock().unwrap_or_else(|e| e.into_inner());
        if *stopped {
            return;
        }
        let (stopped, _) = cv
            .wait_timeout(stopped, LOG_POLL)
            .unwrap_or_else(|e| e.into_inner());
        if *stopped {
            return;
        }
    }
}
