//! The kernel's own lines about a process that died of a fault: `COMM[PID]: segfault
//! at ADDR ip … error N in OBJECT[…]` (x86's show_unhandled_signals, on by default),
//! `traps: COMM[PID] general protection fault …` / `trap invalid opcode …`,
//! `COMM/PID: potentially unexpected fatal signal N.` (with print-fatal-signals=1, the
//! only line a SIGBUS gets), and `Memory failure: …: Killing COMM:PID due to hardware
//! memory corruption`. What the recorder keeps so `why` can explain a crash that
//! nobody supervised.

/// One process's fatal fault, as the kernel logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatalSignal {
    pub pid: i32,
    pub comm: String,
    /// SIGSEGV, SIGBUS, SIGILL, … (the number).
    pub signal: i32,
    /// The object the fault was in (`libtorch_cpu.so`), where the line says.
    pub object: Option<String>,
}

/// The fault a kernel message (without its log prefix) reports, if it reports one.
pub fn parse(message: &str) -> Option<FatalSignal> {
    let message = message.trim();
    if let Some((who, rest)) = message.split_once(": segfault at ") {
        let (comm, pid) = comm_and_pid(who)?;
        return Some(FatalSignal {
            pid,
            comm,
            signal: libc::SIGSEGV,
            object: object_of(rest),
        });
    }
    if let Some(rest) = message.strip_prefix("traps: ") {
        let (who, what) = rest.split_once(' ')?;
        let (comm, pid) = comm_and_pid(who)?;
        let signal = if what.starts_with("general protection") {
            libc::SIGSEGV
        } else if what.starts_with("trap invalid opcode") {
            libc::SIGILL
        } else if what.starts_with("trap divide error") {
            libc::SIGFPE
        } else {
            return None;
        };
        return Some(FatalSignal {
            pid,
            comm,
            signal,
            object: object_of(what),
        });
    }
    if let Some((who, rest)) = message.split_once(": potentially unexpected fatal signal ") {
        let (comm, pid) = who.rsplit_once('/')?;
        return Some(FatalSignal {
            pid: pid.parse().ok()?,
            comm: comm.to_string(),
            signal: rest.trim_end_matches('.').trim().parse().ok()?,
            object: None,
        });
    }
    if message.starts_with("Memory failure:") {
        let rest = message.split_once(": Killing ")?.1;
        let (who, _) = rest.split_once(" due to ")?;
        let (comm, pid) = who.rsplit_once(':')?;
        return Some(FatalSignal {
            pid: pid.parse().ok()?,
            comm: comm.to_string(),
            signal: libc::SIGBUS,
            object: None,
        });
    }
    None
}

/// `python3[4242]`: a comm may itself hold brackets, the pid is the last ones.
fn comm_and_pid(who: &str) -> Option<(String, i32)> {
    let inner = who.strip_suffix(']')?;
    let (comm, pid) = inner.rsplit_once('[')?;
    Some((comm.to_string(), pid.parse().ok()?))
}

/// `… in libc.so.6[156219,7f04ca444000+156000]` → `libc.so.6`.
fn object_of(rest: &str) -> Option<String> {
    let after = rest.rsplit_once(" in ")?.1;
    let object = after.split(['[', ' ']).next()?.trim();
    (!object.is_empty()).then(|| object.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_fault_lines_give_the_process_and_its_signal() {
        // Real lines: this machine's Linux 6.18, then forms collected from reports.
        let segv = parse("python3[11809]: segfault at 0 ip 00007f04ca574219 sp 00007ffe69643e18 error 4 in libc.so.6[156219,7f04ca444000+156000] likely on CPU 1 (core 1, socket 0)").unwrap();
        assert_eq!(
            (
                segv.pid,
                segv.comm.as_str(),
                segv.signal,
                segv.object.as_deref()
            ),
            (11809, "python3", libc::SIGSEGV, Some("libc.so.6"))
        );
        let old = parse("pt_main_thread[2231]: segfault at 7f3a ip 00007f3a sp 00007ffd error 6 in libtorch_cuda.so[7f3a00000000+5a000000]").unwrap();
        assert_eq!(old.object.as_deref(), Some("libtorch_cuda.so"));
        let gpf = parse("traps: python[977] general protection fault ip:7f8e4c sp:7ffc error:0 in libgomp.so.1.0.0[7f8e4c000+2d000]").unwrap();
        assert_eq!((gpf.pid, gpf.signal), (977, libc::SIGSEGV));
        let ill =
            parse("traps: python3[5] trap invalid opcode ip:7f sp:7ff error:0 in _C.so[7f+1000]")
                .unwrap();
        assert_eq!(ill.signal, libc::SIGILL);
        let bus = parse("python3/4242: potentially unexpected fatal signal 7.").unwrap();
        assert_eq!((bus.pid, bus.signal), (4242, libc::SIGBUS));
        let mce = parse(
            "Memory failure: 0x2f4a3c: Killing python3:6160 due to hardware memory corruption",
        )
        .unwrap();
        assert_eq!(
            (mce.pid, mce.comm.as_str(), mce.signal),
            (6160, "python3", libc::SIGBUS)
        );
    }

    #[test]
    fn other_lines_and_cut_ones_are_none() {
        for line in [
            "",
            "Out of memory: Killed process 4242 (python3)",
            "python3[x]: segfault at 0",
            "traps: python3[5] int3 ip:7f",
            "a/b: potentially unexpected fatal signal x.",
            "Memory failure: 0x1: recovery action for dirty LRU page: Recovered",
        ] {
            assert_eq!(parse(line), None, "{line}");
        }
    }
}
