//! Batch 14's forms, each from the program that prints it (Ruby's and Bun's crash
//! reports, Ruby's GC, HAProxy's Lua, GKlib under METIS, SPECFEM's CUDA check, Intel
//! Fortran's access violation, realtime_tools' memory lock, puma_worker_killer, Vertex
//! AI's numbered replicas, the kernel's OOM line without its details, ClickHouse's
//! BaseDaemon), the shell's segfault quoted in a report, memory a report says keeps
//! rising (`rules::claims`), and after the set-aside third's scoring Intel Fortran's
//! signals, Samba's panic, glibc's words inside a sentence, Kaggle's restart,
//! Databricks' driver kill and kubectl's Evicted rows.

use super::{each_named_first, lines_raise_nothing, scan};

#[test]
fn runtimes_and_services_say_it_in_their_own_words() {
    each_named_first(&[
        (
            "/home/rebecca/puma/lib/puma/puma_http11.so: [BUG] Segmentation fault at 0x0000000000000000",
            "log.native-crash",
        ),
        ("panic: Segmentation fault at address 0x0", "log.native-crash"),
        ("[BUG] Bus Error at 0x00007f3c2a1b4000", "log.mmap-bus-error"),
        ("panic: Bus error at address 0x7F3C2A1B4000", "log.mmap-bus-error"),
        (
            "E, [2022-08-19T03:12:44.118] [FATAL] failed to allocate memory",
            "log.host-alloc-failure",
        ),
        ("oh no: Bun has ran out of memory.", "log.host-alloc-failure"),
        (
            "[ALERT]    (3439504) : Lua function 'quote_cookies': out of memory error.",
            "log.host-alloc-failure",
        ),
        (
            "[ALERT] 123/456 (77) : Lua applet http '<lua.app>': out of memory error.",
            "log.host-alloc-failure",
        ),
        (
            "Partition graph into 32 parts ... Error! ***Memory allocation failed for SetUpCoarseGraph: gdata. Requested size: -1987870220 bytesAborted",
            "log.host-alloc-failure",
        ),
        ("CUDA error !!!!! <out of memory> !!!!! ", "log.cuda-oom"),
        (
            "forrtl: severe (157): Program Exception - access violation",
            "log.windows-memory-fault",
        ),
        (
            "[controller_manager]: Unable to lock the memory: 'No proper privileges to lock the memory!'",
            "log.memlock-limit",
        ),
        (
            "2014-10-09T22:18:14.495266+00:00 app[web.1]: [2] PumaWorkerKiller: Out of memory. 3 workers consuming total: 540.853515625 mb out of max: 501.76 mb. Sending TERM to #<Puma::Cluster::Worker:0x007f6b27f39398 @index=0, @pid=8003>",
            "log.userspace-oom-kill",
        ),
        (
            "The replica master 0 ran out-of-memory and exited with a non-zero status of 9(SIGKILL)",
            "log.oom-kill",
        ),
        ("[nov. 3 02:03] renderd invoked oom-killer", "log.oom-kill"),
        (
            "Muy buenas, me esta tirando un \"stack smashing detected cuando libero memoria",
            "log.native-crash",
        ),
        (
            "Symptom: Memory grew to ~25gb used before kubernetes evicted it.",
            "log.userspace-oom-kill",
        ),
        (
            "2019.07.22 10:39:18.486460 [ 878 ] {} <Error> BaseDaemon: (from thread 190) Received signal Segmentation fault (11).",
            "log.native-crash",
        ),
        (
            "<Fatal> BaseDaemon: (from thread 12) Received signal Bus error (7).",
            "log.mmap-bus-error",
        ),
    ]);
}

