//! Warning before the OOM kill: the trend of the job's tree memory against its
//! ceiling, sample by sample.
//!
//! - `ceiling`: what the tree can reach (`--limit`, the enclosing cgroup, MemAvailable)
//! - `fit`: the windowed line through the tree's memory and whether it grows steadily
//! - `watch`: [`GrowthWatch`], fed each sample: the warning, the episode of growth, the
//!   moment the tree nears its ceiling (pure, no I/O)
//! - `snapshot`: the tree read in full near the ceiling
//!
//! [`Monitor`] joins them for the run loop: one call per sample, one at the end.

pub mod ceiling;
pub mod fit;
pub mod pressure;
pub mod snapshot;
pub mod watch;

pub use watch::{GrowthWarning, GrowthWatch};

use super::python_hook::LinesReader;
use super::timeline_file::TimelineWriter;
use crate::diagnose::lines;
use crate::model::growth::{CeilingSnapshot, GrowthSummary};
use crate::model::killers::{OomKiller, PredictedVictim};
use crate::model::units::iec;
use crate::probe::killers;
use crate::probe::root::Root;
use crate::probe::system::read_meminfo;
use crate::sampler::Sample;

/// Where the one-line warning goes (the CLI prints it on stderr after `memtriage: `);
/// called on the run loop's thread.
pub type WarningSink = dyn Fn(&str) + Send + Sync;

/// The growth watch of one run, with what it reads and where it reports.
pub struct Monitor<'a> {
    watch: GrowthWatch,
    root: Root,
    job: i32,
    on_warning: Option<&'a WarningSink>,
    snapshot: Option<CeilingSnapshot>,
    /// The Python processes' lines, for the warning and the snapshot to name.
    lines: Option<LinesReader>,
    /// What the last warning said of the lines.
    warning_lines: Option<String>,
    /// The machine's OOM killers, read as the job started, and again when one came
    /// with the job.
    killers: Vec<OomKiller>,
    job_limit: Option<u64>,
    /// When the tree was last looked at for a killer that came with it (seconds),
    /// and the processes already looked up (one that could not be read is not read
    /// again every time).
    killers_checked_at: f64,
    killers_checked: Vec<i32>,
    /// systemd-oomd's pressure, where one runs, and what was said of it.
    pressure: Option<pressure::PressureWatch>,
    pressure_warning: Option<String>,
}

/// How often the tree is looked at for a killer that came with the job (seconds).
const KILLERS_CHECK_EVERY: f64 = 2.0;
/// The killers a job may start itself.
const KILLERS_IN_JOBS: [&str; 1] = ["raylet"];

impl<'a> Monitor<'a> {
    /// Reads the job's ceiling: call it as the job starts, its tree still empty.
    pub fn start(
        root: &Root,
        job: i32,
        job_limit: Option<u64>,
        on_warning: Option<&'a WarningSink>,
        lines: Option<LinesReader>,
        killers: Vec<OomKiller>,
    ) -> Self {
        let pressure = pressure::PressureWatch::of(&killers);
        Monitor {
            watch: GrowthWatch::new(job, ceiling::discover(root, job_limit, job, &killers)),
            killers,
            root: root.clone(),
            job,
            on_warning,
            snapshot: None,
            lines,
            warning_lines: None,
            job_limit,
            killers_checked_at: 0.0,
            killers_checked: Vec::new(),
            pressure,
            pressure_warning: None,
        }
    }

    /// A killer that came with the job (Ray's raylet, started by `ray.init()` in the
    /// job itself): the killers are read again and the ceiling with them. Returns
    /// them where they changed.
    pub fn killers_in_tree(&mut self, sample: &Sample) -> Option<Vec<OomKiller>> {
        if sample.t - self.killers_checked_at < KILLERS_CHECK_EVERY {
            return None;
        }
        self.killers_checked_at = sample.t;
        let new: Vec<i32> = sample
            .processes
            .iter()
            .filter(|p| KILLERS_IN_JOBS.contains(&p.comm.as_str()))
            .map(|p| p.pid)
            .filter(|pid| !self.killers_checked.contains(pid))
            .collect();
        if new.is_empty() {
            return None;
        }
        self.killers_checked.extend(new);
        self.killers = killers::find(&self.root, Some(self.job));
        if self.pressure.is_none() {
            self.pressure = pressure::PressureWatch::of(&self.killers);
        }
        self.watch.reset_ceiling(ceiling::discover(
            &self.root,
            self.job_limit,
            self.job,
            &self.killers,
        ));
        Some(self.killers.clone())
    }

