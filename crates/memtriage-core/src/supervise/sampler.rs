//! Samples the job's process tree at an interval.
//!
//! Every tick: each process's `stat` (RSS and faults, a few microseconds). PSS/USS
//! come from `smaps_rollup`, which walks page tables under the target's mmap lock
//! (measured: 30 ms on a 1.6 GiB process, and at 10 Hz on a 4 GiB process it stalled
//! the target's mmap calls up to 456 ms), so at most one process is read per tick,
//! within a budget of the wall time, the one whose faults moved most since its last
//! reading first. Between readings, minor faults (4 KiB each) track copy-on-write.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::model::run::{Peak, ProcessSummary, RecordedProcess, RecordedSample, SamplingStats};
use crate::parse::{smaps_rollup, stat};
use crate::probe::cgroup::CgroupDir;
use crate::probe::procdir::ProcDir;
use crate::probe::root::Root;
use crate::probe::system::{read_meminfo, read_pressure, read_vmstat, shm_usage};

/// Share of wall time that smaps_rollup reads may take.
const PSS_BUDGET_SHARE: f64 = 0.01;
/// Allowance on top of the share, so the first readings of a short job happen.
const PSS_BUDGET_ALLOWANCE: Duration = Duration::from_millis(150);

struct PssReading {
    pss: u64,
    uss: u64,
    at: f64,
    minflt_at: u64,
}

struct Tracked {
    dir: ProcDir,
    summary: ProcessSummary,
    alive: bool,
    rss: u64,
    last_pss: Option<PssReading>,
}

pub struct Sampler {
    root: Root,
    start: Instant,
    page_size: u64,
    supervisor: i32,
    tracked: HashMap<i32, Tracked>,
    order: Vec<i32>,
    cgroup: Option<CgroupDir>,
    children_files: bool,
    pub stats: SamplingStats,
    pss_spent: Duration,
    last_tick: Option<(f64, u64, u64)>,
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
}

fn update_opt(peak: &mut Option<Peak>, value: Option<u64>, at: f64) {
    if let Some(v) = value {
        peak.get_or_insert_with(Peak::default).update(v, at);
    }
}

impl Sampler {
    pub fn new(root: &Root, start: Instant, interval: Duration, cgroup: Option<CgroupDir>) -> Self {
        let supervisor = std::process::id() as i32;
        let children_files = root
            .path(&format!("/proc/{supervisor}/task/{supervisor}/children"))
            .exists();
        let first_cgroup_oom_kills = cgroup.as_ref().and_then(CgroupDir::oom_kills);
        Sampler {
            root: root.clone(),
            start,
            page_size: rustix::param::page_size() as u64,
            supervisor,
            tracked: HashMap::new(),
            order: Vec::new(),
            cgroup,
            children_files,
            stats: SamplingStats {
                interval_ms: interval.as_millis() as u64,
                ..SamplingStats::default()
            },
            pss_spent: Duration::ZERO,
            last_tick: None,
            peak_tree_rss: Peak::default(),
            peak_tree_pss: None,
            peak_shm_used: None,
            shm_size: None,
            peak_swap_used: None,
            peak_cgroup_usage: None,
            peak_minor_rate: 0.0,
            peak_major_rate: 0.0,
            peak_major_at: 0.0,
            first_cgroup_oom_kills,
            last_cgroup_oom_kills: first_cgroup_oom_kills,
            swap_in_out_start: None,
            swap_in_out_end: None,
            peak_psi_full_avg10: None,
        }
    }

