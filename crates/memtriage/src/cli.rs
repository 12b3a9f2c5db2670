//! Command-line surface. Option values arrive typed (`crate::values`), parsed once.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use memtriage_core::usecase::doctor::Profile;
use memtriage_core::usecase::inspect::SortKey;
use memtriage_core::usecase::run::DEFAULT_INTERVAL;

use crate::render::style::ColorChoice;
use crate::values::{
    profile_parser, sort_parser, ByteOffset, ByteSize, GroupSpec, Interval, MemoryLimit,
    ThreadCount,
};

#[derive(Debug, Parser)]
#[command(
    name = "memtriage",
    version,
    about = "Measure, supervise and diagnose the memory of ML jobs on Linux",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// When to colour output: auto (a terminal, and NO_COLOR unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Read /proc, /sys and /dev below this directory instead of / (captured trees, tests).
    #[arg(long, global = true, hide = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One snapshot of processes: RSS, PSS, USS, swap, huge pages, faults, OOM score, cgroup
    Inspect(InspectArgs),
    /// Audit this machine's memory settings for ML jobs; exits 1 on an error finding
    Doctor(DoctorArgs),
    /// Run a job, watch its memory, and say why it died; exits with the job's code
    Run(RunArgs),
    /// Summarise a timeline written by `run --record`, or draw it as HTML
    Report(ReportArgs),
    /// Diagnose a saved log (dmesg, journalctl, pod logs, Slurm output, a script's output)
    Explain(ExplainArgs),
    /// Explain a CUDA out-of-memory from a torch memory snapshot: fragmentation or real demand
    ExplainSnapshot(ExplainSnapshotArgs),
    /// How much of files is in the page cache (per tensor for .safetensors), and who maps them
    Cache(CacheArgs),
    /// Read files into the page cache at the disk's speed; --lock pins them in memory
    Warm(WarmArgs),
    /// Drop files' pages from the page cache
    Evict(EvictArgs),
    /// Benchmarks of this machine
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Export this machine's memory to Prometheus: process groups, cgroups, OOM kills by pod/job
    Serve(ServeArgs),
    /// Live view of every process: faults, RSS, PSS, growth, GPU, with findings beside them
    Top(TopArgs),
    /// Keep the machine's memory history in a bounded SQLite database
    Record(RecordArgs),
    /// Explain, from the record, a death nobody supervised (the latest, or PID's)
    Why(WhyArgs),
}

#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The process whose death to explain (default: the most recent death recorded).
    #[arg(value_name = "PID")]
    pub pid: Option<i32>,

    /// The record (default: the one `memtriage record` writes for this user).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// Only deaths this recent (2h, 30m, 1d).
    #[arg(long, value_name = "AGE")]
    pub since: Option<crate::values::Since>,

    /// The explanation as JSON (schema memtriage.why/v1; memtriage.slurm-job/v1 with
    /// --slurm-job).
    #[arg(long)]
    pub json: bool,

    /// A Slurm job's death, explained on the node it ran on: the kernel's reports of
    /// the kills in its cgroups, Slurm's record of it, its output.
    #[arg(long, value_name = "JOBID", conflicts_with_all = ["pid", "since"])]
    pub slurm_job: Option<u64>,

    /// With --slurm-job: append the verdict to the job's own output file, as the job's
    /// owner (what deploy/slurm/epilog runs); says on stderr what it did.
    #[arg(long, requires = "slurm_job")]
    pub epilog: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The database (default: /var/lib/memtriage/history.db as root, else
    /// $XDG_STATE_HOME/memtriage/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// How often an interval is recorded.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub interval: Interval,

    /// How long history is kept (7d, 12h, 90m).
    #[arg(long, value_name = "AGE", default_value = "7d")]
    pub retain: crate::values::Retention,

    /// The most the database may take; the oldest history goes first. A recorder
    /// that runs for good must be bounded: 1G by default.
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub max_size: Option<ByteSize>,
}

#[derive(Debug, Args)]
pub struct TopArgs {
    /// Refresh interval (the keys + and - change it live).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub interval: Interval,

