//! Batch 32's forms (hnswlib, libjpeg through libvips, Databricks' kernel, an issue's
//! title that is zsh's line) and its words (a kill told by its cause or with no sender,
//! a leak with its size, growth that ends in a failure, a condition after a claim), each
//! with the near miss that must stay quiet.

use super::{each_named_first, lines_raise_nothing, texts_named_first};

#[test]
fn a_condition_after_a_claim_denies_nothing_of_it() {
    each_named_first(&[
        (
            "Ledfx seems to have a memory leak issue if certain audio interfaces are reset.",
            "log.memory-growth",
        ),
        (
            "gnome-shell segfaults if the file is not there.",
            "log.native-crash",
        ),
    ]);
    // A supposition before the claim, a definition, a question.
    lines_raise_nothing(&[
        "There might be a memory leak if you do that.",
        "A memory leak occurs when a program cannot free what it no longer needs.",
        "Is there a memory leak when audio interfaces are reset?",
        "If gnome-shell segfaults when the file is not there, restart it.",
        "In C++, a memory leak occurs when memory allocated with new is never deleted.",
        "The program segfaults if you pass it a NULL pointer.",
    ]);
}

#[test]
fn vector_indexes_and_image_decoders_name_their_failed_allocation() {
    each_named_first(&[
        (
            "I am getting RuntimeError: Not enough memory when my max_corpus_size  = 2595491.",
            "log.host-alloc-failure",
        ),
        (
            "RuntimeError: Not enough memory: loadIndex failed to allocate data",
            "log.host-alloc-failure",
        ),
        (
            "    \"errorMessage\": \"VipsJpeg: Insufficient memory (case 4)\\n\",",
            "log.host-alloc-failure",
        ),
        (
            "Fatal error: The Python kernel is unresponsive.",
            "log.oom-kill",
        ),
    ]);
    // A question about the limit, a page's sentence on memory, another kernel's state.
    lines_raise_nothing(&[
        "Is there enough memory for a RuntimeError to be raised?",
        "Insufficient memory is a common cause of slow builds.",
        "The Python kernel is busy.",
    ]);
}

#[test]
fn kills_told_by_their_cause_or_their_consequence() {
    each_named_first(&[
        ("querynode OOMKilled  and then  CrashLoopBackOff", "log.oom-kill"),
        (
            "Am seeing a bunch on ffmpeg instances running, using up the 3G of memory allocated to the server, causing OOM-killer to kill everything, including Jellyfin.",
            "log.oom-kill",
        ),
        (
            "When inserting the planet PBF file, the process starts normally, completely fills my RAM (64 GB), fills my swap (32 GB) and then the process is killed.",
            "log.oom-kill",
        ),
        (
            "This notebook was running fine but now it's crashing when running bigger plots, it seems the kernel crashes because it's running out of memory...",
            "log.oom-kill",
        ),
    ]);
    // The title retells the shell's word; a maintainer's answer says what sent it.
    texts_named_first(&[(
        "# nix-env -u exited with Killed\n\nedolstra · comment · 2019-07-12\nProbably means it ran out of memory. Nixpkgs evaluation is quite a memory hog.\n",
        "log.oom-kill",
    )]);
    // A limit a page explains, a supposition, a kill denied.
    lines_raise_nothing(&[
        "If the pod is OOMKilled and then restarted, raise its limit.",
        "A low oom_score_adj never caused the OOM killer to kill sshd.",
        "When memory runs out, the kernel triggers the OOM killer to kill the process with the highest score.",
        "If it fills the RAM and the process is killed, add swap.",
        "It might crash because it is running out of memory.",
        "If nix-env exited with Killed, read dmesg.",
    ]);
}

#[test]
fn crashes_and_device_oom_met_in_words() {
    each_named_first(&[
        (
            "Since then, jupyter gives segfault for every command.",
            "log.native-crash",
        ),
        (
            "Il tentativo di firmare digitalmente un PDF, con aggiunta di firma grafica, fallisce con un core dump nel momento in cui in CIE ID si preme il pulsante \"PROSEGUI\".",
            "log.native-crash",
        ),
        (
            "I persistently get issue of CUDA OOM when trying to evaluate DeepSeek-R1-Distill-Llama-8B model.",
            "log.cuda-oom",
        ),
        (
            "nedaří se mi importovat METS balík do K6, vždy skončí s out of memory exception.",
            "log.host-alloc-failure",
        ),
    ]);
    lines_raise_nothing(&[
        "If you hit CUDA OOM, lower the batch size.",
        "The fix stops it from failing with a core dump.",
        "Does it ever end with an out of memory exception?",
        "It no longer gives segfault for every command.",
    ]);
}

