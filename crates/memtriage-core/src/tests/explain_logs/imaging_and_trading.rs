//! Batch 18's forms (microscopy, astronomy, audio, trading, chat servers, Chinese pages,
//! mobile toolchains), each from the program that prints it: ImageJ's dialog for a JVM
//! out of its heap, Gradle's daemon and its child's exit value, OpenVINO's CPU plugin,
//! PHP's descriptor table, lmkd's tag without the killer's name, GitLab's Sidekiq
//! memory killer, OpenWrt's `logread` prefix, the Chinese shell's segfault after a
//! full-width colon; and claims told as people tell them.

use super::{classes, each_named_first, lines_raise_nothing, scan};

#[test]
fn imaging_and_trading_programs_say_it_in_their_own_words() {
    each_named_first(&[
        ("Out of memory error: Java heap space", "log.host-alloc-failure"),
        (
            "Daemon will be stopped at the end of the build after running out of JVM memory",
            "log.host-alloc-failure",
        ),
        ("  8492 STOPPED  (after running out of JVM memory)", "log.host-alloc-failure"),
        ("Expiring Daemon because JVM heap space is exhausted", "log.host-alloc-failure"),
        (
            "[12:46:19]: ▸ > Process 'command 'node'' finished with non-zero exit value 137",
            "log.sigkill",
        ),
        (
            "> Process 'command '/usr/bin/clang'' finished with non-zero exit value 139",
            "log.native-crash",
        ),
        ("Failed to allocate 282441216 bytes of memory", "log.host-alloc-failure"),
        // A device's allocation names the device after the same words.
        ("Failed to allocate 4096 bytes of memory on device 0", "log.cuda-oom"),
        ("Process open FD table is full", "log.too-many-open-files"),
        (
            "01-01 15:11:13.739   879   879 I lmkd    : Reclaim 'com.android.rkpdapp' (3615), uid 10344, oom_score_adj 975, state 19 to free 18988kB rss, 47372kB swap; reason: min2x watermark is breached even after kill",
            "log.userspace-oom-kill",
        ),
        (
            "  \"message\": \"Sidekiq worker RSS out of range\",",
            "log.userspace-oom-kill",
        ),
        (
            "Sidekiq worker PID-8123 current RSS 2100000 exceeds maximum RSS 2000000 after 900 seconds",
            "log.userspace-oom-kill",
        ),
        (
            "Wed Sep 15 04:06:35 2021 kern.warn kernel: [ 9665.399682] WARNING: CPU: 3 PID: 4886 at kthread_is_per_cpu+0x20/0x40",
            "log.kernel-oops",
        ),
        ("我在运行face_detect_demo的时候提示：段错误 (核心已转储)，这是什么原因导致的呢", "log.native-crash"),
    ]);
}

#[test]
fn claims_told_as_people_tell_them() {
    each_named_first(&[
        (
            "When I run 10000 epochs hyperopt, sometimes it just get suddenly killed half way. It just states Killed, and no other issue.",
            "log.sigkill",
        ),
        (
            "This spike caused the kernel to start swapping excessively, which in turn spiked CPU usage to 100%.",
            "log.swap-thrashing",
        ),
        ("Memory hit 100%, caused excessive swapping and 100% CPU usage", "log.swap-thrashing"),
        ("实际行为：长时间运行后内存占用从74M升到800多M", "log.memory-growth"),
        ("程序运行一段时间后内存一直在涨", "log.memory-growth"),
        ("但是一段是时间后nacos服务假死。日志文件报内存溢出。无法注册服务。", "log.host-alloc-failure"),
        // A claim after a full stop of three bytes (`。`) once cut a character in two.
        ("服务运行了三天。发现内存泄漏很严重", "log.memory-growth"),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        "If you see an out of memory error: raise -Xmx in Edit > Options > Memory & Threads.",
        // A task list's item, a definition list's signal, a table of Slurm's states.
        "  - [ ] Comm errors/segfaults related to non-GPU-aware MPI libs",
        // Every kind of claim, not only those read by their clause.
        "- [ ] Why it crashes due to SIGBUS when loading",
        "- [x] RAM usage keeps increasing over time during training",
        "- 段错误 (SIGSEGV):通常与内存权限相关,例如尝试写入只读内存",
        "总线错误(Bus Error)是什么?",
        "OUT_OF_MEMORY | 出现内存不足错误 |",
        "OUT_OF_MEMORY    Job experienced out of memory error.",
        // Words that only resemble the forms.
        "The shell says Killed when the kernel ends the process.",
        "swapping is normal on this machine",
        "内存占用稳定",
        "当容器因内存溢出被杀死时,需要检查资源配置",
    ]);
}

