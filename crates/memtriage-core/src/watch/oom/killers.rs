//! The userspace OOM killers running on the machine, found again each minute, so
//! their kills are read without being told where they log: the file a daemon's
//! output goes to (followed like any killer log named on the command line), or the
//! journal under its name (asked every few seconds while one logs there). Their
//! settings go with each kill they make, so `why` can say at what threshold it acted.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::model::killers::{KillerKind, OomKiller};
use crate::probe::killers::{find, journal_lines, output_files};
use crate::probe::kmsg::{LogFollower, Start};
use crate::probe::root::Root;

/// How often the killers are looked for again (a walk of every process's name).
const FIND_EVERY: Duration = Duration::from_secs(60);
/// How often the journal is asked, while a running killer logs only there.
const JOURNAL_EVERY: Duration = Duration::from_secs(10);

pub struct KillerFinder {
    root: Root,
    running: Vec<OomKiller>,
    found_at: Option<Instant>,
    /// Output files of running killers (by the file's own path), followed from when
    /// they were found.
    files: Vec<(PathBuf, LogFollower)>,
    /// The journal identifiers of running killers whose output is no file.
    journal: Vec<&'static str>,
    /// When the journal was last asked, and the Unix second asked from next.
    journal_asked: Option<(Instant, u64)>,
}

impl KillerFinder {
    pub fn new(root: &Root) -> Self {
        KillerFinder {
            root: root.clone(),
            running: Vec::new(),
            found_at: None,
            files: Vec::new(),
            journal: Vec::new(),
            journal_asked: None,
        }
    }

    /// The settings of the running killer of `kind`, as last found.
    pub fn settings(&self, kind: KillerKind) -> Option<&OomKiller> {
        self.running.iter().find(|k| k.kind == kind)
    }

    /// Lines new in the running killers' own logs since the last read; `named` are
    /// the logs the user named, followed already and not read twice.
    pub fn read_new(&mut self, now: Instant, named: &[PathBuf]) -> Vec<String> {
        if self
            .found_at
            .is_none_or(|at| now.saturating_duration_since(at) >= FIND_EVERY)
        {
            self.find_again(named);
            self.found_at = Some(now);
        }
        let mut lines = Vec::new();
        for (_, follower) in &mut self.files {
            lines.extend(follower.read_new().unwrap_or_default());
        }
        lines.extend(self.read_journal(now));
        lines
    }

    fn find_again(&mut self, named: &[PathBuf]) {
        self.running = find(&self.root, None)
            .into_iter()
            .filter(|k| k.running && k.pid.is_some() && k.kind != KillerKind::Kernel)
            .collect();
        let mut journal = Vec::new();
        let mut kept: Vec<(PathBuf, LogFollower)> = Vec::new();
        for k in &self.running {
            let files = output_files(&self.root, k.pid.unwrap_or(0));
            if files.is_empty() {
                journal.extend(journal_ident(k.kind));
                continue;
            }
            for (link, file) in files {
                if named.contains(&file) || kept.iter().any(|(p, _)| *p == file) {
                    continue;
                }
                // A file followed already keeps its place; a new one is read from now.
                let follower = match self.files.iter().position(|(p, _)| *p == file) {
                    Some(i) => Some(self.files.swap_remove(i).1),
                    None => LogFollower::file(&link, Start::Now).ok(),
                };
                kept.extend(follower.map(|f| (file, f)));
            }
        }
        self.files = kept;
        self.journal = journal;
    }

    fn read_journal(&mut self, now: Instant) -> Vec<String> {
        if self.journal.is_empty() || !self.root.is_host() {
            self.journal_asked = None;
            return Vec::new();
        }
        let unix_now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let since = match self.journal_asked {
            None => {
                // From now: kills before the watch began are not counted.
                self.journal_asked = Some((now, unix_now));
                return Vec::new();
            }
            Some((at, _)) if now.saturating_duration_since(at) < JOURNAL_EVERY => {
                return Vec::new();
            }
            Some((_, since)) => since,
        };
        self.journal_asked = Some((now, unix_now));
        // The second asked from is asked again: a kill in it is counted once, as
        // the watch forgets no pid it counted within a minute.
        self.journal
            .iter()
            .flat_map(|ident| journal_lines(ident, since))
            .collect()
    }
}

fn journal_ident(kind: KillerKind) -> Option<&'static str> {
    match kind {
        KillerKind::Earlyoom => Some("earlyoom"),
        KillerKind::SystemdOomd => Some("systemd-oomd"),
        KillerKind::Nohang => Some("nohang"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A captured machine where earlyoom runs with its output in a log file: the
    /// finder follows that file from the moment it found it.
    #[test]
    fn a_running_earlyooms_output_file_is_followed_from_when_it_was_found() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let proc_dir = base.join("proc/812");
        std::fs::create_dir_all(proc_dir.join("fd")).unwrap();
        std::fs::write(proc_dir.join("comm"), "earlyoom\n").unwrap();
        std::fs::write(
            proc_dir.join("cmdline"),
            ["earlyoom", "-m", "10", ""].join("\0"),
        )
        .unwrap();
        std::fs::write(
            base.join("proc/meminfo"),
            "MemTotal: 25165824 kB\nMemAvailable: 20971520 kB\n",
        )
        .unwrap();
        let log = base.join("earlyoom.log");
        std::fs::write(
            &log,
            "an old kill: sending SIGTERM to process 1 uid 0 \"x\"\n",
        )
        .unwrap();
        std::os::unix::fs::symlink(&log, proc_dir.join("fd/2")).unwrap();
        let mut finder = KillerFinder::new(&Root::at(base));
        let t0 = Instant::now();
        assert!(
            finder.read_new(t0, &[]).is_empty(),
            "older lines are not new"
        );
        assert_eq!(
            finder.settings(KillerKind::Earlyoom).unwrap().pid,
            Some(812)
        );
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        writeln!(
            f,
            "sending SIGTERM to process 4242 uid 1000 \"python3\": oom_score 900"
        )
        .unwrap();
        let lines = finder.read_new(t0 + Duration::from_secs(1), &[]);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("4242"));
        // A log the user named is left to the watch's own follower.
        let mut named = KillerFinder::new(&Root::at(base));
        named.read_new(t0, std::slice::from_ref(&log));
        writeln!(f, "sending SIGTERM to process 4243 uid 1000 \"python3\"").unwrap();
        assert!(named
            .read_new(t0 + Duration::from_secs(1), &[log])
            .is_empty());
    }
}