#[test]
fn growth_measured_repeated_or_ending_in_a_failure() {
    each_named_first(&[
        (
            "GStreamer leaks about 80 Megabytes per second(!!). Where do I start looking for the cause?",
            "log.memory-growth",
        ),
        (
            "Each iteration of the loop leaks about 107 bytes of memory.",
            "log.memory-growth",
        ),
        (
            "If you set `refresh_every` to 100000 (like it is in the snippet), the memory usage will keep on rising.",
            "log.memory-growth",
        ),
        (
            "opening any GeoPackage raster and navigating the map consumes a lot of memory that is increasing a lot eating the whole RAM.",
            "log.memory-growth",
        ),
        (
            "I have noticed a persistent issue, where when I open multiple notebooks (<10), memory usage of Jupyterlab climbs to >100Gb and the server becomes unresponsive.",
            "log.memory-growth",
        ),
        (
            "با هر بار ری استارت کردن رم بر میگرده روی 600 مگ ولی باز میره بالا",
            "log.memory-growth",
        ),
    ]);
    // Growth supposed, denied or sized by the workload; a leak fixed.
    lines_raise_nothing(&[
        "Memory usage will grow if you keep references to outputs.",
        "The memory usage will not keep on rising after this change.",
        "If you disable eviction, the memory usage will keep growing.",
        "The following program leaks 40 bytes:",
        "Memory grows with the batch size and the server becomes unresponsive.",
        "This fixes a bug where GStreamer leaks about 80 Megabytes per second.",
    ]);
}

#[test]
fn a_process_said_killed_is_a_sigkill_whose_sender_is_unknown() {
    each_named_first(&[
        (
            "Hi, I have a problem re-training the network, after few iterations, the process get killed.",
            "log.sigkill",
        ),
        (
            "seems that each worker works fine but when the entire process tried to merge, the process was auto-killed.",
            "log.sigkill",
        ),
        (
            "when I try to map the nanopore reads with minimap2 the process gets killed after about 12 hours",
            "log.sigkill",
        ),
        (
            "I saw the script running and consistently increasing memory usage until it was Killed (linux).",
            "log.memory-growth",
        ),
        (
            "Exit code 135 (128 + SIGBUS, signal 7). Because the GEN worker is killed mid-load, the load fails.",
            "log.mmap-bus-error",
        ),
    ]);
    // What follows any kill, a supposition, a question, a denial.
    lines_raise_nothing(&[
        "When the process is killed, its memory is freed.",
        "If the job is killed, Slurm writes it to the log.",
        "If a process uses too much memory, it is killed.",
        "When a container exceeds its memory limit, the process is killed.",
        "Is the process killed by the OOM killer?",
        "It is unclear whether the process was killed.",
    ]);
}

#[test]
fn forms_read_after_the_scoring() {
    // An issue's title that is zsh's line with its pid.
    each_named_first(&[("# 19823 segmentation fault ./main", "log.native-crash")]);
    // A numbered heading, a title that counts ways.
    lines_raise_nothing(&[
        "# 1. Segmentation fault",
        "# 2 ways to avoid a segmentation fault",
        "# 11 Segmentation fault",
    ]);
}

#[test]
fn an_oom_kill_met_or_shown_by_docker_inspect() {
    each_named_first(&[
        (
            "After upgrading Piraeus 2.6.0 to 2.8.0 we catch some OOM kills for POD piraeus-operator-controller-manager",
            "log.oom-kill",
        ),
        (
            "The OOM killer seems to be killing things despite having more than enough free RAM on my system:",
            "log.oom-kill",
        ),
        (
            "re-deploying the hub pod shows OOMKilled status",
            "log.oom-kill",
        ),
        (
            "- `docker inspect fojin-postgres` → `MemLimit=1073741824`(1 GiB),`OOMKilled=true`。",
            "log.oom-kill",
        ),
        (
            "the OS is killing the process when id becomes too big.",
            "log.oom-kill",
        ),
        (
            "But it still runs out of ram and kills the program.",
            "log.oom-kill",
        ),
        (
            "Every couple of weeks our vm crashes with Out of memory error and kills php-fpm process.",
            "log.oom-kill",
        ),
    ]);
    // Advice to the reader, a page's present, Docker's denial, a kill with no OOM.
    lines_raise_nothing(&[
        "If you see OOM kills, raise the limit.",
        "The OOM killer is killing processes to free memory when RAM is exhausted.",
        "OOMKilled=false",
        "The scheduler was killing the job at its time limit.",
        "Is it the OS that runs out of memory and kills the process?",
    ]);
}
