//! Batch 16's forms, each from the program that prints it (ITK's allocation error,
//! PyTorch's handler for a dead DataLoader worker, Ray's old memory monitor and Ray
//! Tune's low-memory status, io_uring refused for the locked-memory limit, a refused
//! mapping told by its size: Prometheus' TSDB and MMseqs2), a line set whole in inline
//! code, a number set in quotes or backticks, and what reports say in words: a bus
//! error met, MemoryError met, memory watched not coming back, a pod evicted for
//! memory, memory rising while a job runs, and in Russian; after the set-aside third's
//! scoring, Boltz's skipped batch, MSVC's `bad allocation`, ITK's message without its
//! exception's name, Unreal Engine's crash handler, and a Russian page's `if the error
//! arises`.

use super::{each_named_first, lines_raise_nothing};

#[test]
fn pipeline_and_tracker_programs_say_it_in_their_own_words() {
    each_named_first(&[
        ("itk::MemoryAllocationError (0x7f3a20000940)", "log.host-alloc-failure"),
        ("    _error_if_any_worker_fails()", "log.dataloader-worker-killed"),
        (
            "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node Local is used (15.98 / 16.82 GB). The top 5 memory consumers are:",
            "log.userspace-oom-kill",
        ),
        (
            "Memory usage on this node: 7.4/7.5 GiB: ***LOW MEMORY*** less than 10% of the memory on this node is available for use.",
            "log.memory-pressure",
        ),
        (
            "java.lang.RuntimeException: failed to create io_uring ring fd Cannot allocate memory",
            "log.memlock-limit",
        ),
        (
            "opening existing TSDBs: failed to open TSDB: 10 errors: mmap, size 31301: cannot allocate memory; mmap files: mmap, size 16585: cannot allocate memory",
            "log.max-map-count",
        ),
        (
            "Failed to mmap memory dataSize=244437757952 File=dbs/uniref30_2302_db.idx. Error 12.",
            "log.host-alloc-failure",
        ),
        ("`Killed`", "log.sigkill"),
        (
            "The job fails during the `colabfold_batch` call, returning exit code `-9`.",
            "log.sigkill",
        ),
        (
            "Build Failed (exit code '-1073741819'). See log: D:\\j\\artifacts\\log\\Build.binlog",
            "log.windows-memory-fault",
        ),
        (
            "Hi, I got a Bus error when executing the evaluation codes..",
            "log.mmap-bus-error",
        ),
        (
            "What is the memory requirement for it? I am getting Memory Error even after having more than a terabyte memory installed on the system.",
            "log.host-alloc-failure",
        ),
        (
            "After running predict successively, memory isn't being freed in a consistent manner.",
            "log.memory-growth",
        ),
        (
            "При загрузке workspace не освобождается память последнего workspace.",
            "log.memory-growth",
        ),
        ("Тестовое приложение. Память медленно, но верно растёт.", "log.memory-growth"),
        (
            "During a 4GPU benchmarking run, prometheus is getting continually evicted due to memory issues.",
            "log.userspace-oom-kill",
        ),
        (
            "I am observing increasing memory consumption of the workers while the study runs.",
            "log.memory-growth",
        ),
        (
            "      Predicting DataLoader 0:   0%|   | 0/1 [00:00<?, ?it/s]| WARNING: ran out of memory, skipping batch",
            "log.cuda-oom",
        ),
        ("[LightGBM] [Warning] bad allocation", "log.host-alloc-failure"),
        ("Failed to allocate memory for image.\"_", "log.host-alloc-failure"),
        ("CommonUnixCrashHandler: Signal=11", "log.native-crash"),
    ]);
}

#[test]
fn mentions_of_these_forms_raise_nothing() {
    lines_raise_nothing(&[
        // A number in quotes that is no status.
        "Set the batch size to '16' and the workers to `4`.",
        // A small mapping refused is the count of mappings: no allocation failure.
        "mmap, size 4096: invalid argument",
        // PyTorch's FAQ titles an entry so; and what it supposes.
        "My GPU memory isn't freed properly",
        "If memory is not being freed, call gc.collect().",
        "Is memory not being released after each call?",
        "Pods are evicted when the node runs low on memory.",
        "If you get a bus error, raise --shm-size.",
        "What is a MemoryError?",
        "A bad allocation strategy wastes memory.",
        "Если во время дефрагментации возникнет ошибка «Слишком много открытых файлов» (Too many open files), выполните указанные ниже действия.",
    ]);
}
