//! What `top` shows and how keys change it: the sort, the filter, tree mode, pause,
//! the selection. No terminal here, so every key's effect is tested directly.

use std::collections::{HashMap, HashSet, VecDeque};

use memtriage_core::usecase::top::{job_roots, LiveFrame, ProcessRow, HISTORY_POINTS};

/// What the table is sorted by, largest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    MajorFaults,
    MinorFaults,
    Rss,
    Pss,
    Uss,
    Swap,
    Gpu,
    Growth,
}

impl SortKey {
    pub const ALL: [SortKey; 8] = [
        SortKey::MajorFaults,
        SortKey::MinorFaults,
        SortKey::Rss,
        SortKey::Pss,
        SortKey::Uss,
        SortKey::Swap,
        SortKey::Gpu,
        SortKey::Growth,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SortKey::MajorFaults => "major-faults",
            SortKey::MinorFaults => "minor-faults",
            SortKey::Rss => "rss",
            SortKey::Pss => "pss",
            SortKey::Uss => "uss",
            SortKey::Swap => "swap",
            SortKey::Gpu => "gpu",
            SortKey::Growth => "growth",
        }
    }

    /// The row's figure for this key; `None` where it is not known.
    pub fn value(self, r: &ProcessRow) -> Option<f64> {
        match self {
            SortKey::MajorFaults => r.major_rate,
            SortKey::MinorFaults => r.minor_rate,
            SortKey::Rss => Some(r.rss as f64),
            SortKey::Pss => r.pss.map(|v| v as f64),
            SortKey::Uss => r.uss.map(|v| v as f64),
            SortKey::Swap => r.swap.map(|v| v as f64),
            SortKey::Gpu => r.gpu.map(|v| v as f64),
            SortKey::Growth => r.growth,
        }
    }

    /// The history a sparkline of this key draws: the sorted figure's own (growth
    /// draws the RSS it is the slope of); samples where it was unknown are left out.
    /// PSS, USS, swap and GPU come from what the view kept of the frames it showed.
    pub fn history(self, r: &ProcessRow, kept: Option<&VecDeque<KeptFigures>>) -> Vec<f64> {
        let figure = |i: usize| -> Vec<f64> {
            kept.into_iter()
                .flatten()
                .map(|f| f[i])
                .filter(|&v| v != UNKNOWN)
                .map(|v| v as f64)
                .collect()
        };
        match self {
            SortKey::MajorFaults => r.fault_history.iter().map(|f| f.1).collect(),
            SortKey::MinorFaults => r.fault_history.iter().map(|f| f.0).collect(),
            SortKey::Rss | SortKey::Growth => r.rss_history.iter().map(|&v| v as f64).collect(),
            SortKey::Pss => figure(0),
            SortKey::Uss => figure(1),
            SortKey::Swap => figure(2),
            SortKey::Gpu => figure(3),
        }
    }
}

impl std::str::FromStr for SortKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SortKey::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = SortKey::ALL.iter().map(|k| k.name()).collect();
                format!("{s:?}: sort by one of {}", names.join(", "))
            })
    }
}

/// A line of the table: a process, or in tree mode a job's total above its members.
#[derive(Debug, Clone, PartialEq)]
pub enum Line<'a> {
    Process { row: &'a ProcessRow, depth: usize },
    Job(JobTotal<'a>),
}

/// A job (a process and its descendants) folded: its members' RSS summed against
/// their PSS summed, the gap being what sharing (fork's copy-on-write) saves.
#[derive(Debug, Clone, PartialEq)]
pub struct JobTotal<'a> {
    pub root: &'a ProcessRow,
    pub processes: usize,
    pub rss: u64,
    /// `None` unless every member has a PSS reading.
    pub pss: Option<u64>,
    /// GPU memory the members hold; `None` unless NVML answered for every one.
    pub gpu: Option<u64>,
}

impl JobTotal<'_> {
    pub fn shared_saving(&self) -> Option<u64> {
        self.pss.map(|p| self.rss.saturating_sub(p))
    }
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Continue,
    Quit,
    /// The sampling interval changed: the sampler restarts at the new one.
    Interval,
}

/// A process's PSS, USS, swap and GPU memory at one frame, [`UNKNOWN`] where not
/// known: four words, so that keeping 16 frames of a thousand processes stays small.
pub type KeptFigures = [u64; 4];
/// A figure not known at that frame (no figure reaches it: it is more than any memory).
pub const UNKNOWN: u64 = u64::MAX;

