//! What `memtriage run` keeps of the samples it consumes: peaks of the tree's
//! memory, machine-wide figures while the job ran, one summary per process (with
//! the rank a distributed launcher gave it, read once after its exec), and what
//! sampling cost. Fed one [`Sample`] at a time; the sampler keeps none of it.

use std::collections::{HashMap, HashSet};

use crate::model::run::{
    GpuAtPeak, LowestAvailable, Peak, ProcessSummary, RunGpu, RunGpuDevice, SamplingStats,
    TimelineProcess, TimelineSample,
};
use crate::probe::environ;
use crate::probe::root::Root;
use crate::sampler::{GpuSample, Sample};

#[derive(Debug, Default)]
pub struct RunTally {
    pub stats: SamplingStats,
    pub peak_tree_rss: Option<Peak>,
    pub peak_tree_pss: Option<Peak>,
    pub peak_shm_used: Option<Peak>,
    pub shm_size: Option<u64>,
    pub peak_swap_used: Option<Peak>,
    pub peak_cgroup_usage: Option<Peak>,
    pub lowest_available: Option<LowestAvailable>,
    pub peak_minor_rate: f64,
    pub peak_major_rate: f64,
    pub peak_major_at: f64,
    pub first_cgroup_oom_kills: Option<u64>,
    pub last_cgroup_oom_kills: Option<u64>,
    pub swap_in_out_start: Option<(u64, u64)>,
    pub swap_in_out_end: Option<(u64, u64)>,
    pub peak_psi_full_avg10: Option<f64>,
    /// Set once a sample carried GPU readings.
    pub gpu: Option<RunGpu>,
    /// The job's GPU memory summed over devices at `gpu.at_job_peak`.
    gpu_job_peak: u64,
    summaries: HashMap<i32, ProcessSummary>,
    /// Pids in the order first seen.
    order: Vec<i32>,
    /// Where each process's environment is read.
    root: Root,
    /// Processes whose environment was read since their latest exec: once each, never
    /// every tick.
    environ_read: HashSet<i32>,
}

fn update_opt(peak: &mut Option<Peak>, value: Option<u64>, at: f64) {
    match (peak.as_mut(), value) {
        (Some(p), Some(v)) => p.update(v, at),
        // The first reading is the peak, when it was read (a zero too: a default
        // peak would have kept the time 0.0 of no reading).
        (None, Some(v)) => {
            *peak = Some(Peak {
                bytes: v,
                at_seconds: at,
            })
        }
        (_, None) => {}
    }
}

impl RunTally {
    /// `root` is where the processes' environments are read (their ranks).
    pub fn new(interval_ms: u64, root: &Root) -> Self {
        RunTally {
            stats: SamplingStats {
                interval_ms,
                ..SamplingStats::default()
            },
            root: root.clone(),
            ..RunTally::default()
        }
    }

