//! The kernel's process events (the proc connector): a netlink socket subscribed to
//! every fork, exec, rename and exit on the machine, so a process that lives a
//! millisecond is still seen. Subscribing needs the initial pid namespace (not a
//! container's) and, before Linux 6.6, CAP_NET_ADMIN (root); elsewhere
//! [`ProcEventSocket::subscribe`] says why it was refused. The bytes are read by [`crate::parse::proc_connector`].

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::parse::proc_connector::{
    parse_datagram, subscription, Datagram, ProcEvent, CN_IDX_PROC, PROC_CN_MCAST_IGNORE,
    PROC_CN_MCAST_LISTEN,
};

/// How long a receive blocks, so the thread that owns the socket notices a stop:
/// every run waits up to this long at its end, and a wakeup costs one system call.
pub const RECEIVE_TIMEOUT: Duration = Duration::from_millis(10);
/// Room for bursts (a `make -j` forks thousands a second); the kernel drops events
/// beyond it and says so (ENOBUFS).
const RECEIVE_BUFFER: libc::c_int = 8 << 20;
/// Big enough for any datagram the connector sends (one event is 76 bytes).
pub const DATAGRAM_MAX: usize = 4096;

const WHAT: &str = "the kernel's process events";
const FIX: &str = "to see every process, run memtriage on the host, not in a container, and as root where the kernel is older than 6.6 (it needs CAP_NET_ADMIN there); meanwhile processes are found by polling";

/// A subscription to the kernel's process events, ended when dropped.
pub struct ProcEventSocket {
    fd: OwnedFd,
}

/// What one receive got.
#[derive(Debug)]
pub enum Received {
    Datagram(Datagram),
    /// Nothing within [`RECEIVE_TIMEOUT`].
    Nothing,
}