#[test]
fn a_slurm_state_in_a_job_row_is_still_read() {
    let s = scan(b"64233992|as_TM1_spw33_cube|OUT_OF_MEMORY|0:125|\n");
    assert!(
        s.findings().iter().any(|f| f.id == "log.oom-kill"),
        "{:#?}",
        s.findings()
    );
}

/// Forms read after batch 18's set-aside third was scored (its misses), each from the
/// program or the people that write it so.
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        ("page allocation failure: order:10", "log.memory-pressure"),
        (
            "该网址运行代码出现问题：段错误，核心已转储。",
            "log.native-crash",
        ),
        ("最后位置是：MemoryError", "log.host-alloc-failure"),
        (
            "- Job gets killed by SLURM due to out of memory",
            "log.userspace-oom-kill",
        ),
    ]);
    lines_raise_nothing(&[
        "If the memory exceeds this then the job will be killed by SLURM due to out of memory",
        "The job was killed by Slurm after its time limit.",
    ]);
}

#[test]
fn a_docs_page_keeps_its_headings_permalinks_as_lines() {
    let page = "Reasons to use the memory view\n\n#\n\nUse the memory view when your application:\n\n  • Suspect a memory leak\n\nBasic memory concepts\n\n#\n\nDart objects live in the heap.\n";
    assert_eq!(classes(page.as_bytes()), Vec::<String>::new());
    // Without the marks, the same item is a claim.
    let bare = page.replace("#\n", "");
    assert_eq!(
        classes(bare.as_bytes()),
        vec!["log.memory-growth".to_string()]
    );
    // HotSpot's banner copied without its `# ` keeps lone `#` lines under lines of
    // figures: no headings.
    let banner = "A fatal error has been detected by the Java Runtime Environment:\n#\nSIGBUS (0x7) at pc=0x00007f42fc492e70, pid=12128, tid=0x00007f42fc3c9700\n#\nProblematic frame:\nC [liblz4-java8098863625230398555.so+0x5e70] LZ4_decompress_fast+0xd0\n#\nsiginfo: si_signo: 7 (SIGBUS), si_code: 2 (BUS_ADRERR), si_addr: 0x00007f2026b8b000\n";
    assert_eq!(
        classes(banner.as_bytes()),
        vec!["log.mmap-bus-error".to_string()]
    );
}

/// The sentence that introduces a pasted block is read from its first word, though
/// the prefix on every line (`logread`'s) puts that word more than the 400 bytes of
/// context before the match: cut, `Seeing intermittent errors like the following`
/// lost its first word and read as a page's example.
#[test]
fn an_introducing_sentence_is_read_whole_under_a_long_prefix() {
    let prefix = "Sat Nov 28 06:00:00 2026 kern.warn kernel: ";
    let id = "8fce98455ffa497e57269ae0520e5277b22f7e0934975523bb60d76ef9467b25";
    let lines = [
        "Seeing intermittent errors like the following in /var/log/messages: ".to_string(),
        String::new(),
        "```".to_string(),
        format!("/docker/{id} killed as a result of limit of /docker/{id}"),
        "memory: usage 102360kB, limit 102400kB, failcnt 125402".to_string(),
        "memory+swap: usage 102368kB, limit 204800kB, failcnt 0".to_string(),
        "```".to_string(),
    ];
    let text: String = lines.iter().map(|l| format!("{prefix}{l}\n")).collect();
    assert_eq!(classes(text.as_bytes()), vec!["log.oom-kill".to_string()]);
}
