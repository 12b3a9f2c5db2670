//! A program a probe asks (journalctl, oomctl, scontrol), run with no input and
//! waited for a bounded time: a probe never hangs on a command that does.

use std::time::Duration;

/// A command's stdout, waited for at most `timeout`; `None` where it could not be
/// started. What it printed before the timeout is kept.
pub fn bounded_output(program: &str, args: &[&str], timeout: Duration) -> Option<String> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // A group of its own: at the timeout whatever it started goes too, and the
        // pipe read below ends.
        .process_group(0)
        .spawn()
        .ok()?;
    // Read on a thread of its own, so a long output never blocks the wait below.
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut s) = stdout {
            use std::io::Read;
            let _ = s.read_to_end(&mut out);
        }
        // One line that is not UTF-8 must not cost the others.
        String::from_utf8_lossy(&out).into_owned()
    });
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                // SAFETY: a signal to the group of the child started above.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                break;
            }
        }
    }
    reader.join().ok()
}
