//! Forwarding the signals that should reach the job.
//!
//! memtriage and the job share a process group, so a signal the terminal sends
//! (Ctrl-C, Ctrl-\, hangup) already reaches both: forwarding it would deliver it
//! twice. What is sent to memtriage alone (`kill PID`, Slurm's or Kubernetes' SIGTERM)
//! is forwarded. The kernel says which is which in `si_code`.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

pub const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

fn set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks the forwarded signals in this thread and every thread it starts later, so
/// only the forwarding thread receives them. The job's mask is reset at spawn.
pub fn block() {
    let set = set();
    // SAFETY: changes this thread's signal mask only.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The forwarding thread of one run: started before the job, pointed at it once it
/// runs, stopped when the run ends.
pub struct Forwarder {
    target: Arc<AtomicI32>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Forwarder {
    pub fn start() -> Self {
        let target = Arc::new(AtomicI32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (target, stop) = (target.clone(), stop.clone());
            std::thread::spawn(move || forward(target, stop))
        };
        Forwarder {
            target,
            stop,
            thread,
        }
    }

    /// From now on, signals go to `pid`.
    pub fn target(&self, pid: i32) {
        self.target.store(pid, Ordering::Relaxed);
    }

    /// The job could not be started: stops the thread and waits for it.
    pub fn abort(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }

    /// Stops forwarding. The thread is not joined: it may sit up to 100 ms in
    /// sigtimedwait; it ends with the process.
    pub fn finish(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs until `stop`; forwards to `target` (0 until the job is started) each
/// forwarded signal that did not come from the terminal (which sent it to the job
/// too).
fn forward(target: Arc<AtomicI32>, stop: Arc<AtomicBool>) {
    let set = set();
    let timeout = libc::timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    };
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: an all-zero siginfo is a valid buffer for the kernel to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits on a set of blocked signals, filling `info`.
        let sig = unsafe { libc::sigtimedwait(&set, &mut info, &timeout) };
        if sig <= 0 {
            continue;
        }
        let from_terminal = info.si_code == libc::SI_KERNEL;
        let pid = target.load(Ordering::Relaxed);
        if !from_terminal && pid > 0 {
            // SAFETY: signalling the job we started.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    }
}
