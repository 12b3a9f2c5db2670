//! Copies the job's stdout and stderr to ours, byte for byte and kept separate, and
//! shows each chunk to an observer (the log scanner). Fixed buffers: a job that prints
//! gigabytes neither slows down behind us nor grows our memory.

use std::os::fd::{BorrowedFd, OwnedFd};

/// Sees every chunk of one output stream, in order.
pub trait OutputObserver: Send {
    fn output(&mut self, chunk: &[u8]);
    /// The stream ended (the job closed it or exited).
    fn end(&mut self) {}
}

const BUFFER: usize = 256 * 1024;
/// Pipe capacity asked of the kernel: a job printing fast then blocks less often on
/// us (the default is 64 KiB; unprivileged users may get up to pipe-max-size, 1 MiB).
const PIPE_CAPACITY: i32 = 1 << 20;

/// What a copy saw: bytes passed through, and whether our side was closed early.
#[derive(Debug, Clone, Copy, Default)]
pub struct CopyStats {
    pub bytes: u64,
    /// Our own output was closed (`memtriage run … | head`): the job's pipe was closed
    /// too, so it gets EPIPE/SIGPIPE as it would have without memtriage.
    pub downstream_closed: bool,
}

/// Copies `from` (the job's pipe) to our file descriptor `to` until end of file.
pub fn copy(from: OwnedFd, to: BorrowedFd<'_>, observer: &mut dyn OutputObserver) -> CopyStats {
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
        observer.output(chunk);
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
