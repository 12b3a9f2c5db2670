//! What `top` shows and how keys change it: the sort, the filter, tree mode, pause,
//! the selection. No terminal here, so every key's effect is tested directly.

use std::collections::HashMap;

use memtriage_core::watch::{LiveFrame, ProcessRow};

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

    /// The history a sparkline of this key draws.
    pub fn history(self, r: &ProcessRow) -> Vec<f64> {
        match self {
            SortKey::MajorFaults => r.fault_history.iter().map(|f| f.1).collect(),
            SortKey::MinorFaults => r.fault_history.iter().map(|f| f.0).collect(),
            _ => r.rss_history.iter().map(|&v| v as f64).collect(),
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
    pub frame: Option<LiveFrame>,
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
            frame: None,
        }
    }

    /// A new frame, unless paused.
    pub fn show(&mut self, frame: LiveFrame) {
        if !self.paused || self.frame.is_none() {
            self.frame = Some(frame);
        }
    }

    /// One key, as the terminal reported it (a char, or a named key).
    pub fn key(&mut self, key: Key) -> Outcome {
        if self.typing {
            match key {
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
                self.selected = 0;
            }
            Key::Char('/') | Key::Char('f') => {
                self.typing = true;
                self.filter.clear();
            }
            Key::Char(' ') | Key::Char('p') => self.paused = !self.paused,
            Key::Enter | Key::Char('d') => self.detail = !self.detail,
            Key::Char('+') | Key::Char('-') => {
                let i = INTERVALS_MS
                    .iter()
                    .position(|&ms| ms >= self.interval_ms)
                    .unwrap_or(INTERVALS_MS.len() - 1);
                let j = if key == Key::Char('+') {
                    (i + 1).min(INTERVALS_MS.len() - 1)
                } else {
                    i.saturating_sub(1)
                };
                if INTERVALS_MS[j] != self.interval_ms {
                    self.interval_ms = INTERVALS_MS[j];
                    return Outcome::Interval;
                }
            }
            Key::Down | Key::Char('j') => self.selected = self.selected.saturating_add(1),
            Key::Up | Key::Char('k') => self.selected = self.selected.saturating_sub(1),
            Key::PageDown => self.selected = self.selected.saturating_add(10),
            Key::PageUp => self.selected = self.selected.saturating_sub(10),
            _ => {}
        }
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
        // Tree mode: each job (a process whose parent is not in the frame, or is
        // pid 1) with its descendants; a job shows when any member matches.
        let by_pid: HashMap<i32, &ProcessRow> =
            frame.processes.iter().map(|r| (r.pid, r)).collect();
        let mut children: HashMap<i32, Vec<&ProcessRow>> = HashMap::new();
        let mut roots: Vec<&ProcessRow> = Vec::new();
        for r in &frame.processes {
            if r.ppid > 1 && by_pid.contains_key(&r.ppid) && r.ppid != r.pid {
                children.entry(r.ppid).or_default().push(r);
            } else {
                roots.push(r);
            }
        }
        let mut jobs: Vec<(JobTotal, Vec<(&ProcessRow, usize)>)> = Vec::new();
        for root in roots {
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
            };
            jobs.push((total, members));
        }
        let job_value = |j: &JobTotal| match key {
            SortKey::Rss => Some(j.rss as f64),
            SortKey::Pss => j.pss.map(|p| p as f64),
            _ => key.value(j.root),
        };
        jobs.sort_by(|a, b| {
            let (va, vb) = (job_value(&a.0), job_value(&b.0));
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