pub struct App {
    pub sort: SortKey,
    pub tree: bool,
    pub filter: String,
    /// Typing a filter: keys go to it until Enter or Esc.
    pub typing: bool,
    pub paused: bool,
    pub detail: bool,
    pub interval_ms: u64,
    /// Index into the visible lines.
    pub selected: usize,
    /// The line the selection is on, followed as the table re-sorts: a job's line
    /// (`true`) or a process's, by pid.
    selected_line: Option<(bool, i32)>,
    pub frame: Option<LiveFrame>,
    /// The last [`HISTORY_POINTS`] frames' figures of each process shown, for the
    /// sparklines the engine's rows do not carry (they carry RSS and fault rates).
    kept: HashMap<i32, VecDeque<KeptFigures>>,
}

pub const INTERVALS_MS: [u64; 6] = [250, 500, 1000, 2000, 5000, 10000];

impl App {
    pub fn new(sort: SortKey, tree: bool, filter: String, interval_ms: u64) -> Self {
        App {
            sort,
            tree,
            filter,
            typing: false,
            paused: false,
            detail: false,
            interval_ms,
            selected: 0,
            selected_line: None,
            kept: HashMap::new(),
            frame: None,
        }
    }

    /// A new frame, unless paused.
    pub fn show(&mut self, frame: LiveFrame) {
        if !self.paused || self.frame.is_none() {
            self.keep_figures(&frame);
            self.frame = Some(frame);
            self.follow();
        }
    }

    fn keep_figures(&mut self, frame: &LiveFrame) {
        let live: HashSet<i32> = frame.processes.iter().map(|r| r.pid).collect();
        self.kept.retain(|pid, _| live.contains(pid));
        for r in &frame.processes {
            let points = self.kept.entry(r.pid).or_default();
            if points.len() == HISTORY_POINTS {
                points.pop_front();
            }
            points.push_back([r.pss, r.uss, r.swap, r.gpu].map(|v| v.unwrap_or(UNKNOWN)));
        }
    }

    /// What the sparkline of `row` draws for the sort in force.
    pub fn history(&self, row: &ProcessRow) -> Vec<f64> {
        self.sort.history(row, self.kept.get(&row.pid))
    }

    /// Moves the selection to where its line went (the table re-sorts every frame),
    /// or keeps it within the table when that line is gone.
    fn follow(&mut self) {
        let keys: Vec<(bool, i32)> = self.lines().iter().map(line_key).collect();
        if let Some(i) = self
            .selected_line
            .and_then(|key| keys.iter().position(|k| *k == key))
        {
            self.selected = i;
        }
        self.selected = self.selected.min(keys.len().saturating_sub(1));
        self.selected_line = keys.get(self.selected).copied();
    }

    /// Remembers the line now at the selection (after the user moved it).
    fn remember(&mut self) {
        let keys: Vec<(bool, i32)> = self.lines().iter().map(line_key).collect();
        self.selected = self.selected.min(keys.len().saturating_sub(1));
        self.selected_line = keys.get(self.selected).copied();
    }

