//! Copies the job's stdout and stderr to ours, byte for byte and kept separate, and
//! shows each chunk to an observer (the log scanner). Fixed buffers: a job that prints
//! gigabytes neither slows down behind us nor grows our memory.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

/// Sees every chunk of one output stream, in order.
pub trait OutputObserver: Send {
    /// Sees a chunk; returns the failure lines it recognised for the first time in
    /// it (a new kind of failure), which the run marks and samples at once.
    fn output(&mut self, chunk: &[u8]) -> Vec<String>;
    /// The stream ended (the job closed it or exited).
    fn end(&mut self) {}
}

const BUFFER: usize = 256 * 1024;
/// Pipe capacity asked of the kernel: a job printing fast then blocks less often on
/// us (the default is 64 KiB; unprivileged users may get up to pipe-max-size, 1 MiB).
const PIPE_CAPACITY: i32 = 1 << 20;

/// What a copy saw: bytes passed through, and whether our side was closed early.
#[derive(Debug, Default)]
pub struct CopyStats {
    pub bytes: u64,
    /// Our own output was closed (`memtriage run … | head`): the job's pipe was closed
    /// too, so it gets EPIPE/SIGPIPE as it would have without memtriage.
    pub downstream_closed: bool,
    /// The copy was told to stop before end of file: the job's pipe, still open
    /// (processes the job left behind hold it), handed back for [`forward_after_exit`].
    pub still_open: Option<OwnedFd>,
}

/// Tells a [`copy`] to stop before its end of file and hand its pipe back.
pub struct StopCopy {
    write: OwnedFd,
}

/// The side of a [`StopCopy`] that the copy watches.
pub struct CopyStopped {
    read: OwnedFd,
}

/// A stop signal for one copy: a pipe, so the copy can wait on it and the job's
/// output at once.
pub fn stop_signal() -> std::io::Result<(StopCopy, CopyStopped)> {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    Ok((StopCopy { write }, CopyStopped { read }))
}

impl StopCopy {
    pub fn stop(&self) {
        let _ = rustix::io::write(&self.write, b"x");
    }
}

/// Waits until `from` has data (or its end), or `stop` fires; true when stopped.
fn stopped_before_data(from: &OwnedFd, stop: &CopyStopped) -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    loop {
        let mut fds = [
            PollFd::new(from, PollFlags::IN),
            PollFd::new(&stop.read, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {
                // Stop first, even with data waiting: a process that never stops
                // printing must not hold the run open, and what is left in the pipe
                // is read by whoever takes the pipe over.
                if !fds[1].revents().is_empty() {
                    return true;
                }
                if !fds[0].revents().is_empty() {
                    return false;
                }
            }
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return false,
        }
    }
}

/// Copies `from` (the job's pipe) to our file descriptor `to` until end of file, or
/// until `stop` fires while the pipe is idle.
pub fn copy(
    from: OwnedFd,
    to: BorrowedFd<'_>,
    observer: &mut dyn OutputObserver,
    stop: &CopyStopped,
    on_failure_line: &dyn Fn(String),
) -> CopyStats {
    // SAFETY: F_SETPIPE_SZ on a pipe we own; failure only leaves the default size.
    unsafe {
        libc::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&from),
            libc::F_SETPIPE_SZ,
            PIPE_CAPACITY,
        );
    }
    let mut stats = CopyStats::default();
    let mut buf = vec![0u8; BUFFER];
    loop {
        if stopped_before_data(&from, stop) {
            observer.end();
            stats.still_open = Some(from);
            return stats;
        }
        let n = match rustix::io::read(&from, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        stats.bytes += n as u64;
        if !stats.downstream_closed && !write_all(to, chunk) {
            stats.downstream_closed = true;
            // Closing our read end is what makes the job see the closed pipe.
            break;
        }
        for line in observer.output(chunk) {
            on_failure_line(line);
        }
    }
    observer.end();
    drop(from);
    stats
}

fn write_all(to: BorrowedFd<'_>, mut data: &[u8]) -> bool {
    while !data.is_empty() {
        match rustix::io::write(to, data) {
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => continue,
            Err(_) => return false,
        }
    }
    true
}

/// Keeps passing the job's output through after memtriage exits, for the processes
/// the job left behind, as their own terminal or pipe would have taken it: a small
/// forked process copies each pipe to its destination until every writer is gone.
/// Returns its pid.
/// Each pipe goes to a descriptor of this process's (1 or 2), which stays open as
/// long as the process does.
pub fn forward_after_exit(pipes: Vec<(OwnedFd, RawFd)>) -> std::io::Result<i32> {
    let fds: Vec<(RawFd, RawFd)> = pipes
        .iter()
        .map(|(from, to)| (from.as_raw_fd(), *to))
        .collect();
    // Allocated before fork: the child only makes async-signal-safe system calls.
    let mut buf = vec![0u8; 64 * 1024];
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|(from, _)| libc::pollfd {
            fd: *from,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: the child runs only poll, read, write, sigprocmask and _exit (all
    // async-signal-safe) on memory allocated before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid > 0 {
        drop(pipes);
        return Ok(pid);
    }
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        let mut open = polls.len();
        while open > 0 {
            if libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, -1) < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            for (i, p) in polls.iter_mut().enumerate() {
                if p.fd < 0 || p.revents == 0 {
                    continue;
                }
                let n = libc::read(p.fd, buf.as_mut_ptr().cast(), buf.len());
                if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                    p.fd = -1; // poll ignores negative descriptors
                    open -= 1;
                    continue;
                }
                let mut written = 0;
                while n > 0 && written < n {
                    let w = libc::write(
                        fds[i].1,
                        buf.as_ptr().add(written as usize).cast(),
                        (n - written) as usize,
                    );
                    if w < 0 && *libc::__errno_location() == libc::EINTR {
                        continue;
                    }
                    if w <= 0 {
                        // The destination is gone: stop reading, so the writer sees
                        // the closed pipe as it would have without memtriage.
                        libc::close(p.fd);
                        p.fd = -1;
                        open -= 1;
                        break;
                    }
                    written += w;
                }
            }
        }
        libc::_exit(0);
    }
}