    pub fn feed(&mut self, sample: &Sample) {
        let t = sample.t;
        self.stats.ticks += 1;
        let mut ranked_now = Vec::new();
        for p in &sample.processes {
            let sum = self.summaries.entry(p.pid).or_insert_with(|| {
                self.order.push(p.pid);
                ProcessSummary::new(p.pid, t)
            });
            if p.execed {
                // Never report a reading of the image before exec (a wrapper
                // script's shell, or memtriage between fork and exec).
                *sum = ProcessSummary::new(p.pid, sum.first_seen_seconds);
                self.environ_read.remove(&p.pid);
            }
            sum.ppid = p.ppid;
            // Before exec the environment is the parent's (torchrun's, without a rank):
            // read again after it.
            if self.environ_read.insert(p.pid) {
                sum.rank = environ::rank(&self.root, p.pid);
                if sum.rank.is_some() {
                    ranked_now.push(p.pid);
                }
            }
            sum.comm.clone_from(&p.comm);
            if p.exe.is_some() {
                sum.exe.clone_from(&p.exe);
            }
            sum.last_seen_seconds = t;
            sum.minor_faults = p.minor_faults;
            sum.major_faults = p.major_faults;
            // The kernel's RSS counters are per-CPU batches since 6.2, read without
            // summing: a process only just forked can read 0 though it has pages. A
            // zero from them measures no peak; smaps_rollup's sum, where read, is exact.
            let rss = (p.rss > 0)
                .then_some(p.rss)
                .or_else(|| p.rollup.as_ref().map(|r| r.rss));
            update_opt(&mut sum.peak_rss, rss, t);
            if rss.is_some() {
                update_opt(&mut sum.peak_uss_estimate, Some(p.uss_estimate), t);
            }
            if p.forked_without_exec.is_some() {
                sum.forked_without_exec = p.forked_without_exec;
            }
            // Read between fork and exec (or while a vfork child borrowed its parent's
            // address space), the copies were not the exec'd program's.
            if p.forked_without_exec == Some(false) {
                sum.peak_copied_after_fork = None;
                sum.rss_at_peak_copied_after_fork = None;
            }
            if let (Some(copied), Some(rollup)) = (p.copied_after_fork, &p.rollup) {
                let previous = sum.peak_copied_after_fork.map(|p| p.bytes);
                if previous.is_none_or(|b| copied > b) {
                    sum.peak_copied_after_fork = Some(Peak {
                        bytes: copied,
                        at_seconds: t,
                    });
                    sum.rss_at_peak_copied_after_fork = Some(rollup.rss);
                }
            }
            if let Some(rollup) = &p.rollup {
                let uss = rollup.uss();
                sum.anonymous = Some(rollup.anonymous);
                sum.anon_huge_pages = Some(rollup.anon_huge_pages);
                update_opt(&mut sum.peak_pss, Some(rollup.pss), t);
                let previous_uss = sum.peak_uss.map(|p| p.bytes);
                update_opt(&mut sum.peak_uss, Some(uss), t);
                if previous_uss.is_none_or(|p| uss > p) {
                    sum.private_dirty_at_peak_uss = Some(rollup.private_dirty);
                    sum.shared_at_peak_uss = Some(rollup.shared_clean + rollup.shared_dirty);
                }
                update_opt(&mut sum.peak_uss_estimate, Some(uss), t);
            }
        }
        if let Some(g) = &sample.gpu {
            self.feed_gpu(sample, g);
        }
        // After the loop, so a parent first seen in the same sample has its rank.
        for pid in ranked_now {
            self.tell_rank_from_worker(pid);
        }
        // A sample of processes that all read 0 (gone, or not yet counted by the
        // kernel) measured nothing.
        let total = sample.total_rss();
        if total > 0 {
            update_opt(&mut self.peak_tree_rss, Some(total), t);
        }

        for attempt in &sample.pss_attempts {
            let cost = attempt.cost.as_secs_f64();
            self.stats.pss_readings += 1;
            self.stats.pss_read_seconds += cost;
            self.stats.pss_read_max_ms = self.stats.pss_read_max_ms.max(cost * 1000.0);
        }
        if let Some(pss) = sample.total_pss() {
            let before = self.peak_tree_pss.map(|p| p.bytes).unwrap_or(0);
            update_opt(&mut self.peak_tree_pss, Some(pss), t);
            if pss > before {
                self.stats.peak_pss_max_age_seconds = sample.oldest_pss_age();
            }
        }

        self.peak_minor_rate = self.peak_minor_rate.max(sample.minor_faults_per_second);
        if sample.major_faults_per_second > self.peak_major_rate {
            self.peak_major_rate = sample.major_faults_per_second;
            self.peak_major_at = t;
        }

        if let Some(sys) = &sample.system {
            self.shm_size = sys.shm_size.or(self.shm_size);
            update_opt(&mut self.peak_shm_used, sys.shm_used, t);
            update_opt(&mut self.peak_swap_used, sys.swap_used, t);
            if let Some(bytes) = sys.available {
                if self.lowest_available.is_none_or(|low| bytes < low.bytes) {
                    self.lowest_available = Some(LowestAvailable {
                        bytes,
                        at_seconds: t,
                        node_available: sys.node_available,
                    });
                }
            }
            if let Some(io) = sys.swapped_in_out {
                self.swap_in_out_start.get_or_insert(io);
                self.swap_in_out_end = Some(io);
            }
            if let Some(full) = sys.psi_full_avg10 {
                let peak = self.peak_psi_full_avg10.get_or_insert(0.0);
                *peak = peak.max(full);
            }
        }
        if let Some(cg) = &sample.cgroup {
            update_opt(&mut self.peak_cgroup_usage, cg.usage, t);
            if let Some(k) = cg.oom_kills {
                self.first_cgroup_oom_kills.get_or_insert(k);
                self.last_cgroup_oom_kills = Some(k);
            }
        }
    }

