//! A [`MachineView`] as Prometheus metrics (docs/serve-metrics.md lists them), in
//! the Prometheus text format or OpenMetrics, through `prometheus-client`. A figure
//! the view does not know is left out, never written as 0.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use memtriage_core::usecase::watch::MachineView;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// The exposition formats a scraper may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`: what curl and older scrapers get.
    PrometheusText,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
}

impl Format {
    /// OpenMetrics where the `Accept` header names it, as Prometheus' own does.
    pub fn negotiate(accept: Option<&str>) -> Self {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::PrometheusText,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::PrometheusText => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// The whole exposition of `view`, as seen at `now`.
pub fn encode(
    view: Arc<MachineView>,
    record: Option<RecordFigures>,
    format: Format,
    now: SystemTime,
) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(ViewMetrics { view, record, now }));
    let mut out = String::with_capacity(64 << 10);
    match format {
        Format::PrometheusText => {
            prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)?
        }
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry)?,
    }
    Ok(out)
}

#[derive(Debug)]
struct ViewMetrics {
    view: Arc<MachineView>,
    /// `--record`'s state, where it runs.
    record: Option<RecordFigures>,
    now: SystemTime,
}

/// How `serve --record` goes.
#[derive(Debug, Clone, Copy)]
pub struct RecordFigures {
    pub paused: bool,
    pub intervals: u64,
}

type Labels<'a> = Vec<(&'static str, Cow<'a, str>)>;

fn label<'a>(key: &'static str, value: impl Into<Cow<'a, str>>) -> (&'static str, Cow<'a, str>) {
    (key, value.into())
}

/// One metric family: its series are collected first, so a family with none is not
/// written at all.
struct Family<'a> {
    name: &'static str,
    help: &'static str,
    kind: MetricType,
    series: Vec<(Labels<'a>, Value)>,
}

#[derive(Clone, Copy)]
enum Value {
    Int(u64),
    Float(f64),
}

impl<'a> Family<'a> {
    fn gauge(name: &'static str, help: &'static str) -> Self {
        Family {
            name,
            help,
            kind: MetricType::Gauge,
            series: Vec::new(),
        }
    }

    /// `name` without `_total`: the encoder adds it.
    fn counter(name: &'static str, help: &'static str) -> Self {
        Family {
            name,
            help,
            kind: MetricType::Counter,
            series: Vec::new(),
        }
    }

    fn int(&mut self, labels: Labels<'a>, v: u64) {
        self.series.push((labels, Value::Int(v)));
    }

    fn float(&mut self, labels: Labels<'a>, v: f64) {
        if v.is_finite() {
            self.series.push((labels, Value::Float(v)));
        }
    }

    fn maybe(&mut self, labels: Labels<'a>, v: Option<u64>) {
        if let Some(v) = v {
            self.int(labels, v);
        }
    }

    fn write(self, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if self.series.is_empty() {
            return Ok(());
        }
        let mut metric = encoder.encode_descriptor(self.name, self.help, None, self.kind)?;
        for (labels, value) in &self.series {
            // An empty label is the same as an absent one; leave it out.
            let labels: Vec<(&str, &str)> = labels
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (*k, v.as_ref()))
                .collect();
            let mut m = metric.encode_family(&labels)?;
            match (self.kind, value) {
                (MetricType::Counter, Value::Int(v)) => {
                    m.encode_counter::<NoLabelSet, _, u64>(v, None)?
                }
                (MetricType::Counter, Value::Float(v)) => {
                    m.encode_counter::<NoLabelSet, _, f64>(v, None)?
                }
                (_, Value::Int(v)) => m.encode_gauge(v)?,
                (_, Value::Float(v)) => m.encode_gauge(v)?,
            }
        }
        Ok(())
    }
}

impl Collector for ViewMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for family in families(&self.view, self.now) {
            family.write(&mut encoder)?;
        }
        if let Some(r) = self.record {
            let mut paused = Family::gauge(
                "memtriage_record_paused",
                "1 while --record cannot write its database (a full disk); nothing written is lost.",
            );
            paused.int(vec![], u64::from(r.paused));
            paused.write(&mut encoder)?;
            let mut written = Family::counter(
                "memtriage_record_intervals",
                "Intervals --record wrote into its database.",
            );
            written.int(vec![], r.intervals);
            written.write(&mut encoder)?;
        }
        Ok(())
    }
}

fn seconds_since(then: SystemTime, now: SystemTime) -> f64 {
    now.duration_since(then)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn families(view: &MachineView, now: SystemTime) -> Vec<Family<'_>> {
    let mut out = Vec::new();
    groups(view, &mut out);
    cgroups(view, &mut out);
    oom(view, &mut out);
    machine(view, &mut out);
    files(view, &mut out);
    gpus(view, &mut out);
    doctor(view, &mut out);
    exporter(view, now, &mut out);
    out
}