    pub fn cgroup(&self) -> Option<&CgroupDir> {
        self.cgroup.as_ref()
    }

    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Descendants of memtriage: the job and every process under it, and orphans
    /// reparented to memtriage as their subreaper.
    fn discover(&self) -> Vec<i32> {
        if !self.children_files {
            return self.discover_by_scan();
        }
        let mut found = Vec::new();
        let mut queue = vec![self.supervisor];
        let mut seen = HashSet::new();
        while let Some(pid) = queue.pop() {
            let Ok(tasks) = std::fs::read_dir(self.root.path(&format!("/proc/{pid}/task"))) else {
                continue;
            };
            for task in tasks.flatten() {
                let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
                    continue;
                };
                for child in text
                    .split_ascii_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok())
                {
                    if seen.insert(child) {
                        found.push(child);
                        queue.push(child);
                    }
                }
            }
        }
        found
    }

    fn discover_by_scan(&self) -> Vec<i32> {
        let links = crate::probe::process::parent_links(&self.root).unwrap_or_default();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, ppid) in links {
            children.entry(ppid).or_default().push(pid);
        }
        let mut found = Vec::new();
        let mut queue = vec![self.supervisor];
        while let Some(pid) = queue.pop() {
            for &c in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
                found.push(c);
                queue.push(c);
            }
        }
        found
    }

    /// One sample, as `--record` writes it.
    pub fn tick(&mut self) -> RecordedSample {
        let t = self.now();
        self.stats.ticks += 1;
        for pid in self.discover() {
            if self.tracked.contains_key(&pid) {
                continue;
            }
            if let Ok(dir) = ProcDir::open(&self.root, pid) {
                self.tracked.insert(
                    pid,
                    Tracked {
                        dir,
                        summary: ProcessSummary::new(pid, t),
                        alive: true,
                        rss: 0,
                        last_pss: None,
                    },
                );
                self.order.push(pid);
            }
        }

        let (mut tree_rss, mut minflt_sum, mut majflt_sum) = (0u64, 0u64, 0u64);
        for pid in &self.order {
            let Some(tr) = self.tracked.get_mut(pid) else {
                continue;
            };
            if !tr.alive {
                continue;
            }
            let Some(s) = tr.dir.read("stat").ok().and_then(|b| stat::parse(&b).ok()) else {
                tr.alive = false;
                continue;
            };
            if s.state == 'Z' {
                tr.alive = false;
                continue;
            }
            tr.rss = s.rss_pages * self.page_size;
            // Every tick, not only at PSS readings (which are rationed): a worker is
            // told from an exec'd child by its executable.
            if let Ok(link) = tr.dir.read_link("exe") {
                tr.summary.exe = Some(crate::parse::text::escape_bytes(&link));
            }
            let sum = &mut tr.summary;
            sum.ppid = s.ppid;
            sum.comm = s.comm;
            sum.last_seen_seconds = t;
            sum.minor_faults = s.minflt;
            sum.major_faults = s.majflt;
            sum.peak_rss.update(tr.rss, t);
            // Before any reading: the kernel zeroes a child's fault counters at fork,
            // so a forked worker's own minor faults bound what it has copied since.
            let estimate = match &tr.last_pss {
                Some(r) => r.uss + s.minflt.saturating_sub(r.minflt_at) * self.page_size,
                None => s.minflt * self.page_size,
            };
            update_opt(&mut sum.peak_uss_estimate, Some(estimate), t);
            tree_rss += tr.rss;
            minflt_sum += s.minflt;
            majflt_sum += s.majflt;
        }
        self.peak_tree_rss.update(tree_rss, t);

        let pss_read = self.read_one_pss(t);

        // The tree's PSS: each live process's latest reading, once all have one.
        let alive: Vec<&Tracked> = self.tracked.values().filter(|tr| tr.alive).collect();
        let tree_pss =
            (!alive.is_empty() && alive.iter().all(|tr| tr.last_pss.is_some())).then(|| {
                alive
                    .iter()
                    .filter_map(|tr| tr.last_pss.as_ref())
                    .map(|r| r.pss)
                    .sum::<u64>()
            });
        if let Some(pss) = tree_pss {
            let before = self.peak_tree_pss.map(|p| p.bytes).unwrap_or(0);
            update_opt(&mut self.peak_tree_pss, Some(pss), t);
            if pss > before {
                let oldest = alive
                    .iter()
                    .filter_map(|tr| tr.last_pss.as_ref())
                    .map(|r| t - r.at)
                    .fold(0.0, f64::max);
                self.stats.peak_pss_max_age_seconds = oldest;
            }
        }

        let (minor_rate, major_rate) = match self.last_tick {
            Some((t0, min0, maj0)) if t > t0 => (
                minflt_sum.saturating_sub(min0) as f64 / (t - t0),
                majflt_sum.saturating_sub(maj0) as f64 / (t - t0),
            ),
            _ => (0.0, 0.0),
        };
        self.last_tick = Some((t, minflt_sum, majflt_sum));
        self.peak_minor_rate = self.peak_minor_rate.max(minor_rate);
        if major_rate > self.peak_major_rate {
            self.peak_major_rate = major_rate;
            self.peak_major_at = t;
        }

        let shm = shm_usage(&self.root).ok();
        let shm_used = shm.and_then(|s| s.used);
        self.shm_size = shm.and_then(|s| s.total).or(self.shm_size);
        update_opt(&mut self.peak_shm_used, shm_used, t);
        let swap_used = read_meminfo(&self.root)
            .ok()
            .and_then(|m| Some(m.swap_total?.saturating_sub(m.swap_free?)));
        update_opt(&mut self.peak_swap_used, swap_used, t);
        if let Ok(vm) = read_vmstat(&self.root) {
            if let (Some(i), Some(o)) = (vm.counter("pswpin"), vm.counter("pswpout")) {
                self.swap_in_out_start.get_or_insert((i, o));
                self.swap_in_out_end = Some((i, o));
            }
        }
        let cgroup_usage = self.cgroup.as_ref().and_then(CgroupDir::usage);
        update_opt(&mut self.peak_cgroup_usage, cgroup_usage, t);
        if let Some(k) = self.cgroup.as_ref().and_then(CgroupDir::oom_kills) {
            self.last_cgroup_oom_kills = Some(k);
        }
        let pressure = read_pressure(&self.root).ok().flatten();
        let psi_some = pressure
            .as_ref()
            .and_then(|p| p.some.as_ref())
            .map(|l| l.avg10);
        if let Some(full) = pressure
            .as_ref()
            .and_then(|p| p.full.as_ref())
            .map(|l| l.avg10)
        {
            let peak = self.peak_psi_full_avg10.get_or_insert(0.0);
            *peak = peak.max(full);
        }

        let processes = self
            .order
            .iter()
            .filter_map(|pid| self.tracked.get(pid))
            .filter(|tr| tr.alive)
            .map(|tr| {
                let fresh = pss_read.filter(|(pid, _, _)| *pid == tr.summary.pid);
                RecordedProcess {
                    pid: tr.summary.pid,
                    ppid: tr.summary.ppid,
                    comm: tr.summary.comm.clone(),
                    rss: tr.rss,
                    minflt: tr.summary.minor_faults,
                    majflt: tr.summary.major_faults,
                    pss: fresh.map(|(_, pss, _)| pss),
                    uss: fresh.map(|(_, _, uss)| uss),
                }
            })
            .collect();
        RecordedSample {
            t,
            processes,
            tree_rss,
            tree_pss,
            shm_used,
            swap_used,
            cgroup_usage,
            psi_some_avg10: psi_some,
            minor_faults_per_second: minor_rate,
            major_faults_per_second: major_rate,
        }
    }

    /// Reads smaps_rollup of the process whose memory moved most since its last
    /// reading (never-read processes first), if the time budget allows.
    fn read_one_pss(&mut self, t: f64) -> Option<(i32, u64, u64)> {
        let budget = self.start.elapsed().mul_f64(PSS_BUDGET_SHARE) + PSS_BUDGET_ALLOWANCE;
        if self.pss_spent > budget {
            return None;
        }
        let pid = self
            .order
            .iter()
            .filter_map(|pid| self.tracked.get(pid))
            .filter(|tr| tr.alive)
            .max_by_key(|tr| match &tr.last_pss {
                None => u64::MAX,
                Some(r) => tr.summary.minor_faults.saturating_sub(r.minflt_at) + 1,
            })
            .map(|tr| tr.summary.pid)?;
        let tr = self.tracked.get_mut(&pid)?;
        let began = Instant::now();
        let bytes = tr.dir.read("smaps_rollup").ok();
        let cost = began.elapsed();
        self.pss_spent += cost;
        self.stats.pss_readings += 1;
        self.stats.pss_read_seconds += cost.as_secs_f64();
        self.stats.pss_read_max_ms = self.stats.pss_read_max_ms.max(cost.as_secs_f64() * 1000.0);
        let rollup = bytes.and_then(|b| smaps_rollup::parse(&b))?;
        let uss = rollup.uss();
        let exe = tr
            .dir
            .read_link("exe")
            .ok()
            .map(|b| crate::parse::text::escape_bytes(&b));
        let sum = &mut tr.summary;
        sum.exe = exe.or(sum.exe.take());
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
        tr.last_pss = Some(PssReading {
            pss: rollup.pss,
            uss,
            at: t,
            minflt_at: sum.minor_faults,
        });
        Some((pid, rollup.pss, uss))
    }

    /// Summaries of every process seen, in the order they appeared.
    pub fn summaries(&self) -> Vec<ProcessSummary> {
        self.order
            .iter()
            .filter_map(|pid| self.tracked.get(pid))
            .map(|tr| tr.summary.clone())
            .collect()
    }

    pub fn pids(&self) -> Vec<i32> {
        self.order.clone()
    }
}
