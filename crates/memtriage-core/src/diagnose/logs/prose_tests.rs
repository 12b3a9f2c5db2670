//! Tests of `prose`: documentation told from a failing program's output.

use super::*;

#[test]
fn documentation_explaining_an_error_is_told_from_the_error() {
    let explains_the_error = |msg: &str| explains_the_error(msg, 0..msg.len());
    assert!(explains_the_error(
        "+    If you encounter the error `[Errno 24] Too many open files`, this indicates"
    ));
    assert!(explains_the_error(
        "The PAGE_FAULT_IN_NONPAGED_AREA bug check has a value of 0x00000050."
    ));
    assert!(explains_the_error(
        "When you get CUDA out of memory, lower the batch"
    ));
    // A cluster's policy for all jobs.
    assert!(explains_the_error(
        "Jobs which exceed the requested memory will be automatically killed by the scheduler with an exit state of OUT_OF_MEMORY."
    ));
    assert!(explains_the_error(
        "Jobs are evicted unconditionally if they exceed 30% over what RAM they ask for"
    ));
    for error in [
        "OSError: [Errno 24] Too many open files",
        "*** STOP: 0x00000050 (PAGE_FAULT_IN_NONPAGED_AREA)",
        "If the process gets killed: Killed",
        "slurmstepd: error: Job 1843321 exceeded memory limit (9437184 > 8388608), being killed",
        "2 jobs were killed by the OOM killer when the node ran out of memory",
    ] {
        assert!(!explains_the_error(error), "{error}");
    }
    // A program's hint to its user after its error.
    let hint = "Couldn't set RLIMIT_MEMLOCK for bpftrace. If your program is not loading, you can try \"ulimit -l 8192\" to fix the problem";
    assert!(!super::explains_the_error(hint, 0..hint.find('.').unwrap()));
    assert!(super::explains_the_error(hint, 0..hint.len()));
}

#[test]
fn a_docs_sites_anchored_heading_opens_a_page_and_a_prompt_does_not() {
    tells_apart(
        is_heading_with_anchor,
        &[
            "Problem Definition#",
            "Prerequisites#",
            "Why the executor's memory grows#",
        ],
        &[
            "[root@node1 ~]#",
            "root@gpu-03:~#",
            "sh-4.2#",
            "Step 3 of 7 #",
            "# Problem",
            "Killed#2",
        ],
    );
    assert!(reads_as_document(
        "Frequently Asked Question\nWhat is the OOM killer?\n"
    ));
    assert!(!reads_as_document("faq.py: Killed\n"));
    assert!(reads_as_document(
        "This post explains how to analyse the segfault message.\n"
    ));
    assert!(!reads_as_document(
        "I followed this article and still get: Killed\n"
    ));
    assert!(!is_article_title("### What is your operating system?"));
    assert!(is_article_title("What is the OOM killer?"));
}

#[test]
fn a_manuals_numbered_section_opens_a_page_and_a_version_does_not() {
    tells_apart(
        is_numbered_section,
        &["4.4.3. Swapping", "7.4.5. Pod \u{30a8}\u{30d3}\u{30af}\u{30b7}\u{30e7}\u{30f3}\u{306b}\u{3064}\u{3044}\u{3066}", "2.3.1 Requesting memory in jobs"],
        &["2.1.0", "1.13.1 torch cu117", "10.0.0.12 - - [10/Jul/2023] GET /"],
    );
}

#[test]
fn a_jvm_banner_is_no_heading() {
    assert!(is_markdown_heading("## CUDA out of memory"));
    assert!(!is_markdown_heading(
        "# Native memory allocation (mprotect) failed to protect 16384 bytes."
    ));
    assert!(!is_markdown_heading(
        "#  SIGSEGV (0xb) at pc=0x00007f3a, pid=4242, tid=4243"
    ));
}

/// `told` holds for each of `yes` and for none of `no`.
fn tells_apart(told: fn(&str) -> bool, yes: &[&str], no: &[&str]) {
    for text in yes {
        assert!(told(text), "{text}");
    }
    for text in no {
        assert!(!told(text), "{text}");
    }
}

#[test]
fn an_articles_title_is_told_from_a_log_line() {
    tells_apart(
        is_article_title,
        &[
            "CUDA Out of Memory: Complete Troubleshooting Guide",
            "Как исправить RuntimeError: CUDA out of Memory",
            "How to fix 'Killed' when training",
            "## Fix: DataLoader worker killed by signal: Bus error",
            "nginx: too many open files - diagnosing file descriptor exhaustion",
        ],
        &[
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
            "Out of memory: Killed process 4242 (python)",
            "Why does my job get Killed?",
            "[2023-07-10 10:21:33] INFO: debugging enabled for worker 3",
        ],
    );
}