fn groups<'a>(view: &'a MachineView, out: &mut Vec<Family<'a>>) {
    let mut processes = Family::gauge("memtriage_group_processes", "Live processes in the group.");
    let mut rss = Family::gauge(
        "memtriage_group_rss_bytes",
        "Resident bytes of the group's processes, summed (shared pages count in each).",
    );
    let mut pss = Family::gauge("memtriage_group_pss_bytes", "Proportional set size of the members read so far (see memtriage_group_pss_coverage_ratio).");
    let mut uss = Family::gauge(
        "memtriage_group_uss_bytes",
        "Private bytes of the members read so far.",
    );
    let mut swap = Family::gauge(
        "memtriage_group_swap_bytes",
        "Swapped-out bytes of the members read so far.",
    );
    let mut coverage = Family::gauge(
        "memtriage_group_pss_coverage_ratio",
        "Share of the group's processes with a PSS reading.",
    );
    let mut age = Family::gauge(
        "memtriage_group_pss_age_seconds",
        "Age of the oldest PSS reading behind the group's figure.",
    );
    let mut minor = Family::counter(
        "memtriage_group_minor_faults",
        "Minor page faults of the group's processes, ended ones included.",
    );
    let mut major = Family::counter(
        "memtriage_group_major_faults",
        "Major page faults (read from disk) of the group's processes, ended ones included.",
    );
    let mut gpu = Family::gauge(
        "memtriage_group_gpu_memory_bytes",
        "GPU memory the group holds, by NVML device index.",
    );
    for g in &view.groups {
        let l = || vec![label("group", g.name.as_str())];
        minor.int(l(), g.minor_faults);
        major.int(l(), g.major_faults);
        if !g.live {
            continue;
        }
        processes.int(l(), g.processes as u64);
        rss.int(l(), g.rss);
        pss.maybe(l(), g.pss);
        uss.maybe(l(), g.uss);
        swap.maybe(l(), g.swap);
        coverage.float(l(), g.pss_coverage);
        if let Some(a) = g.pss_age {
            age.float(l(), a);
        }
        for (index, used) in &g.gpu {
            gpu.maybe(
                vec![
                    label("group", g.name.as_str()),
                    label("gpu", index.to_string()),
                ],
                *used,
            );
        }
    }
    let mut folded = Family::gauge(
        "memtriage_groups_folded",
        "Groups folded into group=\"other\" by --max-groups at the last sample.",
    );
    if view.sampled_at.is_some() {
        folded.int(vec![], view.groups_folded as u64);
    }
    out.extend([
        processes, rss, pss, uss, swap, coverage, age, minor, major, gpu, folded,
    ]);
}

fn cgroups<'a>(view: &'a MachineView, out: &mut Vec<Family<'a>>) {
    let mut info = Family::gauge(
        "memtriage_cgroup_info",
        "What the cgroup's path says it is (1): pod UID, container id, Slurm job, systemd unit.",
    );
    let mut usage = Family::gauge(
        "memtriage_cgroup_memory_usage_bytes",
        "Bytes charged to the cgroup (memory.current, memory.usage_in_bytes).",
    );
    let mut limit = Family::gauge(
        "memtriage_cgroup_memory_limit_bytes",
        "The cgroup's own hard memory limit (absent when it has none).",
    );
    let mut peak = Family::gauge(
        "memtriage_cgroup_memory_peak_bytes",
        "Highest usage the cgroup reached (memory.peak, memory.max_usage_in_bytes).",
    );
    let mut events = Family::counter("memtriage_cgroup_oom_events", "The cgroup's memory events: memory.events (v2, counted in it and below it from kernel 5.2), v1 memory.oom_control (in it).");
    for c in &view.cgroups {
        let cg = || vec![label("cgroup", c.path.as_str())];
        let w = &c.workload;
        let opt = |v: &'a Option<String>| v.as_deref().unwrap_or("");
        info.int(
            vec![
                label("cgroup", c.path.as_str()),
                label(
                    "version",
                    match c.version {
                        memtriage_core::model::process::CgroupVersion::V1 => "1",
                        memtriage_core::model::process::CgroupVersion::V2 => "2",
                    },
                ),
                label("pod_uid", opt(&w.pod_uid)),
                label("container_id", opt(&w.container_id)),
                label("slurm_job", opt(&w.slurm_job)),
                label("slurm_step", opt(&w.slurm_step)),
                label("systemd_unit", opt(&w.systemd_unit)),
            ],
            1,
        );
        usage.maybe(cg(), c.usage);
        limit.maybe(cg(), c.limit.flatten());
        peak.maybe(cg(), c.peak);
        for (event, n) in &c.events {
            if event.starts_with("oom") {
                events.int(
                    vec![
                        label("cgroup", c.path.as_str()),
                        label("event", event.as_str()),
                    ],
                    *n,
                );
            }
        }
    }
    let mut dropped = Family::gauge(
        "memtriage_cgroups_dropped",
        "Cgroups left out by --max-cgroups at the last sample.",
    );
    if view.sampled_at.is_some() {
        dropped.int(vec![], view.cgroups_dropped as u64);
    }
    out.extend([info, usage, limit, peak, events, dropped]);
}

