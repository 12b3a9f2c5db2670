//! Forms from the ninth unseen batch's areas, written from the programs that print
//! them: shells in their locales (glibc's and bash's words, the note in brackets),
//! strace's end of a traced process, exit codes in Spanish and Portuguese, the
//! kernel's traps, JVM, V8 and IPython failures, Jetson's NvMap, locked-memory
//! warnings of BPF and mlock, Windows Error Reporting in more languages, Ray's
//! workers and object store, tracemalloc's comparison of snapshots.

use super::each_named_first;

#[test]
fn a_process_dead_of_a_signal_is_read_in_each_locale_and_tool() {
    each_named_first(&[
        (
            r#"[10567.643135] traps: python[18389] general protection ip:7efe0933eea2 sp:7ffff5087f30 error:0 in libm-2.19.so[7efe0932a000+105000]"#,
            "log.native-crash",
        ),
        (
            r#"[ 8811.220145] traps: python3[40213] general protection fault ip:7f2a1c3b9e2a sp:7ffd5e8c2f10 error:0 in libc.so.6[7f2a1c300000+195000]"#,
            "log.native-crash",
        ),
        (
            r#"[ 8811.220145] traps: python3[40213] trap invalid opcode ip:7f2a1c3b9e2a sp:7ffd5e8c2f10 error:0 in libtorch_cpu.so[7f2a10000000+9195000]"#,
            "log.native-crash",
        ),
        (
            r#"traps: node[8113] trap divide error ip:55d0c1f0a2b1 sp:7ffc2b7e8d40 error:0 in node[55d0c0400000+2b4e000]"#,
            "log.native-crash",
        ),
        (
            r#"Ошибка сегментирования (стек памяти сброшен на диск)"#,
            "log.native-crash",
        ),
        (
            r#"Ошибка сегментирования (образ памяти сброшен на диск)"#,
            "log.native-crash",
        ),
        (r#"Ошибка сегментирования"#, "log.native-crash"),
        (
            r#"Speicherzugriffsfehler (Speicherabzug geschrieben)"#,
            "log.native-crash",
        ),
        (
            r#"Erreur de segmentation (core dumped)"#,
            "log.native-crash",
        ),
        (
            r#"Erreur de segmentation (image mémoire écrite)"#,
            "log.native-crash",
        ),
        (
            r#"Violación de segmento (`core' generado)"#,
            "log.native-crash",
        ),
        (r#"Violación de segmento (core dumped)"#, "log.native-crash"),
        (
            r#"Falha de segmentação (imagem do núcleo gravada)"#,
            "log.native-crash",
        ),
        (r#"Falha de segmentação"#, "log.native-crash"),
        (
            r#"Errore di segmentazione (core dump creato)"#,
            "log.native-crash",
        ),
        (
            r#"Naruszenie ochrony pamięci (zrzut pamięci)"#,
            "log.native-crash",
        ),
        (r#"段错误 (核心已转储)"#, "log.native-crash"),
        (r#"段错误"#, "log.native-crash"),
        (
            r#"./train.sh: line 3: 40213 段错误               (核心已转储) python train.py"#,
            "log.native-crash",
        ),
        (
            r#"セグメンテーション違反です (コアダンプ)"#,
            "log.native-crash",
        ),
        (
            r#"Abgebrochen (Speicherabzug geschrieben)"#,
            "log.native-crash",
        ),
        (r#"Abandon (core dumped)"#, "log.native-crash"),
        (r#"Abortado (`core' generado)"#, "log.native-crash"),
        (
            r#"Аварийный останов (стек памяти сброшен на диск)"#,
            "log.native-crash",
        ),
        (r#"已放弃 (核心已转储)"#, "log.native-crash"),
        (
            r#"+++ killed by SIGSEGV (core dumped) +++"#,
            "log.native-crash",
        ),
        (r#"+++ killed by SIGABRT +++"#, "log.native-crash"),
        (
            r#"Teste 05: erro de processamento provavelmente memória corrompida (código 134)"#,
            "log.native-crash",
        ),
        (
            r#"ou talvez apontador inválido (código 139)"#,
            "log.native-crash",
        ),
        (
            r#"El proceso terminó con código de salida 139"#,
            "log.native-crash",
        ),
        (
            r#"Processo finalizado com código de saída 139"#,
            "log.native-crash",
        ),
        (
            r#"Bus-Zugriffsfehler (Speicherabzug geschrieben)"#,
            "log.mmap-bus-error",
        ),
        (r#"Erreur du bus (core dumped)"#, "log.mmap-bus-error"),
        (r#"Error en el bus (`core' generado)"#, "log.mmap-bus-error"),
        (
            r#"Ошибка шины (стек памяти сброшен на диск)"#,
            "log.mmap-bus-error",
        ),
        (r#"总线错误 (核心已转储)"#, "log.mmap-bus-error"),
        (
            r#"+++ killed by SIGBUS (core dumped) +++"#,
            "log.mmap-bus-error",
        ),
        (r#"+++ killed by SIGKILL +++"#, "log.sigkill"),
        (
            r#"[rank: 1] Child process 40213 terminated with code -9"#,
            "log.sigkill",
        ),
        (r#"Getötet"#, "log.sigkill"),
        (r#"Terminado (killed)"#, "log.sigkill"),
        (r#"Убито"#, "log.sigkill"),
        (r#"已杀死"#, "log.sigkill"),
        (
            r#"2023-07-31 13:21:11,493 WARNING worker.py:2033 -- A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker."#,
            "log.sigkill",
        ),
        (
            r#"Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called."#,
            "log.sigkill",
        ),
    ]);
}

#[test]
fn each_runtime_and_limit_is_read_in_its_own_words() {
    each_named_first(&[
        (
            r#"Unknown error -1 : Couldn't set RLIMIT_MEMLOCK for bpftrace. If your program is not loading, you can try "ulimit -l 8192" to fix the problem"#,
            "log.memlock-limit",
        ),
        (
            r#"libbpf: Error in bpf_object__probe_loading():Operation not permitted(1). Couldn't load trivial BPF program. Make sure your kernel supports BPF (CONFIG_BPF_SYSCALL=y) and/or that RLIMIT_MEMLOCK is set to big enough value."#,
            "log.memlock-limit",
        ),
        (
            r#"metal: warning: failed to mlock shmem - Cannot allocate memory"#,
            "log.memlock-limit",
        ),
        (
            r#"warning: failed to mlock 4194304-byte buffer (after previously locking 0 bytes): Cannot allocate memory"#,
            "log.memlock-limit",
        ),
        (
            r#"mlockall failed: Cannot allocate memory"#,
            "log.memlock-limit",
        ),
        (
            r#"Cannot lock down 82274202 byte memory area (Cannot allocate memory)"#,
            "log.memlock-limit",
        ),
        (
            r#"mlock: Resource temporarily unavailable"#,
            "log.memlock-limit",
        ),
        (r#" oops_end+0x13c/0x144"#, "log.kernel-oops"),
        (r#"[ 4411.217733]  oops_end+0xd1/0xe0"#, "log.kernel-oops"),
        (
            r#"kernel BUG at include/linux/page-flags.h:700!"#,
            "log.kernel-oops",
        ),
        (
            r#"MemoryError                               Traceback (most recent call last)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"   > java.lang.OutOfMemoryError (no error message)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Caused by: java.lang.OutOfMemoryError"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: Cannot reserve 8192 bytes of direct buffer memory (allocated: 268431360, limit: 268435456)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Exception in thread "main" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached"#,
            "log.host-alloc-failure",
        ),
        (
            r#"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory"#,
            "log.host-alloc-failure",
        ),
        (r#"<--- Last few GCs --->"#, "log.host-alloc-failure"),
        (
            r#"  235682 ms: Mark-sweep 1226.7 (1406.5) -> 1235.0 (1404.5) MB, 1688.6 / 0.0 ms [last resort gc]."#,
            "log.host-alloc-failure",
        ),
        (
            r#"NvMapMemAllocInternalTagged: 1075072515 error 12"#,
            "log.host-alloc-failure",
        ),
        (r#"NvMapMemHandleAlloc: error 12"#, "log.host-alloc-failure"),
        (
            r#"fatal error: runtime: out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"runtime: VirtualAlloc of 1048576 bytes failed with errno=1455"#,
            "log.host-alloc-failure",
        ),
        (
            r#"memory allocation of 34359738368 bytes failed"#,
            "log.host-alloc-failure",
        ),
        (
            r#"numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.46 GiB for an array with shape (21873, 21230) and data type float64"#,
            "log.host-alloc-failure",
        ),
        (r#"Код исключения: c0000005"#, "log.windows-memory-fault"),
        (r#"Ausnahmecode: c0000005"#, "log.windows-memory-fault"),
        (r#"Code d’exception : c0000005"#, "log.windows-memory-fault"),
        (
            r#"Código de excepción: c0000005"#,
            "log.windows-memory-fault",
        ),
        (r#"Código de exceção: c0000005"#, "log.windows-memory-fault"),
        (r#"Codice eccezione: c0000005"#, "log.windows-memory-fault"),
        (r#"Kod wyjątku: c0000005"#, "log.windows-memory-fault"),
        (r#"异常代码: c0000005"#, "log.windows-memory-fault"),
        (r#"例外コード: c0000005"#, "log.windows-memory-fault"),
        (r#"예외 코드: c0000005"#, "log.windows-memory-fault"),
        (
            r#"2025-01-14 03:08:29,081	WARNING services.py:2022 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance!"#,
            "log.dataloader-shm",
        ),
        (
            r#"/usr/local/lib/python3.6/site-packages/uvicorn/main.py:305: size=1652 KiB (+1499 KiB), count=4597 (+4172), average=368 B"#,
            "log.memory-growth",
        ),
    ]);
}