    /// One key, as the terminal reported it (a char, or a named key).
    pub fn key(&mut self, key: Key) -> Outcome {
        if self.typing {
            match key {
                Key::CtrlC => return Outcome::Quit,
                Key::Char(c) => self.filter.push(c),
                Key::Backspace => {
                    self.filter.pop();
                }
                Key::Enter => self.typing = false,
                Key::Esc => {
                    self.typing = false;
                    self.filter.clear();
                }
                _ => {}
            }
            self.selected = 0;
            self.remember();
            return Outcome::Continue;
        }
        match key {
            Key::Char('q') | Key::Esc | Key::CtrlC => return Outcome::Quit,
            Key::Char('s') | Key::Tab => {
                let i = SortKey::ALL
                    .iter()
                    .position(|k| *k == self.sort)
                    .unwrap_or(0);
                self.sort = SortKey::ALL[(i + 1) % SortKey::ALL.len()];
            }
            Key::Char(c @ '1'..='8') => {
                self.sort = SortKey::ALL[(c as u8 - b'1') as usize];
            }
            Key::Char('t') => {
                self.tree = !self.tree;
                // A job's line does not exist outside tree mode: its root's does.
                if let Some((true, pid)) = self.selected_line {
                    self.selected_line = Some((false, pid));
                }
            }
            Key::Char('/') | Key::Char('f') => {
                self.typing = true;
                self.filter.clear();
            }
            Key::Char(' ') | Key::Char('p') => self.paused = !self.paused,
            Key::Enter | Key::Char('d') => self.detail = !self.detail,
            Key::Char('+') | Key::Char('-') => {
                // An interval past the list (`--interval 60s`) steps down into it.
                let i = INTERVALS_MS
                    .iter()
                    .position(|&ms| ms >= self.interval_ms)
                    .unwrap_or(INTERVALS_MS.len());
                let j = if key == Key::Char('+') {
                    (i + 1).min(INTERVALS_MS.len() - 1)
                } else {
                    i.saturating_sub(1)
                };
                let slower = INTERVALS_MS[j] > self.interval_ms;
                if INTERVALS_MS[j] != self.interval_ms && (slower == (key == Key::Char('+'))) {
                    self.interval_ms = INTERVALS_MS[j];
                    return Outcome::Interval;
                }
            }
            Key::Down | Key::Char('j') | Key::Up | Key::Char('k') | Key::PageDown | Key::PageUp => {
                self.selected = match key {
                    Key::Down | Key::Char('j') => self.selected.saturating_add(1),
                    Key::Up | Key::Char('k') => self.selected.saturating_sub(1),
                    Key::PageDown => self.selected.saturating_add(10),
                    _ => self.selected.saturating_sub(10),
                };
                self.remember();
                return Outcome::Continue;
            }
            _ => {}
        }
        // A new sort, tree or filter: the selection stays on its process.
        self.follow();
        Outcome::Continue
    }

    /// The table's lines for the current frame: filtered, sorted, folded in tree mode.
    pub fn lines(&self) -> Vec<Line<'_>> {
        let Some(frame) = &self.frame else {
            return Vec::new();
        };
        let needle = self.filter.to_lowercase();
        let matches = |r: &ProcessRow| {
            needle.is_empty()
                || r.comm.to_lowercase().contains(&needle)
                || r.user
                    .as_deref()
                    .is_some_and(|u| u.to_lowercase().contains(&needle))
                || r.pid.to_string() == needle
        };
        let key = self.sort;
        let order = |a: &&ProcessRow, b: &&ProcessRow| {
            let (va, vb) = (key.value(a), key.value(b));
            // Known figures first, largest first; then by pid for a stable order.
            vb.is_some()
                .cmp(&va.is_some())
                .then(vb.unwrap_or(0.0).total_cmp(&va.unwrap_or(0.0)))
                .then(a.pid.cmp(&b.pid))
        };
        if !self.tree {
            let mut rows: Vec<&ProcessRow> =
                frame.processes.iter().filter(|r| matches(r)).collect();
            rows.sort_by(order);
            return rows
                .into_iter()
                .map(|row| Line::Process { row, depth: 0 })
                .collect();
        }
        // Tree mode: each job (a process and its descendants, from the first process
        // below a shell, sshd, tmux or init, as `serve` groups them) with its members
        // indented below it; a job shows when any member matches.
        let by_pid: HashMap<i32, &ProcessRow> =
            frame.processes.iter().map(|r| (r.pid, r)).collect();
        let roots = job_roots(
            frame
                .processes
                .iter()
                .map(|r| (r.pid, r.ppid, r.comm.as_str())),
        );
        let mut children: HashMap<i32, Vec<&ProcessRow>> = HashMap::new();
        let mut tops: Vec<&ProcessRow> = Vec::new();
        for r in &frame.processes {
            let root = roots.get(&r.pid).copied().unwrap_or(r.pid);
            if root != r.pid && by_pid.contains_key(&r.ppid) && r.ppid != r.pid {
                children.entry(r.ppid).or_default().push(r);
            } else {
                tops.push(r);
            }
        }
        let mut jobs: Vec<(JobTotal, Vec<(&ProcessRow, usize)>)> = Vec::new();
        for root in tops {
            let mut members = Vec::new();
            let mut stack = vec![(root, 0usize)];
            while let Some((r, depth)) = stack.pop() {
                members.push((r, depth));
                if members.len() > 100_000 {
                    break;
                }
                if let Some(kids) = children.get(&r.pid) {
                    let mut kids = kids.clone();
                    kids.sort_by(|a, b| order(b, a));
                    stack.extend(kids.into_iter().map(|k| (k, depth + 1)));
                }
            }
            if !members.iter().any(|(r, _)| matches(r)) {
                continue;
            }
            let total = JobTotal {
                root,
                processes: members.len(),
                rss: members.iter().map(|(r, _)| r.rss).sum(),
                pss: members.iter().map(|(r, _)| r.pss).sum(),
                gpu: members.iter().map(|(r, _)| r.gpu).sum(),
            };
            jobs.push((total, members));
        }
        // A job ranks by its members' figures summed (unknown if any is).
        let job_value = |members: &[(&ProcessRow, usize)]| -> Option<f64> {
            members.iter().map(|(r, _)| key.value(r)).sum()
        };
        jobs.sort_by(|a, b| {
            let (va, vb) = (job_value(&a.1), job_value(&b.1));
            vb.is_some()
                .cmp(&va.is_some())
                .then(vb.unwrap_or(0.0).total_cmp(&va.unwrap_or(0.0)))
                .then(a.0.root.pid.cmp(&b.0.root.pid))
        });
        let mut lines = Vec::new();
        for (total, members) in jobs {
            let single = total.processes == 1;
            if !single {
                lines.push(Line::Job(total));
            }
            for (row, depth) in members {
                lines.push(Line::Process {
                    row,
                    depth: if single { 0 } else { depth + 1 },
                });
            }
        }
        lines
    }

    /// The selected process, if a process line is selected.
    pub fn selected_row(&self) -> Option<&ProcessRow> {
        let lines = self.lines();
        let i = self.selected.min(lines.len().saturating_sub(1));
        match lines.get(i)? {
            Line::Process { row, .. } => Some(*row),
            Line::Job(j) => Some(j.root),
        }
    }
}

