//! A stop asked for by a signal (SIGTERM, SIGHUP, SIGINT, SIGQUIT), the one way for
//! every command that runs until told to end (`top`, `record`, `serve`, `warm
//! --lock`) and must end cleanly: the handler only sets a flag the command's loop
//! reads. A second signal of a kind takes the default action (SA_RESETHAND), so a
//! command stuck in a read still ends. (`run` forwards signals to its job instead:
//! the engine's `supervise::signals`.)

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

pub fn install() {
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: the handler only stores to an atomic; the struct is zeroed, then set.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

pub fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The exit status a shell gives a command the stop's signal ended: 128 + its number.
pub fn exit_code() -> i32 {
    128 + SIGNAL.load(Ordering::SeqCst)
}

/// How often a waiting command looks at the flag.
pub const POLL: Duration = Duration::from_millis(100);

/// Returns once a stop is asked for (after [`install`]).
pub fn wait() {
    while !requested() {
        std::thread::sleep(POLL);
    }
}

/// Waits up to `wait`, or less when a stop is asked for; whether one was.
pub fn wait_for(wait: Duration) -> bool {
    let until = Instant::now() + wait;
    loop {
        let now = Instant::now();
        if requested() || now >= until {
            return requested();
        }
        std::thread::sleep(POLL.min(until - now));
    }
}
