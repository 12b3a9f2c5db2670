//! The engine sampler on real processes: each scope finds what it should, the PSS
//! budget holds, samples come at the interval, and stopping joins the thread.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sampler::{Collector, PssBudget, Sample, Sampler, SamplerConfig, SamplerThread, Scope};

use crate::tests::support::{skip, skip_by_chance, Job};

fn config(scope: Scope, interval: Duration) -> SamplerConfig {
    SamplerConfig {
        system: false,
        exe: false,
        ..SamplerConfig::new(scope, interval)
    }
}

/// A PSS budget of one reading per tick, `share` of wall time on top of `allowance`.
fn one_per_tick(share: f64, allowance: Duration) -> Option<PssBudget> {
    Some(PssBudget {
        share,
        allowance,
        min_spacing: Duration::ZERO,
        per_tick: 1,
        unmoved_keeps: Duration::ZERO,
    })
}

/// Samples until `found` holds for one, or panics after `within`.
fn wait_for(sampler: &mut Sampler, within: Duration, found: impl Fn(&Sample) -> bool) -> Sample {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let sample = sampler
            .recv_timeout(left)
            .expect("no sample matched in time");
        if found(&sample) {
            return sample;
        }
    }
}

#[test]
fn a_tree_scope_picks_up_a_child_forked_after_sampling_began() {
    let job = Job::spawn("sh", &["-c", "sleep 0.3; sleep 30 & wait"]);
    let shell = job.pid();
    let mut sampler =
        Sampler::start(config(Scope::Tree(shell), Duration::from_millis(20))).unwrap();
    let first = sampler.next().unwrap();
    assert!(first.processes.iter().any(|p| p.pid == shell));
    let later = wait_for(&mut sampler, Duration::from_secs(5), |s| {
        s.processes
            .iter()
            .any(|p| p.ppid == shell && p.comm == "sleep" && s.t > 0.25)
    });
    assert!(later.processes.iter().any(|p| p.pid == shell));
    assert!(later.total_rss() > 0);
}

#[test]
fn the_supervised_scope_is_every_descendant_of_this_process() {
    let job = Job::spawn("sh", &["-c", "sleep 30 & wait"]);
    let shell = job.pid();
    let mut sampler = Sampler::start(config(Scope::Supervised, Duration::from_millis(20))).unwrap();
    let sample = wait_for(&mut sampler, Duration::from_secs(5), |s| {
        s.processes.iter().any(|p| p.ppid == shell)
    });
    assert!(sample.processes.iter().any(|p| p.pid == shell));
    let me = std::process::id() as i32;
    assert!(
        sample.processes.iter().all(|p| p.pid != me),
        "the supervisor is not its own job"
    );
}

#[test]
fn a_pid_set_follows_those_pids_and_drops_the_one_that_exits() {
    let (a, b, c) = (Job::sleeper(), Job::sleeper(), Job::sleeper());
    let pids = |s: &Sample| {
        let mut v: Vec<i32> = s.processes.iter().map(|p| p.pid).collect();
        v.sort_unstable();
        v
    };
    let mut wanted = vec![a.pid(), c.pid()];
    wanted.sort_unstable();
    let mut sampler = Sampler::start(config(
        Scope::Pids(vec![a.pid(), c.pid()]),
        Duration::from_millis(10),
    ))
    .unwrap();
    assert_eq!(pids(&sampler.next().unwrap()), wanted);
    assert!(!pids(&sampler.next().unwrap()).contains(&b.pid()));
    let a_pid = a.pid();
    drop(a);
    let after = wait_for(&mut sampler, Duration::from_secs(5), |s| {
        !s.processes.iter().any(|p| p.pid == a_pid)
    });
    assert_eq!(pids(&after), vec![c.pid()]);
}