fn oom<'a>(view: &'a MachineView, out: &mut Vec<Family<'a>>) {
    let mut kills = Family::counter("memtriage_oom_kills", "Processes killed for memory since serve started, by cgroup, victim, workload, constraint, the cgroup whose limit was hit, killer and the sources that saw it.");
    for (k, n) in &view.oom.kills {
        kills.int(
            vec![
                label("cgroup", k.cgroup.as_str()),
                label("victim", k.victim.as_str()),
                label("pod_uid", k.pod_uid.as_str()),
                label("container_id", k.container_id.as_str()),
                label("slurm_job", k.slurm_job.as_str()),
                label("systemd_unit", k.systemd_unit.as_str()),
                label("constraint", k.constraint.as_str()),
                label("limit_cgroup", k.limit_cgroup.as_str()),
                label("killer", k.killer),
                label("source", k.source),
            ],
            *n,
        );
    }
    let mut anon = Family::gauge(
        "memtriage_oom_kill_victim_anon_rss_bytes",
        "Anonymous resident bytes of the last victim at the kill, as the kernel reported it.",
    );
    for ((cgroup, victim, killer), bytes) in &view.oom.last_anon_rss {
        anon.int(
            vec![
                label("cgroup", cgroup.as_str()),
                label("victim", victim.as_str()),
                label("killer", *killer),
            ],
            *bytes,
        );
    }
    let mut last = Family::gauge(
        "memtriage_oom_kill_last_timestamp_seconds",
        "Unix time of the last OOM kill seen.",
    );
    if let Some(t) = view.oom.last_kill_at {
        last.float(vec![], unix(t));
    }
    let mut up = Family::gauge(
        "memtriage_source_up",
        "1 when the source can be read, 0 when not (serve's log says why).",
    );
    up.int(
        vec![label("source", "kernel_log")],
        u64::from(view.oom.kernel_log_error.is_none()),
    );
    up.int(
        vec![label("source", "memory_events")],
        u64::from(view.oom.memory_events),
    );
    if view.sampled_at.is_some() {
        up.int(
            vec![label("source", "pss")],
            u64::from(view.sampler.pss_readable),
        );
    }
    up.int(
        vec![label("source", "nvml")],
        u64::from(view.gpus.is_some()),
    );
    out.extend([kills, anon, last, up]);
}

fn machine<'a>(view: &'a MachineView, out: &mut Vec<Family<'a>>) {
    let m = &view.machine;
    let mut stalled = Family::counter(
        "memtriage_memory_pressure_seconds",
        "Time tasks stalled waiting for memory (PSI), some or all at once (full).",
    );
    let mut avg10 = Family::gauge(
        "memtriage_memory_pressure_avg10_ratio",
        "Share of the last 10 s that tasks stalled on memory (PSI avg10 / 100).",
    );
    if let Some(p) = &m.pressure {
        for (kind, line) in [("some", &p.some), ("full", &p.full)] {
            if let Some(line) = line {
                stalled.float(vec![label("kind", kind)], line.total_us as f64 / 1e6);
                avg10.float(vec![label("kind", kind)], line.avg10 / 100.0);
            }
        }
    }
    let mut swap = Family::gauge("memtriage_swap_used_bytes", "Swap in use.");
    swap.maybe(vec![], m.swap_used);
    let mut thp = Family::gauge(
        "memtriage_thp_mode",
        "The transparent huge page setting in force (1).",
    );
    if let Some(mode) = &m.thp_enabled {
        thp.int(
            vec![label("setting", "enabled"), label("mode", mode.as_str())],
            1,
        );
    }
    if let Some(mode) = &m.thp_defrag {
        thp.int(
            vec![label("setting", "defrag"), label("mode", mode.as_str())],
            1,
        );
    }
    let mut thp_anon = Family::gauge(
        "memtriage_thp_anon_bytes",
        "Anonymous memory backed by transparent huge pages.",
    );
    thp_anon.maybe(vec![], m.thp_anon);
    let mut hugetlb = Family::gauge(
        "memtriage_hugetlb_pages",
        "hugetlbfs pool pages by page size and state.",
    );
    for pool in &m.hugetlb {
        let size = pool.page_size.to_string();
        let l =
            |state: &'static str| vec![label("size_bytes", size.clone()), label("state", state)];
        hugetlb.int(l("total"), pool.total);
        hugetlb.int(l("free"), pool.free);
        hugetlb.maybe(l("reserved"), pool.reserved);
    }
    let mut shm_size = Family::gauge(
        "memtriage_shm_size_bytes",
        "Size of /dev/shm, where DataLoader workers hand over batches.",
    );
    shm_size.maybe(vec![], m.shm_size);
    let mut shm_used = Family::gauge("memtriage_shm_used_bytes", "Bytes used in /dev/shm.");
    shm_used.maybe(vec![], m.shm_used);
    out.extend([
        stalled, avg10, swap, thp, thp_anon, hugetlb, shm_size, shm_used,
    ]);
}