    pub fn on_sample(&mut self, sample: &Sample, timeline_writer: Option<&mut TimelineWriter>) {
        let tick = self.watch.feed(sample);
        let mut timeline_writer = timeline_writer;
        let full = sample.system.as_ref().and_then(|s| s.psi_full_avg10);
        if let Some(line) = self.pressure.as_mut().and_then(|p| p.feed(sample.t, full)) {
            if let Some(sink) = self.on_warning {
                sink(&line);
            }
            if let Some(r) = timeline_writer.as_deref_mut() {
                r.event(sample.t, "warning", self.job, None, Some(&line));
            }
            self.pressure_warning = Some(line);
        }
        if let Some(mut warning) = tick.warning {
            warning.victim = self.victim(&warning, sample);
            self.watch.set_victim(warning.victim.clone());
            let mut line = warning.message();
            let lines = self.lines.as_ref().map(LinesReader::read);
            if let Some(most) = lines
                .as_ref()
                .and_then(|l| lines::headline_text(&l.processes))
            {
                line.push_str(&format!("; most under {most}"));
                self.warning_lines = Some(most);
            }
            if let Some(sink) = self.on_warning {
                sink(&line);
            }
            if let Some(r) = timeline_writer.as_deref_mut() {
                r.event(sample.t, "warning", self.job, None, Some(&line));
            }
        }
        if let Some(near) = tick.near_ceiling {
            let lines = self
                .lines
                .as_ref()
                .map(LinesReader::read)
                .unwrap_or_default();
            let snapshot = snapshot::take(&self.root, sample, near, &lines.processes);
            if let Some(r) = timeline_writer {
                let label = format!(
                    "the tree read in full at {} of its {} ceiling",
                    iec(near.tree_bytes),
                    iec(near.ceiling_bytes)
                );
                r.event(sample.t, "snapshot", self.job, None, Some(&label));
            }
            self.snapshot = Some(snapshot);
        }
    }

    /// Whom the killer the warning names would pick, by its own rule, with the job
    /// grown by what it will add before the killer acts.
    fn victim(&self, warning: &GrowthWarning, sample: &Sample) -> Option<PredictedVictim> {
        let kind = warning.ceiling.killer.as_ref()?.kind;
        let killer = self.killers.iter().find(|k| k.kind == kind)?;
        let job: Vec<i32> = sample.processes.iter().map(|p| p.pid).collect();
        let to_come = warning.ceiling.bytes.saturating_sub(warning.tree_bytes);
        let mem_total = read_meminfo(&self.root).ok()?.total?;
        crate::probe::victim::predict_victim(
            &self.root,
            &killer.victim,
            killer.pid,
            &job,
            to_come,
            mem_total,
        )
    }

    /// What the run's report keeps: the growth summary and the snapshot near the ceiling.
    pub fn finish(self) -> (Option<GrowthSummary>, Option<CeilingSnapshot>) {
        let mut summary = self.watch.summary();
        if let Some(line) = self.pressure_warning {
            summary
                .get_or_insert(GrowthSummary {
                    ceiling: None,
                    episode: None,
                    warning: None,
                    warnings: 0,
                    pressure_warning: None,
                })
                .pressure_warning = Some(line);
        }
        if let (Some(w), Some(most)) = (
            summary.as_mut().and_then(|s| s.warning.as_mut()),
            self.warning_lines,
        ) {
            w.message.push_str(&format!("; most under {most}"));
        }
        (summary, self.snapshot)
    }
}