/// Forms read after the set-aside third's scoring, each from its program's source.
#[test]
fn forms_the_set_aside_third_showed() {
    each_named_first(&[
        (
            "forrtl: severe (174): SIGSEGV, segmentation fault occurred",
            "log.native-crash",
        ),
        (
            "forrtl: severe (170): Program Exception - stack overflow",
            "log.native-crash",
        ),
        (
            "forrtl: severe (179): Cannot allocate array - overflow on array size calculation.",
            "log.host-alloc-failure",
        ),
        (
            "  PANIC (pid 11707): Bad talloc magic value - unknown value",
            "log.native-crash",
        ),
        (
            "Hola! Tengo el error malloc(): corrupted top size en los test normal",
            "log.native-crash",
        ),
        (
            "# Your notebook tried to allocate more memory than is available. It has restarted.",
            "log.oom-kill",
        ),
        (
            "24/04/02 09:59:20 WARN Hard killed Driver (pid=498) after unresponsive for 302 seconds ",
            "log.sigkill",
        ),
        (
            "prometheus-deployment-668c446668-gmcsr    0/2     Evicted       0          28h",
            "log.userspace-oom-kill",
        ),
    ]);
}

#[test]
fn the_shells_segfault_quoted_in_a_report_is_read() {
    each_named_first(&[
        (
            "问题：在服务器上训练的时候突然崩溃并显示Segmentation fault (core dumped)",
            "log.native-crash",
        ),
        (
            "éste de pronto se detiene y en consola lanza el error: \"Violación de segmento (`core' generado)\". Estuve buscando",
            "log.native-crash",
        ),
        ("# [Bug]: Segmentation fault: 11", "log.native-crash"),
    ]);
    lines_raise_nothing(&[
        "The message \"Segmentation fault (core dumped)\" means the program read memory it does not own.",
        "## Segmentation fault",
    ]);
}

#[test]
fn a_report_that_says_memory_keeps_rising_is_read_as_growth() {
    each_named_first(&[
        (
            "Every time I change the model, the RAM consumption constantly increases, it starts using swap",
            "log.memory-growth",
        ),
        (
            "After #199 was merged and deployed, the web.1 RSS on `railsbump-production` is **still** climbing.",
            "log.memory-growth",
        ),
        (
            "RVIZ did not crash but it's memory usage was ever increasing.",
            "log.memory-growth",
        ),
        (
            "However, the memory usage seems to grow continuously after each call.",
            "log.memory-growth",
        ),
        (
            "la memoria que utiliza el kernel va aumentando constantemente al correr las pruebas",
            "log.memory-growth",
        ),
        (
            "We're seeing an issue where Envoy sometimes leaks tens of gigabytes of memory.",
            "log.memory-growth",
        ),
    ]);
}

#[test]
fn growth_told_as_surely_as_what_it_led_to_ranks_after_it() {
    let text = "Every time I change the model, the RAM consumption constantly increases.\n\
                I see the problem once I max out my RAM and start using swap.\n";
    assert_eq!(
        super::classes(text.as_bytes()),
        ["log.swap-thrashing", "log.memory-growth"]
    );
}

#[test]
fn a_rise_denied_supposed_or_scaled_is_no_finding() {
    lines_raise_nothing(&[
        "Memory usage should not increase over time once the cache is warm.",
        "If memory keeps growing, lower the number of workers.",
        "Memory usage grows linearly with the batch size.",
        "Does the RSS keep climbing after each request?",
        "The fix stops memory from growing over time.",
        "Memory usage increased after the upgrade.",
        "Because of how ZFS on Linux is implemented, the ARC memory is evicted if the system comes under memory pressure.",
        "Increase the memory limit until the job stops failing.",
    ]);
}

#[test]
fn a_troubleshooting_page_with_its_sections_quotes_its_exit_code() {
    let page = "Training Job Process Exits Unexpectedly\nSymptom\nRunning a training job failed, and error \
                information similar to the following is displayed in logs:\n[Modelarts Service Log]Training end \
                with return code: 137\nPossible Causes\nThe possible cause is that the memory overflows.\n\
                Troubleshooting\nDebug the code online.\n";
    assert!(scan(page.as_bytes()).findings().is_empty());
}
