//! `record`: the machine's memory history, one interval at a time, into a bounded
//! SQLite database, from the watch's view ([`super::watch`]). A write that fails (a
//! full disk) pauses recording and says so once; it resumes when writes succeed again.
//! While memory pressure rises, and for [`PRESSURE_HOLD`] after, the machine is
//! recorded every second, so the minute before an OOM kill is seen in detail.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::error::{Error, Result};
use crate::history::store::Store;
use crate::model::history::{Interval, MachineRow};
use crate::model::units::iec;
use crate::probe::root::Root;
use crate::probe::system::reads_every_users_pss;
use crate::watch::intervals::{
    interval_from, machine_now, now_ms, pressure_rising, taken, Earlier, Taken,
};
use crate::watch::{MachineView, Watcher};

/// How often the machine is read between intervals, and recorded while memory
/// pressure rises.
pub const PRESSURE_CHECK: Duration = Duration::from_secs(1);
/// How long the machine is still recorded each second after pressure last rose: a
/// fall that pauses for a second (a DataLoader between batches) is one episode, and
/// the moments after it (the kill, the swap storm) matter as much as the fall.
pub const PRESSURE_HOLD: Duration = Duration::from_secs(10);

/// The smallest size bound taken: an empty history is about 50 KiB and one interval of
/// a busy machine (hundreds of processes) up to about 100 KiB, so under this an
/// interval might never be kept.
pub const MIN_MAX_SIZE: u64 = 160 << 10;

/// A size bound the history can keep anything under (`None`: unbounded).
pub fn check_max_size(max_size: Option<u64>) -> Result<()> {
    match max_size.filter(|m| *m < MIN_MAX_SIZE) {
        None => Ok(()),
        Some(max) => Err(Error::bad_input(
            format!("a size bound of {}", iec(max)),
            format!(
                "too small to keep one interval (an empty history alone is about 50 KiB): \
                 give {} or more",
                iec(MIN_MAX_SIZE)
            ),
        )),
    }
}

/// Age retention runs every this many intervals (size, past the bound, at once).
const RETAIN_EVERY: u32 = 60;

/// How recording goes, for `serve`'s metrics.
#[derive(Debug, Default)]
pub struct RecordStatus {
    pub paused: AtomicBool,
    pub intervals: AtomicU64,
}

/// The history being written: its database, what was last written, and whether
/// writing is paused (a full disk).
pub struct Recording {
    store: Store,
    retain: Duration,
    max_size: Option<u64>,
    last_written: Option<SystemTime>,
    taken: Taken,
    /// The largest processes of the last interval written: the machine just before
    /// a kill that the next sample finds already done.
    earlier: Earlier,
    intervals: u32,
    paused: Option<String>,
    /// The machine at the last pressure check.
    last_machine: Option<MachineRow>,
    /// When pressure last rose: recording each second goes on for [`PRESSURE_HOLD`].
    pressure_rose: Option<Instant>,
    /// A sample was asked of the watch under pressure and is not yet written.
    asked: bool,
    pub status: Arc<RecordStatus>,
}

