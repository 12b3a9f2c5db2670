//! `memtriage serve`: the engine's watch of the machine as a Prometheus exporter.
//! Runs until SIGINT or SIGTERM; the watch's threads read the system, the HTTP side
//! (one thread, tokio's current-thread runtime) only renders the latest view.

mod http;
mod web_config;

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use anyhow::{anyhow, Context as _};
use memtriage_core::usecase::watch::{Grouping, WatchConfig, Watcher};

use super::Context;
use crate::cli::ServeArgs;
use crate::exit::ExitStatus;
use crate::render::printer::Printer;
use crate::values::GroupSpec;
use memtriage_core::usecase::record::{check_max_size, Recording};
use web_config::WebConfig;

pub fn run(ctx: &Context, args: &ServeArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let web = match &args.web_config {
        Some(path) => WebConfig::load(path)?,
        None => WebConfig::none(),
    };
    let mut config = WatchConfig::new(ctx.root.clone());
    config.grouping = grouping(&args.group)?;
    config.max_groups = args.max_groups as usize;
    config.max_cgroups = args.max_cgroups;
    config.interval = args.interval.0;
    config.grace = args.grace.0;
    config.watch_files = args.watch_file.clone();
    config.watch_tensors = args.watch_tensors;
    config.killer_logs = args.killer_log.clone();
    config.doctor = (!args.no_doctor).then_some((args.profile, args.doctor_interval.0));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the HTTP runtime")?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(&args.listen))
        .map_err(|e| {
            anyhow!(
                "cannot listen on {}: {e} (another exporter on that port? choose one with --listen)",
                args.listen
            )
        })?;
    let bound = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| args.listen.clone());
    let open_warning = open_beyond_loopback(&listener, &web);
    // As costly as the dearest real hash, so an unknown user is not answered sooner.
    let dummy_hash = match web
        .users
        .values()
        .filter_map(|h| h.parse::<bcrypt::HashParts>().ok())
        .map(|h| h.get_cost())
        .max()
    {
        None => String::new(),
        Some(cost) => bcrypt::hash("not a password anyone has", cost)
            .context("cannot make the comparison hash for basic auth")?,
    };
    let scheme = if web.tls.is_some() { "https" } else { "http" };
    check_max_size(args.record_max_size.map(|s| s.0))
        .map_err(|e| anyhow::anyhow!("{e} (--record-max-size)"))?;
    let recording = match &args.record {
        Some(db) => Some(
            Recording::open(
                &ctx.root,
                db,
                args.record_retain.0,
                args.record_max_size.map(|s| s.0),
            )
            .map_err(|e| super::history_error(e, "--record", db))?,
        ),
        None => None,
    };
    let watcher = Watcher::start(config).context("cannot start the sampler")?;
    let server = Arc::new(http::Server {
        record: recording.as_ref().map(|(r, _)| Arc::clone(&r.status)),
        watcher,
        web,
        auth_cache: Mutex::new(HashSet::new()),
        dummy_hash,
        bcrypt_slots: tokio::sync::Semaphore::new(2),
    });
    // The announcement promises that SIGTERM stops: a client that signals right after
    // reading it must reach the handler, not the default action mid-announcement.
    super::stop::install();
    writeln!(
        p.err,
        "memtriage serve: metrics at {scheme}://{bound}/metrics (Ctrl-C or SIGTERM stops)"
    )?;
    // The exporter's stderr is its log: one its reader closed after the address loses
    // the lines, not the exporter.
    if let Some(warning) = open_warning {
        let _ = writeln!(p.err, "memtriage serve: warning: {warning}");
    }
    for note in memtriage_core::usecase::watch::unreadable_here(&ctx.root) {
        let _ = writeln!(p.err, "memtriage serve: note: {note}");
    }
    let recorder = match recording {
        Some((recording, said)) => {
            for line in said {
                let _ = writeln!(p.err, "memtriage serve: record: {line}");
            }
            Some(RecordThread::start(
                recording,
                Arc::clone(&server),
                ctx.root.clone(),
                args.interval.0,
            )?)
        }
        None => None,
    };
    let _ = p.err.flush();
    let outcome = runtime.block_on(async {
        let stopped = async {
            while !super::stop::requested() {
                tokio::time::sleep(super::stop::POLL).await;
            }
        };
        tokio::select! {
            served = http::serve(listener, Arc::clone(&server)) => served,
            () = stopped => Ok(()),
        }
    });
    // Connections still open hold the server; the runtime's end drops them.
    drop(runtime);
    if let Some(r) = recorder {
        r.stop();
    }
    if let Ok(server) = Arc::try_unwrap(server) {
        server.watcher.stop()?;
    }
    outcome?;
    Ok(ExitStatus::Success)
}

/// `--record`: the recording beside the exporter, one interval per sample.
struct RecordThread {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: std::thread::JoinHandle<()>,
}

impl RecordThread {
    fn start(
        mut recording: Recording,
        server: Arc<http::Server>,
        root: memtriage_core::Root,
        every: Duration,
    ) -> anyhow::Result<Self> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("memtriage-record".into())
            .spawn(move || {
                let stopped = |wait| {
                    let (flag, cv) = &*stopped;
                    let guard = flag.lock().unwrap_or_else(|e| e.into_inner());
                    let (guard, _) = cv
                        .wait_timeout_while(guard, wait, |s| !*s)
                        .unwrap_or_else(|e| e.into_inner());
                    *guard
                };
                // The exporter's stderr is its log; a closed one loses only the line.
                recording.record_until(&root, &server.watcher, every, stopped, |line| {
                    let _ = writeln!(std::io::stderr(), "memtriage serve: record: {line}");
                });
            })
            .context("cannot start the recording thread")?;
        Ok(RecordThread { stop, thread })
    }

    fn stop(self) {
        let (flag, cv) = &*self.stop;
        *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
        let _ = self.thread.join();
    }
}

fn grouping(specs: &[GroupSpec]) -> anyhow::Result<Grouping> {
    let mut patterns = Vec::new();
    let mut mode = None;
    for spec in specs {
        match spec {
            GroupSpec::Job => mode = Some(Grouping::Job),
            GroupSpec::Cgroup => mode = Some(Grouping::Cgroup),
            GroupSpec::Pattern(name, re) => patterns.push((name.clone(), re.clone())),
        }
    }
    match (mode, patterns.is_empty()) {
        (Some(m), true) => Ok(m),
        (None, true) => Ok(Grouping::Job),
        (None, false) => Ok(Grouping::Patterns(patterns)),
        (Some(_), false) => Err(anyhow!(
            "--group takes either a mode (job, cgroup) or NAME=REGEX patterns, not both"
        )),
    }
}

/// Metrics name every process and command line of the machine: served beyond loopback
/// with neither TLS nor a password, anyone who can reach the port reads them.
fn open_beyond_loopback(listener: &tokio::net::TcpListener, web: &WebConfig) -> Option<String> {
    let addr = listener.local_addr().ok()?;
    if addr.ip().is_loopback() || (web.tls.is_some() && !web.users.is_empty()) {
        return None;
    }
    let missing = match (web.tls.is_some(), web.users.is_empty()) {
        (false, true) => "neither TLS nor basic auth",
        (false, false) => "no TLS (passwords cross the network in clear)",
        _ => "no basic auth",
    };
    Some(format!(
        "listening on {addr}, beyond this machine, with {missing}: every process's command \
         line is readable by whoever reaches the port; give --web-config with tls_server_config \
         and basic_auth_users, or listen on 127.0.0.1"
    ))
}