    /// Sort by: major-faults, minor-faults, rss, pss, uss, swap, gpu, growth.
    #[arg(long, value_name = "KEY", default_value = "rss")]
    pub sort: crate::render::top::app::SortKey,

    /// Start in tree mode: workers folded into their job with totals.
    #[arg(long)]
    pub tree: bool,

    /// Show only processes whose name, user or pid contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,

    /// How far back growth rates and sparklines look.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub window: Interval,

    /// Print one frame (after two samples, so rates are known) and exit.
    #[arg(long, conflicts_with = "iterations")]
    pub once: bool,

    /// Print N frames, one per interval, and exit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: Option<u64>,

    /// With --once or --iterations: one JSON object per frame (schema memtriage.top/v1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Anything beyond loopback is your choice to make; secure
    /// it with --web-config.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9947")]
    pub listen: String,

    /// How processes are grouped: `job` (a process and its descendants, the default),
    /// `cgroup` (one group per memory cgroup), or NAME=REGEX, repeated (processes whose
    /// command line matches REGEX form group NAME; first match wins, the rest by job).
    #[arg(long, value_name = "SPEC")]
    pub group: Vec<GroupSpec>,

    /// Most process groups exported; the smallest beyond it fold into group="other".
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..=100_000))]
    pub max_groups: u64,

    /// Most cgroups exported (largest usage first).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_cgroups: usize,

    /// How often processes are sampled (scrapes read the latest sample).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub interval: Interval,

    /// How long the series of an ended group stay (so its last faults are scraped).
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub grace: Interval,

    /// A file whose page-cache residency is exported (a model's weights), repeated.
    #[arg(long, value_name = "PATH")]
    pub watch_file: Vec<PathBuf>,

    /// Also export residency per tensor of watched .safetensors files.
    #[arg(long, requires = "watch_file")]
    pub watch_tensors: bool,

    /// A log where userspace OOM killers write (systemd-oomd, earlyoom), e.g.
    /// /var/log/syslog; repeated.
    #[arg(long, value_name = "PATH")]
    pub killer_log: Vec<PathBuf>,

    /// Prometheus exporter-toolkit web config: TLS and basic auth (bcrypt).
    #[arg(long, value_name = "FILE")]
    pub web_config: Option<PathBuf>,

    /// The doctor profile whose findings are exported.
    #[arg(long, value_parser = profile_parser(), default_value = "training")]
    pub profile: Profile,

    /// How often doctor's checks run.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub doctor_interval: Interval,

    /// Do not run doctor's checks.
    #[arg(long)]
    pub no_doctor: bool,

    /// Also keep the machine's history in this database, as `memtriage record` does,
    /// on the exporter's own sampler (one process); `memtriage why --db PATH` reads it.
    #[arg(long, value_name = "PATH")]
    pub record: Option<PathBuf>,

    /// With --record: how long history is kept.
    #[arg(long, value_name = "AGE", default_value = "7d", requires = "record")]
    pub record_retain: crate::values::Retention,

    /// With --record: the most the database may take (1G by default); the oldest
    /// history goes first.
    #[arg(long, value_name = "SIZE", default_value = "1G", requires = "record")]
    pub record_max_size: Option<ByteSize>,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Process ids to inspect.
    #[arg(value_name = "PID")]
    pub pids: Vec<i32>,

    /// Processes whose name or command line contains PATTERN.
    #[arg(long, value_name = "PATTERN", conflicts_with = "all")]
    pub name: Option<String>,

    /// Every process on the machine, one row each, with PSS and USS (like smem).
    #[arg(long, conflicts_with = "pids")]
    pub all: bool,

    /// Each process and all its descendants, with totals and copy-on-write findings.
    #[arg(long, conflicts_with = "all")]
    pub tree: bool,

    /// Memory regions grouped by kind and by mapped file (reads the full smaps).
    #[arg(long, conflicts_with = "all")]
    pub maps: bool,

    /// Order of rows.
    #[arg(long, value_parser = sort_parser(), default_value = "pss")]
    pub sort: SortKey,

    /// Machine-readable output (schema memtriage.inspect/v1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// What the machine is for; changes what is recommended.
    #[arg(long, value_parser = profile_parser(), default_value = "training")]
    pub profile: Profile,

    /// Machine-readable output (schema memtriage.doctor/v1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(trailing_var_arg = true)]
