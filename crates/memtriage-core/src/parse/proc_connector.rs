//! The kernel's process events (the "proc connector", `linux/cn_proc.h`): netlink
//! datagrams on `NETLINK_CONNECTOR`, each `nlmsghdr` + `cn_msg` + `proc_event`, in
//! the host's byte order. Also the subscription request a listener sends.
//!
//! Layout (stable since Linux 2.6.15; `exit.parent_*` since 4.16):
//! `nlmsghdr` is 16 bytes, `cn_msg` 20 (`idx`, `val`, `seq`, `ack`: u32; `len`,
//! `flags`: u16), then `proc_event`: `what` u32, `cpu` u32, `timestamp_ns` u64
//! (CLOCK_MONOTONIC), and the event's fields from offset 16.

/// `cb_id` of the process events connector (`CN_IDX_PROC`, `CN_VAL_PROC`).
pub const CN_IDX_PROC: u32 = 1;
pub const CN_VAL_PROC: u32 = 1;
/// `enum proc_cn_mcast_op`.
pub const PROC_CN_MCAST_LISTEN: u32 = 1;
pub const PROC_CN_MCAST_IGNORE: u32 = 2;

const NLMSG_HDRLEN: usize = 16;
const CN_MSG_LEN: usize = 20;
const PROC_EVENT_HEADER: usize = 16;
/// `NLMSG_DONE`: how a single-part netlink message is marked.
const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;
const NLMSG_OVERRUN: u16 = 4;

const PROC_EVENT_NONE: u32 = 0;
const PROC_EVENT_FORK: u32 = 1;
const PROC_EVENT_EXEC: u32 = 2;
const PROC_EVENT_COMM: u32 = 0x200;
const PROC_EVENT_EXIT: u32 = 0x8000_0000;

/// One process event, as far as following a process tree needs it. Pids are as the
/// listener's pid namespace sees them (the initial one: only there may one listen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcEvent {
    /// The answer to a subscription: `err` 0 when it was accepted. `ack` is the
    /// request's `ack` plus one, so a listener knows its own answer.
    Ack { ack: u32, err: u32 },
    /// A task was cloned. A new process when `child_pid == child_tgid`; otherwise a
    /// thread of `child_tgid`.
    Fork {
        at_ns: u64,
        parent_tgid: i32,
        child_pid: i32,
        child_tgid: i32,
    },
    /// A task called execve; its comm is the new program's by now.
    Exec { at_ns: u64, pid: i32, tgid: i32 },
    /// A task renamed itself (`prctl(PR_SET_NAME)`, `/proc/PID/comm`).
    Comm {
        at_ns: u64,
        pid: i32,
        tgid: i32,
        comm: String,
    },
    /// A task exited. `exit_code` is the wait status (as `waitpid` gives it) of the
    /// task; the process ended when `pid == tgid`.
    Exit {
        at_ns: u64,
        pid: i32,
        tgid: i32,
        exit_code: u32,
    },
    /// Another event (uid, gid, sid, ptrace, coredump) or another connector's.
    Other,
}

impl ProcEvent {
    /// When the kernel stamped the event (CLOCK_MONOTONIC); none for an answer or
    /// another connector's message.
    pub fn at_ns(&self) -> Option<u64> {
        match self {
            ProcEvent::Fork { at_ns, .. }
            | ProcEvent::Exec { at_ns, .. }
            | ProcEvent::Comm { at_ns, .. }
            | ProcEvent::Exit { at_ns, .. } => Some(*at_ns),
            ProcEvent::Ack { .. } | ProcEvent::Other => None,
        }
    }
}

/// What one datagram held: its events, and whether the kernel said it dropped some.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Datagram {
    pub events: Vec<ProcEvent>,
    /// The kernel reported an overrun or an error message instead of events.
    pub lost: bool,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The events of one received datagram (one or more netlink messages). A truncated
/// or foreign message is skipped, never a panic.
pub fn parse_datagram(bytes: &[u8]) -> Datagram {
    let mut out = Datagram::default();
    let mut at = 0;
    while let Some(len) = u32_at(bytes, at) {
        let len = len as usize;
        if len < NLMSG_HDRLEN || at + len > bytes.len() {
            break;
        }
        match u16_at(bytes, at + 4) {
            Some(NLMSG_OVERRUN) | Some(NLMSG_ERROR) => out.lost = true,
            _ => {
                if let Some(event) = parse_cn_msg(&bytes[at + NLMSG_HDRLEN..at + len]) {
                    out.events.push(event);
                }
            }
        }
        // NLMSG_ALIGN: messages start on 4-byte boundaries.
        at += (len + 3) & !3;
    }
    out
}

fn parse_cn_msg(msg: &[u8]) -> Option<ProcEvent> {
    if u32_at(msg, 0)? != CN_IDX_PROC || u32_at(msg, 4)? != CN_VAL_PROC {
        return Some(ProcEvent::Other);
    }
    let ack = u32_at(msg, 12)?;
    let data_len = u16_at(msg, 16)? as usize;
    let data = msg.get(CN_MSG_LEN..CN_MSG_LEN + data_len)?;
    parse_proc_event(data, ack)
}