    fn feed_gpu(&mut self, sample: &Sample, g: &GpuSample) {
        let t = sample.t;
        for p in &sample.processes {
            if let Some(sum) = self.summaries.get_mut(&p.pid) {
                update_opt(&mut sum.peak_gpu, g.held_by(p.pid), t);
            }
        }
        let run = self.gpu.get_or_insert_with(|| RunGpu {
            available: true,
            ..RunGpu::default()
        });
        let cost = g.cost.as_secs_f64();
        run.reads += 1;
        run.read_seconds += cost;
        run.read_max_ms = run.read_max_ms.max(cost * 1000.0);
        let job: HashSet<i32> = sample.processes.iter().map(|p| p.pid).collect();
        let mut job_total = 0u64;
        for d in &g.devices {
            // Unknown when NVML could not say for one of the job's processes (MIG).
            let held: Option<u64> = d
                .processes
                .iter()
                .filter(|p| p.pid.is_some_and(|pid| job.contains(&pid)))
                .map(|p| p.used)
                .sum();
            job_total += held.unwrap_or(0);
            let device = match run.devices.iter_mut().find(|x| x.index == d.index) {
                Some(x) => x,
                None => {
                    run.devices.push(RunGpuDevice {
                        index: d.index,
                        total: d.total,
                        peak_used: None,
                        peak_job: None,
                    });
                    run.devices.last_mut().expect("just pushed")
                }
            };
            update_opt(&mut device.peak_used, d.used, t);
            update_opt(&mut device.peak_job, held, t);
        }
        if job_total > self.gpu_job_peak || run.at_job_peak.is_none() {
            self.gpu_job_peak = job_total;
            run.at_job_peak = Some(GpuAtPeak {
                at_seconds: t,
                devices: g.devices.clone(),
            });
        }
    }

    /// A process whose parent has the same rank inherited it (a DataLoader worker):
    /// it is a worker of the rank, not the rank.
    fn tell_rank_from_worker(&mut self, pid: i32) {
        let parent_rank = self
            .summaries
            .get(&pid)
            .and_then(|p| self.summaries.get(&p.ppid))
            .and_then(|parent| parent.rank)
            .map(|r| r.rank);
        if let Some(rank) = self.summaries.get_mut(&pid).and_then(|p| p.rank.as_mut()) {
            rank.worker = parent_rank == Some(rank.rank);
        }
    }

    /// Summaries of every process seen, in the order they appeared.
    pub fn summaries(&self) -> Vec<ProcessSummary> {
        self.order
            .iter()
            .filter_map(|pid| self.summaries.get(pid))
            .cloned()
            .collect()
    }

    pub fn pids(&self) -> Vec<i32> {
        self.order.clone()
    }

