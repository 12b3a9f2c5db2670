//! `top`: every process, live. The engine's sampler runs on a thread of its own and
//! turns each sample into a whole [`LiveFrame`] there; the view only takes frames and
//! draws them, and never reads the system (bottom's collector thread).

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::Duration;

use crate::error::Result;
use crate::probe::root::Root;
use crate::sampler::{open_files_for, PssBudget, SamplerConfig, SamplerThread, Scope};
use crate::watch::Live;

pub use crate::watch::{
    job_roots, mark_text, Focus, KillersNow, LiveFrame, MachineHeader, ProcessRow, FOCUS_EVERY,
    HISTORY_POINTS, LIVE_SCHEMA,
};

/// A live view's source of frames: the sampler over every process, PSS on a
/// view's budget. Dropping it (or [`LiveView::stop`]) stops the sampler.
pub struct LiveView {
    sampler: SamplerThread,
    frames: Receiver<LiveFrame>,
    focus: Arc<AtomicI32>,
}

impl LiveView {
    /// Starts sampling every `interval`; growth and rates are taken over the last
    /// `window_seconds`.
    /// Fails only where the sampler's thread cannot be started.
    pub fn start(
        root: &Root,
        interval: Duration,
        window_seconds: f64,
    ) -> std::io::Result<LiveView> {
        let mut config = SamplerConfig::new(Scope::All, interval);
        config.pss = Some(PssBudget::VIEW);
        config.exe = false;
        config.keep_open = open_files_for();
        config.skip_unchanged = true;
        config.root = root.clone();
        // One frame waits at most: a view busy drawing skips frames, it does not
        // queue them.
        let (tx, frames) = mpsc::sync_channel(1);
        let mut live = Live::new(root, window_seconds);
        let focus = live.focus();
        let sampler = SamplerThread::spawn(config, move |sample| {
            !matches!(
                tx.try_send(live.frame(&sample)),
                Err(mpsc::TrySendError::Disconnected(_))
            )
        })?;
        Ok(LiveView {
            sampler,
            frames,
            focus,
        })
    }

    /// The frames, one per sample; disconnected when the sampler stopped.
    pub fn frames(&self) -> &Receiver<LiveFrame> {
        &self.frames
    }

    /// The process whose regions the next frames read in detail ([`Focus`]); 0: none.
    pub fn focus_on(&self, pid: i32) {
        self.focus.store(pid, Ordering::Relaxed);
    }

    /// Stops the sampler; its error, if it stopped on one.
    pub fn stop(self) -> Result<()> {
        self.sampler.stop()
    }
}
