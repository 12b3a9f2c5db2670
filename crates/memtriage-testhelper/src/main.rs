//! Test helper: builds a known memory layout, reports `ready PID [CHILD…]` on stdout,
//! then holds it until its stdin closes. Tests assert that memtriage measures what
//! this process really did.
//!
//! Steps run in order, from the arguments:
//!   anon MIB            map MIB of private anonymous memory and write every page
//!   file PATH MIB       map PATH read-only (whole file) and read its first MIB
//!   shm MIB             map MIB of /dev/shm (unlinked at once) shared and write it
//!   fork N              fork N children; steps after this run in each child
//!   read MIB            (child) read MIB of the first `anon` region: stays shared
//!   dirty MIB           (child) write MIB of the first `anon` region: copy-on-write
//!   grow MIB SECONDS    allocate and write MIB per second of anonymous memory, in
//!                       steps of 1/20 s, for SECONDS (a leak at a known rate)
//!   sleep SECONDS       wait, holding what is allocated
//!
//! Children die with the parent (PR_SET_PDEATHSIG), so a failed test leaves nothing.
// A test fixture, not the product: its errors go straight to the test's stderr.
#![allow(clippy::print_stderr)]

use std::ffi::CString;
use std::io::{Read, Write};
use std::ptr;
use std::time::{Duration, Instant};

const PAGE: usize = 4096;
const MIB: usize = 1 << 20;

enum Step {
    Anon(usize),
    File(String, usize),
    Shm(usize),
    Fork(usize),
    Read(usize),
    Dirty(usize),
    Grow { mib_per_second: usize, seconds: f64 },
    Sleep(f64),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let steps = match parse(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("memtriage-testhelper: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&steps) {
        eprintln!("memtriage-testhelper: {e}");
        std::process::exit(1);
    }
}

fn parse(args: &[String]) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut it = args.iter();
    let mib = |v: Option<&String>| -> Result<usize, String> {
        v.ok_or("missing size")?
            .parse()
            .map_err(|_| "size must be a number of MiB".to_string())
    };
    let seconds = |v: Option<&String>| -> Result<f64, String> {
        v.ok_or("missing seconds")?
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| "seconds must be a non-negative number".to_string())
    };
    while let Some(word) = it.next() {
        steps.push(match word.as_str() {
            "anon" => Step::Anon(mib(it.next())?),
            "file" => {
                let path = it.next().ok_or("file needs PATH MIB")?.clone();
                Step::File(path, mib(it.next())?)
            }
            "shm" => Step::Shm(mib(it.next())?),
            "fork" => Step::Fork(mib(it.next())?),
            "read" => Step::Read(mib(it.next())?),
            "dirty" => Step::Dirty(mib(it.next())?),
            "grow" => Step::Grow {
                mib_per_second: mib(it.next())?,
                seconds: seconds(it.next())?,
            },
            "sleep" => Step::Sleep(seconds(it.next())?),
            other => return Err(format!("unknown step {other:?}")),
        });
    }
    Ok(steps)
}

