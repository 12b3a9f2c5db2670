//! Batch 31's forms (hypervisors, PhysX, DMLC on YARN, a progress count glued to the
//! shell's word) and its words (a leak met, a segmentation fault that happened, a pod
//! oom'ed, growth seen or settling), each with the near miss that must stay quiet.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn hypervisors_physx_and_yarn_name_what_failed() {
    each_named_first(&[
        (
            "2015-07-08T11:52:37.370-08:00| vmx| I125: [msg.memsched.preNotEnoughMem] Not enough physical memory is available to power on this virtual machine with its configured settings.",
            "log.host-alloc-failure",
        ),
        (
            "there comes the notification output \"Not enough memory to start domain 'win'.\"",
            "log.host-alloc-failure",
        ),
        (
            "(XEN) p2m_pod_demand_populate: Dom12 out of PoD memory! (tot=1048576 ents=1023 dom12)",
            "log.host-alloc-failure",
        ),
        (
            "无法初始化内存: 内存已用完 (0x8007000E)。",
            "log.host-alloc-failure",
        ),
        (
            "'DockerDesktopVM' could not initialize memory: Not enough memory resources are available to complete this operation. (0x8007000E).",
            "log.host-alloc-failure",
        ),
        (
            "2023-07-24 09:14:09 [250,761ms] [Error] [omni.physx.plugin] PhysX error: SynchronizeStreams cuEventRecord failed with error 700",
            "log.cuda-illegal-memory-access",
        ),
        (
            "[DMLC] Task 26 killed because of exceeding allocated physical memory",
            "log.userspace-oom-kill",
        ),
        (
            "estabelecimento 82.29% 3911680/4753435Segmentation fault (core dumped)",
            "log.native-crash",
        ),
    ]);
    // Another CUDA error by number; a count and the word apart, as a sentence has them.
    lines_raise_nothing(&[
        "PhysX error: SynchronizeStreams cuEventRecord failed with error 999",
        "In that file I counted 3 Segmentation fault",
    ]);
}

#[test]
fn crashes_kills_and_leaks_told_as_met() {
    each_named_first(&[
        (
            "I am using lightGBM in my Python project, I get a problem of segmentation fault when training with large dataset.",
            "log.native-crash",
        ),
        (
            "But when I construct dataset with 320+ files, the memory usage is up to 64+GB, and the Segmentation fault happened.",
            "log.native-crash",
        ),
        (
            "On the worker node it looks like qemu-kvm processes are oom'ed leading kubevirt to replace the VMs.",
            "log.oom-kill",
        ),
        (
            "Performing a mathematical operation starts accessing all pages until the OS runs out of memory and kills your process.",
            "log.oom-kill",
        ),
        (
            "at the end of the process system memory blows up and the process is killed.",
            "log.oom-kill",
        ),
        (
            "a memory leak was introduced in numpy 1.15 which is still present in current 1.15.2.",
            "log.memory-growth",
        ),
        (
            "Ik lijk problemen te hebben met een memory leak in kv78turbo-api.py.",
            "log.memory-growth",
        ),
        (
            "We’ve observed memory growth in the traffic schedule and fleet adapter components during task execution.",
            "log.memory-growth",
        ),
        (
            "Then I run a rllib DQN model as belows, the memory usage grows as time pass by.",
            "log.memory-growth",
        ),
        (
            "我是使用4090D进行训练的，但是目前只能在256架飞机进行训练，超过这个数，显存就会爆掉",
            "log.cuda-oom",
        ),
    ]);
    // Supposed, prevented, general, settling, or VRAM said short only as a condition.
    lines_raise_nothing(&[
        "If you get a segmentation fault, run it under gdb.",
        "This PR tunes the CI VMs to prevent qemu-kvm processes from being oom'ed.",
        "A memory leak is a common cause of slowdowns.",
        "the unmanaged memory, measured between computations, grows slightly over time, but eventually plateaus to a reasonable amount.",
        "Memory growth is expected while the cache warms up.",
        "如果显存不足，可以减小batch size。",
    ]);
}