    /// A sample as `--record` writes it: PSS and USS only where that tick read them,
    /// the rank where known. Call after [`Self::feed`] of the same sample, which reads
    /// the ranks of processes new to it.
    pub fn recorded(&self, sample: &Sample) -> TimelineSample {
        let system = sample.system.unwrap_or_default();
        TimelineSample {
            t: sample.t,
            processes: sample
                .processes
                .iter()
                .map(|p| TimelineProcess {
                    pid: p.pid,
                    ppid: p.ppid,
                    comm: p.comm.clone(),
                    rank: self.summaries.get(&p.pid).and_then(|s| s.rank),
                    rss: p.rss,
                    minflt: Some(p.minor_faults),
                    majflt: Some(p.major_faults),
                    pss: p.rollup.as_ref().map(|r| r.pss),
                    uss: p.rollup.as_ref().map(|r| r.uss()),
                })
                .collect(),
            tree_rss: sample.total_rss(),
            tree_pss: sample.total_pss(),
            shm_used: system.shm_used,
            swap_used: system.swap_used,
            cgroup_usage: sample.cgroup.and_then(|c| c.usage),
            psi_some_avg10: system.psi_some_avg10,
            minor_faults_per_second: sample.minor_faults_per_second,
            major_faults_per_second: sample.major_faults_per_second,
            gpu_used: sample.gpu.as_ref().and_then(|g| {
                sample
                    .processes
                    .iter()
                    .map(|p| g.held_by(p.pid))
                    .sum::<Option<u64>>()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::ProcessSample;

    fn process(pid: i32, ppid: i32, comm: &str) -> ProcessSample {
        ProcessSample::bare(pid, ppid, comm, 1 << 20)
    }

    fn sample(t: f64, processes: Vec<ProcessSample>) -> Sample {
        Sample::bare(t, processes)
    }

    /// A captured /proc with each pid's environment.
    struct Environs(tempfile::TempDir);

    impl Environs {
        fn new() -> Self {
            Environs(tempfile::tempdir().unwrap())
        }

        fn set(&self, pid: i32, environ: &[u8]) {
            let dir = self.0.path().join(format!("proc/{pid}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("environ"), environ).unwrap();
        }

        fn root(&self) -> Root {
            Root::at(self.0.path())
        }
    }

    fn rank_of(tally: &RunTally, pid: i32) -> Option<String> {
        let summary = tally.summaries().into_iter().find(|s| s.pid == pid)?;
        summary.rank.map(|r| r.describe())
    }

    /// torchrun (pid 10) starts ranks 0 and 1 (pids 11, 12); rank 1 forks a
    /// DataLoader worker (pid 13); rank 0 runs a tool (pid 14) that has no rank.
    #[test]
    fn ranks_are_named_and_their_workers_told_apart() {
        let env = Environs::new();
        env.set(10, b"PATH=/bin\0");
        env.set(11, b"RANK=0\0LOCAL_RANK=0\0WORLD_SIZE=2\0");
        env.set(12, b"RANK=1\0LOCAL_RANK=1\0WORLD_SIZE=2\0");
        env.set(13, b"RANK=1\0LOCAL_RANK=1\0WORLD_SIZE=2\0");
        env.set(14, b"PATH=/bin\0");
        let mut tally = RunTally::new(100, &env.root());
        tally.feed(&sample(
            0.1,
            vec![
                process(10, 1, "python3"),
                // The worker is listed before its parent: ranks are told apart once
                // every process of the sample is read.
                process(13, 12, "pt_data_worker"),
                process(11, 10, "python3"),
                process(12, 10, "python3"),
                process(14, 11, "nvidia-smi"),
            ],
        ));
        assert_eq!(rank_of(&tally, 10), None);
        assert_eq!(rank_of(&tally, 11).as_deref(), Some("rank 0"));
        assert_eq!(rank_of(&tally, 12).as_deref(), Some("rank 1"));
        assert_eq!(rank_of(&tally, 13).as_deref(), Some("rank 1 worker"));
        assert_eq!(rank_of(&tally, 14), None);
        let summaries = tally.summaries();
        let labels: Vec<String> = summaries.iter().map(ProcessSummary::label).collect();
        assert_eq!(
            labels,
            [
                "pid 10 (python3)",
                "pid 13 (pt_data_worker, rank 1 worker)",
                "pid 11 (python3, rank 0)",
                "pid 12 (python3, rank 1)",
                "pid 14 (nvidia-smi)",
            ]
        );
        let rank0 = summaries.iter().find(|s| s.pid == 11).unwrap();
        assert_eq!(rank0.rank.unwrap().local_rank, Some(0));
        assert_eq!(rank0.rank.unwrap().world_size, Some(2));

        let recorded = tally.recorded(&sample(0.1, vec![process(12, 10, "python3")]));
        assert_eq!(recorded.processes[0].label(), "pid 12 (python3, rank 1)");
        let json = serde_json::to_string(&recorded).unwrap();
        assert!(
            json.contains(r#""rank":{"rank":1,"local_rank":1,"world_size":2}"#),
            "{json}"
        );
        let unranked = tally.recorded(&sample(0.1, vec![process(10, 1, "python3")]));
        let json = serde_json::to_string(&unranked).unwrap();
        assert!(!json.contains("rank"), "no rank, no key: {json}");
    }

    #[test]
    fn the_environment_is_read_once_and_again_only_after_exec() {
        let env = Environs::new();
        // Between fork and exec the child's environment is its launcher's.
        env.set(21, b"PATH=/bin\0");
        let mut tally = RunTally::new(100, &env.root());
        tally.feed(&sample(0.1, vec![process(21, 20, "torchrun")]));
        assert_eq!(rank_of(&tally, 21), None);

        // Not read every tick: a later change is not seen without an exec.
        env.set(21, b"RANK=3\0");
        tally.feed(&sample(0.2, vec![process(21, 20, "torchrun")]));
        assert_eq!(rank_of(&tally, 21), None);

        let mut execed = process(21, 20, "python3");
        execed.execed = true;
        tally.feed(&sample(0.3, vec![execed]));
        assert_eq!(rank_of(&tally, 21).as_deref(), Some("rank 3"));

        // Kept while it runs, even when the file can no longer be read.
        std::fs::remove_file(env.0.path().join("proc/21/environ")).unwrap();
        tally.feed(&sample(0.4, vec![process(21, 20, "python3")]));
        assert_eq!(rank_of(&tally, 21).as_deref(), Some("rank 3"));
    }

    #[test]
    fn an_unreadable_environment_is_no_rank_not_an_error() {
        let env = Environs::new();
        let mut tally = RunTally::new(100, &env.root());
        tally.feed(&sample(0.1, vec![process(31, 1, "python3")]));
        let summaries = tally.summaries();
        assert_eq!(summaries.len(), 1);
        assert_eq!(summaries[0].rank, None);
        assert_eq!(summaries[0].label(), "pid 31 (python3)");
    }
}
