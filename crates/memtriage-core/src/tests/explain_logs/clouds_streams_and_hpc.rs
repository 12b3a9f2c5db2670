//! Batch 30's forms (cloud platforms, web builds, streaming pipelines, MPI launchers,
//! phones), each from the program that prints it, and a thread's leak that is only a
//! risk to avoid.

use super::{each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn platforms_launchers_and_transports_name_their_limits() {
    each_named_first(&[
        (
            "`F 22:40:19.033` Exceeded soft private memory limit of 128 MB with 129 MB after servicing 60 requests total",
            "log.oom-kill",
        ),
        (
            "After handling this request, the process that handled this request was found to be using too much memory and was terminated.",
            "log.oom-kill",
        ),
        (
            "Jun 17 17:37:04 isuntv-taiwan SpringBoard[41] <Warning>: Memory level is not normal or this app was killed by jetsam. Pending auto-relaunch",
            "log.userspace-oom-kill",
        ),
        (
            "Error: system limit exceeded on number of files that can be open Node: node01",
            "log.too-many-open-files",
        ),
        (
            "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)",
            "log.nccl-failure",
        ),
        (
            "transforming (438) node_modules/es-toolkit/dist/compat/array/nth.mjsKilled",
            "log.sigkill",
        ),
    ]);
    // A module named like the word, an App Engine setting explained.
    lines_raise_nothing(&[
        "transforming (438) src/components/isKilledBadge.tsx",
        "The soft private memory limit is 128 MB on an F1 instance.",
    ]);
}

#[test]
fn a_leak_named_as_a_risk_or_by_nodes_listener_count_is_none_met() {
    lines_raise_nothing(&[
        "MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 exit listeners added to [process].",
        "I'm not sure if it's a bug, or there is a workaround to merge all listeners to avoid the warning and possible memory leaks.",
    ]);
    texts_named_first(&[
        (
            "# Possible memory leak when using s3_sink\n\nalice · description · 2024-01-01\nWe use vector to ship logs to our Minio cluster.\n",
            "log.memory-growth",
        ),
        (
            "I still get quite often cases where my Kafka broker gets nuked by the OOM killer.\n",
            "log.oom-kill",
        ),
    ]);
}

#[test]
fn a_runtime_and_a_dev_server_name_the_limit_they_met() {
    each_named_first(&[
        (
            "{what}: mmap() failed to allocate thread stack due to insufficient resources, increase /proc/sys/vm/max_map_count or add -Ihpx.stacks.use_guard_pages=0 to the command line: HPX(unhandled_exception)",
            "log.max-map-count",
        ),
        (
            " ⚠ Server is approaching the used memory threshold, restarting...",
            "log.memory-pressure",
        ),
    ]);
    lines_raise_nothing(&["Set experimental.memoryThreshold to restart the server earlier."]);
}