fn parse_proc_event(e: &[u8], ack: u32) -> Option<ProcEvent> {
    let what = u32_at(e, 0)?;
    let at_ns = u64_at(e, 8)?;
    let d = PROC_EVENT_HEADER;
    Some(match what {
        PROC_EVENT_NONE => ProcEvent::Ack {
            ack,
            err: u32_at(e, d)?,
        },
        PROC_EVENT_FORK => ProcEvent::Fork {
            at_ns,
            parent_tgid: i32_at(e, d + 4)?,
            child_pid: i32_at(e, d + 8)?,
            child_tgid: i32_at(e, d + 12)?,
        },
        PROC_EVENT_EXEC => ProcEvent::Exec {
            at_ns,
            pid: i32_at(e, d)?,
            tgid: i32_at(e, d + 4)?,
        },
        PROC_EVENT_COMM => {
            let raw = e.get(d + 8..d + 24)?;
            let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
            ProcEvent::Comm {
                at_ns,
                pid: i32_at(e, d)?,
                tgid: i32_at(e, d + 4)?,
                comm: String::from_utf8_lossy(&raw[..end]).into_owned(),
            }
        }
        PROC_EVENT_EXIT => ProcEvent::Exit {
            at_ns,
            pid: i32_at(e, d)?,
            tgid: i32_at(e, d + 4)?,
            exit_code: u32_at(e, d + 8)?,
        },
        _ => ProcEvent::Other,
    })
}

