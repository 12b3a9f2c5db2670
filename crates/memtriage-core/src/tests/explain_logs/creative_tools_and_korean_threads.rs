//! Batch 25's forms told in words (web servers, data engineering, creative tools,
//! Windows, Korean, Vietnamese and Chinese threads, GPU faults), and the pages and
//! pull requests that only name them.

use super::{classes, each_named_first, lines_raise_nothing, scan, texts_named_first};
use crate::model::finding::Severity;

#[test]
fn drivers_and_runtimes_name_the_fault() {
    each_named_first(&[
        (
            "[234620.919588] MTGPU:  550:     MMU (Core) - FAULT:",
            "log.cuda-illegal-memory-access",
        ),
        (
            "[234620.919592] MTGPU:  550:       * MMU status (0x03150083E9B52089 | 0x000050C3): PC = 21, Reading from 0x83E9B52080, MCU L1(IP1 Global), Fault (Page Table).",
            "log.cuda-illegal-memory-access",
        ),
        (
            "Crash while rendering CUDA Driver API error out of memory code 2",
            "log.cuda-oom",
        ),
        // PyCharm's end of a run killed by heap corruption; 0xC0000005 retyped short.
        (
            "Process finished with exit code -1073740940 (0xC0000374)",
            "log.windows-memory-fault",
        ),
        (
            "I tried more sentences and got process finished with exit code 0xC000005 every time",
            "log.windows-memory-fault",
        ),
        // Colab's message in Korean.
        (
            "\"사용 가능한 RAM을 모두 사용한 후 세션이 다운되었습니다.\"",
            "log.oom-kill",
        ),
    ]);
    lines_raise_nothing(&[
        "[234620.919601] MTGPU:  550:     PCE for index 527 = 0x03518051 and is valid",
    ]);
}

#[test]
fn reports_tell_kills_rises_and_crashes_in_their_languages() {
    texts_named_first(&[
        (
            "# 问题：游戏被OOM Killer杀死\n\n游戏莫名被OOM Killer杀死，也没有崩溃日志。\n",
            "log.oom-kill",
        ),
        (
            "추측하기로는, 메모리 사용량이 거의 100%에 다다름에 따라 node 관리에 필요한 프로세스가 OOM Killer에 의해 강제 종료된 듯합니다.\n",
            "log.oom-kill",
        ),
        (
            "KoNLPy 사용 중 메모리가 계속 증가하는 현상이 있습니다.\n",
            "log.memory-growth",
        ),
        // An English claim inside a Korean sentence, then a question of what to do.
        (
            "imsoncod · description · 2021-02-26\nInference과정에서 Memory Leak현상이 발생하는데 혹시 어떻게 해결하셨나요?\n",
            "log.memory-growth",
        ),
        (
            "Em phát hiện bị lỗi core dump (Segmentation fault) đối với câu này.\n",
            "log.native-crash",
        ),
        (
            "Seeing consistent memory growth over all of the above mentioned components to Airflow.\n",
            "log.memory-growth",
        ),
    ]);
    // A question that asks the claim itself stays a question.
    for asked in [
        "Is there a memory leak in the scheduler?\n",
        "Does memory keep increasing over time for anyone else?\n",
    ] {
        assert!(classes(asked.as_bytes()).is_empty(), "{asked}");
    }
}

#[test]
fn pages_and_changes_that_name_a_failure_report_none() {
    for page in [
        // A pull request that rewrites a troubleshooting page: the diff's lines.
        "collinmcnulty · review thread · 2025-09-15\nairflow-core/docs/troubleshooting.rst:56\n```diff\n-  - Usually, Airflow workers that run out of memory receive a SIGKILL.\n+Dag run timeout\n+\"\"\"\"\"\"\n+\n+A dag run timeout can be specified by ``dagrun_timeout`` in the dag's definition.\n+The task process would likely be killed with SIGTERM (exit code -15).\n+\n+When a task process consumes too much memory for a worker, the best case scenario is it is killed\n+with SIGTERM (exit code -9). Depending on configuration and infrastructure, it is also\n```\n",
        // An Apache pull request titled by its ticket, quoting what the UI prints.
        "# [SPARK-40781][CORE] Explain exit code 137 as killed due to OOM\n\nwarrenzhu25 · description · 2022-10-13\nIn K8s, Apache Spark already provides the following explanation.\n```\nThe executor with id 32 exited with exit code 137 (SIGKILL, possible container OOM).\n```\n",
        // Any one case, in general.
        "When a task process is terminated with exit code -9 (sigkill) then there's a good chance it's due to out of memory error (OOM).\n",
        "Encountering the error message “Out of video memory trying to allocate a rendering resource. Exiting…“ typically indicates that your GPU lacks sufficient VRAM.\n",
    ] {
        // No warning or error; a page may leave context at info.
        let said = scan(page.as_bytes()).findings();
        assert!(
            said.iter().all(|f| f.severity == Severity::Info),
            "{said:?}\n{page}"
        );
    }
    // A report that opens with what happened still shows its lines.
    texts_named_first(&[(
        "When a login is attempted this occurs:\n\n```\nmailu-imap  | Aug 13 11:52:16 imap(emailaddress)<144><randomid/randomid>: Fatal: master: service(imap): child 144 killed with signal 11 (core not dumped)\n```\n",
        "log.native-crash",
    )]);
}

#[test]
fn a_yes_or_no_question_about_a_claim_stays_a_question() {
    for asked in [
        "Is this a memory leak, and how can I fix it?\n",
        "Does memory keep growing over time, and how do I stop it?\n",
    ] {
        assert!(classes(asked.as_bytes()).is_empty(), "{asked}");
    }
    // A writer's own case opened with `When a …` is a report.
    texts_named_first(&[(
        "When a model is loaded on GPU 0, I get torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
        "log.cuda-oom",
    )]);
}