pub struct RunArgs {
    /// Run the job in a new memory cgroup with this limit (e.g. 4G, 512M), as a
    /// container or Slurm job would; removed afterwards.
    #[arg(long, value_name = "SIZE")]
    pub limit: Option<MemoryLimit>,

    /// Time between samples of the job's processes, 10ms to 1h (e.g. 500ms, 2s).
    #[arg(long, value_name = "DURATION", default_value_t = Interval(DEFAULT_INTERVAL))]
    pub interval: Interval,

    /// Write the timeline (JSON lines, memtriage.record/v1) to FILE.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Print the summary as JSON (memtriage.run/v1) on stderr instead of text.
    #[arg(long)]
    pub json: bool,

    /// Also write the report as JSON (memtriage.run/v1) to FILE, apart from
    /// whatever the job prints.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Set the job's oom_score_adj (-1000..1000; inherited by its workers): higher
    /// makes it the OOM killer's first choice, lower protects it (needs
    /// CAP_SYS_RESOURCE to go below the current value).
    #[arg(long, value_name = "N", allow_hyphen_values = true,
          value_parser = clap::value_parser!(i32).range(-1000..=1000))]
    pub oom_score_adj: Option<i32>,

    /// Count page faults and context switches of the whole job, and dTLB misses where
    /// the CPU's counters are exposed (perf_event_open).
    #[arg(long)]
    pub perf: bool,

    /// Record who sends the signals that end the job's processes (the kernel's
    /// signal_generate tracepoint, in a tracefs instance of the run's own, removed
    /// afterwards): the verdict then names the sender of a SIGTERM or SIGKILL. Needs
    /// root and tracefs mounted.
    #[arg(long)]
    pub trace_signals: bool,

    /// No CUDA out-of-memory snapshot. By default memtriage's startup hook (first on
    /// the job's PYTHONPATH) makes a Python job that imports torch record the CUDA
    /// allocator's history from CUDA's first use and, on a CUDA out-of-memory, save
    /// its snapshot (beside --record FILE, in FILE.cuda-oom/, else in a temporary
    /// directory) for the summary to explain. The job's code is never changed.
    #[arg(long)]
    pub no_cuda_snapshot: bool,

    /// Do not measure where each Python process's memory grew, line by line. By
    /// default the startup hook does, in every Python process of the job (forked and
    /// spawned workers, ranks), and the summary names the lines that grew most, even
    /// for a process the kernel killed.
    #[arg(long)]
    pub no_python_lines: bool,

    /// The command and its arguments, after `--`.
    #[arg(required = true, value_name = "CMD", allow_hyphen_values = true)]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A file written by `memtriage run --record FILE`.
    #[arg(
        value_name = "FILE",
        required_unless_present = "db",
        conflicts_with = "db"
    )]
    pub file: Option<PathBuf>,

    /// Draw a window of the machine's history from this `memtriage record` database
    /// instead (with --html).
    #[arg(long, value_name = "PATH", requires = "html")]
    pub db: Option<PathBuf>,

    /// With --db: the window's start, as an age (2h: two hours ago; default: the
    /// record's first interval).
    #[arg(long, value_name = "AGE", requires = "db")]
    pub from: Option<crate::values::Retention>,

    /// With --db: the window's end, as an age (default: now).
    #[arg(long, value_name = "AGE", requires = "db")]
    pub to: Option<crate::values::Retention>,

    /// With --db: one job's processes and memory (a name `why` or the jobs table gives).
    #[arg(long, value_name = "JOB", requires = "db")]
    pub job: Option<String>,

    /// Write a self-contained HTML page with charts of memory and faults over time.
    #[arg(long, value_name = "OUT", conflicts_with = "json")]
    pub html: Option<PathBuf>,

    /// Print the recorded run's final report (schema memtriage.run/v1), as `run --json` does.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The logs to read: files (plain, .gz or .zst), directories (their files), `-`
    /// for standard input; nothing reads standard input (when it is not a terminal).
    /// Several are read at once, one report each and a summary.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Machine-readable output (schema memtriage.explain/v1; with --rules,
    /// memtriage.rules/v1). For several logs, JSON lines: one report per log (or
    /// {"source", "error"}), then the summary (memtriage.explain-summary/v1).
    #[arg(long)]
    pub json: bool,

    /// List the rules logs are read with (id, class, severity, certainty, and the
    /// literals a line must hold for the rule to be tried) instead of reading a log.
    #[arg(long, conflicts_with = "files")]
    pub rules: bool,
}

