//! Forms from batch 11's areas, written from the programs that print them: Go's,
//! the JVM's, .NET's, Node's, BEAM's, PHP's, Ruby's, GHC's and Rust's runtimes; the
//! sanitizers, valgrind, systemd-coredump, abrt, breakpad, gdb, lldb and the crash
//! utility; ROS's launchers; llama.cpp, Ollama, TGI, SGLang, TensorRT, ComfyUI,
//! Blender and PhysX; strerror(ENOMEM) and strerror(EMFILE) in glibc's translations.

use super::{classes, each_named_first, lines_raise_nothing};

#[test]
fn allocators_refusing_memory_are_read_in_their_own_words() {
    each_named_first(&[
        (
            r#"fatal error: runtime: out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"runtime: out of memory: cannot allocate 1048576-byte block (3826024448 in use)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"fatal error: out of memory allocating heap arena metadata"#,
            "log.host-alloc-failure",
        ),
        (
            r#"runtime: failed to create new OS thread (have 3 already; errno=12)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: Java heap space"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: GC overhead limit exceeded"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: Metaspace"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: Direct buffer memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: Requested array size exceeds VM limit"#,
            "log.host-alloc-failure",
        ),
        (
            r#"# There is insufficient memory for the Java Runtime Environment to continue."#,
            "log.host-alloc-failure",
        ),
        (
            r#"# Native memory allocation (mmap) failed to map 12288 bytes for committing reserved memory."#,
            "log.host-alloc-failure",
        ),
        (
            r#"OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00000000e0000000, 536870912, 0) failed; error='Cannot allocate memory' (errno=12)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Unhandled exception. System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown."#,
            "log.host-alloc-failure",
        ),
        (
            r#"GC heap initialization failed with error 0x8007000E"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Failed to create CoreCLR, HRESULT: 0x8007000E"#,
            "log.host-alloc-failure",
        ),
        (
            r#"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"RangeError: Array buffer allocation failed"#,
            "log.host-alloc-failure",
        ),
    ]);
}