fn set_option(fd: &OwnedFd, option: libc::c_int, value: &[u8]) -> std::io::Result<()> {
    // SAFETY: `value` is a valid buffer of its length for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            value.as_ptr().cast(),
            value.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn refused(cause: impl std::fmt::Display) -> Error {
    Error::refused(WHAT, cause.to_string(), FIX)
}

impl ProcEventSocket {
    /// Subscribes and waits up to `answer_within` for the kernel to accept. Refused
    /// without CAP_NET_ADMIN before Linux 6.6 (EPERM at bind or in the answer) and
    /// in a container's pid namespace (where the kernel ignores the request and
    /// never answers).
    pub fn subscribe(answer_within: Duration) -> Result<Self> {
        // SAFETY: plain socket(2); the descriptor is owned at once below.
        let raw = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                libc::NETLINK_CONNECTOR,
            )
        };
        if raw < 0 {
            return Err(refused(format_args!(
                "cannot open a netlink socket: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: `raw` is a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let buffer = RECEIVE_BUFFER.to_ne_bytes();
        // FORCE passes the rmem_max cap as root; the plain option is the fallback.
        if set_option(&fd, libc::SO_RCVBUFFORCE, &buffer).is_err() {
            let _ = set_option(&fd, libc::SO_RCVBUF, &buffer);
        }
        let timeout = libc::timeval {
            tv_sec: 0,
            tv_usec: RECEIVE_TIMEOUT.as_micros() as libc::suseconds_t,
        };
        // SAFETY: timeval is plain data; viewed as its bytes for setsockopt.
        let timeout_bytes = unsafe {
            std::slice::from_raw_parts(
                (&timeout as *const libc::timeval).cast::<u8>(),
                std::mem::size_of::<libc::timeval>(),
            )
        };
        set_option(&fd, libc::SO_RCVTIMEO, timeout_bytes).map_err(refused)?;

        // SAFETY: an all-zero sockaddr_nl is valid; the fields that matter are set.
        let mut address: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        address.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        address.nl_groups = CN_IDX_PROC;
        // SAFETY: `address` is a sockaddr_nl of the length given.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&address as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(refused(format_args!(
                "cannot join the process events group: {}",
                std::io::Error::last_os_error()
            )));
        }
        let socket = ProcEventSocket { fd };
        let token = next_token();
        socket
            .send(PROC_CN_MCAST_LISTEN, token)
            .map_err(|e| refused(format_args!("cannot subscribe: {e}")))?;
        socket.await_answer(token, answer_within)?;
        Ok(socket)
    }

    fn send(&self, op: u32, token: u32) -> std::io::Result<()> {
        let message = subscription(op, 0, token);
        // SAFETY: `message` is a valid buffer of its length; the socket is bound, and
        // netlink sends to the kernel (port 0) by default.
        let sent = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                message.as_ptr().cast(),
                message.len(),
                0,
            )
        };
        if sent < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Events seen before the answer belong to no job yet and are dropped.
    fn await_answer(&self, token: u32, within: Duration) -> Result<()> {
        let deadline = Instant::now() + within;
        let mut buffer = vec![0u8; DATAGRAM_MAX];
        while Instant::now() < deadline {
            let Received::Datagram(d) = self.receive(&mut buffer).map_err(refused)? else {
                continue;
            };
            for event in d.events {
                if let ProcEvent::Ack { ack, err } = event {
                    if ack != token.wrapping_add(1) {
                        continue;
                    }
                    return if err == 0 {
                        Ok(())
                    } else {
                        Err(refused(std::io::Error::from_raw_os_error(err as i32)))
                    };
                }
            }
        }
        Err(refused(
            "the kernel did not answer the subscription (memtriage runs in a container's pid namespace?)",
        ))
    }

    /// Waits up to [`RECEIVE_TIMEOUT`] for the next datagram. Events the kernel
    /// dropped because the buffer was full come back as a datagram marked `lost`.
    pub fn receive(&self, buffer: &mut [u8]) -> std::io::Result<Received> {
        self.receive_with(buffer, 0)
    }

    /// Waits up to [`RECEIVE_TIMEOUT`] for the next datagram, or until `wake` is
    /// readable (the owner is told to stop: it is not kept waiting for the timeout).
    pub fn receive_or_woken(&self, buffer: &mut [u8], wake: &OwnedFd) -> std::io::Result<Received> {
        let mut fds = [
            libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfd entries, both descriptors open for the call.
        let ready = unsafe {
            libc::poll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                RECEIVE_TIMEOUT.as_millis() as libc::c_int,
            )
        };
        if ready > 0 && fds[0].revents != 0 {
            return self.receive_queued(buffer);
        }
        Ok(Received::Nothing)
    }

    /// What is queued now, without waiting: for draining once told to stop.
    pub fn receive_queued(&self, buffer: &mut [u8]) -> std::io::Result<Received> {
        self.receive_with(buffer, libc::MSG_DONTWAIT)
    }

    fn receive_with(&self, buffer: &mut [u8], flags: libc::c_int) -> std::io::Result<Received> {
        // SAFETY: the kernel writes at most `buffer.len()` bytes into it.
        let got = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                flags,
            )
        };
        if got >= 0 {
            return Ok(Received::Datagram(parse_datagram(&buffer[..got as usize])));
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(Received::Nothing),
            Some(libc::ENOBUFS) => Ok(Received::Datagram(Datagram {
                events: Vec::new(),
                lost: true,
            })),
            _ => Err(e),
        }
    }
}

impl Drop for ProcEventSocket {
    /// The kernel counts listeners and sends events while any is left: say goodbye.
    fn drop(&mut self) {
        let _ = self.send(PROC_CN_MCAST_IGNORE, next_token());
    }
}

/// A value of our own for the subscription's `ack`, so another listener's answer
/// is not taken for ours.
fn next_token() -> u32 {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    (std::process::id() << 8).wrapping_add(COUNTER.fetch_add(1, Ordering::Relaxed))
}
