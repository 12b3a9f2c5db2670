//! Failures told by their symptoms, in words or in figures a job printed, with no
//! failure line: kswapd burning a CPU, a machine thrashing or stalled in swap, PSI
//! stall shares, memory that keeps growing, a figure that creeps up reading after
//! reading. Each form recurred among the misses of the unseen batches 1 to 5 (both
//! splits, pooled); the lines are theirs, the sources in each batch's index.jsonl.

use crate::diagnose::logs::FailureClass;

use super::{classes, each_named_first, lines_raise_nothing, only_finding, scan};

#[test]
fn symptoms_in_words_are_named() {
    let cases = [
        // coreos/bugs (2026-11-29b set-aside), RHEL bugzilla 124058, a Japanese VPS memo.
        ("When I do manage to ssh into the machine I see that the kswap process is utilizing 100% of cpu.", "log.memory-pressure"),
        ("kswapd spins at 100% CPU. Backtrace caught using sysrq:", "log.memory-pressure"),
        ("When this happens kswapd is often seen in R state, using about 100% cpu time", "log.memory-pressure"),
        ("在那一刻主機上最消耗 CPU 的程序是虛擬客戶的 Qemu 程序,緊隨其後的是 kswapd0 和 kswapd1,CPU 使用率為 100%。", "log.memory-pressure"),
        // Super User, thrash-protect, ai-toolkit, a NixOS issue.
        ("It dutifully tries to allocate all this memory, and the system immediately begins thrashing, swapping endlessly and becoming sluggish or non-responsive.", "log.swap-thrashing"),
        ("A while ago, I did experience severe thrashing on my workstation, and thrash-protect apparently did not help.", "log.swap-thrashing"),
        ("It's not actually stuck, it's just going extremely slow and basically writing everything to the swapfile.", "log.swap-thrashing"),
        ("The freeze happens immediately upon swap free getting to 0.2M and it never recovers.", "log.swap-thrashing"),
        // PSI as a monitor and the kernel print it.
        ("PSI mem some avg10:  78.67 | MemAvail: 1631 M, 82.0 % | SwapFree: 456 M,  62.2 %", "log.memory-pressure"),
        ("full avg10=57.59 avg60=58.06 avg300=60.38 total=3300487258", "log.memory-pressure"),
        // Growth in words, in English and Chinese.
        ("During my training, the memory usage(RAM, not GPU memory) kept increasing (at begining 1.8%, after training 3 epochs, it increased to 40%).", "log.memory-growth"),
        ("但是我在训练过程中占用的内存（而非显存）越来越大，从最开始的不到10g能提高到50g", "log.memory-growth"),
        ("在grafana 监控面板中发现在 10.00 后内存一直在涨没有下来过出现了明显的数据泄漏。", "log.memory-growth"),
    ];
    each_named_first(&cases);
}

#[test]
fn the_same_words_without_the_symptom_are_no_failure() {
    lines_raise_nothing(&[
        // kswapd listed idle, a CPU cache that thrashes, swap named without a stall.
        "    42 root      20   0       0      0      0 S   0.0  0.0   0:01.23 kswapd0",
        "The L2 cache is thrashing when the working set exceeds 1 MiB.",
        "Swap: 2.0G total, 0B used; the job finished in 40 minutes.",
        // A healthy machine's PSI.
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=1234",
        "full avg10=2.10 avg60=0.80 avg300=0.20 total=99",
        // Memory that stays flat, or a count that is no figure.
        "memory usage stays flat across epochs",
        "memory 4 workers",
    ]);
}

/// tensorflow/tensorflow#43702 and #80895 (2026-11-28 train): the figure under a label
/// that says when it was taken, and a slow creep over many readings.
#[test]
fn a_figure_that_creeps_up_reading_after_reading_is_growth() {
    let rss: String = [555, 655, 668, 698, 714, 730, 720, 763, 752, 771]
        .iter()
        .enumerate()
        .map(|(i, mb)| format!("iteration {i}: rss {mb} MB (+13936 KB; +58290 KB/it.)\n"))
        .collect();
    only_finding(&scan(rss.as_bytes()), FailureClass::MemoryGrowth);

    // +6% over ten readings, nearly every one higher: slow, but a leak.
    let creep: String = (0..10)
        .map(|i| {
            format!(
                "end Current memory usage: {:.2} MB\n",
                1259.84 + 8.0 * f64::from(i)
            )
        })
        .collect();
    only_finding(&scan(creep.as_bytes()), FailureClass::MemoryGrowth);

    // Before and after each request are two series; each rises.
    let requests: String = (0..6)
        .map(|i| {
            let gb = 5.65 + 0.4 * f64::from(i);
            format!(
                "INFO [-36] : Used memory (before request): {gb:.2}GB\nINFO [-43] : Used memory (after request): {:.2}GB\n",
                gb + 0.39
            )
        })
        .collect();
    only_finding(&scan(requests.as_bytes()), FailureClass::MemoryGrowth);

    // A warm-up that settles is no growth, however many readings.
    let settles: String = [100, 120, 130, 131, 131, 130, 131, 130, 131, 130]
        .iter()
        .map(|mb| format!("RSS: {mb} MB\n"))
        .collect();
    assert_eq!(classes(settles.as_bytes()), Vec::<String>::new());
}