fn map(len: usize, prot: i32, flags: i32, fd: i32) -> Result<*mut u8, String> {
    // SAFETY: a fresh mapping; the kernel chooses the address.
    let p = unsafe { libc::mmap(ptr::null_mut(), len, prot, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(format!(
            "mmap {len} bytes: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(p.cast())
}

fn write_pages(p: *mut u8, len: usize, value: u8) {
    for off in (0..len).step_by(PAGE) {
        // SAFETY: `p..p+len` is a writable mapping we own.
        unsafe { ptr::write_volatile(p.add(off), value) };
    }
}

fn read_pages(p: *const u8, len: usize) -> u64 {
    let mut sum = 0u64;
    for off in (0..len).step_by(PAGE) {
        // SAFETY: `p..p+len` is a readable mapping we own.
        sum += u64::from(unsafe { ptr::read_volatile(p.add(off)) });
    }
    sum
}

fn run(steps: &[Step]) -> Result<(), String> {
    let mut first_anon: Option<(*mut u8, usize)> = None;
    let mut children: Vec<i32> = Vec::new();
    let mut ready_pipe: Option<(i32, i32)> = None;
    let mut is_child = false;
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    for step in steps {
        match step {
            Step::Anon(mib) => {
                let len = mib * MIB;
                let p = map(len, rw, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)?;
                // Small pages only: the tests count 4 KiB copy-on-write pages.
                // SAFETY: advising our own mapping.
                unsafe { libc::madvise(p.cast(), len, libc::MADV_NOHUGEPAGE) };
                write_pages(p, len, 1);
                first_anon.get_or_insert((p, len));
            }
            Step::File(path, mib) => {
                let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
                let size = file.metadata().map_err(|e| format!("{path}: {e}"))?.len() as usize;
                use std::os::fd::AsRawFd;
                let p = map(size, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd())?;
                read_pages(p, (mib * MIB).min(size));
            }
            Step::Shm(mib) => {
                let len = mib * MIB;
                let name = CString::new(format!("/memtriage-test-{}", std::process::id()))
                    .map_err(|e| e.to_string())?;
                // SAFETY: plain libc calls on a name we own; the fd is closed after mapping.
                let p = unsafe {
                    let fd = libc::shm_open(
                        name.as_ptr(),
                        libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
                        0o600,
                    );
                    if fd < 0 {
                        return Err(format!("shm_open: {}", std::io::Error::last_os_error()));
                    }
                    libc::shm_unlink(name.as_ptr());
                    if libc::ftruncate(fd, len as libc::off_t) != 0 {
                        return Err(format!("ftruncate: {}", std::io::Error::last_os_error()));
                    }
                    let p = map(len, rw, libc::MAP_SHARED, fd);
                    libc::close(fd);
                    p?
                };
                write_pages(p, len, 2);
            }
            Step::Fork(n) => {
                let mut fds = [0i32; 2];
                // SAFETY: creating a pipe into a local array.
                if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                    return Err(format!("pipe: {}", std::io::Error::last_os_error()));
                }
                ready_pipe = Some((fds[0], fds[1]));
                let parent = std::process::id() as i32;
                for _ in 0..*n {
                    // SAFETY: the child only touches memory and calls async-signal-safe functions.
                    match unsafe { libc::fork() } {
                        -1 => return Err(format!("fork: {}", std::io::Error::last_os_error())),
                        0 => {
                            // SAFETY: prctl and getppid are plain syscalls.
                            unsafe {
                                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                                if libc::getppid() != parent {
                                    libc::_exit(0);
                                }
                            }
                            is_child = true;
                            children.clear();
                            break;
                        }
                        pid => children.push(pid),
                    }
                }
                if is_child {
                    continue;
                }
                return finish_parent(&children, fds[0], fds[1]);
            }
            Step::Grow {
                mib_per_second,
                seconds,
            } => grow(*mib_per_second, *seconds)?,
            Step::Sleep(seconds) => std::thread::sleep(Duration::from_secs_f64(*seconds)),
            Step::Read(mib) | Step::Dirty(mib) => {
                let (p, len) = first_anon.ok_or("read/dirty need an earlier anon step")?;
                let len = (mib * MIB).min(len);
                if matches!(step, Step::Dirty(_)) {
                    write_pages(p, len, 3);
                } else {
                    read_pages(p, len);
                }
            }
        }
    }
    if is_child {
        if let Some((r, w)) = ready_pipe {
            // SAFETY: closing our copy of the read end and writing one byte to the pipe.
            unsafe {
                libc::close(r);
                libc::write(w, b"r".as_ptr().cast(), 1);
                loop {
                    libc::pause();
                }
            }
        }
    }
    finish_parent(&children, -1, -1)
}

/// Allocates at a steady rate: a step every 1/20 s, each on the schedule from the
/// start (a late step is caught up, so the rate holds on a busy machine). Never freed.
fn grow(mib_per_second: usize, seconds: f64) -> Result<(), String> {
    const STEPS_PER_SECOND: f64 = 20.0;
    let step = mib_per_second * MIB / STEPS_PER_SECOND as usize;
    let start = Instant::now();
    let mut done = 0u64;
    loop {
        let elapsed = start.elapsed().as_secs_f64();
        let due = ((elapsed.min(seconds) * STEPS_PER_SECOND) as u64).max(done);
        for _ in done..due {
            if step > 0 {
                let p = map(
                    step,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                )?;
                write_pages(p, step, 1);
            }
        }
        done = due;
        if elapsed >= seconds {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs_f64(1.0 / STEPS_PER_SECOND));
    }
}

/// Waits for every child to be ready, says so, then holds until stdin closes.
fn finish_parent(children: &[i32], ready_read: i32, ready_write: i32) -> Result<(), String> {
    if ready_read >= 0 {
        // SAFETY: closing our write end so a dead child shows as EOF, then reading bytes.
        unsafe { libc::close(ready_write) };
        let mut got = 0;
        let mut byte = [0u8; 1];
        while got < children.len() {
            // SAFETY: reading into a one-byte local buffer.
            let n = unsafe { libc::read(ready_read, byte.as_mut_ptr().cast(), 1) };
            if n <= 0 {
                return Err("a child died before it was ready".into());
            }
            got += 1;
        }
    }
    let mut line = format!("ready {}", std::process::id());
    for c in children {
        line.push_str(&format!(" {c}"));
    }
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{line}").map_err(|e| e.to_string())?;
    stdout.flush().map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    for c in children {
        // SAFETY: signalling and reaping our own children.
        unsafe {
            libc::kill(*c, libc::SIGKILL);
            libc::waitpid(*c, ptr::null_mut(), 0);
        }
    }
    Ok(())
}