#[test]
fn all_processes_include_a_new_sleeper_and_leave_out_kernel_threads() {
    let job = Job::sleeper();
    let mut sampler = Sampler::start(config(Scope::All, Duration::from_millis(50))).unwrap();
    let sample = sampler.next().unwrap();
    let sleeper = sample
        .processes
        .iter()
        .find(|p| p.pid == job.pid())
        .expect("the sleeper is in the sample");
    assert_eq!(sleeper.comm, "sleep");
    assert!(sleeper.rss > 0);
    let me = std::process::id() as i32;
    assert!(sample.processes.iter().any(|p| p.pid == me));
    // kthreadd is pid 2 where the machine has its own pid namespace.
    let kthreadd = std::fs::read_to_string("/proc/2/comm").is_ok_and(|c| c.trim() == "kthreadd");
    if kthreadd {
        assert!(sample.processes.iter().all(|p| p.pid != 2));
    }
}

/// A process holding `mib` MiB of touched memory: its smaps_rollup takes a while.
fn holder(mib: u32) -> Job {
    let code = format!(
        "import sys, time; b = bytearray({mib} << 20); print(1, flush=True); time.sleep(60)"
    );
    let mut child = Command::new("python3")
        .args(["-c", &code])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = [0u8; 2];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut line).unwrap();
    Job(child)
}

#[test]
fn pss_readings_stay_within_the_budget() {
    let jobs = [holder(256), holder(256)];
    let pids: Vec<i32> = jobs.iter().map(Job::pid).collect();
    // Runs the sampler for at least `least`, and on until `enough` readings were
    // attempted: under load a first 256 MiB reading can take tens of milliseconds,
    // and the budget (rightly) waits longer before the second.
    let run = |budget: PssBudget, least: Duration, enough: usize| {
        let costs = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink_costs = Arc::clone(&costs);
        let began = Instant::now();
        let thread = SamplerThread::spawn(
            SamplerConfig {
                pss: Some(budget),
                ..config(Scope::Pids(pids.clone()), Duration::from_millis(1))
            },
            move |s| {
                for a in s.pss_attempts {
                    sink_costs.lock().unwrap().push(a.cost);
                }
                true
            },
        )
        .unwrap();
        std::thread::sleep(least);
        while costs.lock().unwrap().len() < enough && began.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        thread.stop().unwrap();
        let wall = began.elapsed();
        let costs = costs.lock().unwrap().clone();
        (costs, wall)
    };
    let budget = PssBudget {
        share: 0.01,
        allowance: Duration::from_millis(2),
        min_spacing: Duration::ZERO,
        per_tick: 1,
        unmoved_keeps: Duration::ZERO,
    };
    let (costs, wall) = run(budget, Duration::from_millis(1500), 2);
    let total: Duration = costs.iter().sum();
    let largest = costs.iter().max().copied().unwrap_or_default();
    assert!(
        costs.len() >= 2,
        "each process gets a first reading: {costs:?}"
    );
    // A reading begins only while within budget: over it by one reading at most.
    assert!(
        total <= wall.mul_f64(budget.share) + budget.allowance + largest,
        "{total:?} spent in {} readings over {wall:?}",
        costs.len()
    );
    let (unbounded, _) = run(
        PssBudget {
            share: 1.0,
            ..budget
        },
        wall,
        0,
    );
    assert!(
        unbounded.len() > 3 * costs.len(),
        "the budget is what limits readings: {} against {}",
        unbounded.len(),
        costs.len()
    );
}

