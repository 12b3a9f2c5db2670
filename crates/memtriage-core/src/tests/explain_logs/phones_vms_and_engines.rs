//! Forms from batch 12's areas, written from the programs that print them: CTranslate2
//! (faster-whisper), XLA on TPUs, game engines' video memory; Android's ART and lmkd,
//! iOS's jetsam, OpenCV's allocator; QEMU, VirtualBox and Hyper-V refusing a guest's
//! RAM, VFIO's pinning limit, wine's failed mmap; ZFS's SPL panics; top's bar mode;
//! NCCL's calls that fail; logcat's crashes and OBS's crash handler.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn accelerators_and_engines_name_a_full_device_memory() {
    each_named_first(&[
        (
            r#"RuntimeError: CUDA failed with error out of memory"#,
            "log.cuda-oom",
        ),
        (
            r#"W1110 07:24:24.387306     892 op_kernel.cc:1639] Resource exhausted: Compilation failure: Ran out of memory in memory space hbm. Used 18.56G of 16.00G hbm. Exceeded hbm capacity by 2.56G."#,
            "log.cuda-oom",
        ),
        (
            r#"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 33.05G of 15.48G hbm. Exceeded hbm capacity by 17.57G."#,
            "log.cuda-oom",
        ),
        (
            r#"Out of video memory trying to allocate a rendering resource. Make sure your video card has the minimum required memory, try lowering the resolution and/or closing other applications that are running. Exiting..."#,
            "log.cuda-oom",
        ),
        (
            r#"[2026.01.30-08.56.20:533][700]LogD3D12RHI: Error: Out of video memory trying to allocate a rendering resource"#,
            "log.cuda-oom",
        ),
        (
            r#"2026/07/03 21:39:56.4413	[engine/Engine] OUT OF VIDEO MEMORY! ( vmaAllocateMemory )"#,
            "log.cuda-oom",
        ),
        (
            r#"ERROR: vkAllocateMemory failed with VK_ERROR_OUT_OF_DEVICE_MEMORY"#,
            "log.cuda-oom",
        ),
        (
            r#"Error: _DOVK(): OUT OF VIDEO MEMORY! (vmaAllocateMemory)"#,
            "log.cuda-oom",
        ),
    ]);
}

#[test]
fn hypervisors_and_runtimes_refusing_memory_are_read() {
    each_named_first(&[
        (
            r#"java.lang.OutOfMemoryError: Failed to allocate a 361332168 byte allocation with 8388608 free bytes and 164MB until OOM, target footprint 372920392, growth limit 536870912"#,
            "log.host-alloc-failure",
        ),
        (
            r#"java.lang.OutOfMemoryError: Failed to allocate a 72 byte allocation with 1777664 free bytes and 1736KB until OOM, target footprint 268435456, growth limit 268435456; giving up on allocation because <1% of heap free after GC."#,
            "log.host-alloc-failure",
        ),
        (
            r#"OpenCV Error: Insufficient memory (Failed to allocate 921604 bytes) in OutOfMemoryError, file /home/pi/opencv-2.4.10/modules/core/src/alloc.cpp, line 52"#,
            "log.host-alloc-failure",
        ),
        (
            r#"cv2.error: OpenCV(4.5.4) /tmp/pip-req-build/opencv/modules/core/src/alloc.cpp:73: error: (-4:Insufficient memory) Failed to allocate 1228800000 bytes in function 'OutOfMemoryError'"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Sep 23 03:01:22 ubuntu2204 kata[1779636]: time="2024-09-23T03:01:22.533334533-07:00" level=error msg="qemu-system-x86_64: unable to map backing store for guest RAM: Cannot allocate memory" name=containerd-shim-v2"#,
            "log.host-alloc-failure",
        ),
        (
            r#"(qemu) qemu-system-x86_64: cannot set up guest memory 'pc.ram': Cannot allocate memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"qemu-system-x86_64: cannot set up guest memory 'pc.ram': Out of memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"❯ ERROR: qemu-system-x86_64: cannot set up guest memory 'pc.ram': Cannot allocate memory"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Error creating machine: Error in driver during machine creation: virError(Code=1, Domain=10, Message='internal error: process exited while connecting to monitor: 2017-09-29T12:54:42.748222Z qemu-system-x86_64: cannot set up guest memory 'pc.ram': Cannot allocate memory')"#,
            "log.host-alloc-failure",
        ),
        (
            r#"'minikube' could not initialize memory: Not enough memory resources are available to complete this operation."#,
            "log.host-alloc-failure",
        ),
        (
            r#"Not enough memory in the system to start the virtual machine minikube with ram size 2200 megabytes. (Virtual machine ID D6B797B5-C7D3-480F-99C7-F419F48DE404)"#,
            "log.host-alloc-failure",
        ),
        (
            r#"os_mem_prealloc: Insufficient free host memory pages available to allocate guest RAM"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Ran out of memory allocating 5894144 (5.6 MiB) bytes with alignment 0. Last error msg: The paging file is too small for this operation to complete.."#,
            "log.host-alloc-failure",
        ),
        (
            r#"Fatal error: [File:D:/build/++UE5/Sync/Engine/Source/Runtime/Core/Private/GenericPlatform/GenericPlatformMemory.cpp] [Line: 253] Ran out of memory allocating 1073741824 bytes with alignment 0"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Could not allocate memory: System out of memory!"#,
            "log.host-alloc-failure",
        ),
        (
            r#"[FATAL:memory.cc(22)] Out of memory. size=262144"#,
            "log.host-alloc-failure",
        ),
        (
            r#"VBoxManage: error: Failed to create the VirtualBox object! VERR_NO_MEMORY"#,
            "log.host-alloc-failure",
        ),
        (
            r#"Failed to open a session for the virtual machine win10. The VM session was aborted. Result Code: E_FAIL (0x80004005) VERR_NO_LOW_MEMORY"#,
            "log.host-alloc-failure",
        ),
    ]);
}

