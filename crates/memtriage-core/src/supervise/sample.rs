//! Sampling the job while it runs: the engine's sampler on the job's tree (and its
//! cgroup), each sample kept in the run's timeline, the recording and the growth
//! watch; an exec or a failure line is sampled at once; the loop ends when the job's
//! main process is reaped.

use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

use super::child::Reaped;
use super::gpu_events::GpuEventWatch;
use super::start::Job;
use super::tally::RunTally;
use super::{growth, limit, timeline_file, Config, Event};
use crate::model::growth::{CeilingSnapshot, GrowthSummary};
use crate::model::killers::OomKiller;
use crate::model::process::CgroupMemory;
use crate::probe::cgroup::{self, CgroupDir, CgroupReader};
use crate::probe::root::Root;
use crate::sampler::{PssBudget, Sample, SamplerConfig, SamplerThread, Scope};

/// The least time between two samples taken because a process of the job exec'd.
const EXEC_SAMPLE_SPACING: Duration = Duration::from_millis(50);

/// The sampling of one run, while the job runs.
pub(super) struct Sampling<'a> {
    sampler: Option<SamplerThread>,
    tally: RunTally,
    growth: growth::Monitor<'a>,
    last_exec_sample: Option<Instant>,
    kept: Around,
}

/// What is read around the samples, for the report.
pub(super) struct Around {
    /// The cgroup the job was started in, without a limit of its own.
    pub enclosing: Option<CgroupDir>,
    /// The other processes in it as the job started.
    pub others_at_start: Option<usize>,
    pub gpu_events: Option<GpuEventWatch>,
    /// The machine's OOM killers as the job started.
    pub killers: Vec<OomKiller>,
}

/// The memory cgroup the job runs in. A job that already exited reads as the root
/// cgroup (its `/proc/PID/cgroup` is gone or says `/`): it was forked into memtriage's
/// own, which is read instead, never the root's figures taken for the job's.
fn job_cgroup(root: &Root, pid: i32) -> Option<CgroupMemory> {
    let mut reader = CgroupReader::discover(root);
    let job = reader.for_pid(pid).ok().flatten();
    if job.as_ref().is_some_and(|cg| cg.path != "/") {
        return job;
    }
    let own = cgroup::own_membership(root).ok()?;
    reader.for_membership(&own).ok().flatten()
}

/// What sampling kept once the job ended.
pub(super) struct Sampled {
    pub tally: RunTally,
    pub growth: Option<GrowthSummary>,
    pub near_ceiling: Option<CeilingSnapshot>,
    pub around: Around,
}

impl<'a> Sampling<'a> {
    /// Starts the sampler, which sends its samples on `events`. The job is running by
    /// now: without a sampler (said in the job's notes) it is still supervised to its end.
    pub fn start(root: &Root, config: &'a Config, job: &mut Job, events: Sender<Event>) -> Self {
        let watch = job
            .cgroup
            .as_ref()
            .map(limit::JobCgroup::watch)
            .or_else(|| job_cgroup(root, job.pid).map(|cg| CgroupDir::of(&cg)));
        let enclosing = job.cgroup.is_none().then(|| watch.clone()).flatten();
        let others_at_start = enclosing
            .as_ref()
            .and_then(|cg| super::collect::others_in(root, cg, &[job.pid]));
        let sampler = SamplerThread::spawn(
            SamplerConfig {
                scope: Scope::Supervised,
                interval: config.interval,
                pss: Some(PssBudget::DEFAULT),
                system: true,
                exe: true,
                cgroup: watch,
                gpu: true,
                keep_open: crate::sampler::KEEP_OPEN_UP_TO,
                skip_unchanged: false,
                epoch: job.start,
                root: root.clone(),
            },
            move |sample| events.send(Event::Sample(Box::new(sample))).is_ok(),
        );
        let sampler = match sampler {
            Ok(s) => Some(s),
            Err(e) => {
                job.notes.push(format!(
                    "memory was not sampled: the sampling thread could not start ({e})"
                ));
                None
            }
        };
        let gpu_events = GpuEventWatch::start(job.start);
        let killers = crate::probe::killers::find(root, Some(job.pid));
        Sampling {
            sampler,
            tally: RunTally::new(config.interval.as_millis() as u64, root),
            growth: growth::Monitor::start(
                root,
                job.pid,
                config.limit,
                config.on_warning.as_deref(),
                job.python_hook.as_ref().and_then(|h| h.lines_reader()),
                killers.clone(),
            ),
            last_exec_sample: None,
            kept: Around {
                enclosing,
                others_at_start,
                gpu_events,
                killers,
            },
        }
    }