/// `python3` may be a wrapper (a pyenv shim) that execs the interpreter later; a
/// reading before that exec is dropped and taken again, so tests wait for the exec.
fn wait_for_python(pid: i32) {
    let exe = format!("/proc/{pid}/exe");
    let began = std::time::Instant::now();
    while !std::fs::read_link(&exe).is_ok_and(|e| e.to_string_lossy().contains("python"))
        && began.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_process_whose_faults_moved_most_is_read_first() {
    // A fresh mapping each time: a bytearray freed and taken again would reuse the
    // heap's pages (glibc raises its mmap threshold) and stop faulting.
    let busy = Job::spawn(
        "python3",
        &[
            "-c",
            "import mmap\nwhile True:\n m = mmap.mmap(-1, 4 << 20)\n m.write(bytes(4 << 20))\n m.close()",
        ],
    );
    let idle = Job::sleeper();
    wait_for_python(busy.pid());
    let mut collector = Collector::new(SamplerConfig {
        pss: one_per_tick(1.0, Duration::from_secs(10)),
        ..config(
            Scope::Pids(vec![idle.pid(), busy.pid()]),
            Duration::from_millis(1),
        )
    });
    let mut read = Vec::new();
    for _ in 0..7 {
        let sample = collector.sample();
        read.push(sample.pss_attempts[0].pid);
        std::thread::sleep(Duration::from_millis(30));
    }
    let mut first_two = read[..2].to_vec();
    first_two.sort_unstable();
    let mut both = vec![idle.pid(), busy.pid()];
    both.sort_unstable();
    assert_eq!(first_two, both, "never-read processes first: {read:?}");
    assert!(
        read[2..].iter().all(|&pid| pid == busy.pid()),
        "then the one that faults: {read:?} (busy {})",
        busy.pid()
    );
}

/// How many times each of `pids` had its PSS attempted over `ticks` ticks, every
/// process read each tick that the budget (here: unbounded) allows. Before each tick
/// after the first, `faulting` has faulted since the last (on a busy machine it may
/// wait for a CPU longer than a tick).
fn attempts_over(pids: &[i32], faulting: i32, ticks: usize, unmoved_keeps: Duration) -> Vec<usize> {
    let mut collector = Collector::new(SamplerConfig {
        pss: Some(PssBudget {
            share: 1.0,
            allowance: Duration::from_secs(10),
            min_spacing: Duration::ZERO,
            per_tick: u32::MAX,
            unmoved_keeps,
        }),
        ..config(Scope::Pids(pids.to_vec()), Duration::from_millis(1))
    });
    let minor_faults = || {
        let stat = std::fs::read(format!("/proc/{faulting}/stat")).unwrap();
        crate::parse::stat::parse(&stat).unwrap().minflt
    };
    let mut counts = vec![0; pids.len()];
    for _ in 0..ticks {
        for a in collector.sample().pss_attempts {
            if let Some(i) = pids.iter().position(|p| *p == a.pid) {
                counts[i] += 1;
            }
        }
        let faults = minor_faults();
        let began = Instant::now();
        std::thread::sleep(Duration::from_millis(30));
        while minor_faults() == faults && began.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    counts
}

#[test]
fn a_process_that_did_not_fault_keeps_its_reading_where_the_budget_says_so() {
    // Fresh pages at every turn (malloc would reuse a freed block without a fault).
    let loop_ = "import mmap\nwhile True:\n m = mmap.mmap(-1, 4 << 20)\n m.write(bytes(4 << 20))\n m.close()";
    let busy = Job::spawn("python3", &["-c", loop_]);
    let idle = Job::sleeper();
    wait_for_python(busy.pid());
    // Past the interpreter's start: from here it faults only in its loop.
    std::thread::sleep(Duration::from_millis(300));
    let pids = [idle.pid(), busy.pid()];
    let kept = attempts_over(&pids, busy.pid(), 6, Duration::from_secs(60));
    assert_eq!(kept[0], 1, "the sleeper read once, then kept: {kept:?}");
    assert_eq!(kept[1], 6, "the faulting one read at every tick: {kept:?}");
    let every = attempts_over(&pids, busy.pid(), 6, Duration::ZERO);
    assert_eq!(every, vec![6, 6], "without it, both at every tick");
}

#[test]
fn an_unchanged_process_keeps_its_reading_and_one_that_grows_is_read_at_once() {
    let code = "import sys\nprint(1, flush=True)\nsys.stdin.readline()\n\
                b = bytearray(64 << 20)\nprint(2, flush=True)\nsys.stdin.read()";
    let mut child = Command::new("python3")
        .args(["-c", code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let idle = Job::sleeper();
    let mut collector = Collector::new(SamplerConfig {
        skip_unchanged: true,
        pss: None,
        ..config(Scope::Pids(vec![pid, idle.pid()]), Duration::from_millis(1))
    });
    let of = |s: &Sample, pid: i32| s.processes.iter().find(|p| p.pid == pid).cloned().unwrap();
    let first = collector.sample();
    let still = collector.sample();
    assert_eq!(
        of(&still, idle.pid()).minor_faults,
        of(&first, idle.pid()).minor_faults
    );
    assert_eq!(of(&still, idle.pid()).rss, of(&first, idle.pid()).rss);
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"grow\n").unwrap();
    line.clear();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let grown = collector.sample();
    let (before, after) = (of(&still, pid), of(&grown, pid));
    assert!(
        after.rss >= before.rss + (60 << 20),
        "{} -> {}",
        before.rss,
        after.rss
    );
    assert!(after.minor_faults >= before.minor_faults + 15000);
    drop(stdin);
    child.wait().unwrap();
}

#[test]
fn samples_come_at_about_the_interval_and_the_first_at_once() {
    let job = Job::sleeper();
    let started = Instant::now();
    let sampler = Sampler::start(config(
        Scope::Pids(vec![job.pid()]),
        Duration::from_millis(50),
    ))
    .unwrap();
    let samples: Vec<Sample> = sampler.take(9).collect();
    assert!(samples[0].t < 0.04, "first sample at {}", samples[0].t);
    let mut gaps: Vec<f64> = samples.windows(2).map(|w| w[1].t - w[0].t).collect();
    gaps.sort_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    assert!(
        (0.04..0.08).contains(&median),
        "median gap {median}: {gaps:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(380));
    assert_eq!(
        samples.iter().map(|s| s.seq).collect::<Vec<_>>(),
        (0..9).collect::<Vec<_>>()
    );
}

#[test]
fn stopping_or_dropping_joins_the_thread() {
    let job = Job::sleeper();
    for stop in [true, false] {
        let count = Arc::new(AtomicU64::new(0));
        let sink_count = Arc::clone(&count);
        let thread = SamplerThread::spawn(
            config(Scope::Pids(vec![job.pid()]), Duration::from_millis(1)),
            move |_| {
                sink_count.fetch_add(1, Ordering::Relaxed);
                true
            },
        )
        .unwrap();
        // At least two samples before stopping, however busy the machine: a fixed
        // 30 ms drew one under .ci/under-load.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while count.load(Ordering::Relaxed) < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if stop {
            thread.stop().unwrap();
        } else {
            drop(thread);
        }
        // Joined: the thread has ended, and with it the sink it owned.
        assert_eq!(Arc::strong_count(&count), 1);
        let n = count.load(Ordering::Relaxed);
        assert!(n >= 2, "{n} samples");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(count.load(Ordering::Relaxed), n, "no sample after stopping");
    }
}

#[test]
fn stopping_a_sampler_hands_back_the_samples_not_consumed() {
    let job = Job::sleeper();
    let sampler = Sampler::start(config(
        Scope::Pids(vec![job.pid()]),
        Duration::from_millis(5),
    ))
    .unwrap();
    std::thread::sleep(Duration::from_millis(40));
    let left = sampler.stop().unwrap();
    assert!(
        !left.is_empty(),
        "samples taken and not consumed are handed back"
    );
    assert!(left.windows(2).all(|w| w[1].seq == w[0].seq + 1));
}

/// A bug on the sampling thread must not pass silently: `run` notes it.
#[test]
fn a_sampler_that_died_of_a_panic_says_so_when_stopped() {
    let job = Job::sleeper();
    let thread = SamplerThread::spawn(
        config(Scope::Pids(vec![job.pid()]), Duration::from_millis(5)),
        |_| panic!("sink broke"),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let err = thread.stop().unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Internal);
    assert!(err.to_string().contains("sink broke"), "{err}");
}

/// A process that exits hands its pid back to the kernel; a `Pids` scope must not
/// follow whatever process gets it next.
#[test]
fn a_pid_set_does_not_adopt_a_process_that_reuses_an_ended_pid() {
    for _ in 0..20 {
        let job = Job::sleeper();
        let pid = job.pid();
        let mut collector = crate::sampler::Collector::new(config(
            Scope::Pids(vec![pid]),
            Duration::from_millis(5),
        ));
        assert_eq!(collector.sample().processes.len(), 1);
        drop(job);
        assert!(collector.sample().processes.is_empty(), "ended");
        // As root, the next fork can be given the same pid (other tests fork too,
        // so this may take a few tries).
        if std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string()).is_err() {
            skip("needs root to choose the next pid");
            return;
        }
        let other = Job::sleeper();
        if other.pid() != pid {
            continue;
        }
        let later = collector.sample();
        assert!(
            later.processes.is_empty(),
            "pid {pid} is another process now: {:?}",
            later.processes
        );
        return;
    }
    skip_by_chance("the pid was never handed out again in 20 tries");
}

/// A worker of a test's child: not our child, so killed by pid.
struct Worker(i32);

impl Drop for Worker {
    fn drop(&mut self) {
        // SAFETY: a signal to a process this test's child forked.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
        }
    }
}

impl Worker {
    fn pid(&self) -> i32 {
        self.0
    }
}

/// The start of a Python script whose process holds 64 MiB of its own.
const PARENT_OF_64_MIB: &str = "import mmap, os, sys, time
data = bytearray(64 << 20)
for i in range(0, len(data), 4096): data[i] = 1";

/// Python running `script`, which prints its workers' pids on one line once they run.
fn python_with_workers(script: &str) -> (Job, Vec<Worker>) {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let workers = line
        .split_whitespace()
        .map(|p| Worker(p.parse().unwrap()))
        .collect();
    (Job(child), workers)
}

/// Regression: a parent never read yet (or a worker that used its readings past the
/// budget) stood first for ever, since its faults since its last attempt only grow,
/// and a worker copying its parent's memory later was never read again past the
/// budget: a DataLoader test saw one of its two copying workers.
#[test]
fn a_worker_that_copies_later_is_read_though_another_faults_more() {
    let script = PARENT_OF_64_MIB.to_string()
        + r#"
busy = os.fork()
if busy == 0:
    # Fresh pages each round: faults without end.
    while True:
        m = mmap.mmap(-1, 4 << 20)
        for i in range(0, len(m), 4096): m[i] = 1
        m.close()
late = os.fork()
if late == 0:
    time.sleep(1.5)
    for i in range(0, len(data), 4096): data[i] = 2
    time.sleep(60)
print(busy, late, flush=True)
time.sleep(60)
"#;
    let (parent, workers) = python_with_workers(&script);
    let [busy, late] = <[Worker; 2]>::try_from(workers).ok().expect("two workers");
    // Nothing within the budget after the first reading: every later one is a
    // worker's reading past it.
    let mut collector = Collector::new(SamplerConfig {
        pss: one_per_tick(0.0, Duration::ZERO),
        ..config(
            Scope::Pids(vec![parent.pid(), busy.pid(), late.pid()]),
            Duration::from_millis(1),
        )
    });
    let mut copied = None;
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(10) {
        let sample = collector.sample();
        if let Some(p) = sample.processes.iter().find(|p| p.pid == late.pid()) {
            // Read again once it has touched 32 MiB since its first reading.
            if p.copied_after_fork.is_some_and(|c| c >= 32 << 20) {
                copied = p.copied_after_fork;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        copied.is_some(),
        "the late worker's copy of its parent's 64 MiB was never read"
    );
}

/// A machine that starts processes all the time (a build) keeps bringing processes
/// never read: the largest go first, but a smaller old one must not wait behind them
/// for ever (past its due time it goes first).
#[test]
fn an_old_process_gets_its_first_pss_reading_while_new_ones_keep_coming() {
    // A small shell starting a larger Python every 100 ms, each living 600 ms: more
    // new processes than one reading per 200 ms tick can keep up with.
    let code = "while :; do python3 -c 'import time; time.sleep(0.6)' & sleep 0.1; done";
    let job = Job::spawn("sh", &["-c", code]);
    let old = job.pid();
    // Its children are running by the first tick.
    std::thread::sleep(Duration::from_millis(500));
    let mut sampler = Sampler::start(SamplerConfig {
        pss: one_per_tick(1.0, Duration::from_secs(1)),
        ..config(Scope::Tree(old), Duration::from_millis(200))
    })
    .unwrap();
    wait_for(&mut sampler, Duration::from_secs(10), |s| {
        s.pss_attempts.iter().any(|a| a.pid == old)
    });
}

/// A view sorted by size shows the largest processes first: never read, they are read
/// first, whatever their age (a machine-wide `top` on a busy machine left a job's
/// 190 MiB parent without PSS for a minute behind newer small processes).
#[test]
fn the_largest_process_never_read_is_read_first() {
    let large = Job::spawn(
        "python3",
        &[
            "-c",
            "import time\nb = b'\\x01' * (96 << 20)\nprint(flush=True)\ntime.sleep(60)",
        ],
    );
    wait_for_python(large.pid());
    let resident_kib = |pid: i32| -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let line = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .unwrap_or("");
        line.split_whitespace()
            .nth(1)
            .and_then(|k| k.parse().ok())
            .unwrap_or(0)
    };
    let began = Instant::now();
    while resident_kib(large.pid()) < 90 << 10 && began.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Newer than the large one, and small.
    let small = Job::spawn("sleep", &["60"]);
    let mut collector = Collector::new(SamplerConfig {
        // One reading in all: the allowance lets the first begin, and nothing more.
        pss: one_per_tick(0.0, Duration::ZERO),
        ..config(
            Scope::Pids(vec![large.pid(), small.pid()]),
            Duration::from_millis(1),
        )
    });
    let attempts = collector.sample().pss_attempts;
    let read: Vec<i32> = attempts.iter().map(|a| a.pid).collect();
    assert_eq!(
        read,
        vec![large.pid()],
        "small {}, large {}",
        small.pid(),
        large.pid()
    );
}

/// Regression: readings past the budget were booked against it, so each forked
/// subshell's first reading (one a tick, on a machine running a build) kept the
/// ledger in debt and a machine-wide `top` read no other process for minutes.
#[test]
fn a_reading_past_the_budget_is_not_booked_against_it() {
    // The parent grows after the fork, so it is the largest and read first, within
    // the budget; its worker is then read past it, at first sight.
    let script = PARENT_OF_64_MIB.to_string()
        + r#"
worker = os.fork()
if worker == 0:
    time.sleep(60)
more = bytearray(32 << 20)
for i in range(0, len(more), 4096): more[i] = 1
print(worker, flush=True)
time.sleep(60)
"#;
    let (parent, workers) = python_with_workers(&script);
    let worker = workers[0].pid();
    let mut collector = Collector::new(SamplerConfig {
        pss: one_per_tick(0.0, Duration::ZERO),
        ..config(
            Scope::Pids(vec![parent.pid(), worker]),
            Duration::from_millis(1),
        )
    });
    let mut attempts = collector.sample().pss_attempts;
    attempts.extend(collector.sample().pss_attempts);
    let read: Vec<i32> = attempts.iter().map(|a| a.pid).collect();
    assert_eq!(
        read,
        vec![parent.pid(), worker],
        "the parent within, its worker past"
    );
    assert_eq!(collector.pss_spent(), Some(attempts[0].cost));
}