#[test]
fn phones_kill_apps_in_their_own_words() {
    each_named_first(&[
        (
            r#"2024-09-25 10:24:19.378   495-495   lowmemorykiller         lmkd                                 I  Kill 'com.google.android.apps.scone' (15964), uid 10137, oom_score_adj 500 to free 92212kB rss, 33036kB swap; reason: low watermark is breached and swap is low"#,
            "log.userspace-oom-kill",
        ),
        (
            r#"09-25 10:24:19.378   495   495 I lowmemorykiller: Kill 'com.example.app' (15964), uid 10137, oom_score_adj 900 to free 92212kB rss, 33036kB swap; reason: min watermark is breached"#,
            "log.userspace-oom-kill",
        ),
        (
            r#"Reason: The process was terminated for exceeding jetsam memory limits"#,
            "log.userspace-oom-kill",
        ),
        (
            r#"EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=650 MB, unused=0x0)"#,
            "log.userspace-oom-kill",
        ),
        (
            r#"Message from debugger: Terminated due to memory issue"#,
            "log.userspace-oom-kill",
        ),
    ]);
}

#[test]
fn kernels_limits_and_collectives_are_read_in_their_forms() {
    each_named_first(&[
        (
            r#"Oct 02 13:56:45 cube kernel: VERIFY3(rs_get_start(rs, rt) <= start) failed (9259961393152 <= 9259961360384)"#,
            "log.kernel-oops",
        ),
        (
            r#"[ 2234.567890] VERIFY3(0 == dmu_buf_hold_array(os, object, offset, size, FALSE, FTAG, &numbufs, &dbp)) failed (0 == 5)"#,
            "log.kernel-oops",
        ),
        (
            r#"[  +0.001779] vfio_pin_pages_remote: RLIMIT_MEMLOCK (65536) exceeded"#,
            "log.memlock-limit",
        ),
        (
            r#"[ 8543.110328] vfio_pin_pages_remote: RLIMIT_MEMLOCK (67108864) exceeded"#,
            "log.memlock-limit",
        ),
        (
            r#"54538.184:0134:026c:err:virtual:try_map_free_area mmap() error Cannot allocate memory, range 0x2deb50000-0x2dee05000, unix_prot 0x3."#,
            "log.max-map-count",
        ),
        (
            r#"KiB Swap:100.0/79691768 [||||||||||||||||||||||||||||||||||||||||||||||||||||||||||]"#,
            "log.swap-thrashing",
        ),
        (
            r#"MiB Swap: 98.7/2048.0   [||||||||||||||||||||||||||||||||||||||||||||||||||||||||||]"#,
            "log.swap-thrashing",
        ),
        (
            r#"tensorflow.python.framework.errors_impl.UnknownError:  ncclCommInitRank failed: unhandled system error"#,
            "log.nccl-failure",
        ),
        (
            r#"RuntimeError: ncclAllReduce failed: unhandled cuda error"#,
            "log.nccl-failure",
        ),
        (
            r#"valheim_1  | Mar 26 15:53:03 /supervisord: valheim-server /usr/local/bin/valheim-server: line 102:  4414 Killed                  LD_PRELOAD=$SERVER_LD_PRELOAD "$valheim_server" -nographics"#,
            "log.sigkill",
        ),
        (
            r#"Mar 26 15:53:03 host supervisord: /usr/local/bin/start.sh: line 7:  4415 Killed                  java -Xmx4G -jar server.jar"#,
            "log.sigkill",
        ),
    ]);
}