fn files<'a>(view: &'a MachineView, out: &mut Vec<Family<'a>>) {
    let mut size = Family::gauge("memtriage_file_size_bytes", "Size of a watched file.");
    let mut cached = Family::gauge(
        "memtriage_file_cached_bytes",
        "Bytes of a watched file in the page cache.",
    );
    let mut t_size = Family::gauge(
        "memtriage_tensor_size_bytes",
        "Size of a tensor of a watched .safetensors file.",
    );
    let mut t_cached = Family::gauge(
        "memtriage_tensor_cached_bytes",
        "Bytes of the tensor in the page cache.",
    );
    for f in &view.files {
        let path = f.path.to_string_lossy();
        size.maybe(vec![label("path", path.clone())], f.size);
        cached.maybe(vec![label("path", path.clone())], f.cached);
        for t in &f.tensors {
            let l = || {
                vec![
                    label("path", path.clone()),
                    label("tensor", t.name.as_str()),
                ]
            };
            t_size.int(l(), t.size);
            t_cached.int(l(), t.cached);
        }
    }
    out.extend([size, cached, t_size, t_cached]);
}

fn gpus<'a>(view: &'a MachineView, out: &mut Vec<Family<'a>>) {
    let mut total = Family::gauge(
        "memtriage_gpu_memory_total_bytes",
        "The GPU's memory, by NVML device index.",
    );
    let mut used = Family::gauge(
        "memtriage_gpu_memory_used_bytes",
        "GPU memory in use, by NVML device index.",
    );
    for d in view.gpus.iter().flatten() {
        let l = || vec![label("gpu", d.index.to_string())];
        total.maybe(l(), d.total);
        used.maybe(l(), d.used);
    }
    out.extend([total, used]);
}

fn doctor<'a>(view: &'a MachineView, out: &mut Vec<Family<'a>>) {
    let mut finding = Family::gauge(
        "memtriage_doctor_finding",
        "A memtriage doctor finding that holds now (1), by id and severity.",
    );
    let mut ran = Family::gauge(
        "memtriage_doctor_last_run_timestamp_seconds",
        "Unix time doctor's checks last ran.",
    );
    if let Some((at, findings)) = &view.findings {
        ran.float(vec![], unix(*at));
        for (id, severity) in findings {
            finding.int(
                vec![
                    label("id", id.as_str()),
                    label("severity", severity.as_str()),
                ],
                1,
            );
        }
    }
    out.extend([finding, ran]);
}

fn exporter<'a>(view: &'a MachineView, now: SystemTime, out: &mut Vec<Family<'a>>) {
    let mut build = Family::gauge("memtriage_build_info", "memtriage's version (1).");
    build.int(vec![label("version", env!("CARGO_PKG_VERSION"))], 1);
    let mut age = Family::gauge(
        "memtriage_sample_age_seconds",
        "Age of the sample this scrape was served from.",
    );
    let mut duration = Family::gauge(
        "memtriage_sample_duration_seconds",
        "What the last sample took to read.",
    );
    let mut reads = Family::counter("memtriage_pss_reads", "smaps_rollup reads made for PSS.");
    let mut read_seconds = Family::counter(
        "memtriage_pss_read_seconds",
        "Time spent reading smaps_rollup (budget: 0.2% of a core).",
    );
    if let Some(at) = view.sampled_at {
        age.float(vec![], seconds_since(at, now));
        duration.float(vec![], view.sampler.last_duration.as_secs_f64());
        reads.int(vec![], view.sampler.pss_reads);
        read_seconds.float(vec![], view.sampler.pss_read_seconds);
    }
    out.extend([build, age, duration, reads, read_seconds]);
}