/// The message that subscribes to (`PROC_CN_MCAST_LISTEN`) or unsubscribes from
/// (`PROC_CN_MCAST_IGNORE`) process events. `port` is the sender's netlink port
/// (its pid); `ack` comes back plus one in the kernel's [`ProcEvent::Ack`].
pub fn subscription(op: u32, port: u32, ack: u32) -> Vec<u8> {
    let total = NLMSG_HDRLEN + CN_MSG_LEN + 4;
    let mut m = Vec::with_capacity(total);
    m.extend_from_slice(&(total as u32).to_ne_bytes());
    m.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
    m.extend_from_slice(&0u16.to_ne_bytes()); // flags
    m.extend_from_slice(&0u32.to_ne_bytes()); // seq
    m.extend_from_slice(&port.to_ne_bytes());
    m.extend_from_slice(&CN_IDX_PROC.to_ne_bytes());
    m.extend_from_slice(&CN_VAL_PROC.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes()); // seq
    m.extend_from_slice(&ack.to_ne_bytes());
    m.extend_from_slice(&4u16.to_ne_bytes()); // len of the op
    m.extend_from_slice(&0u16.to_ne_bytes()); // flags
    m.extend_from_slice(&op.to_ne_bytes());
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One datagram as the kernel sends it: nlmsghdr, cn_msg, then a 40-byte
    /// proc_event (`what`, `cpu`, `timestamp_ns`, 24 bytes of event data).
    fn datagram(what: u32, ack: u32, ts: u64, fields: &[u32]) -> Vec<u8> {
        let mut event = Vec::new();
        event.extend_from_slice(&what.to_ne_bytes());
        event.extend_from_slice(&3u32.to_ne_bytes()); // cpu
        event.extend_from_slice(&ts.to_ne_bytes());
        for f in fields {
            event.extend_from_slice(&f.to_ne_bytes());
        }
        event.resize(40, 0);
        let mut cn = Vec::new();
        for v in [CN_IDX_PROC, CN_VAL_PROC, 0, ack] {
            cn.extend_from_slice(&v.to_ne_bytes());
        }
        cn.extend_from_slice(&(event.len() as u16).to_ne_bytes());
        cn.extend_from_slice(&0u16.to_ne_bytes());
        cn.extend_from_slice(&event);
        let mut m = Vec::new();
        m.extend_from_slice(&((16 + cn.len()) as u32).to_ne_bytes());
        m.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
        m.extend_from_slice(&[0; 10]);
        m.extend_from_slice(&cn);
        m
    }

    /// Captured on Linux 6.18 (x86_64) while Python ran `sh -c 'exit 3'`: the fork
    /// of pid 26919 by 26878, its exec, and its exit with wait status 3 << 8
    /// (exit_signal SIGCHLD, parent 26878).
    const CAPTURED_FORK: &str = "4c000000030000002c0800000000000001000000010000002c08000000000000\
        28000000010000000100000092e762bbd2080000fe680000fe68000027690000276900000000000000000000";
    const CAPTURED_EXEC: &str = "4c000000030000008d0700000000000001000000010000008d07000000000000\
        280000000200000000000000bcb466bbd2080000276900002769000000000000000000000000000000000000";
    const CAPTURED_EXIT: &str = "4c000000030000008e0700000000000001000000010000008e07000000000000\
        280000000000008000000000167071bbd208000027690000276900000003000011000000fe680000fe680000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn a_captured_fork_exec_and_exit_give_pids_times_and_wait_status() {
        let events: Vec<ProcEvent> = [CAPTURED_FORK, CAPTURED_EXEC, CAPTURED_EXIT]
            .iter()
            .flat_map(|h| {
                let d = parse_datagram(&hex(h));
                assert!(!d.lost);
                d.events
            })
            .collect();
        assert_eq!(
            events,
            vec![
                ProcEvent::Fork {
                    at_ns: 0x08d2_bb62_e792,
                    parent_tgid: 26878,
                    child_pid: 26919,
                    child_tgid: 26919
                },
                ProcEvent::Exec {
                    at_ns: 0x08d2_bb66_b4bc,
                    pid: 26919,
                    tgid: 26919
                },
                ProcEvent::Exit {
                    at_ns: 0x08d2_bb71_7016,
                    pid: 26919,
                    tgid: 26919,
                    exit_code: 3 << 8
                },
            ]
        );
    }

    #[test]
    fn fork_exec_exit_and_ack_are_read_from_their_offsets() {
        let fork = datagram(PROC_EVENT_FORK, 0, 10, &[100, 100, 200, 200]);
        let thread = datagram(PROC_EVENT_FORK, 0, 11, &[200, 200, 201, 200]);
        let exec = datagram(PROC_EVENT_EXEC, 0, 12, &[200, 200]);
        let killed = datagram(PROC_EVENT_EXIT, 0, 13, &[200, 200, 9, 17, 100, 100]);
        let ack = datagram(PROC_EVENT_NONE, 43, 0, &[1]);
        assert_eq!(
            parse_datagram(&fork).events,
            vec![ProcEvent::Fork {
                at_ns: 10,
                parent_tgid: 100,
                child_pid: 200,
                child_tgid: 200
            }]
        );
        assert_eq!(
            parse_datagram(&thread).events,
            vec![ProcEvent::Fork {
                at_ns: 11,
                parent_tgid: 200,
                child_pid: 201,
                child_tgid: 200
            }]
        );
        assert_eq!(
            parse_datagram(&exec).events,
            vec![ProcEvent::Exec {
                at_ns: 12,
                pid: 200,
                tgid: 200
            }]
        );
        assert_eq!(
            parse_datagram(&killed).events,
            vec![ProcEvent::Exit {
                at_ns: 13,
                pid: 200,
                tgid: 200,
                exit_code: 9
            }]
        );
        assert_eq!(
            parse_datagram(&ack).events,
            vec![ProcEvent::Ack { ack: 43, err: 1 }]
        );
    }

    #[test]
    fn comm_stops_at_its_nul() {
        let mut m = datagram(PROC_EVENT_COMM, 0, 5, &[7, 7]);
        let name_at = 16 + 20 + 16 + 8;
        m[name_at..name_at + 14].copy_from_slice(b"pt_data_worker");
        assert_eq!(
            parse_datagram(&m).events,
            vec![ProcEvent::Comm {
                at_ns: 5,
                pid: 7,
                tgid: 7,
                comm: "pt_data_worker".into()
            }]
        );
    }

    #[test]
    fn several_messages_in_one_datagram_are_all_read() {
        let mut both = datagram(PROC_EVENT_EXEC, 0, 1, &[5, 5]);
        both.extend(datagram(PROC_EVENT_EXEC, 0, 2, &[6, 6]));
        assert_eq!(parse_datagram(&both).events.len(), 2);
    }

    #[test]
    fn overrun_truncation_and_foreign_connectors_never_panic() {
        let mut overrun = datagram(PROC_EVENT_EXEC, 0, 1, &[5, 5]);
        overrun[4..6].copy_from_slice(&NLMSG_OVERRUN.to_ne_bytes());
        assert!(parse_datagram(&overrun).lost);

        let whole = datagram(PROC_EVENT_EXIT, 0, 1, &[5, 5, 0]);
        for cut in 0..whole.len() {
            let d = parse_datagram(&whole[..cut]);
            assert!(d.events.is_empty(), "cut at {cut}: {:?}", d.events);
        }

        let mut foreign = datagram(PROC_EVENT_EXEC, 0, 1, &[5, 5]);
        foreign[16..20].copy_from_slice(&9u32.to_ne_bytes());
        assert_eq!(parse_datagram(&foreign).events, vec![ProcEvent::Other]);
    }

    #[test]
    fn the_subscription_is_one_done_message_carrying_the_op() {
        let m = subscription(PROC_CN_MCAST_LISTEN, 4242, 42);
        assert_eq!(m.len(), 40);
        assert_eq!(u32_at(&m, 0), Some(40));
        assert_eq!(u16_at(&m, 4), Some(NLMSG_DONE));
        assert_eq!(u32_at(&m, 12), Some(4242));
        assert_eq!(u32_at(&m, 16), Some(CN_IDX_PROC));
        assert_eq!(u32_at(&m, 28), Some(42));
        assert_eq!(u16_at(&m, 32), Some(4));
        assert_eq!(u32_at(&m, 36), Some(PROC_CN_MCAST_LISTEN));
    }
}