#[test]
fn a_page_is_told_from_a_programs_output_by_what_only_pages_carry() {
    tells_apart(
        reads_as_document,
        &[
            "+**Problem**: a run stops with a bare ``Killed``\n+\n+.. code-block:: text\n+\n+   Killed\n",
            "---\ntitle: NCCL\ndescription: Troubleshooting NCCL issues\n---\nA common problem:\n",
            "Problem\nThe swap was 100% used.\nAnalysis\nLinux swaps pages early.\n",
            "PBS Exit Status\u{b6}\nIf Exit Status >= 128\u{b6}\n=>> PBS: job killed: walltime 152 exceeded limit 120\n",
            "What do the components in a page allocation failure message mean ?\n\nSolution Verified - Updated -\n",
        ],
        &[
            "### Describe the bug\nKilled\n### Environment\ntorch 2.1\n",
            "---\n[rank0]: RuntimeError: CUDA out of memory\n",
            "Problem\nKilled\n",
            "paragraph sign \u{b6} in the middle of a line\n",
        ],
    );
}

#[test]
fn an_error_named_in_a_sentence_is_told_from_one_printed() {
    let named = |msg: &str, error: &str| {
        let start = msg.find(error).unwrap_or(0);
        mentioned_not_printed(msg, start..start + error.len())
    };
    assert!(named(
        "ディープラーニングの罠:空き容量があるのに「CUDA out of memory」が発生する理由",
        "CUDA out of memory"
    ));
    assert!(named(
        "On kernel 5.0+ memcg OOM kills emit only the `oom-kill:constraint=CONSTRAINT_MEMCG` line",
        "oom-kill:constraint=CONSTRAINT_MEMCG"
    ));
    assert!(named(
        "|   12 | Wizardcoder-15b  | autohf   |   16 |    2.59407   | CUDA out of memory |",
        "CUDA out of memory"
    ));
    // Unquoted inside a sentence of Korean prose that goes on after it.
    assert!(named(
        "\u{ac00}\u{c7a5} \u{b9ce}\u{c774} \u{aca9}\u{b294} \u{bb38}\u{c81c}\u{b294} RuntimeError: CUDA out of memory \u{c624}\u{b958}\u{c785}\u{b2c8}\u{b2e4}. \u{c774}\u{b294} GPU\u{c5d0} \u{d560}\u{b2f9}",
        "CUDA out of memory"
    ));
    // A label in Chinese before it: printed by the program.
    assert!(!named(
        "\u{7b2c}3\u{8f6e}\u{8bad}\u{7ec3}\u{65f6}\u{663e}\u{5b58}\u{4e0d}\u{8db3}\u{ff1a}CUDA out of memory. Tried to allocate 2.00 GiB\u{ff0c}\u{81ea}\u{52a8}\u{51cf}\u{5c0f}\u{6279}\u{5927}\u{5c0f}\u{540e}\u{91cd}\u{8bd5}",
        "CUDA out of memory"
    ));
    // A localised prefix before the error only: printed.
    assert!(!named(
        "\u{9519}\u{8bef}\u{ff1a}\u{8bad}\u{7ec3}\u{5931}\u{8d25}\u{4e86}\u{5440}\u{5440}\u{5440} RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "CUDA out of memory"
    ));
    // Printed: the line is the error, after a prefix; or two quotes with the
    // error between them, outside both.
    assert!(!named(
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "CUDA out of memory"
    ));
    assert!(!named(
        "| `sar -S`：8G swap 连着三天贴 98~100%；`%commit` 180~205% |",
        "swap 连着三天贴 98~100%"
    ));
    assert!(!named("Error: `Killed`", "Killed"));
    assert!(!named(
        "This is failing with `Unix.Unix_error(Unix.ENOMEM, \"io_uring_register_buffers\", \"\")`.",
        "Unix.ENOMEM"
    ));
    assert!(!named(
        "`terminate called after throwing an instance of 'std::bad_alloc'` `what():  std::bad_alloc`",
        "what():  std::bad_alloc"
    ));
}

#[test]
fn made_up_values_are_told_from_real_and_hidden_ones() {
    assert!(has_invented_values(
        "[12345.679] Killed process 1234 (python3) total-vm:204800kB"
    ));
    assert!(has_invented_values(
        "Out of memory: Kill process 1234 (java)"
    ));
    assert!(!has_invented_values(
        "[612301.112750] Killed process 48213 (python) total-vm:281018368kB"
    ));
    assert!(!has_invented_values("Killed process XXX (python)"));
    // A seed of 1234 is a real run's.
    assert!(!has_invented_values(
        "main.py --seed 1234 exits with return code = -9"
    ));
}

#[test]
fn a_lower_case_i_speaks_only_before_a_verb() {
    assert!(first_person(
        "Everytime when i make \"geth\" after installing"
    ));
    assert!(!first_person("Pamięć i procesor są w normie."));
    assert!(!first_person("Sections a, b, i and j are optional."));
}