    fn on_sample(
        &mut self,
        sample: Sample,
        timeline_writer: &mut Option<timeline_file::TimelineWriter>,
    ) {
        self.tally.feed(&sample);
        if let Some(r) = timeline_writer.as_mut() {
            r.sample(&self.tally.recorded(&sample));
        }
        if let Some(killers) = self.growth.killers_in_tree(&sample) {
            self.kept.killers = killers;
        }
        self.growth.on_sample(&sample, timeline_writer.as_mut());
    }

    /// Takes the events as they arrive until the job's main process is reaped, and
    /// returns how it ended; every process reaped meanwhile goes to `reaped`.
    pub fn until_exit(
        &mut self,
        arrived: &Receiver<Event>,
        job: &mut Job,
        reaped: &mut Vec<Reaped>,
    ) -> Reaped {
        loop {
            match arrived.recv() {
                Ok(Event::Sample(sample)) => self.on_sample(*sample, &mut job.timeline_writer),
                Ok(Event::Reaped(r)) => {
                    if let Some(rec) = job.timeline_writer.as_mut() {
                        let t = job.start.elapsed().as_secs_f64();
                        rec.event(t, "exit", r.pid, Some(r.outcome), None);
                    }
                    reaped.push(r);
                    if r.pid == job.pid {
                        return r;
                    }
                }
                Ok(Event::Exec) => self.on_exec(),
                Ok(Event::FailureLine(line)) => {
                    if let Some(s) = &self.sampler {
                        s.sample_now();
                    }
                    record_failure_line(job, &line);
                }
                // The reaper saw no child at all: treat as an exit we did not see.
                Ok(Event::ReaperDone) | Err(_) => return Reaped::unseen(job.pid),
            }
        }
    }

    fn on_exec(&mut self) {
        // Bounded: a script that execs a thousand commands costs at most one extra
        // sample per EXEC_SAMPLE_SPACING.
        if self
            .last_exec_sample
            .is_none_or(|t: Instant| t.elapsed() >= EXEC_SAMPLE_SPACING)
        {
            if let Some(s) = &self.sampler {
                s.sample_now();
            }
            self.last_exec_sample = Some(Instant::now());
        }
    }

    /// Stops the sampler once the job has ended. The tick in progress, if any, is
    /// finished and kept: the last sample is in the tally before the reaped
    /// processes' figures are joined to it. Exits that arrived meanwhile go to `reaped`.
    pub fn stop(
        mut self,
        arrived: &Receiver<Event>,
        job: &mut Job,
        reaped: &mut Vec<Reaped>,
    ) -> Sampled {
        if let Some(Err(e)) = self.sampler.take().map(SamplerThread::stop) {
            job.notes.push(format!("memory sampling ended early: {e}"));
        }
        while let Ok(event) = arrived.try_recv() {
            match event {
                Event::Sample(sample) => self.on_sample(*sample, &mut job.timeline_writer),
                Event::Reaped(r) => reaped.push(r),
                Event::FailureLine(line) => record_failure_line(job, &line),
                Event::Exec => {}
                Event::ReaperDone => {}
            }
        }
        let (growth, near_ceiling) = self.growth.finish();
        Sampled {
            tally: self.tally,
            growth,
            near_ceiling,
            around: self.kept,
        }
    }
}

fn record_failure_line(job: &mut Job, line: &str) {
    if let Some(r) = job.timeline_writer.as_mut() {
        let t = job.start.elapsed().as_secs_f64();
        r.event(t, "failure-line", job.pid, None, Some(line));
    }
}
