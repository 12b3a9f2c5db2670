//! Watching the job's output: one thread per stream passes it through byte for byte
//! ([`passthrough::copy`]), shows it to its observer and sends each new failure line
//! to the run loop; at the end the streams are drained, stopped, and whatever
//! processes the job left behind still print is handed on.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::passthrough::{self, CopyStats, CopyStopped, OutputObserver, StopCopy};
use super::start::Pipes;
use super::Event;
use crate::error::{Error, Result};

/// After the job's main process exits, how long descendants that still hold its
/// output open are waited for before their output is handed to a forwarder and the
/// run ends, as a shell ends a script whose background jobs live on.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

/// The two copies, stdout's then stderr's.
pub(super) struct Output<O> {
    copies: [(JoinHandle<(O, CopyStats)>, StopCopy); 2],
    /// One message from each copy as it ends.
    ended: Receiver<()>,
}

impl<O: OutputObserver + 'static> Output<O> {
    pub fn start(pipes: Pipes, observers: (O, O), events: &Sender<Event>) -> Result<Self> {
        let (ended_tx, ended) = mpsc::channel();
        let (stop_out, out_stopped) = stop_signal()?;
        let (stop_err, err_stopped) = stop_signal()?;
        let out = spawn_copy(pipes.0, observers.0, false, out_stopped, events, &ended_tx);
        let err = spawn_copy(pipes.1, observers.1, true, err_stopped, events, &ended_tx);
        Ok(Output {
            copies: [(out, stop_out), (err, stop_err)],
            ended,
        })
    }

    /// Waits, a little, for both streams to end: descendants that outlive the job may
    /// still hold its output open.
    pub fn drain(&self) {
        let deadline = Instant::now() + OUTPUT_DRAIN;
        let mut ended = 0;
        while ended < 2 {
            match self
                .ended
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(()) => ended += 1,
                Err(_) => break,
            }
        }
    }

    /// Stops both copies and hands their observers back; a stream still open is
    /// passed through by a forwarder that outlives memtriage (said in `notes`).
    pub fn finish(self, notes: &mut Vec<String>) -> Result<(O, O)> {
        let [(out_thread, stop_out), (err_thread, stop_err)] = self.copies;
        stop_out.stop();
        stop_err.stop();
        let (Ok((stdout_observer, out_stats)), Ok((stderr_observer, err_stats))) =
            (out_thread.join(), err_thread.join())
        else {
            return Err(Error::internal("an output thread failed"));
        };
        if out_stats.downstream_closed || err_stats.downstream_closed {
            notes.push("memtriage's own output was closed early; the job's pipe was closed too, as it would have been".into());
        }
        let still_open: Vec<_> = [
            out_stats.still_open.map(|fd| (fd, libc::STDOUT_FILENO)),
            err_stats.still_open.map(|fd| (fd, libc::STDERR_FILENO)),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !still_open.is_empty() {
            notes.push(forward_after_exit(still_open));
        }
        Ok((stdout_observer, stderr_observer))
    }
}

fn stop_signal() -> Result<(StopCopy, CopyStopped)> {
    passthrough::stop_signal().map_err(|e| Error::io("pipe", e))
}

fn spawn_copy<O: OutputObserver + 'static>(
    fd: OwnedFd,
    mut observer: O,
    to_stderr: bool,
    stop: CopyStopped,
    events: &Sender<Event>,
    ended: &Sender<()>,
) -> JoinHandle<(O, CopyStats)> {
    let (events, ended) = (events.clone(), ended.clone());
    std::thread::spawn(move || {
        let noticed = |line: String| {
            let _ = events.send(Event::FailureLine(line));
        };
        let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
        let to = if to_stderr {
            stderr.as_fd()
        } else {
            stdout.as_fd()
        };
        let stats = passthrough::copy(fd, to, &mut observer, &stop, &noticed);
        let _ = ended.send(());
        (observer, stats)
    })
}

/// Hands the pipes processes the job left behind still hold to a forwarder; says so.
fn forward_after_exit(still_open: Vec<(OwnedFd, i32)>) -> String {
    match passthrough::forward_after_exit(still_open) {
        Ok(_) => "processes the job left behind still hold its output open: what they print \
                  still passes through, after this summary"
            .into(),
        Err(e) => format!(
            "processes the job left behind still hold its output open, and their \
             output could not be passed on after memtriage ends ({e})"
        ),
    }
}
