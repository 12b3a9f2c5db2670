//! Batch 27's forms (statistical computing, speech models, reinforcement learning,
//! security tools, geospatial imports), each from the program that prints it, and the
//! words of the threads that tell who killed a process or what ran out.

use super::{classes, each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn devices_and_runtimes_name_what_ran_out() {
    each_named_first(&[
        (
            "Out of memory on device. To view more detail about available memory on the GPU, use 'gpuDevice()'. If the problem persists, reset",
            "log.cuda-oom",
        ),
        (
            "- Device #1: Device does not provide enough allocatable device-memory to handle this attack",
            "log.cuda-oom",
        ),
        (
            "Not enough allocable device memory for this attack",
            "log.cuda-oom",
        ),
        ("Could not reserve enough space for object heap", "log.host-alloc-failure"),
        (
            "Error occurred during initialization of VM: Could not reserve enough space for 2097152KB object heap",
            "log.host-alloc-failure",
        ),
        ("panic: Segmentation fault -- stopping myself...", "log.native-crash"),
        ("Oops, IDA has almost crashed! (signum=11)", "log.native-crash"),
        (
            "exceeded memory limit (3006140416 > 2684354560), being killed",
            "log.userspace-oom-kill",
        ),
        (
            "TERM_EXTERNAL_SIGNAL: job killed by a signal external to LSF.",
            "log.sigkill",
        ),
        (
            "During the preprocessing I get the message \"Watchdog caught collective operation timeout: WorkNCCL\".",
            "log.nccl-failure",
        ),
    ]);
    // Another signal of the same form is no crash.
    lines_raise_nothing(&["Oops, IDA has almost crashed! (signum=2)"]);
}

#[test]
fn a_progress_bar_pasted_as_inline_code_ends_in_the_shells_word() {
    let text = "When I execute this command `demucs -d cpu ben.mp3`, I got this results\n\
                `Separating track ben.mp3\n  0%|          | 0.0/198.0 [00:00<?, ?seconds/s]Killed` on my terminal. I'm using Ubuntu 20.\n";
    // A kill whose sender the text does not show.
    assert_eq!(
        classes(text.as_bytes()).first().map(String::as_str),
        Some("log.sigkill")
    );
    // Quoted as a word in a sentence, it is no progress bar's.
    lines_raise_nothing(&["The word `Killed` is printed by the shell, not by the program."]);
}

#[test]
fn a_thread_tells_the_os_killed_it_for_memory() {
    texts_named_first(&[
        (
            "There are 2 memory issues going on there, the first one when it got killed was when the JVM got close to 180gb but sqlite was using some unmanaged memory outside the jvm heap, so the OS killed the process.\n",
            "log.oom-kill",
        ),
        (
            "Can you check the kernel setting. this oom-killer seem to eager to kill the process.\n",
            "log.oom-kill",
        ),
        (
            "Unfortunately, when I started script, my process was killed because of exceeding 240Gi of RAM.\n",
            "log.oom-kill",
        ),
    ]);
    // Killed for its time, or killed by the system for no memory the sentence names,
    // or the killer as a manual describes it.
    lines_raise_nothing(&[
        "The job was killed because of exceeding its time limit.",
        "The job was killed after exceeding the walltime; memory was fine.",
        "So the OS killed the process after the timeout.",
        "The OOM killer decides which process to kill.",
        "The OOM killer chooses to kill the process with the highest oom_score.",
    ]);
}

#[test]
fn a_writer_tells_the_gpu_or_the_kernel_gave_out() {
    texts_named_first(&[
        (
            "My GPU runs out of memory when creating the adjacent matrix (create_adj_mat()).\n",
            "log.cuda-oom",
        ),
        (
            "Occasionally both will actually use the memory they allocated. This results in a kernel panic and the VM rebooting.\n",
            "log.kernel-oops",
        ),
        (
            "As well, the QGIS process size keeps increasing by 10MB blocks as reported by Task Manager.\n",
            "log.memory-growth",
        ),
    ]);
    // A page's word to its reader or about any GPU, a question, the host.
    lines_raise_nothing(&[
        "During feature matching, your GPU runs out of memory. Try decreasing the option.",
        "When the GPU runs out of memory, the allocator frees its cache and retries.",
        "Models that run out of VRAM spill their layers to system RAM.",
        "Does this result in a kernel panic?",
        "The server ran out of memory.",
    ]);
}

#[test]
fn an_issue_forms_question_about_the_setup_is_no_articles_title() {
    let text = "### What is the hardware spec (RAM, OS)?\n\n128G mem & 1.8T SSD\n\n### Expected behaviour and actual result.\n\nfatal error: runtime: out of memory\n";
    assert_eq!(
        classes(text.as_bytes()).first().map(String::as_str),
        Some("log.host-alloc-failure")
    );
}

#[test]
fn a_translated_manual_page_quotes_its_errors() {
    let text = "NAZWA\ngetrlimit, setrlimit, prlimit - pobiera/ustawia limity zasobów\nSKŁADNIA\n#include <sys/resource.h>\nOPIS\nbrk(2), mmap(2) i mremap(2), które po jego przekroczeniu zawiodą z błędem ENOMEM. Dodatkowo,\n";
    lines_raise_nothing(&[text]);
}

#[test]
fn a_bus_error_beside_the_advice_to_grow_shared_memory_is_shared_memorys() {
    let text = "[qgpuvb813-cvision:1    :0:381] Caught signal 7 (Bus error: nonexistent physical address)\n\
                ==== backtrace (tid:    381) ====\n 2 0x0000000000068d6c ncclGroupEnd()  ???:0\n\n\
                It seems that the following options should be added when running docker containers\n\n\
                --shm-size=1g --ulimit memlock=-1\n";
    assert_eq!(
        classes(text.as_bytes()).first().map(String::as_str),
        Some("log.dataloader-shm")
    );
    // Alone, the advice reports nothing: a healthy log's own `docker run`.
    lines_raise_nothing(&[
        "docker run --gpus all --shm-size=16g -it nvcr.io/nvidia/pytorch:24.01-py3",
    ]);
}

#[test]
fn debuggers_samplers_and_scanners_report_in_their_own_words() {
    each_named_first(&[
        (
            "(eb4.1328): Access violation - code c0000005 (first/second chance not available)",
            "log.windows-memory-fault",
        ),
        (
            "Mon Mar 20 08:36:12 2023 -> instream(10.121.14.91@58172): Can't allocate memory ERROR",
            "log.host-alloc-failure",
        ),
        ("chain 1 returned error code -11", "log.native-crash"),
        (
            "line 776 of log file : \"./launch.sh: line 217: 15912 Killed\"",
            "log.sigkill",
        ),
    ]);
    // A library's negative error code, a first-chance exception a debugged program
    // handles.
    lines_raise_nothing(&[
        "clBuildProgram returned error code -11",
        "(1a2c.3b4): Access violation - code c0000005 (first chance)",
    ]);
}
