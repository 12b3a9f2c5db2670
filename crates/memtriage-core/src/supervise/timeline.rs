//! What `memtriage run` keeps of the samples it consumes: peaks of the tree's
//! memory, machine-wide figures while the job ran, one summary per process, and
//! what sampling cost. Fed one [`Sample`] at a time; the sampler keeps none of it.

use std::collections::HashMap;

use crate::model::run::{Peak, ProcessSummary, RecordedProcess, RecordedSample, SamplingStats};
use crate::sampler::Sample;

#[derive(Debug, Default)]
pub struct RunTimeline {
    pub stats: SamplingStats,
    pub peak_tree_rss: Peak,
    pub peak_tree_pss: Option<Peak>,
    pub peak_shm_used: Option<Peak>,
    pub shm_size: Option<u64>,
    pub peak_swap_used: Option<Peak>,
    pub peak_cgroup_usage: Option<Peak>,
    pub peak_minor_rate: f64,
    pub peak_major_rate: f64,
    pub peak_major_at: f64,
    pub first_cgroup_oom_kills: Option<u64>,
    pub last_cgroup_oom_kills: Option<u64>,
    pub swap_in_out_start: Option<(u64, u64)>,
    pub swap_in_out_end: Option<(u64, u64)>,
    pub peak_psi_full_avg10: Option<f64>,
    summaries: HashMap<i32, ProcessSummary>,
    /// Pids in the order first seen.
    order: Vec<i32>,
}

fn update_opt(peak: &mut Option<Peak>, value: Option<u64>, at: f64) {
    if let Some(v) = value {
        peak.get_or_insert_with(Peak::default).update(v, at);
    }
}

impl RunTimeline {
    pub fn new(interval_ms: u64) -> Self {
        RunTimeline {
            stats: SamplingStats {
                interval_ms,
                ..SamplingStats::default()
            },
            ..RunTimeline::default()
        }
    }

    pub fn feed(&mut self, sample: &Sample) {
        let t = sample.t;
        self.stats.ticks += 1;
        for p in &sample.processes {
            let sum = self.summaries.entry(p.pid).or_insert_with(|| {
                self.order.push(p.pid);
                ProcessSummary::new(p.pid, t)
            });
            if p.execed {
                // Never report a reading of the image before exec (a wrapper
                // script's shell, or memtriage between fork and exec).
                *sum = ProcessSummary::new(p.pid, sum.first_seen_seconds);
            }
            sum.ppid = p.ppid;
            sum.comm.clone_from(&p.comm);
            if p.exe.is_some() {
                sum.exe.clone_from(&p.exe);
            }
            sum.last_seen_seconds = t;
            sum.minor_faults = p.minor_faults;
            sum.major_faults = p.major_faults;
            match &mut sum.peak_rss {
                Some(peak) => peak.update(p.rss, t),
                None => {
                    sum.peak_rss = Some(Peak {
                        bytes: p.rss,
                        at_seconds: t,
                    })
                }
            }
            update_opt(&mut sum.peak_uss_estimate, Some(p.uss_estimate), t);
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
        self.peak_tree_rss.update(sample.total_rss(), t);

        if let Some(attempt) = &sample.pss_attempt {
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
}

/// A sample as `--record` writes it: PSS and USS only where that tick read them.
pub fn recorded(sample: &Sample) -> RecordedSample {
    let system = sample.system.unwrap_or_default();
    RecordedSample {
        t: sample.t,
        processes: sample
            .processes
            .iter()
            .map(|p| RecordedProcess {
                pid: p.pid,
                ppid: p.ppid,
                comm: p.comm.clone(),
                rss: p.rss,
                minflt: p.minor_faults,
                majflt: p.major_faults,
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
    }
}