#[test]
fn runtimes_out_of_heap_are_read_in_their_own_words() {
    each_named_first(&[
        (
            r#"FATAL ERROR: NewSpace::Rebalance Allocation failed - process out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"eheap_alloc: Cannot allocate 1234567 bytes of memory (of type "heap")."#,
            "log.host-alloc-failure",
        ),
        (
            r#"binary_alloc: Cannot allocate 123456 bytes of memory (of type "binary")."#,
            "log.host-alloc-failure",
        ),
        (
            r#"PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /var/www/html/index.php on line 12"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Fatal error: Out of memory (allocated 2097152) (tried to allocate 4096 bytes) in /var/www/a.php on line 3"#,
            "log.host-alloc-failure",
        ),
        (
            r#"[FATAL] failed to allocate memory (NoMemoryError)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"/usr/lib/ruby/2.7.0/open3.rb:213:in `spawn': Cannot allocate memory - fork(2) (Errno::ENOMEM)"#,
            "log.host-alloc-failure",
        ),
        (r#"app: Heap exhausted;"#, "log.host-alloc-failure"),
        (
            r#"app: out of memory (requested 1048576 bytes)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"memory allocation of 1073741824 bytes failed"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Error: model requires more system memory (20.0 GiB) than is available (10.5 GiB)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 123456789 bytes."#,
            "log.host-alloc-failure",
        ),
        (
            r#"bash: fork: Kann nicht genügend Speicher zuweisen"#,
            "log.host-alloc-failure",
        ),
        (
            r#"bash: fork: Impossible d'allouer de la mémoire"#,
            "log.host-alloc-failure",
        ),
        (
            r#"bash: fork: No se puede asignar memoria"#,
            "log.host-alloc-failure",
        ),
        (
            r#"bash: fork: Não foi possível alocar memória"#,
            "log.host-alloc-failure",
        ),
        (
            r#"bash: fork: Невозможно выделить память"#,
            "log.host-alloc-failure",
        ),
        (r#"bash: fork: 无法分配内存"#, "log.host-alloc-failure"),
        (
            r#"bash: fork: メモリを確保できません"#,
            "log.host-alloc-failure",
        ),
    ]);
}

#[test]
fn crash_reporters_and_runtimes_name_the_crash() {
    each_named_first(&[
        (
            r#"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]"#,
            "log.native-crash",
        ),
        (
            r#"fatal error: unexpected signal during runtime execution"#,
            "log.native-crash",
        ),
        (
            r#"thread 'main' has overflowed its stack"#,
            "log.native-crash",
        ),
        (r#"fatal runtime error: stack overflow"#, "log.native-crash"),
        (
            r#"==12345==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014 at pc 0x0000004f9a2b bp 0x7ffd8e7a2b10 sp 0x7ffd8e7a2b08"#,
            "log.native-crash",
        ),
        (
            r#"==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x55d1c2a3b4c5 bp 0x7ffc sp 0x7ffc T0)"#,
            "log.native-crash",
        ),
        (r#"AddressSanitizer:DEADLYSIGNAL"#, "log.native-crash"),
        (
            r#"==4242== Process terminating with default action of signal 11 (SIGSEGV)"#,
            "log.native-crash",
        ),
        (r#"==4242== Invalid read of size 8"#, "log.native-crash"),
        (
            r#"WARNING: MemorySanitizer: use-of-uninitialized-value"#,
            "log.native-crash",
        ),
        (
            r#"Nov 30 10:00:00 host systemd-coredump[1234]: Process 5678 (python3) of user 1000 dumped core."#,
            "log.native-crash",
        ),
        (
            r#"abrt-hook-ccpp: Process 29811 (foo) of user 0 killed by SIGSEGV - dumping core"#,
            "log.native-crash",
        ),
        (r#"Crash reason:  SIGSEGV /SEGV_MAPERR"#, "log.native-crash"),
        (
            r#"Program terminated with signal SIGSEGV, Segmentation fault."#,
            "log.native-crash",
        ),
        (
            r#"Program received signal SIGSEGV, Segmentation fault."#,
            "log.native-crash",
        ),
        (
            r#"* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1, address=0x0)"#,
            "log.native-crash",
        ),
        (
            r#"* thread #1, name = 'python', stop reason = signal SIGSEGV: invalid address (fault address: 0x0)"#,
            "log.native-crash",
        ),
        (
            r#"[ERROR] [component_container-1]: process has died [pid 123, exit code -11, cmd '/opt/ros/humble/lib/rclcpp_components/component_container --ros-args']."#,
            "log.native-crash",
        ),
        (
            r#"[ERROR] [rviz2-1]: process has died [pid 123, exit code -6, cmd '/opt/ros/humble/lib/rviz2/rviz2']."#,
            "log.native-crash",
        ),
    ]);
}

#[test]
fn emfile_is_read_in_each_locale() {
    each_named_first(&[
        (
            r#"Error: EMFILE: too many open files, open '/app/node_modules/x/index.js'"#,
            "log.too-many-open-files",
        ),
        (
            r#"Error: EMFILE: too many open files, watch"#,
            "log.too-many-open-files",
        ),
        (
            r#"Error: listen EMFILE: too many open files 0.0.0.0:3000"#,
            "log.too-many-open-files",
        ),
        (
            r#"java.io.IOException: Too many open files"#,
            "log.too-many-open-files",
        ),
        (
            r#"Caused by: java.io.IOException: 打开的文件过多"#,
            "log.too-many-open-files",
        ),
        (
            r#"open /etc/hosts: 打开的文件过多"#,
            "log.too-many-open-files",
        ),
        (
            r#"bash: /tmp/x: 開いているファイルが多すぎます"#,
            "log.too-many-open-files",
        ),
        (
            r#"cat: datei: Zu viele offene Dateien"#,
            "log.too-many-open-files",
        ),
        (
            r#"tail: impossible d'ouvrir 'x': Trop de fichiers ouverts"#,
            "log.too-many-open-files",
        ),
        (
            r#"ls: no se puede abrir el directorio '.': Demasiados archivos abiertos"#,
            "log.too-many-open-files",
        ),
        (
            r#"socket: Слишком много открытых файлов"#,
            "log.too-many-open-files",
        ),
    ]);
}

#[test]
fn leak_checkers_reports_are_leaks() {
    each_named_first(&[
        (
            r#"==12345==ERROR: LeakSanitizer: detected memory leaks"#,
            "log.memory-growth",
        ),
        (
            r#"SUMMARY: AddressSanitizer: 1234 byte(s) leaked in 5 allocation(s)."#,
            "log.memory-growth",
        ),
        (
            r#"==4242==    definitely lost: 1,234 bytes in 5 blocks"#,
            "log.memory-growth",
        ),
    ]);
}

#[test]
fn a_ros_node_dead_of_sigkill_is_a_sigkill() {
    each_named_first(&[
        (
            r#"[ouster/os_nodelet_mgr-2] process has died [pid 8738, exit code -9, cmd /opt/ros/noetic/lib/nodelet/nodelet manager __name:=os_nodelet_mgr]"#,
            "log.sigkill",
        ),
        (
            r#"process has died [pid 8738, exit code -9, cmd /opt/ros/noetic/lib/nodelet/nodelet manager __name:=os_nodelet_mgr]"#,
            "log.sigkill",
        ),
        (
            r#"[ERROR] [ros2-1]: process has died [pid 4312, exit code -9, cmd 'ros2 bag play big_bag']."#,
            "log.sigkill",
        ),
        (
            r#"Error: llama runner process has terminated: signal: killed"#,
            "log.sigkill",
        ),
    ]);
}

#[test]
fn serving_and_rendering_stacks_name_a_full_gpu() {
    each_named_first(&[
        (
            r#"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1234.00 MiB on device 0: cudaMalloc failed: out of memory"#,
            "log.cuda-oom",
        ),
        (
            r#"llama_model_load: error loading model: unable to allocate CUDA0 buffer"#,
            "log.cuda-oom",
        ),
        (
            r#"ggml_vulkan: Device memory allocation of size 1073741824 failed."#,
            "log.cuda-oom",
        ),
        (
            r#"vk::Device::allocateMemory: ErrorOutOfDeviceMemory"#,
            "log.cuda-oom",
        ),
        (
            r#"Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"#,
            "log.cuda-oom",
        ),
        (
            r#"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."#,
            "log.cuda-oom",
        ),
        (
            r#"[TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)"#,
            "log.cuda-oom",
        ),
        (
            r#"!!! Exception during processing !!! Allocation on device "#,
            "log.cuda-oom",
        ),
        (r#"Error: System is out of GPU memory"#, "log.cuda-oom"),
        (
            r#"CUDA error: Out of memory in cuMemAlloc(&device_pointer, size)"#,
            "log.cuda-oom",
        ),
        (
            r#"[Error] [omni.physx.plugin] PhysX error: PxgCudaDeviceMemoryAllocator fail to allocate memory 339738624 bytes!! Result = 2"#,
            "log.cuda-oom",
        ),
    ]);
}

#[test]
fn the_other_classes_are_read_in_their_programs_words() {
    each_named_first(&[
        (
            "{ Error: listen EMFILE /tmp/server-ck6wudgsnfo.sock",
            "log.too-many-open-files",
        ),
        (
            "  message: 'getaddrinfo EMFILE cognito-idp.ap-southeast-2.amazonaws.com:443',",
            "log.too-many-open-files",
        ),
        (
            r#"textPayload: "/docker-entrypoint.sh: line 4:     6 Segmentation fault      (core dumped) slate-service --config /slate/conf/slate.conf""#,
            "log.native-crash",
        ),
        (
            " Status reason\tOutOfMemoryError: Container killed due to memory usage Exit Code\t137",
            "log.oom-kill",
        ),
        (
            "Nov 29 00:52:43 copr systemd[1]: copr-dist-git.service: systemd-oomd killed 1 process(es) in this unit.",
            "log.userspace-oom-kill",
        ),
        (
            "Illegal address in CUDA queue copy_from_device (integrator_shade_surface integrator_sorted_paths_array prefix_sum)",
            "log.cuda-illegal-memory-access",
        ),
        (
            "Caught SIGBUS/SEGV while mmapping. File was truncated while aide was running?",
            "log.mmap-bus-error",
        ),
        (
            r#"Fatal error. System.AccessViolationException: Attempted to read or write protected memory. This is often an indication that other memory is corrupt."#,
            "log.windows-memory-fault",
        ),
        (r#"       PANIC: "Oops: 0000 [#1] SMP ""#, "log.kernel-oops"),
        (
            r#"warning: failed to mlock 1073741824-byte buffer (after previously locking 0 bytes): Cannot allocate memory"#,
            "log.memlock-limit",
        ),
        (
            r#"max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]"#,
            "log.max-map-count",
        ),
    ]);
}

#[test]
fn a_clean_leak_check_raises_nothing() {
    lines_raise_nothing(&[
        r#"==4242==    definitely lost: 0 bytes in 0 blocks"#,
        r#"==4242== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)"#,
    ]);
}

#[test]
fn reports_are_told_from_pages_by_their_writers_words() {
    let first = |text: &str| classes(text.as_bytes()).first().cloned();
    // The writer met what follows, whatever words of a page the sentence also has.
    assert_eq!(
        first("When starting an example sketch, I get the following exception:\n\n    terminate called after throwing an instance of 'std::bad_alloc'\n      what():  std::bad_alloc\n").as_deref(),
        Some("log.host-alloc-failure")
    );
    // A Rust panic's message quotes its error in backticks.
    assert_eq!(
        first("thread '<unnamed>' panicked at src/pipeline/mistral.rs:409:17:\nModel failed with error `DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")`. Please raise an issue.\n").as_deref(),
        Some("log.cuda-oom")
    );
    // The writer's own output, which they call an example of it.
    assert_eq!(
        first("for large files it starts and then get killed and I look at `htop` and it seems it is an issue of memory. An example of the output is:\n```\n[INFO] [1659367143.338281609] [rosbag2_storage]: Opened database 'rosbag_0.db3' for READ_ONLY.\nKilled\n```\n").as_deref(),
        Some("log.sigkill")
    );
    // An issue's title over its form's first heading is the error the poster got.
    assert_eq!(
        first("# Process `RNAFUSION:STAR_ALIGN (test)` terminated with an error exit status (137)\n\n### Description of the bug\n\nThe system load goes up to about 18GB and then fills the swap.\n").as_deref(),
        Some("log.sigkill")
    );
    // A package manager's progress is no article's title, nor a plea for a fix.
    assert_eq!(
        first("Resolving dependencies...\nghc: internal error: Unable to commit 1048576 bytes of memory\n").as_deref(),
        Some("log.host-alloc-failure")
    );
    assert_eq!(
        first("how to fix it?\nOSError: exception: access violation reading 0xFFFFFFFFFFFFFFFF\n")
            .as_deref(),
        Some("log.windows-memory-fault")
    );
    // Syslog lines a page introduces as examples; a manual's numbered caption over
    // the output it shows; valgrind's lines under the sentence that introduces them.
    for page in [
        "No resulta inusual encontrar en el log del sistema mensajes similares a estos:\n\nSep 1 23:04:12 sid kernel: Out of memory: Killed process 15641 (named).\nSep 1 23:04:12 sid kernel: Out of Memory: Kill process 2415 (atd) score 31 and children.\n",
        "Example A-1 Sample Header from a Crash\n\n#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n#  SIGSEGV (0xb) at pc=0x417789d7, pid=21139, tid=1024\n",
        "Here's some example output:\n==29== LEAK SUMMARY:\n==29== definitely lost: 16 bytes in 2 blocks\n",
    ] {
        assert_eq!(classes(page.as_bytes()), Vec::<String>::new(), "{page}");
    }
}
