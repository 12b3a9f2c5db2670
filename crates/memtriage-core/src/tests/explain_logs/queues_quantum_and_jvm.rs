//! Batch 28's forms (task queues, quantum simulators, JVM and BEAM servers, hosting
//! platforms, threads in Persian), each from the program that prints it, and the words
//! of the threads that tell who killed a process or what filled memory.

use super::{classes, each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn servers_and_libraries_name_what_ran_out() {
    each_named_first(&[
        (
            "  what():  [custatevec] %out of memory in addQubitsToState (line 210)",
            "log.cuda-oom",
        ),
        (
            "21-Apr-2026 12:49:34.540 SEVERE [http-nio-8080-ClientPoller-0] org.apache.tomcat.util.net.NioEndpoint.checkParachute SEVERE:Memory usage is low, parachute is non existent, your system may start failing",
            "log.memory-pressure",
        ),
        (
            "[0.003s][warning][gc     ] The system limit on number of memory mappings per process might be too low for the given",
            "log.max-map-count",
        ),
        (
            "15:30:31.219 [warning] Ranch acceptor reducing accept rate: out of file descriptors",
            "log.too-many-open-files",
        ),
        (
            "2023-08-13 22:30:52,517 INFO reaped unknown pid 72 (terminated by SIGKILL)",
            "log.sigkill",
        ),
        (
            "2020-06-12T20:17:56.728958+00:00 heroku[web.1]: Error R15 (Memory quota vastly exceeded)",
            "log.userspace-oom-kill",
        ),
    ]);
    // Another exception of a GPU library is a crash, not its memory.
    each_named_first(&[(
        "  what():  std::runtime_error: cuda driver version is insufficient",
        "log.native-crash",
    )]);
    // supervisord's own stop, a limit of another kind.
    lines_raise_nothing(&[
        "2023-08-13 22:30:52,517 INFO stopped: web (terminated by SIGKILL)",
        "The system limit on number of open files might be too low.",
    ]);
}

#[test]
fn the_pin_memory_threads_wrapper_gives_way_to_what_it_wraps() {
    let text = "RuntimeError: Caught RuntimeError in pin memory thread for device 0.\n\
                Original Traceback (most recent call last):\n\
                RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)\n";
    assert_eq!(
        classes(text.as_bytes()).first().map(String::as_str),
        Some("log.cuda-oom")
    );
    // Over a CUDA error of its own, the wrapper tells a pinning failure.
    let pinning = "RuntimeError: Caught RuntimeError in pin memory thread for device 0.\n\
                   RuntimeError: CUDA error: out of memory\n";
    assert_eq!(
        classes(pinning.as_bytes()).first().map(String::as_str),
        Some("log.memlock-limit")
    );
}

#[test]
fn a_thread_tells_who_killed_it_and_what_ran_out() {
    texts_named_first(&[
        (
            "OOMKiller killed one of dramatiq worker processes, which resulted in whole dramatiq queue shutting down.\n",
            "log.oom-kill",
        ),
        (
            "As you can see from the screenshot one of the agents gets killed by the OOM after reaching 100% (128MB).\n",
            "log.oom-kill",
        ),
        (
            "I am trying to generate a mesh but the memory and swap usage increases until it runs out and the job is killed.\n",
            "log.oom-kill",
        ),
        (
            "# Memory leak causes the OS to kill the docker container\n\nNagasaki45 · description · 2016-07-25\nThe kill is presented in `/var/log/kern.log`.\n",
            "log.oom-kill",
        ),
        (
            "I am running simulations on a hpc cluster and about half the time the memory usage spikes and the job is killed by the scheduler.\n",
            "log.userspace-oom-kill",
        ),
        (
            "If I run -np 768, Open MPI crashes due to the operating system being out of file handles.\n",
            "log.too-many-open-files",
        ),
        (
            "Their local Wildfly session eventually throws an Out Of Memory error, which means they need to halt work.\n",
            "log.host-alloc-failure",
        ),
        (
            "Bazarr container using all available host RAM memory thus crashing the host system.\n",
            "log.memory-growth",
        ),
        // Persian: RAM use goes up by itself; restart every few hours.
        (
            "مصرف رم خود به خود میره بالا. هر چند ساعت یکبار باید restart بزنم.\n",
            "log.memory-growth",
        ),
    ]);
    // A guess beside the kill, a page's kernel, a time limit, advice, a plateau.
    lines_raise_nothing(&[
        "Eventually a self-hosted runner is killed by OOM or some issue.",
        "On Linux hosts, when the kernel detects that there isn't enough memory, it throws an OutOfMemory exception and starts to end the processes.",
        "The job was killed by the scheduler after exceeding its time limit.",
        "To avoid running out of file descriptors, raise ulimit -n.",
        "It is important to prevent Meilisearch from using all available memory during indexing.",
        "برنامه طی چند روز حداکثر رو یه سرور 560مگ رم گرفته بود ولی دیگه رشد نمیکرد",
    ]);
}

#[test]
fn an_issue_titled_as_work_to_do_heads_the_posters_own_log() {
    let text = "# Fix heroku memory issue\n\nbonndan · description · 2020-06-12\n\
                2020-06-12T20:17:56.726461+00:00 heroku[web.1]: Process running mem=1071M(209.3%)\n\
                2020-06-12T20:17:56.728958+00:00 heroku[web.1]: Error R15 (Memory quota vastly exceeded)\n";
    assert_eq!(
        classes(text.as_bytes()).first().map(String::as_str),
        Some("log.userspace-oom-kill")
    );
    // A page so titled, with no byline, quotes the error as its example.
    let page = "# Fix: Error R15 (Memory quota vastly exceeded)\n\n\
                Error R15 (Memory quota vastly exceeded)\n";
    lines_raise_nothing(&[page]);
}

#[test]
fn the_error_that_appeared_to_no_reader_is_the_writers() {
    let text = "When running the CRM wing tutorial the following error appears:\n\n\
                `mpirun noticed that process rank 0 with PID 0 on node e5a390a53ebf exited on signal 11 (Segmentation fault).`\n";
    assert_eq!(
        classes(text.as_bytes()).first().map(String::as_str),
        Some("log.native-crash")
    );
    // A page's: what appears when the reader runs it.
    let page = "When you run the tutorial, the following error appears:\n\n\
                `mpirun noticed that process rank 0 with PID 0 on node e5a390a53ebf exited on signal 11 (Segmentation fault).`\n";
    lines_raise_nothing(&[page]);
}

#[test]
fn the_jvm_and_heroku_name_it_in_fewer_words() {
    each_named_first(&[
        (
            "Apr 13 20:47:39 uyuni server[1785]: Exception: java.lang.OutOfMemoryError thrown from the UncaughtExceptionHandler in thread \"ajp-apr-127.0.0",
            "log.host-alloc-failure",
        ),
        (
            "We are currently getting routine `R14 (Memory quota exceeded)` on our worker dynos.",
            "log.memory-pressure",
        ),
        (
            "heroku[web.1]: R15 (Memory quota vastly exceeded)",
            "log.userspace-oom-kill",
        ),
    ]);
    // A question about the code is no report of it.
    lines_raise_nothing(&["What does R14 (Memory quota exceeded) mean?"]);
}
