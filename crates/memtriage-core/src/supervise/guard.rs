//! The job dies with its supervisor. PR_SET_PDEATHSIG reaches only the job's own
//! process: a `kill -9` of `memtriage run --limit` left its workers running in the
//! limit's cgroup for their whole life. A small process, forked before the job,
//! waits on a pipe that only memtriage can write; end-of-file without a release means
//! memtriage is gone, and the guard kills the cgroup and removes it.
//!
//! The guard is forked from a process that may have threads: between fork and its
//! exit it makes only async-signal-safe calls, on buffers made before the fork.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How long the guard waits for the killed processes to leave before giving up on
/// removing the cgroup (the next `run` removes it then).
const REMOVE_ROUNDS: u32 = 500;
const ROUND: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 10_000_000,
};

/// The write end of the guard's pipe: dropped without [`Guard::release`], the guard
/// acts.
pub struct Guard {
    release: OwnedFd,
}

impl Guard {
    /// Forks the guard of the cgroup `dir`. It is orphaned at once (a double fork), so
    /// this must run before memtriage becomes a subreaper: the guard is adopted by
    /// init, never waited for by the job's reaper.
    pub fn watch(dir: &Path) -> std::io::Result<Guard> {
        let paths = Paths::new(dir)?;
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just made and are owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the children run only `guard_main`'s async-signal-safe calls.
        let intermediate = unsafe { libc::fork() };
        match intermediate {
            -1 => Err(std::io::Error::last_os_error()),
            0 => unsafe {
                if libc::fork() == 0 {
                    libc::close(write.as_raw_fd());
                    guard_main(read.as_raw_fd(), &paths);
                }
                libc::_exit(0)
            },
            pid => {
                drop(read);
                let mut status = 0;
                // SAFETY: waits for the intermediate child this call forked.
                while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                {
                }
                Ok(Guard { release: write })
            }
        }
    }

    /// memtriage ends as it should: the guard leaves the job's processes alone (those
    /// the job left running on purpose keep their cgroup).
    pub fn release(self) {
        // SAFETY: one byte from a local, to the pipe this guard owns.
        unsafe { libc::write(self.release.as_raw_fd(), b"r".as_ptr().cast(), 1) };
    }
}

/// The cgroup's files, as C strings made before the fork.
struct Paths {
    dir: CString,
    kill: CString,
    procs: CString,
}

impl Paths {
    fn new(dir: &Path) -> std::io::Result<Paths> {
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_bytes())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
        };
        Ok(Paths {
            dir: c(dir)?,
            kill: c(&dir.join("cgroup.kill"))?,
            procs: c(&dir.join("cgroup.procs"))?,
        })
    }
}

/// The guard: deaf to the terminal's signals, holding nothing of memtriage's open,
/// until memtriage releases it or is gone.
unsafe fn guard_main(release: libc::c_int, paths: &Paths) -> ! {
    // SAFETY: the callers are the forked guard, which runs nothing else; every
    // pointer is to a local or to buffers made before the fork.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
        libc::setsid();
        libc::prctl(libc::PR_SET_NAME, c"memtriage-guard".as_ptr());
        // Held open, memtriage's output pipes would keep a `| tee` waiting for the guard.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        libc::dup2(release, 3);
        close_from(4);
        let mut byte = 0u8;
        loop {
            match libc::read(3, (&mut byte as *mut u8).cast(), 1) {
                1 => libc::_exit(0),
                -1 if *libc::__errno_location() == libc::EINTR => continue,
                _ => break,
            }
        }
        kill_cgroup(paths);
        for _ in 0..REMOVE_ROUNDS {
            if libc::rmdir(paths.dir.as_ptr()) == 0 || *libc::__errno_location() != libc::EBUSY {
                break;
            }
            libc::nanosleep(&ROUND, std::ptr::null_mut());
        }
        libc::_exit(0)
    }
}

unsafe fn close_from(first: libc::c_uint) {
    // SAFETY: the callers are the forked guard, which runs nothing else; every
    // pointer is to a local or to buffers made before the fork.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) == 0 {
            return;
        }
        // Kernels before 5.9: every descriptor the limit allows.
        let mut limit: libc::rlimit = std::mem::zeroed();
        let last = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            1024
        };
        for fd in first as libc::c_int..last {
            libc::close(fd);
        }
    }
}

/// `cgroup.kill` where the kernel has it (cgroup v2, 5.14+: the kernel kills every
/// process, forks included); elsewhere SIGKILL to each listed process until none is
/// left.
unsafe fn kill_cgroup(paths: &Paths) {
    // SAFETY: the callers are the forked guard, which runs nothing else; every
    // pointer is to a local or to buffers made before the fork.
    unsafe {
        let kill = libc::open(paths.kill.as_ptr(), libc::O_WRONLY);
        if kill >= 0 {
            let done = libc::write(kill, b"1".as_ptr().cast(), 1) == 1;
            libc::close(kill);
            if done {
                return;
            }
        }
        for _ in 0..REMOVE_ROUNDS {
            if kill_listed(paths) == 0 {
                return;
            }
            libc::nanosleep(&ROUND, std::ptr::null_mut());
        }
    }
}

/// SIGKILL to every pid in `cgroup.procs`; how many there were.
unsafe fn kill_listed(paths: &Paths) -> usize {
    // SAFETY: the callers are the forked guard, which runs nothing else; every
    // pointer is to a local or to buffers made before the fork.
    unsafe {
        let fd = libc::open(paths.procs.as_ptr(), libc::O_RDONLY);
        if fd < 0 {
            return 0;
        }
        let mut buf = [0u8; 4096];
        let (mut listed, mut pid, mut digits) = (0, 0 as libc::pid_t, false);
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            for &b in &buf[..n as usize] {
                if b.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add((b - b'0') as libc::pid_t);
                    digits = true;
                } else if digits {
                    libc::kill(pid, libc::SIGKILL);
                    (listed, pid, digits) = (listed + 1, 0, false);
                }
            }
        }
        if digits {
            libc::kill(pid, libc::SIGKILL);
            listed += 1;
        }
        libc::close(fd);
        listed
    }
}