#[test]
fn crashes_on_phones_vms_and_windows_name_the_signal() {
    each_named_first(&[
        (
            r#"Unhandled exception: c0000005"#,
            "log.windows-memory-fault",
        ),
        (
            "## Describe the bug\nWindows Server 2022 guests experience recurring `0xA IRQL_NOT_LESS_OR_EQUAL` bugchecks at `nt!MiUserFault+0x20c`.",
            "log.windows-memory-fault",
        ),
        (
            r#"A/libc: Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 12907 (RenderThread), pid 12870 (com.example.app)"#,
            "log.native-crash",
        ),
        (
            r#"11-20 10:31:07.512 12870 12907 F libc    : Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 12907 (RenderThread), pid 12870 (com.example.app)"#,
            "log.native-crash",
        ),
        (
            r#"signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0000000000000000"#,
            "log.native-crash",
        ),
        (
            r#"Exception Type:  EXC_BAD_ACCESS (SIGSEGV)"#,
            "log.native-crash",
        ),
        (
            r#"Process 4471 (qemu-system-x86) of user 0 dumped core."#,
            "log.native-crash",
        ),
        (
            r#"[ 5321.112233] qemu-system-x86[39211]: segfault at 8 ip 000055d1c0a1b2c3 sp 00007ffd5e6f7a10 error 4 in qemu-system-x86_64[55d1c0800000+a00000]"#,
            "log.native-crash",
        ),
        (
            r#"A/libc: Fatal signal 7 (SIGBUS), code 2 (BUS_ADRERR), fault addr 0x7f5e3a1000 in tid 8812 (inference), pid 8790 (com.example.app)"#,
            "log.mmap-bus-error",
        ),
    ]);
}

#[test]
fn a_benchmarks_memory_figures_raise_nothing() {
    lines_raise_nothing(&[
        r#"Memory footprint delta from the start of the tool (MB): init=12.5 overall=45.3"#,
        r#"Inference timings in us: Init: 25130, First inference: 52132, Warmup (avg): 48213.2, Inference (avg): 47321.8"#,
    ]);
}

#[test]
fn the_kernels_memory_dump_alone_points_at_an_oom_kill() {
    each_named_first(&[(
        "[841350.151032] lowmem_reserve[]: 0 0 0 0 0\n[841350.151062] 2748 pages in swap cache\n[841350.151064] Free swap  = 0kB\n",
        "log.oom-kill",
    )]);
}

/// Read after batch 12's set-aside third was scored: the kernel's second VFIO form,
/// GLib's allocator, an oops from its `Code:` line on, debuggerd's tombstone banner,
/// the crash reporters' one-line EXC_BAD_ACCESS and libmalloc's checks.
#[test]
fn forms_its_set_aside_third_showed_are_read() {
    each_named_first(&[
        (
            r#"Jul 28 16:14:53 s510u kernel: vfio_pin_page_external: Task qemu-system-x86 (575712) RLIMIT_MEMLOCK (1048576) exceeded"#,
            "log.memlock-limit",
        ),
        (
            r#"[ 8810.123456] vfio_lock_acct: Task qemu-kvm (48211) RLIMIT_MEMLOCK (67108864) exceeded"#,
            "log.memlock-limit",
        ),
        (
            r#"`(wine:1289): GLib-ERROR **: 10:40:14.388: ../glib/gmem.c:365: overflow allocating 1852785409*4 bytes`"#,
            "log.host-alloc-failure",
        ),
        (
            r#"(gnome-shell:2210): GLib-ERROR **: 14:02:11.512: ../../../glib/gmem.c:112: failed to allocate 4294967296 bytes"#,
            "log.host-alloc-failure",
        ),
        (
            r#"[99996.075471] Code: 46 10 01 00 00 00 c3 48 c7 06 00 00 00 00 48 89 76 08 48 c7 46 10 00 00 00 00 c3 66 90 48 8b 07 48 85 c0 74 10 48 83 6f 10 01 <48> 8b 10 48 89 17 48 85 d2 74 01 c3"#,
            "log.kernel-oops",
        ),
        (
            r#"11-06 12:42:37.776 21178 21178 F DEBUG   : *** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***"#,
            "log.native-crash",
        ),
        (
            r#"EXC_BAD_ACCESS KERN_INVALID_ADDRESS 0x0000000000000031"#,
            "log.native-crash",
        ),
        (
            r#"Runner(4471,0x16f8a3000) malloc: *** error for object 0x10a8b4000: pointer being freed was not allocated"#,
            "log.native-crash",
        ),
        (
            r#"9  libsystem_malloc.dylib         0xbfcc free_list_checksum_botch + 36"#,
            "log.native-crash",
        ),
    ]);
    lines_raise_nothing(&["Error Code: 2"]);
}

#[test]
fn a_figure_with_its_unit_in_parentheses_is_a_reading() {
    each_named_first(&[(
        "Memory usage: 12776 (kb)\nMemory usage: 69584 (kb)\nMemory usage: 100072 (kb)\nMemory usage: 150072 (kb)",
        "log.memory-growth",
    )]);
}
