//! A process ended by a signal: a segfault, an abort, a bus error (on a full /dev/shm
//! or on a mapped file), a SIGKILL the OOM killer did not send, a request to stop, an
//! illegal instruction. One finding per signal, for `run` (a process of the job, seen
//! by wait4) and `why` (a fault the kernel logged).

use crate::diagnose::shm::{ShmUse, GIVE_SHM_ROOM};
use crate::model::finding::{Assessment, CauseKind, Certainty, Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::run::signal_name;

/// Whether the Python frames of a crash are at hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PythonFrames {
    /// The job's output had them (faulthandler): the findings show them.
    Shown,
    /// The job was supervised and printed none.
    NotShown,
    /// The job was not supervised (`why`): only `run` would have shown them.
    NotSupervised,
}

/// Where the job's own output places a fatal signal (faulthandler's frames).
#[derive(Debug, Clone, Default)]
pub struct CrashSite {
    /// The job's line that raised the signal itself (`x.py:3: os.kill(os.getpid(),
    /// signal.SIGBUS)`): no fault of memory or of the machine.
    pub raised_at: Option<String>,
    /// A frame that was reading a memory-mapped file (numpy.memmap, safetensors,
    /// torch.load with mmap): a bus error there is the mapped file's.
    pub mapped_file_reader: Option<String>,
}

impl CrashSite {
    /// The site of a crash whose innermost frame in the job's code is `frame` (`x.py:3`)
    /// with the source text `line`: raised there when the line sends a signal.
    pub fn raised(frame: &str, line: &str) -> Option<String> {
        const RAISERS: [&str; 6] = [
            "os.kill(",
            "os.killpg(",
            "signal.raise_signal(",
            "signal.pthread_kill(",
            "os.abort(",
            "raise_signal(",
        ];
        RAISERS
            .iter()
            .any(|r| line.contains(r))
            .then(|| format!("{frame}: `{line}`"))
    }
}

/// What the finding about a process ended by a signal is built from.
#[derive(Debug, Clone)]
pub struct SignalEnd {
    pub signal: i32,
    /// Who ended, as the title names it: `the job, pid 10`, `python3 (pid 4242)`.
    pub subject: String,
    /// /dev/shm at the end (its peak during a run), where measured: a bus error with
    /// it full is the shared-memory failure.
    pub shm: Option<ShmUse>,
    pub frames: PythonFrames,
    /// The kernel's OOM killer was seen acting: a SIGKILL is its, and its finding's.
    pub oom_kill_seen: bool,
    pub site: CrashSite,
    pub evidence: Vec<Evidence>,
}

/// A fault signal (as the kernel sends for bad memory, an abort, an illegal
/// instruction) that the job raised itself.
fn raised_by_itself(signal: i32, subject: &str, at: &str) -> Option<Finding> {
    let fault = [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGABRT,
        libc::SIGILL,
        libc::SIGFPE,
    ];
    fault.contains(&signal).then(|| Finding {
        id: ids::RUN_SIGNAL.into(),
        severity: Severity::Error,
        title: format!(
            "ended by {} that it raised itself ({subject})",
            signal_name(signal)
        ),
        evidence: vec![Evidence::text(
            "raised by the job's own line",
            at,
            "faulthandler and the job's source",
        )],
        why: "The job sent the signal to itself (os.kill, signal.raise_signal, os.abort): it is \
              not a fault of memory, of a mapped file or of the machine."
            .into(),
        fix: format!("See {at}: the job's own code ended it."),
        assessment: confirmed(CauseKind::UserCode),
    })
}

/// How sure a finding about a signal is, and what it points at.
fn confirmed(cause: CauseKind) -> Option<Assessment> {
    Some(Assessment {
        certainty: Certainty::Confirmed,
        cause,
        confirm: String::new(),
    })
}

const NATIVE_STACK: &str = "Get the native stack: `gdb -ex run -ex bt --args python …` or \
     `catchsegv`; check the extension's version against torch/numpy (ABI mismatch), and \
     tensors passed to it (dtype, contiguity, device).";

