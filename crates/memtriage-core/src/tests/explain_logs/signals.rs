//! A process that died of a signal, as each program that reports it says so: shells,
//! runtimes, launchers, MPI, container runtimes, CI runners, debuggers and crash
//! handlers. The forms are the programs' own (their sources print them so), not
//! samples', and one template reads them all (rules/signals.rs).

use super::{classes, each_named_first, lines_raise_nothing};

#[test]
fn every_program_that_reports_a_signal_is_read() {
    each_named_first(&[
        ("Bus error (core dumped)", "log.mmap-bus-error"),
        ("Segmentation fault (core dumped)", "log.native-crash"),
        ("Aborted (core dumped)", "log.native-crash"),
        ("bash: line 1: 398417 Bus error               (core dumped) python train.py", "log.mmap-bus-error"),
        ("./run.sh: line 5:  2345 Segmentation fault      python x.py", "log.native-crash"),
        ("zsh: bus error  python train.py", "log.mmap-bus-error"),
        ("zsh: segmentation fault  python train.py", "log.native-crash"),
        ("zsh: killed     python train.py", "log.sigkill"),
        ("zsh: abort      python train.py", "log.native-crash"),
        ("fish: Job 1, 'python train.py' terminated by signal SIGBUS (Misaligned address error)", "log.mmap-bus-error"),
        ("fish: Job 1, 'python train.py' terminated by signal SIGSEGV (Address boundary error)", "log.native-crash"),
        ("fish: Job 1, 'python train.py' terminated by signal SIGKILL (Forced quit)", "log.sigkill"),
        ("fish: Job 1, 'python train.py' terminated by signal SIGABRT (Abort)", "log.native-crash"),
        ("subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGBUS: 7>.", "log.mmap-bus-error"),
        ("subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGSEGV: 11>.", "log.native-crash"),
        ("subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGKILL: 9>.", "log.sigkill"),
        ("subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGABRT: 6>.", "log.native-crash"),
        ("The exit codes of the workers are {SIGKILL(-9)}", "log.sigkill"),
        ("The exit codes of the workers are {SIGSEGV(-11)}", "log.native-crash"),
        ("The exit codes of the workers are {SIGBUS(-7)}", "log.mmap-bus-error"),
        ("  process didn't exit successfully: `rustc --crate-name foo src/lib.rs` (signal: 7, SIGBUS: access to undefined memory)", "log.mmap-bus-error"),
        ("  process didn't exit successfully: `rustc --crate-name foo src/lib.rs` (signal: 10, SIGBUS: access to undefined memory)", "log.mmap-bus-error"),
        ("  process didn't exit successfully: `rustc --crate-name foo src/lib.rs` (signal: 11, SIGSEGV: invalid memory reference)", "log.native-crash"),
        ("  process didn't exit successfully: `target/debug/build/foo/build-script-build` (signal: 6, SIGABRT: process abort signal)", "log.native-crash"),
        ("  process didn't exit successfully: `rustc --crate-name foo src/lib.rs` (signal: 9, SIGKILL: kill)", "log.sigkill"),
        ("signal: segmentation fault (core dumped)", "log.native-crash"),
        ("signal: bus error (core dumped)", "log.mmap-bus-error"),
        ("signal: killed", "log.sigkill"),
        ("signal: aborted (core dumped)", "log.native-crash"),
        ("[signal SIGBUS: bus error code=0x2 addr=0x7f0000000000 pc=0x45a1b2]", "log.mmap-bus-error"),
        ("[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]", "log.native-crash"),
        ("npm ERR! signal SIGSEGV", "log.native-crash"),
        ("npm ERR! signal SIGBUS", "log.mmap-bus-error"),
        (r#"Error: Command failed with signal "SIGSEGV""#, "log.native-crash"),
        (r#"error Command failed with signal "SIGBUS"."#, "log.mmap-bus-error"),
        ("app_1  | app_1 exited with code 139", "log.native-crash"),
        ("app_1 exited with code 135", "log.mmap-bus-error"),
        ("trainer exited with code 139", "log.native-crash"),
        ("Exited (139) 2 minutes ago", "log.native-crash"),
        ("Exited (135) 2 minutes ago", "log.mmap-bus-error"),
        ("      Exit Code:    139", "log.native-crash"),
        ("      Exit Code:    135", "log.mmap-bus-error"),
        ("train.service: Main process exited, code=dumped, status=7/BUS", "log.mmap-bus-error"),
        ("train.service: Main process exited, code=dumped, status=11/SEGV", "log.native-crash"),
        ("train.service: Main process exited, code=dumped, status=6/ABRT", "log.native-crash"),
        ("train.service: Main process exited, code=killed, status=9/KILL", "log.sigkill"),
        ("Program received signal SIGBUS, Bus error.", "log.mmap-bus-error"),
        ("Program received signal SIGSEGV, Segmentation fault.", "log.native-crash"),
        ("Program terminated with signal SIGBUS, Bus error.", "log.mmap-bus-error"),
        ("Program terminated with signal SIGSEGV, Segmentation fault.", "log.native-crash"),
        (r#"Thread 1 "python" received signal SIGSEGV, Segmentation fault."#, "log.native-crash"),
        ("* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1, address=0x0)", "log.native-crash"),
        ("Exception Type:  EXC_BAD_ACCESS (SIGBUS)", "log.mmap-bus-error"),
        ("Exception Type:        EXC_BAD_ACCESS (SIGSEGV)", "log.native-crash"),
        ("Exception Type:  EXC_CRASH (SIGABRT)", "log.native-crash"),
        ("[ 27731.567890] python[27731]: segfault at 7f0000000000 ip 00007f39841767890 sp 00007ffd398417678 error 4 in libc.so.6[7f3984176+1a0000]", "log.native-crash"),
        ("[ 27731.567890] traps: python[27731] general protection fault ip:7f39841767890 sp:7ffd398417678 error:0 in libtorch_cpu.so[7f1200000000+8000000]", "log.native-crash"),
        ("*** SIGSEGV (@0x0) received by PID 398417 (TID 0x7f0000001700) from PID 0; stack trace: ***", "log.native-crash"),
        ("*** SIGBUS (@0x7f0000000000) received by PID 398417 (TID 0x7f0000001700) from PID 0; stack trace: ***", "log.mmap-bus-error"),
        ("*** Signal 7 (SIGBUS) (0x7f15eaf9f000) received by PID 398478 (pthread TID 0x7f19765b96c0) (linux TID 398554) (code: nonexistent physical address), stack trace: ***", "log.mmap-bus-error"),
        ("*** Signal 11 (SIGSEGV) (0x0) received by PID 1 (pthread TID 0x7f19765b96c0) (linux TID 1) (code: address not mapped to object), stack trace: ***", "log.native-crash"),
        ("Signal 7 (SIGBUS) received by PID 398417", "log.mmap-bus-error"),
        ("Signal 11 (SIGSEGV) received by PID 398417", "log.native-crash"),
        ("torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 0 (pid: 27731) of binary: /usr/bin/python", "log.mmap-bus-error"),
        ("torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 27731) of binary: /usr/bin/python", "log.native-crash"),
        ("mpirun noticed that process rank 0 with PID 27731 on node n01 exited on signal 7 (Bus error).", "log.mmap-bus-error"),
        ("mpirun noticed that process rank 0 with PID 27731 on node n01 exited on signal 11 (Segmentation fault).", "log.native-crash"),
        ("mpirun noticed that process rank 0 with PID 27731 on node n01 exited on signal 9 (Killed).", "log.sigkill"),
        ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)", "log.native-crash"),
        ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Bus error (signal 7)", "log.mmap-bus-error"),
        ("srun: error: node01: task 0: Bus error", "log.mmap-bus-error"),
        ("srun: error: node01: task 0: Segmentation fault (core dumped)", "log.native-crash"),
        ("srun: error: node01: task 3: Killed", "log.sigkill"),
        ("==27731== Process terminating with default action of signal 7 (SIGBUS)", "log.mmap-bus-error"),
        ("==27731== Process terminating with default action of signal 11 (SIGSEGV)", "log.native-crash"),
        ("Fatal Python error: Bus error", "log.mmap-bus-error"),
        ("Fatal Python error: Segmentation fault", "log.native-crash"),
        ("Fatal Python error: Aborted", "log.native-crash"),
        ("#  SIGBUS (0x7) at pc=0x00007f39841767890, pid=27731, tid=0x00007f0000001700", "log.mmap-bus-error"),
        ("#  SIGSEGV (0xb) at pc=0x00007f39841767890, pid=27731, tid=0x00007f0000001700", "log.native-crash"),
        ("make: *** [Makefile:5: all] Segmentation fault (core dumped)", "log.native-crash"),
        ("gcc: internal compiler error: Segmentation fault signal terminated program cc1plus", "log.native-crash"),
        ("g++: internal compiler error: Bus error signal terminated program cc1plus", "log.mmap-bus-error"),
        ("c++: fatal error: Killed signal terminated program cc1plus", "log.sigkill"),
        // zsh's job table.
        ("[1]    9301 killed     python3 scripts/dream.py", "log.sigkill"),
        ("[1]  + 9301 killed     python3 scripts/dream.py", "log.sigkill"),
        ("x | a/b.sh: line 15: 60721 Killed                  conda create -n py3 -y", "log.sigkill"),
        ("clang: error: unable to execute command: Segmentation fault (core dumped)", "log.native-crash"),
        ("clang: error: unable to execute command: Killed", "log.sigkill"),
        ("collect2: fatal error: ld terminated with signal 9 [Killed]", "log.sigkill"),
        ("collect2: fatal error: ld terminated with signal 7 [Bus error]", "log.mmap-bus-error"),
        ("collect2: fatal error: ld terminated with signal 11 [Segmentation fault], core dumped", "log.native-crash"),
        ("Received signal 11 SEGV_MAPERR 000000000000", "log.native-crash"),
        ("Received signal 7 BUS_ADRERR 7f0000000000", "log.mmap-bus-error"),
        ("The command '/bin/sh -c pip install -r requirements.txt' returned a non-zero code: 137", "log.sigkill"),
        ("The command '/bin/sh -c python setup.py build' returned a non-zero code: 139", "log.native-crash"),
        (r#"ERROR: failed to solve: process "/bin/sh -c cargo build --release" did not complete successfully: exit code: 137"#, "log.sigkill"),
        (r#"ERROR: failed to solve: process "/bin/sh -c python build.py" did not complete successfully: exit code: 139"#, "log.native-crash"),
        ("Error: Process completed with exit code 139.", "log.native-crash"),
        ("Error: Process completed with exit code 135.", "log.mmap-bus-error"),
        ("Error: Process completed with exit code 137.", "log.sigkill"),
        ("script returned exit code 139", "log.native-crash"),
        ("Command exited with non-zero status 139", "log.native-crash"),
        ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Aborted (signal 6)", "log.native-crash"),
        ("terminate called after throwing an instance of 'std::runtime_error'", "log.native-crash"),
        ("*** stack smashing detected ***: terminated", "log.native-crash"),
        ("free(): invalid pointer", "log.native-crash"),
        ("munmap_chunk(): invalid pointer", "log.native-crash"),
        ("potentially unexpected fatal signal 7.", "log.mmap-bus-error"),
        ("potentially unexpected fatal signal 11.", "log.native-crash"),
        ("进程已结束，退出代码为 137 (interrupted by signal 9: SIGKILL)", "log.sigkill"),
        ("train.py exited with status 139", "log.native-crash"),
        ("the worker exited with code -11", "log.native-crash"),
        ("worker exit status=139", "log.native-crash"),
    ]);
}

#[test]
fn a_title_that_names_the_signal_is_no_report() {
    // A page's title glued to its chapter number (datasea.cn), and the signals named in
    // a page's sentences.
    for text in [
        "\u{7b2c}\u{4e00}\u{7ae0}:signal: killed\n",
        "A segmentation fault (SIGSEGV) occurs when a program reads memory it does not own.\n",
        "The kernel sends a bus error (SIGBUS) when a mapped file shrinks.\n",
    ] {
        assert_eq!(classes(text.as_bytes()), Vec::<String>::new(), "{text}");
    }
}

/// A signal someone sent on purpose, or named as an argument: a supervisor's own stop,
/// a command line, a system call's trace, what `docker stop` leaves; a dotted date and
/// a release's version before words are no manual's section.
#[test]
fn a_signal_sent_on_purpose_or_named_is_no_failure() {
    lines_raise_nothing(&[
        "2023-07-10 10:21:33,112 INFO stopped: web (terminated by SIGKILL)",
        "+ timeout --signal SIGKILL 600 ./train.sh",
        "docker kill --signal SIGKILL trainer",
        "kill(27731, SIGKILL)                    = 0",
        r#"a1b2c3d4e5f6   nginx   "nginx -g 'daemon of…"   3 days ago   Exited (137) 2 hours ago   web"#,
        "14.03.22 INFO Starting training with 8 workers",
        "Ubuntu 22.04.4 LTS (Jammy Jellyfish)",
    ]);
}

/// systemd's stop timeout ends the service with SIGKILL: a supervisor's kill, not
/// the OOM killer's.
#[test]
fn a_stop_timeout_is_a_sigkill_for_no_memory() {
    let log = "app.service: State 'stop-sigterm' timed out. Killing.\n\
               app.service: Killing process 27731 (python) with signal SIGKILL.\n\
               app.service: Main process exited, code=killed, status=9/KILL\n\
               app.service: Failed with result 'timeout'.\n";
    assert_eq!(classes(log.as_bytes()), ["log.sigkill"]);
}