#[derive(Debug, Args)]
pub struct ExplainSnapshotArgs {
    /// A pickle written by torch.cuda.memory._dump_snapshot (or by `memtriage run` on a
    /// CUDA out-of-memory).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The size the failed allocation asked for ("Tried to allocate 2.00 GiB"), for a
    /// snapshot saved without history, which does not record it.
    #[arg(long, value_name = "SIZE")]
    pub requested: Option<crate::values::ByteSize>,

    /// The GPU the allocation failed on (with --requested).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "requested")]
    pub device: u32,

    /// Machine-readable output (schema memtriage.cuda-snapshot/v1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Files or directories (walked recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// List every tensor of .safetensors files, not only the counts.
    #[arg(long)]
    pub tensors: bool,

    /// Skip finding which processes map the files (that reads every process's maps).
    #[arg(long)]
    pub no_mappers: bool,

    /// Machine-readable output (schema memtriage.cache/v1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WarmArgs {
    /// Files or directories (walked recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Reader threads per file: several keep the disk's queue full (measured here: 4
    /// threads 2.2-2.4 s for a cold 4 GiB file, 2 threads 2.3-2.9 s, 1 thread 2.9-3.9 s).
    #[arg(long, default_value = "4", value_name = "N")]
    pub threads: ThreadCount,

    /// Start of the range to warm in each file (e.g. 1G).
    #[arg(long, value_name = "SIZE")]
    pub offset: Option<ByteOffset>,

    /// Length of the range to warm in each file (default: to the end). The kernel's
    /// readahead caches a window or two past its end.
    #[arg(long, value_name = "SIZE")]
    pub length: Option<ByteSize>,

    /// After warming, map and mlock the files and hold them until SIGINT/SIGTERM.
    #[arg(long)]
    pub lock: bool,

    /// With --lock: the most to lock; refuse above it.
    #[arg(long, value_name = "SIZE", requires = "lock")]
    pub max: Option<ByteSize>,

    /// With --lock: ask for transparent huge pages on the mappings (MADV_HUGEPAGE).
    #[arg(long, requires = "lock")]
    pub hugepages: bool,

    /// Machine-readable output (schema memtriage.warm/v1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EvictArgs {
    /// Files or directories (walked recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Write each file's dirty pages back first (fdatasync), so that they are dropped
    /// too; without it, pages not yet on disk stay cached and are reported.
    #[arg(long)]
    pub sync: bool,

    /// Machine-readable output (schema memtriage.evict/v1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Load a checkpoint each way (read, mmap, populate, huge pages, warm), cold and hot,
    /// against this machine's disk and memory speed
    Load(BenchLoadArgs),
}

#[derive(Debug, Args)]
pub struct BenchLoadArgs {
    /// A checkpoint to load; without one, a synthetic .safetensors file is written.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Size of the synthetic checkpoint.
    #[arg(
        long,
        default_value = "2G",
        value_name = "SIZE",
        conflicts_with = "file"
    )]
    pub size: ByteSize,

    /// Where to write the synthetic checkpoint (on the disk to measure, not tmpfs).
    #[arg(
        long,
        default_value = "/var/tmp",
        value_name = "DIR",
        conflicts_with = "file"
    )]
    pub dir: PathBuf,

    /// Machine-readable output (schema memtriage.bench-load/v1).
    #[arg(long)]
    pub json: bool,
}
