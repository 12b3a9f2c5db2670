//! Batch 19's forms (weather and climate models, publishing toolchains, mail and
//! security servers, single-board computers, serverless runtimes, PHP applications),
//! each from the program that prints it.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn servers_and_boards_say_it_in_their_own_words() {
    each_named_first(&[
        (
            " imap(nick@domain.ltd)<24166><>: Fatal: block_alloc(268435456): Out of memory",
            "log.host-alloc-failure",
        ),
        (
            "    convert-im6.q16: cache resources exhausted `000081.jpg' @ error/cache.c/OpenPixelCache/3945.",
            "log.host-alloc-failure",
        ),
        (
            "convert: memory allocation failed `big.tif' @ error/tiff.c/ReadTIFFImage/1890.",
            "log.host-alloc-failure",
        ),
        (
            "2016-04-01T19:52:33.179 Exception while executing function: Functions.GitHubCSharp1. mscorlib: Insufficient memory to continue the execution of the program.",
            "log.host-alloc-failure",
        ),
        ("! TeX capacity exceeded, sorry [main memory size=3000000].", "log.host-alloc-failure"),
        (
            "Aug 16 07:51:41 mail spamd[12351]: child process [12353] exited or timed out without signaling production of a PID file: DIED, signal 7 (0007) at /usr/sbin/spamd line 2960.",
            "log.mmap-bus-error",
        ),
        (
            "mailu-imap  | Aug 13 11:52:16 imap(emailaddress)<144><randomid/randomid>: Fatal: master: service(imap): child 144 killed with signal 11 (core not dumped - https://dovecot.org/bugreport.html#coredumps - set /proc/sys/fs/suid_dumpable to 2)",
            "log.native-crash",
        ),
        ("Container terminated on signal 9.", "log.sigkill"),
        ("nid001956.cactus.wcoss2.ncep.noaa.gov: rank 19 died from signal 9", "log.sigkill"),
        (
            "[**    ] A start job is running for UBNT Routing Daemons (57s / no limit)CPU 2 Unable to handle kernel paging request at virtual address 0000000400000000, epc == ffffffff80956b74, ra == 8",
            "log.kernel-oops",
        ),
        (
            "Jan 22 13:21:04 hostname osqueryd: W0122 16:03:43.886889 19454 watcher.cpp:331] osqueryd worker (19455) stopping: Memory limits exceeded: 240160000",
            "log.userspace-oom-kill",
        ),
        ("memory soft limit exceeded, terminated", "log.userspace-oom-kill"),
        (
            "Ran out of memory (used over 512MB) while running your code.",
            "log.oom-kill",
        ),
        // Cloud Functions' words, not Slurm's.
        ("`Function killed. Error: memory limit exceeded`", "log.oom-kill"),
        ("` Kokkos ERROR: HIP memory space failed to allocate`. ", "log.cuda-oom"),
        (
            "2022-07-06 15:37:03.100 12848-12876 E/RKNN: failed to malloc npu memory!, size: 59187712, flags: 0x2",
            "log.cuda-oom",
        ),
        (
            "[ 4191.445897] vc4_v3d 3fc00000.v3d: Failed to allocate memory for tile binning: -12. You may need to enable CMA or give it more memory.",
            "log.cuda-oom",
        ),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        // TeX at a limit that is no memory's: a runaway recursion.
        "! TeX capacity exceeded, sorry [input stack size=5000].",
        "memory soft limit exceeded, on probation",
        "The container terminated on schedule at 9.",
        "Set the cache resources for ImageMagick in policy.xml.",
    ]);
}

/// Forms read after batch 19's set-aside third was scored (its misses).
#[test]
fn forms_read_after_the_scoring() {
    each_named_first(&[
        (
            "    \"message\": \"Worker exceeded memory limit.\",",
            "log.userspace-oom-kill",
        ),
        (
            "  \"outcome\": \"exceededMemory\",",
            "log.userspace-oom-kill",
        ),
        (
            "[NID 00865] 2017-07-11 22:36:25 Apid 1351768: OOM killer terminated this process.",
            "log.oom-kill",
        ),
        (
            "MC: [17:06:14] [Client thread/ERROR]: 1285: Out of memory",
            "log.cuda-oom",
        ),
    ]);
}
