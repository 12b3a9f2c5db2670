//! Python's faulthandler output (PYTHONFAULTHANDLER=1, `python -X faulthandler`), read
//! as one block: the `Fatal Python error:` line, then each thread's stack, innermost
//! call first, then `Extension modules: …`.
//!
//! ```text
//! Fatal Python error: Segmentation fault
//!
//! Current thread 0x00007f3b2c5ff740 (most recent call first):
//!   File "/opt/venv/lib/python3.11/site-packages/torch/nn/functional.py", line 2233 in embedding
//!   File "/home/alice/model.py", line 12 in forward
//!
//! Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)
//! ```
//!
//! The crashing thread's frames are the point of the block: they are where the crash
//! happened. A line that is not part of the block ends it, and is then read as any
//! other line.

use regex::Regex;

use super::rules::{FailureClass, Rule, RULES};
use super::LogMatch;

/// faulthandler prints at most 100 frames a thread; its own limit is as good as ours.
const MAX_FRAMES: usize = 100;
/// A block longer than this is not faulthandler's (a thread dump of a huge process
/// still fits: 100 frames times a handful of threads).
const MAX_BLOCK_LINES: u32 = 2000;

pub(super) fn starts_block(rule: &Rule) -> bool {
    rule.faulthandler_block
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Thread {
    None,
    Current,
    Other,
}

#[derive(Debug, Clone)]
pub(super) struct Block {
    rule: usize,
    line_no: u64,
    line: String,
    captures: Vec<(String, String)>,
    thread: Thread,
    thread_id: Option<String>,
    /// The crashing thread's frames, innermost first.
    current: Vec<String>,
    /// The first other thread's frames: the crash site when no thread is marked current
    /// (faulthandler.dump_traceback prints `Stack` or plain `Thread` headers).
    first_other: Vec<String>,
    other_threads: u32,
    after_modules: bool,
    lines: u32,
}

impl Block {
    pub(super) fn new(
        rule: usize,
        line_no: u64,
        line: String,
        captures: Vec<(String, String)>,
    ) -> Self {
        Block {
            rule,
            line_no,
            line,
            captures,
            thread: Thread::None,
            thread_id: None,
            current: Vec::new(),
            first_other: Vec::new(),
            other_threads: 0,
            after_modules: false,
            lines: 0,
        }
    }

    /// Whether `msg` (a line's message) belongs to the block.
    pub(super) fn feed(&mut self, frame: &Regex, msg: &str) -> bool {
        self.lines += 1;
        if self.lines > MAX_BLOCK_LINES {
            return false;
        }
        let t = msg.trim();
        if t.is_empty() {
            return true;
        }
        if self.after_modules {
            return false;
        }
        if let Some(rest) = t.strip_prefix("Current thread ") {
            if t.ends_with("(most recent call first):") {
                self.thread = Thread::Current;
                self.thread_id = rest.split_whitespace().next().map(str::to_string);
                return true;
            }
        }
        if t.starts_with("Thread 0x") && t.ends_with("(most recent call first):") {
            self.thread = Thread::Other;
            self.other_threads += 1;
            return true;
        }
        if t == "Stack (most recent call first):" {
            self.thread = Thread::Current;
            return true;
        }
        if let Some(c) = frame.captures(msg) {
            let f = format!(
                "{}:{} in {}",
                c.name("file").map_or("", |m| m.as_str()),
                c.name("line").map_or("", |m| m.as_str()),
                c.name("func").map_or("", |m| m.as_str()),
            );
            let list = match self.thread {
                Thread::Current | Thread::None => Some(&mut self.current),
                Thread::Other if self.other_threads == 1 => Some(&mut self.first_other),
                Thread::Other => None,
            };
            if let Some(list) = list {
                if list.len() < MAX_FRAMES {
                    list.push(f);
                }
            }
            return true;
        }
        if t.starts_with("Extension modules:") {
            self.after_modules = true;
            return true;
        }
        t == "<no Python frame>"
            || t == "..."
            || t.starts_with("<truncated")
            || t.starts_with("Python runtime state:")
            || t.starts_with("Garbage-collecting")
    }

    pub(super) fn to_match(&self) -> LogMatch {
        let rule = RULES.get(self.rule);
        let frames = if self.current.is_empty() {
            &self.first_other
        } else {
            &self.current
        };
        let mut class = rule.map_or(FailureClass::NativeCrash, |r| r.class);
        // A bus error in a DataLoader worker's own stack is the shared-memory failure,
        // whatever else the log says.
        if class == FailureClass::MmapBusError
            && frames.iter().any(|f| f.contains("torch/utils/data/"))
        {
            class = FailureClass::DataloaderShm;
        }
        let mut captures = self.captures.clone();
        if let Some(id) = &self.thread_id {
            captures.push(("thread".into(), id.clone()));
        }
        let site = frames
            .iter()
            .find(|f| super::report::frame_origin(f) == super::report::Origin::User)
            .or_else(|| frames.first());
        if let Some(site) = site {
            captures.push(("site".into(), short_frame(site)));
        }
        captures.extend(frames.iter().map(|f| ("frame".to_string(), f.clone())));
        LogMatch {
            class,
            rule: rule.map_or("python.faulthandler", |r| r.id),
            line_no: self.line_no,
            line: self.line.clone(),
            captures,
        }
    }
}

/// `model.py:12 in forward` from `/home/alice/proj/model.py:12 in forward`.
fn short_frame(frame: &str) -> String {
    let (loc, func) = frame.split_once(" in ").unwrap_or((frame, ""));
    let (path, line) = loc.rsplit_once(':').unwrap_or((loc, ""));
    let name = path.rsplit('/').next().unwrap_or(path);
    format!("{name}:{line} in {func}")
}