/// The finding for a process ended by `end.signal`; `None` for a SIGKILL that an OOM
/// kill explains.
pub fn ended_by(end: SignalEnd) -> Option<Finding> {
    let SignalEnd {
        signal,
        subject,
        shm,
        frames,
        oom_kill_seen,
        site,
        mut evidence,
    } = end;
    if let Some(f) = site
        .raised_at
        .as_deref()
        .and_then(|at| raised_by_itself(signal, &subject, at))
    {
        return Some(f);
    }
    let name = signal_name(signal);
    let (id, severity, title, why, fix, assessment) = match signal {
        libc::SIGSEGV => (
            ids::RUN_SEGFAULT,
            Severity::Error,
            format!("segmentation fault in native code ({subject})"),
            "A C/C++/CUDA extension read or wrote memory it does not own; Python cannot catch it.",
            format!(
                "{}{NATIVE_STACK}",
                match frames {
                    PythonFrames::Shown => "The Python frames above show where the crash happened. ",
                    PythonFrames::NotShown => "No Python frames were printed (not a Python process, or its faulthandler was turned off: `run` sets PYTHONFAULTHANDLER=1). ",
                    PythonFrames::NotSupervised => "Rerun it under `memtriage run` to see the Python frames (it sets PYTHONFAULTHANDLER=1). ",
                }
            ),
            confirmed(CauseKind::UserCode),
        ),
        libc::SIGABRT => (
            ids::RUN_ABORT,
            Severity::Error,
            format!("aborted by native code ({subject})"),
            "abort() comes from a failed C/C++ assertion, an uncaught C++ exception, or heap corruption detected by the allocator.",
            "Read the line printed just before the abort (terminate called after…, free(): invalid pointer, Assertion … failed); run under gdb for the native stack.".into(),
            confirmed(CauseKind::UserCode),
        ),
        libc::SIGBUS if shm.is_some_and(ShmUse::is_full) => (
            ids::RUN_BUS_ERROR_SHM,
            Severity::Error,
            format!("bus error: /dev/shm was full ({subject})"),
            "Writing to a full tmpfs mapping raises SIGBUS; DataLoader workers pass batches through /dev/shm.",
            GIVE_SHM_ROOM.into(),
            confirmed(CauseKind::Configuration),
        ),
        libc::SIGBUS => {
            // Only the job's frames show that a mapped file was being read; without
            // them it is the likeliest cause, not a confirmed one.
            let assessment = match &site.mapped_file_reader {
                Some(frame) => {
                    evidence.push(Evidence::text(
                        crate::diagnose::logs::MAPPED_FILE_READER,
                        frame.as_str(),
                        "faulthandler",
                    ));
                    confirmed(CauseKind::Configuration)
                }
                None => Some(Assessment {
                    certainty: Certainty::Likely,
                    cause: CauseKind::Configuration,
                    confirm: "Which file: the Python frames of the crash (faulthandler) or \
                              `dmesg` for I/O and memory errors at that time."
                        .into(),
                }),
            };
            let title = match site.mapped_file_reader {
                Some(_) => format!("bus error on a memory-mapped file ({subject})"),
                None => format!("bus error, most likely on a memory-mapped file ({subject})"),
            };
            (
                ids::RUN_BUS_ERROR_MMAP,
                Severity::Error,
                title,
                "SIGBUS on a mapped file means a page past the file's end (it was truncated or replaced while mapped) or a disk read error; the kernel also sends it for memory it found corrupt.",
                "Do not rewrite checkpoints in place while they are loaded (write a new file and rename it); check `dmesg` for I/O and hardware memory errors.".into(),
                assessment,
            )
        }
        libc::SIGKILL if oom_kill_seen => return None,
        libc::SIGKILL => (
            ids::RUN_KILLED,
            Severity::Error,
            format!("killed by SIGKILL, not by the OOM killer as far as the kernel log shows ({subject})"),
            "SIGKILL cannot be caught. Without an OOM record it came from outside: a scheduler (Slurm time limit, Kubernetes eviction or preemption), a watchdog, or a user.",
            "Check the scheduler's record (sacct -j JOB, kubectl describe pod); if the kernel log was unreadable, rerun as root so memtriage can read it.".into(),
            Some(Assessment {
                certainty: Certainty::Possible,
                cause: CauseKind::Configuration,
                confirm: "Who sent it: `memtriage run --trace-signals` (root) has the kernel name the sender; else a scheduler's or container runtime's log for the time of the kill.".into(),
            }),
        ),
        libc::SIGINT | libc::SIGTERM | libc::SIGHUP | libc::SIGQUIT => (
            ids::RUN_TERMINATED,
            Severity::Info,
            format!("ended by {name} ({subject})"),
            "The job was asked to stop.",
            String::new(),
            None,
        ),
        libc::SIGILL | libc::SIGFPE => (
            ids::RUN_SIGNAL,
            Severity::Error,
            format!("ended by {name} ({subject})"),
            "The kernel ended it for an instruction it could not run (an illegal opcode: a binary built for another CPU) or an arithmetic fault.",
            "Check that native extensions were built for this CPU (AVX-512 wheels on an older host), and get the native stack with gdb.".into(),
            confirmed(CauseKind::UserCode),
        ),
        _ => (
            ids::RUN_SIGNAL,
            Severity::Error,
            format!("ended by {name} ({subject})"),
            "A signal the job did not handle ended it.",
            String::new(),
            None,
        ),
    };
    Some(Finding {
        id: id.into(),
        severity,
        title,
        evidence,
        why: why.into(),
        fix,
        assessment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(signal: i32, shm: Option<ShmUse>, frames: PythonFrames) -> SignalEnd {
        SignalEnd {
            signal,
            subject: "python3 (pid 7)".into(),
            shm,
            frames,
            oom_kill_seen: false,
            site: CrashSite::default(),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn a_bus_error_is_the_shared_memory_failure_only_with_dev_shm_full() {
        let full = ShmUse {
            used: 95,
            size: 100,
        };
        let f = ended_by(end(libc::SIGBUS, Some(full), PythonFrames::NotShown)).unwrap();
        assert_eq!(f.id, ids::RUN_BUS_ERROR_SHM);
        assert_eq!(f.title, "bus error: /dev/shm was full (python3 (pid 7))");
        let roomy = ShmUse { used: 5, ..full };
        for shm in [Some(roomy), None] {
            let f = ended_by(end(libc::SIGBUS, shm, PythonFrames::NotShown)).unwrap();
            assert_eq!(f.id, ids::RUN_BUS_ERROR_MMAP);
            assert_eq!(
                f.title,
                "bus error, most likely on a memory-mapped file (python3 (pid 7))"
            );
            assert_eq!(f.assessment.unwrap().certainty, Certainty::Likely);
        }
        // The job's frames show the mapped file being read: confirmed, with the frame.
        let mut reading = end(libc::SIGBUS, None, PythonFrames::Shown);
        reading.site.mapped_file_reader =
            Some(r#"File "/venv/numpy/core/memmap.py", line 268 in __getitem__"#.into());
        let f = ended_by(reading).unwrap();
        assert_eq!(
            f.title,
            "bus error on a memory-mapped file (python3 (pid 7))"
        );
        assert_eq!(f.assessment.unwrap().certainty, Certainty::Confirmed);
        assert!(f
            .evidence
            .iter()
            .any(|e| e.label == crate::diagnose::logs::MAPPED_FILE_READER));
    }

    #[test]
    fn a_fault_signal_the_job_raised_itself_is_said_so() {
        let at = CrashSite::raised("job.py:3", "os.kill(os.getpid(), signal.SIGBUS)");
        assert_eq!(
            at.as_deref(),
            Some("job.py:3: `os.kill(os.getpid(), signal.SIGBUS)`")
        );
        assert_eq!(
            CrashSite::raised("job.py:3", "x = np.memmap(path)[0]"),
            None
        );
        for signal in [libc::SIGBUS, libc::SIGSEGV] {
            let mut raised = end(signal, None, PythonFrames::Shown);
            raised.site.raised_at = at.clone();
            let f = ended_by(raised).unwrap();
            assert_eq!(f.id, ids::RUN_SIGNAL);
            assert!(f.title.contains("that it raised itself"), "{}", f.title);
            assert!(f.fix.contains("job.py:3"), "{}", f.fix);
        }
        // A request to stop that the job sent itself is still a request to stop.
        let mut term = end(libc::SIGTERM, None, PythonFrames::Shown);
        term.site.raised_at = at;
        assert_eq!(ended_by(term).unwrap().id, ids::RUN_TERMINATED);
    }

    #[test]
    fn a_segfaults_fix_says_where_the_python_frames_are() {
        let fix = |frames| ended_by(end(libc::SIGSEGV, None, frames)).unwrap().fix;
        assert!(fix(PythonFrames::Shown).starts_with("The Python frames above"));
        assert!(fix(PythonFrames::NotShown).starts_with("No Python frames were printed"));
        assert!(fix(PythonFrames::NotSupervised).contains("`memtriage run`"));
        for frames in [
            PythonFrames::Shown,
            PythonFrames::NotShown,
            PythonFrames::NotSupervised,
        ] {
            assert!(fix(frames).ends_with(NATIVE_STACK));
        }
    }

    #[test]
    fn a_sigkill_an_oom_kill_explains_is_its_findings() {
        let mut killed = end(libc::SIGKILL, None, PythonFrames::NotShown);
        assert_eq!(ended_by(killed.clone()).unwrap().id, ids::RUN_KILLED);
        killed.oom_kill_seen = true;
        assert!(ended_by(killed).is_none());
    }
}