/// vllm-project/vllm (2026-11-28c set-aside): `ps aux` pasted three times, hours apart.
/// A process in each snapshot is a series; one that rose at each is growth, while
/// one snapshot, or a process that stayed put, is none.
#[test]
fn process_tables_pasted_snapshot_after_snapshot_show_growth() {
    let header = "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND";
    let snapshot = |rss: u64| {
        format!(
            "{header}\nroot        1071  0.4  0.0 28963612 417336 ?     SNl  17:36   0:02 ray::RayWorkerVllm\n\
             root        1166  6.2  0.5 68235476 {rss} ?    RNl  17:36   0:36 ray::RayWorkerVllm.execute_method\n\ntwo hours later\n"
        )
    };
    let rising: String = [5_179_612, 6_284_616, 6_919_976].map(snapshot).concat();
    only_finding(&scan(rising.as_bytes()), FailureClass::MemoryGrowth);

    let flat: String = [5_179_612, 5_179_700, 5_179_612].map(snapshot).concat();
    assert_eq!(classes(flat.as_bytes()), Vec::<String>::new());
    assert_eq!(
        classes(snapshot(5_179_612).as_bytes()),
        Vec::<String>::new()
    );

    // top's rows are still read by the rules: kswapd0 at 100% is memory pressure.
    let top = "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n   \
               97 root      20   0       0      0      0 R 100.0   0.0  12:01.22 kswapd0\n";
    only_finding(&scan(top.as_bytes()), FailureClass::MemoryPressure);
}

/// A real `ps aux` paste has many rows a snapshot: each process keeps its own readings
/// (one series of many rows may not push out another's), a table quoted in markdown is
/// read as its rows are, a name a table repeats is one reading, a process that starts
/// at 0 has not grown from anything, and a page's example is no one's memory.
#[test]
fn process_tables_are_read_whole_and_only_where_they_are_the_writers() {
    let header = "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND";
    let snapshot = |quote: &str, rss: u64| {
        let mut s = format!("{quote}{header}\n");
        for pid in 100..130 {
            s.push_str(&format!(
                "{quote}root {pid:>11}  0.0  0.0  28963 {:>6} ?  S  17:36   0:02 worker-{pid}\n",
                4000 + pid
            ));
        }
        s.push_str(&format!("{quote}root        1166  6.2  0.5 68235476 {rss} ?    RNl  17:36   0:36 ray::RayWorkerVllm\n\nlater\n"));
        s
    };
    let many: String = [5_179_612, 6_284_616, 6_919_976]
        .map(|r| snapshot("", r))
        .concat();
    only_finding(&scan(many.as_bytes()), FailureClass::MemoryGrowth);
    let quoted: String = [5_179_612, 6_284_616, 6_919_976]
        .map(|r| snapshot("> ", r))
        .concat();
    only_finding(&scan(quoted.as_bytes()), FailureClass::MemoryGrowth);

    let example = format!("For example, a leaking worker looks like this:\n{many}");
    assert_eq!(classes(example.as_bytes()), Vec::<String>::new());

    let kubectl = "POD              NAME   CPU(cores)   MEMORY(bytes)\n\
                   api-7d9f8c-a     app    12m          300Mi\n\
                   api-7d9f8c-b     app    11m          400Mi\n\
                   api-7d9f8c-c     app    13m          500Mi\n";
    assert_eq!(classes(kubectl.as_bytes()), Vec::<String>::new());

    let docker = |mib: u64| {
        format!(
            "CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O     BLOCK I/O   PIDS\n\
             3f2a9c1d2e4b   api       0.52%     {mib}MiB / 7.7GiB     1.00%     0B / 0B     0B / 0B     12\n\n"
        )
    };
    let from_zero: String = [0, 50, 100].map(docker).concat();
    assert_eq!(classes(from_zero.as_bytes()), Vec::<String>::new());
    let rising: String = [50, 100, 200].map(docker).concat();
    only_finding(&scan(rising.as_bytes()), FailureClass::MemoryGrowth);
}
