//! Schedulers, platforms and services that end or lose a process, in the words their
//! sources print: PBS and Torque, LSF, HTCondor, Grid Engine, Slurm, YARN, Vertex AI,
//! Airflow, Celery, uWSGI, Apache, nginx, PHP-FPM, Redis, supervisord, systemd, and the
//! MPI stacks' locked-memory warnings.

use super::each_named_first;

#[test]
fn every_scheduler_and_service_is_read_in_its_own_words() {
    each_named_first(&[
        ("=>> PBS: job killed: vmem 286102420kb exceeded limit 209715200kb", "log.userspace-oom-kill"),
        ("=>> PBS: job killed: mem 4196512kb exceeded limit 4194304kb", "log.userspace-oom-kill"),
        ("PBS: job killed: mem job total 115343792 kb exceeded limit 115343360 kb", "log.userspace-oom-kill"),
        ("job 4821733.pbsserver exceeded MEM usage hard limit (2150 > 2048)", "log.userspace-oom-kill"),
        ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "log.userspace-oom-kill"),
        ("TERM_SWAP: job killed after reaching LSF swap usage limit.", "log.userspace-oom-kill"),
        ("Job has gone over memory limit of 2048 megabytes. Peak usage: 2318 megabytes.", "log.userspace-oom-kill"),
        ("Job has gone over cgroup memory limit of 4096 megabytes. Last measured usage: 4100 megabytes.  Consider resubmitting with a higher request_memory.", "log.userspace-oom-kill"),
        (r#"job 771204 exceeds job hard limit "h_vmem" of queue "all.q@node17.cluster" (8589934592.00000 > limit:8589934592.00000) - sending SIGKILL"#, "log.userspace-oom-kill"),
        ("slurmstepd: error: Exceeded job memory limit at some point.", "log.userspace-oom-kill"),
        ("slurmstepd: error: Job 1843321 exceeded memory limit (9437184 > 8388608), being killed", "log.userspace-oom-kill"),
        ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1843321.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.", "log.oom-kill"),
        ("Container [pid=27731,containerID=container_1589912345_0001_01_000002] is running beyond physical memory limits. Current usage: 2.1 GB of 2 GB physical memory used; 3.9 GB of 4.2 GB virtual memory used. Killing container.", "log.userspace-oom-kill"),
        ("Container [pid=27731,containerID=container_e41_1589912345_0001_01_000002] is running 318767104B beyond the 'PHYSICAL' memory limit. Current usage: 2.3 GB of 2 GB physical memory used; 4.0 GB of 4.2 GB virtual memory used. Killing container.", "log.userspace-oom-kill"),
        ("The replica workerpool0-0 ran out-of-memory and exited with a non-zero status of 9(SIGKILL).", "log.oom-kill"),
        ("Task exited with return code Negsignal.SIGKILL", "log.oom-kill"),
        ("Task exited with return code Negsignal.SIGSEGV", "log.native-crash"),
        ("billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 0.", "log.oom-kill"),
        ("DAMN ! worker 3 (pid: 27731) died, killed by signal 9 :( trying respawn ...", "log.oom-kill"),
        ("[Mon Jul 10 10:21:33.112233 2023] [core:notice] [pid 1823] AH00052: child pid 27731 exit signal Segmentation fault (11)", "log.native-crash"),
        ("2023/07/10 10:21:33 [alert] 1823#1823: worker process 27731 exited on signal 11 (core dumped)", "log.native-crash"),
        ("WARNING: [pool www] child 27731 exited on signal 9 (SIGKILL) after 12.304519 seconds from start", "log.oom-kill"),
        ("1820:M 10 Jul 2023 10:21:33.112 # Redis 6.0.9 crashed by signal: 11", "log.native-crash"),
        ("2023-07-10 10:21:33,112 INFO exited: worker (terminated by SIGKILL; not expected)", "log.oom-kill"),
        ("2023-07-10 10:21:33,112 INFO exited: worker (terminated by SIGSEGV (core dumped); not expected)", "log.native-crash"),
        ("Jul 10 10:21:33 host systemd[1]: train.service: A process of this unit has been killed by the OOM killer.", "log.oom-kill"),
        ("Jul 10 10:21:33 host systemd[1]: train.service: Failed with result 'oom-kill'.", "log.oom-kill"),
        ("Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)", "log.native-crash"),
        ("Process finished with exit code 134 (interrupted by signal 6: SIGABRT)", "log.native-crash"),
        ("[0] DAPL startup: RLIMIT_MEMLOCK too small", "log.memlock-limit"),
        ("libibverbs: Warning: RLIMIT_MEMLOCK is 65536 bytes.", "log.memlock-limit"),
        ("The OpenFabrics (openib) BTL failed to initialize while trying to allocate some locked memory.", "log.memlock-limit"),
        ("Memory limit exceeded: Requested: 128MB Maximum Used: 128MB", "log.userspace-oom-kill"),
        ("Container exited with a non-zero exit code 137. Error file: prelaunch.err.", "log.oom-kill"),
        ("ExecutorLostFailure (executor 7 exited caused by one of the running tasks) Reason: Container killed by YARN for exceeding memory limits. 10.4 GB of 10.4 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead.", "log.userspace-oom-kill"),
        ("Container killed by YARN for exceeding physical memory limits. 5.5 GB of 5.5 GB physical memory used.", "log.userspace-oom-kill"),
        ("The node was low on resource: memory. Container trainer was using 15728640Ki, which exceeds its request of 0.", "log.userspace-oom-kill"),
        ("  Warning  OOMKilling  12m  kernel-monitor, gke-node-1  Memory cgroup out of memory: Killed process 27731 (python) total-vm:1234567kB, anon-rss:1048576kB, file-rss:0kB, shmem-rss:0kB", "log.oom-kill"),
        ("slurmstepd: error: *** JOB 1843321 ON node17 CANCELLED AT 2023-07-10T10:21:33 DUE TO TIME LIMIT ***", "log.sigkill"),
        ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "log.sigkill"),
        ("=>> PBS: job killed: walltime 3633 exceeded limit 3600", "log.sigkill"),
        ("=>> PBS: job killed: vmem 3372163072 exceeded limit 2147483648", "log.userspace-oom-kill"),
        ("Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted", "log.userspace-oom-kill"),
        ("1050981.0   dbrown         11/7  23:48 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000.", "log.userspace-oom-kill"),
        ("Status reason | CannotStartContainerError: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process caused: container init was OOM-killed (memory limit too low?): unknown", "log.oom-kill"),
    ]);
}