impl Recording {
    /// Opens (or makes) the database, and notes in it what this process can read.
    /// Returns what to tell the user about that.
    pub fn open(
        root: &Root,
        db: &Path,
        retain: Duration,
        max_size: Option<u64>,
    ) -> Result<(Recording, Vec<String>)> {
        check_max_size(max_size)?;
        if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::refused(
                    dir.display().to_string(),
                    format!("cannot make the directory for the database: {e}"),
                    "record into a file in a directory this user may write",
                )
            })?;
        }
        let store = Store::open(db)?;
        // SAFETY: geteuid cannot fail.
        let uid = unsafe { libc::geteuid() };
        let reads_all_pss = reads_every_users_pss(root);
        store.note("recorder_uid", &uid.to_string())?;
        store.note(
            "reads_all_pss",
            if reads_all_pss { "true" } else { "false" },
        )?;
        let mut said = Vec::new();
        if !reads_all_pss {
            said.push(format!(
                "as uid {uid} without CAP_SYS_PTRACE, other users' processes are recorded \
                 without PSS or swap (RSS only); `why` will say so"
            ));
        }
        Ok((
            Recording {
                store,
                retain,
                max_size,
                last_written: None,
                taken: Taken::default(),
                intervals: 0,
                paused: None,
                last_machine: None,
                pressure_rose: None,
                asked: false,
                earlier: Earlier::default(),
                status: Arc::new(RecordStatus::default()),
            },
            said,
        ))
    }

    /// Records what `watcher` sees until `stopped` says to end: an interval every
    /// `every`, and between them, each [`PRESSURE_CHECK`], the machine while memory
    /// pressure rises. `stopped(wait)` waits up to `wait`
    /// and says whether recording must end; `say` gets each line to tell the user (a
    /// pause, a resume, a failed trim). What `record` does alone and an exporter
    /// beside its metrics, on the one watch.
    pub fn record_until(
        &mut self,
        root: &Root,
        watcher: &Watcher,
        every: Duration,
        mut stopped: impl FnMut(Duration) -> bool,
        mut say: impl FnMut(&str),
    ) {
        let mut next = Instant::now();
        loop {
            let said = if Instant::now() >= next {
                next += every;
                self.tick(&watcher.view())
            } else {
                self.pressure_tick(root, &watcher.view(), || watcher.sample_now())
            };
            for line in &said {
                say(line);
            }
            let wait = PRESSURE_CHECK.min(next.saturating_duration_since(Instant::now()));
            if stopped(wait) {
                return;
            }
        }
    }

    /// Each second between intervals: while memory pressure rises (tasks stall on
    /// memory, MemAvailable falls fast) and for [`PRESSURE_HOLD`] after, the machine
    /// is recorded every second, so the
    /// minute before an OOM kill is seen in detail: the machine's figures at once, and
    /// a whole interval (jobs, cgroups, the largest processes) from a sample asked of
    /// the watch (`sample_now`) for the next second. Returns what to say.
    fn pressure_tick(
        &mut self,
        root: &Root,
        view: &MachineView,
        sample_now: impl FnOnce(),
    ) -> Vec<String> {
        let now = machine_now(root);
        if self
            .last_machine
            .as_ref()
            .is_some_and(|before| pressure_rising(before, &now))
        {
            self.pressure_rose = Some(Instant::now());
        }
        self.last_machine = Some(now.clone());
        let under_pressure = self
            .pressure_rose
            .is_some_and(|rose| rose.elapsed() < PRESSURE_HOLD);
        if !under_pressure || self.paused.is_some() {
            // A sample asked for under pressure is written when it comes, even if a
            // slow walk of a busy machine brings it after the pressure passed.
            return if self.asked {
                self.tick(view)
            } else {
                Vec::new()
            };
        }
        sample_now();
        self.asked = true;
        // The sample asked for a second ago, when it has come: the whole machine.
        if view.sampled_at.is_some() && view.sampled_at != self.last_written {
            return self.tick(view);
        }
        let interval = Interval {
            machine: now,
            ..Interval::default()
        };
        match self.store.write(&interval) {
            Ok(()) => Vec::new(),
            Err(e) => {
                let why = e.to_string();
                self.paused = Some(why.clone());
                self.status.paused.store(true, Ordering::Relaxed);
                vec![format!("paused, nothing written: {why}")]
            }
        }
    }

    /// Writes the view if it holds a sample not yet written; returns what to say.
    fn tick(&mut self, view: &MachineView) -> Vec<String> {
        let mut said = Vec::new();
        if view.sampled_at.is_none() || view.sampled_at == self.last_written {
            return said;
        }
        let Some(interval) = interval_from(view, self.taken, &self.earlier) else {
            return said;
        };
        match self.store.write(&interval) {
            Ok(()) => {
                self.asked = false;
                self.last_written = view.sampled_at;
                self.taken = taken(view);
                self.earlier = Earlier::of(view);
                self.status.intervals.fetch_add(1, Ordering::Relaxed);
                if let Some(why) = self.paused.take() {
                    said.push(format!("resumed (was: {why})"));
                }
            }
            Err(e) => {
                let why = e.to_string();
                if self.paused.as_deref() != Some(why.as_str()) {
                    said.push(format!("paused, nothing written: {why}"));
                }
                self.paused = Some(why);
            }
        }
        self.status
            .paused
            .store(self.paused.is_some(), Ordering::Relaxed);
        self.intervals += 1;
        // Past the size bound it is trimmed at once (a page count: cheap); by age,
        // now and then.
        let over_size = self
            .max_size
            .is_some_and(|max| self.store.size().is_ok_and(|size| size > max));
        if over_size || self.intervals % RETAIN_EVERY == 0 {
            let before = now_ms() - self.retain.as_millis().min(i64::MAX as u128) as i64;
            if let Err(e) = self.store.retain(before, self.max_size) {
                said.push(format!("could not trim the history: {e}"));
            }
        }
        said
    }
}

/// Where the history goes unless the caller names a file: the system's state directory for root,
/// the user's otherwise.
pub fn default_db() -> PathBuf {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/lib/memtriage/history.db");
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    state.join("memtriage/history.db")
}

/// The recorder's own `oom_score_adj`: it holds a few MiB and must outlive the jobs
/// whose deaths it records. Lowering it needs CAP_SYS_RESOURCE (root has it).
pub const OOM_SCORE_ADJ: i32 = -500;
/// `ioprio_set(2)`: the idle I/O class, served only when no one else wants the disk.
const IOPRIO_WHO_PROCESS: libc::c_long = 1;
const IOPRIO_CLASS_IDLE: libc::c_long = 3;
const IOPRIO_CLASS_SHIFT: libc::c_long = 13;

/// The recorder's courtesy to the jobs it watches: nice 10 and the idle I/O class for
/// every thread (call it before any starts: both are inherited at thread creation),
/// and a low `oom_score_adj` where permitted, so it outlives the jobs whose deaths it
/// records. Returns what could not be done, to say once.
pub fn lower_priority() -> Vec<String> {
    let mut said = Vec::new();
    // SAFETY: plain syscalls on the calling thread, no memory passed.
    unsafe {
        if libc::setpriority(libc::PRIO_PROCESS, 0, 10) != 0 {
            said.push(format!(
                "could not lower its CPU priority: {}",
                std::io::Error::last_os_error()
            ));
        }
        let idle = IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT;
        if libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            idle,
        ) != 0
        {
            said.push(format!(
                "could not take the idle I/O class: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    if let Err(e) = crate::probe::procdir::set_own_oom_score_adj(&Root::host(), OOM_SCORE_ADJ) {
        said.push(format!(
            "kept its oom_score_adj (setting {OOM_SCORE_ADJ} needs CAP_SYS_RESOURCE: {e})"
        ));
    }
    said
}