fn line_key(line: &Line) -> (bool, i32) {
    match line {
        Line::Process { row, .. } => (false, row.pid),
        Line::Job(j) => (true, j.root.pid),
    }
}

/// The keys `top` reads, independent of the terminal library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Esc,
    Backspace,
    Tab,
    Up,
    Down,
    PageUp,
    PageDown,
    CtrlC,
    Other,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use memtriage_core::usecase::top::{MachineHeader, LIVE_SCHEMA};

    pub(crate) fn row(
        pid: i32,
        ppid: i32,
        comm: &str,
        rss_mib: u64,
        pss_mib: Option<u64>,
    ) -> ProcessRow {
        ProcessRow {
            pid,
            ppid,
            comm: comm.into(),
            user: Some("alice".into()),
            rss: rss_mib << 20,
            pss: pss_mib.map(|p| p << 20),
            uss: pss_mib.map(|p| p << 19),
            swap: pss_mib.map(|_| 0),
            pss_age: pss_mib.map(|_| 3.0),
            minor_rate: Some(pid as f64),
            major_rate: Some(0.0),
            growth: None,
            gpu: None,
            rss_history: vec![1, 2, 3],
            fault_history: vec![(1.0, 0.0)],
            cgroup: None,
            forked_worker: false,
            copied_after_fork: None,
            findings: Vec::new(),
            minutes_to_limit: None,
        }
    }

    /// A shell running a trainer with two forked workers, and a server beside it.
    pub(crate) fn frame() -> LiveFrame {
        let mut worker = row(102, 100, "pt_worker", 900, Some(150));
        worker.forked_worker = true;
        worker.copied_after_fork = Some(100 << 20);
        worker.findings = vec!["fork.copy-on-write"];
        LiveFrame {
            schema: LIVE_SCHEMA,
            t: 10.0,
            header: MachineHeader::default(),
            processes: vec![
                row(10, 1, "bash", 4, Some(2)),
                row(100, 10, "python", 1000, Some(400)),
                row(101, 100, "pt_worker", 900, Some(150)),
                worker,
                row(200, 1, "server", 1200, None),
            ],
            pss_reads: 1,
            pss_read_seconds: 0.001,
            focus: None,
        }
    }

    fn app() -> App {
        let mut a = App::new(SortKey::Rss, false, String::new(), 1000);
        a.show(frame());
        a
    }

    fn pids(lines: &[Line]) -> Vec<i32> {
        lines
            .iter()
            .map(|l| match l {
                Line::Process { row, .. } => row.pid,
                Line::Job(j) => -j.root.pid,
            })
            .collect()
    }

    #[test]
    fn the_sparkline_draws_the_sorted_figures_own_history() {
        let mut a = App::new(SortKey::Pss, false, String::new(), 1000);
        // The first frame had no PSS reading yet: left out, not drawn as 0.
        for pss in [None, Some(3), Some(400)] {
            let mut f = frame();
            f.processes[1].pss = pss.map(|p: u64| p << 20);
            a.show(f);
        }
        let r = a.frame.as_ref().unwrap().processes[1].clone();
        assert_eq!(
            a.history(&r),
            vec![(3u64 << 20) as f64, (400u64 << 20) as f64]
        );
        a.sort = SortKey::Gpu;
        assert_eq!(a.history(&r), Vec::<f64>::new());
        a.sort = SortKey::Rss;
        assert_eq!(a.history(&r), vec![1.0, 2.0, 3.0]);
        a.sort = SortKey::Growth;
        assert_eq!(a.history(&r), vec![1.0, 2.0, 3.0]);
        a.sort = SortKey::MinorFaults;
        assert_eq!(a.history(&r), vec![1.0]);
        // At most HISTORY_POINTS frames are kept, and an ended process's go.
        a.sort = SortKey::Pss;
        for _ in 0..40 {
            a.show(frame());
        }
        assert_eq!(a.history(&r).len(), HISTORY_POINTS);
        let mut f = frame();
        f.processes.retain(|p| p.pid != r.pid);
        a.show(f);
        assert!(!a.kept.contains_key(&r.pid));
    }

    #[test]
    fn sorting_puts_unknown_figures_last_not_as_zero() {
        let mut a = app();
        assert_eq!(pids(&a.lines()), vec![200, 100, 101, 102, 10]);
        a.key(Key::Char('4'));
        assert_eq!(a.sort, SortKey::Pss);
        assert_eq!(
            pids(&a.lines()),
            vec![100, 101, 102, 10, 200],
            "the server's PSS is unknown"
        );
        a.key(Key::Char('s'));
        assert_eq!(a.sort, SortKey::Uss);
    }

    #[test]
    fn tree_mode_folds_workers_into_their_job_with_what_sharing_saves() {
        let mut a = app();
        a.key(Key::Char('t'));
        let lines = a.lines();
        assert_eq!(pids(&lines), vec![-100, 100, 101, 102, 200, 10]);
        let Line::Job(job) = &lines[0] else {
            panic!("{lines:?}")
        };
        assert_eq!(
            (job.processes, job.rss, job.pss),
            (3, 2800 << 20, Some(700 << 20))
        );
        assert_eq!(job.shared_saving(), Some(2100 << 20));
    }

    #[test]
    fn the_selection_follows_its_process_when_the_table_re_sorts() {
        let mut a = app();
        a.key(Key::Down);
        assert_eq!(a.selected_row().map(|r| r.pid), Some(100));
        // The server ends: python moves up a line, the selection with it.
        let mut next = frame();
        next.processes.retain(|r| r.pid != 200);
        a.show(next);
        assert_eq!(
            (a.selected, a.selected_row().map(|r| r.pid)),
            (0, Some(100))
        );
        a.key(Key::Char('4'));
        assert_eq!(
            a.selected_row().map(|r| r.pid),
            Some(100),
            "a new sort keeps it"
        );
        for _ in 0..50 {
            a.key(Key::Down);
        }
        a.key(Key::Up);
        assert_eq!(a.selected, 2, "held Down stops at the last line");
    }

    #[test]
    fn the_filter_matches_a_user_or_a_whole_pid_too() {
        let mut f = frame();
        f.processes[4].user = Some("bob".into());
        f.processes[0].user = None;
        let mut a = App::new(SortKey::Rss, false, "BOB".into(), 1000);
        a.show(f.clone());
        assert_eq!(pids(&a.lines()), vec![200], "by user, whatever the case");
        let mut a = App::new(SortKey::Rss, false, "10".into(), 1000);
        a.show(f);
        assert_eq!(
            pids(&a.lines()),
            vec![10],
            "a pid matches whole, not 100 or 101"
        );
    }

    #[test]
    fn filter_keys_pause_and_quit() {
        let mut a = app();
        a.key(Key::Char('/'));
        for c in "work".chars() {
            a.key(Key::Char(c));
        }
        a.key(Key::Enter);
        assert_eq!(pids(&a.lines()), vec![101, 102]);
        assert_eq!(a.key(Key::Char('q')), Outcome::Quit);
        a.key(Key::Char(' '));
        let before = a.frame.clone();
        let mut later = frame();
        later.t = 99.0;
        a.show(later);
        assert_eq!(a.frame, before, "paused: the frame stays");
        assert_eq!(a.key(Key::Char('+')), Outcome::Interval);
        assert_eq!(a.interval_ms, 2000);
    }
}
