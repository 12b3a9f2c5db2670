#!/usr/bin/env python3
"""Benchmark the Python package against what Python users run instead, in one run.

  snapshot   memtriage.snapshot(pid) against psutil's Process(pid).memory_full_info()
             for the same process (a small Python process and one holding --big-mib),
             with the floor: reading /proc/PID/smaps_rollup and statm from Python.
             snapshot() reads more (stat, status, cmdline, smaps_rollup, oom, cgroup,
             exe); fields=("status", "rollup") reads what memory_full_info() reports.
  all        every process on the machine, fields=("status", "rollup"):
             memtriage.snapshots() against a psutil memory_full_info() loop, with two
             floors: the raw reads of /proc/PID/status and smaps_rollup for each pid
             from Python (one thread), and the fastest raw read there is (C, openat on
             the /proc/PID directory, a reused buffer, one thread per CPU), built with
             cc when one is installed.
  track      the cost of `with memtriage.track():` around a tight Python loop
             (the sampler thread reads /proc/self/statm every millisecond).

Timings on shared machines drift; the ratios, measured side by side, hold.
Run with the package installed (./test.sh --python builds it into target/py-venv):
  target/py-venv/bin/python bench/python_bench.py
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import memtriage

try:
    import psutil
except ImportError:
    psutil = None


def per_call(fn, repeat, rounds=5):
    """Median over `rounds` of the mean seconds per call over `repeat` calls."""
    fn()
    results = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(repeat):
            fn()
        results.append((time.perf_counter() - t) / repeat)
    return statistics.median(results)


def child(mib):
    code = (
        f"buf = b'\\x01' * ({mib} << 20)\n"
        "import sys\nprint('READY', flush=True)\nsys.stdin.read()\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "READY"
    return p


def floor(pid):
    """The kernel's part: the two files psutil reads, read raw from Python."""
    with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
        f.read()
    with open(f"/proc/{pid}/statm", "rb") as f:
        f.read()


def bench_snapshot(mib, repeat):
    p = child(mib)
    pid = p.pid
    try:
        rows = []
        full = per_call(lambda: memtriage.snapshot(pid), repeat)
        same = per_call(lambda: memtriage.snapshot(pid, fields=("status", "rollup")), repeat)
        roll = per_call(lambda: memtriage.snapshot(pid, fields=("rollup",)), repeat)
        flo = per_call(lambda: floor(pid), repeat)
        cheap = per_call(lambda: memtriage.snapshot(pid, fields=("status",)), repeat)
        rows.append(("memtriage.snapshot(pid)  [all fields]", full))
        rows.append(('  fields=("status", "rollup")  [what psutil reports]', same))
        rows.append(('  fields=("rollup",)', roll))
        if psutil is not None:
            ps_new = per_call(lambda: psutil.Process(pid).memory_full_info(), repeat)
            proc = psutil.Process(pid)
            ps_re = per_call(lambda: proc.memory_full_info(), repeat)
            rows.append(("psutil.Process(pid).memory_full_info()", ps_new))
            rows.append(("  the same on a reused Process object", ps_re))
        rows.append(("floor: read smaps_rollup + statm from Python", flo))
        rows.append(('memtriage.snapshot(pid, fields=("status",))  [no PSS/USS]', cheap))
        if psutil is not None:
            ps_mi = per_call(lambda: psutil.Process(pid).memory_info(), repeat)
            rows.append(("psutil.Process(pid).memory_info()  [no PSS/USS]", ps_mi))
        print(f"\nsnapshot of one process holding {mib} MiB "
              f"(median of 5 x {repeat} calls; pid {pid})")
        for name, t in rows:
            print(f"  {name:<58} {t * 1e6:9.1f} us")
        if psutil is not None:
            print(f"  ratio psutil / snapshot (all fields):        {ps_new / full:5.2f}x")
            print(f"  ratio psutil / snapshot (same fields):       {ps_new / same:5.2f}x")
            print(f"  ratio reused psutil / snapshot (same fields): {ps_re / same:5.2f}x")
            print(f"  ratio psutil memory_info / snapshot status:  {ps_mi / cheap:5.2f}x")
        print(f"  snapshot (same fields) / floor:              {same / flo:5.2f}x")
    finally:
        p.stdin.close()
        p.wait()


# The floor of reading every process: what the kernel takes to generate status and
# smaps_rollup, with the least user-space work around it (no parsing, no allocation
# per read, all CPUs). Prints the median seconds per round over `rounds`.
FLOOR_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int *pids; static int npids; static atomic_int next;
static void *worker(void *arg) {
    char buf[16384], name[32];
    for (;;) {
        int i = atomic_fetch_add(&next, 1);
        if (i >= npids) return 0;
        snprintf(name, sizeof name, "/proc/%d", pids[i]);
        int dir = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0) continue;
        const char *files[2] = {"status", "smaps_rollup"};
        for (int f = 0; f < 2; f++) {
            int fd = openat(dir, files[f], O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            while (read(fd, buf, sizeof buf) > 0) {}
            close(fd);
        }
        close(dir);
    }
}
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    int threads = atoi(argv[1]), rounds = atoi(argv[2]);
    npids = argc - 3; pids = malloc(sizeof(int) * npids);
    for (int i = 0; i < npids; i++) pids[i] = atoi(argv[i + 3]);
    double *times = malloc(sizeof(double) * rounds);
    pthread_t th[256];
    for (int r = 0; r < rounds; r++) {
        double t = now();
        atomic_store(&next, 0);
        for (int i = 0; i < threads; i++) pthread_create(&th[i], 0, worker, 0);
        for (int i = 0; i < threads; i++) pthread_join(th[i], 0);
        times[r] = now() - t;
    }
    qsort(times, rounds, sizeof(double), cmp);
    printf("%.9f\n", times[rounds / 2]);
    return 0;
}
"""


def build_c_floor(workdir):
    """The C floor's executable, or None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    src, exe = os.path.join(workdir, "floor.c"), os.path.join(workdir, "floor")
    with open(src, "w") as f:
        f.write(FLOOR_C)
    subprocess.run([cc, "-O2", "-pthread", "-o", exe, src], check=True)
    return exe


def c_floor(exe, pids):
    """Seconds of one round of the C floor, timed inside it (not its start)."""
    threads = min(os.cpu_count() or 1, 8)  # as memtriage's default_threads()
    out = subprocess.run([exe, str(threads), "1"] + [str(p) for p in pids],
                         check=True, capture_output=True, text=True).stdout
    return float(out)


def python_floor(pids):
    for pid in pids:
        for name in ("status", "smaps_rollup"):
            try:
                fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
            except OSError:
                continue
            try:
                while os.read(fd, 16384):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)


def psutil_loop(pids):
    for pid in pids:
        try:
            psutil.Process(pid).memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass


def bench_all(rounds):
    pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    fields = ("status", "rollup")

    def timed(fn):
        def run():
            t = time.perf_counter()
            fn()
            return time.perf_counter() - t
        return run

    with tempfile.TemporaryDirectory() as d:
        exe = build_c_floor(d)
        variants = [("memtriage", timed(lambda: memtriage.snapshots(pids, fields=fields))),
                    ("python floor", timed(lambda: python_floor(pids)))]
        if psutil is not None:
            variants.append(("psutil", timed(lambda: psutil_loop(pids))))
        if exe is not None:
            variants.append(("c floor", lambda: c_floor(exe, pids)))
        # Interleaved, order turning each round: the machine's other load (its
        # processes' sizes decide the kernel's work) hits every variant alike.
        times = {name: [] for name, _ in variants}
        for _, run in variants:
            run()
        for r in range(rounds):
            for i in range(len(variants)):
                name, run = variants[(r + i) % len(variants)]
                times[name].append(run())
    med = {name: statistics.median(ts) for name, ts in times.items()}
    threads = min(os.cpu_count() or 1, 8)
    rows = [('memtriage.snapshots(pids, fields=("status", "rollup"))', "memtriage"),
            ("psutil: Process(pid).memory_full_info() for each pid", "psutil"),
            ("floor: open+read status and smaps_rollup, Python, 1 thread", "python floor"),
            (f"floor: the same in C, openat, {threads} threads", "c floor")]
    print(f"\nevery process ({len(pids)} pids), median of {rounds} interleaved rounds")
    for label, name in rows:
        if name in med:
            t = med[name]
            print(f"  {label:<62} {t * 1e3:8.2f} ms  {t / len(pids) * 1e6:7.1f} us/pid")
    mt = med["memtriage"]
    if "psutil" in med:
        print(f"  ratio psutil / memtriage:            {med['psutil'] / mt:5.2f}x")
    print(f"  ratio memtriage / Python floor:      {mt / med['python floor']:5.2f}x")
    if "c floor" in med:
        print(f"  ratio memtriage / C floor:           {mt / med['c floor']:5.2f}x   (the floor)")


def loop(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def bench_track(n, rounds):
    def plain():
        t = time.perf_counter()
        loop(n)
        return time.perf_counter() - t

    def tracked(**kw):
        t = time.perf_counter()
        with memtriage.track(**kw):
            loop(n)
        return time.perf_counter() - t

    # Interleaved, so drift hits both alike.
    a, b, c = [], [], []
    runs = [lambda: a.append(plain()), lambda: b.append(tracked()),
            lambda: c.append(tracked(pss=False))]
    for r in range(rounds):
        # The order turns each round: no variant always runs first (or warm).
        for i in range(3):
            runs[(r + i) % 3]()
    base = statistics.median(a)
    print(f"\ntrack() around a tight Python loop ({n:,} iterations, median of {rounds})")
    print(f"  without track             {base:.4f} s")
    for name, xs in (("track()", b), ("track(pss=False)", c)):
        m = statistics.median(xs)
        print(f"  {name:<25} {m:.4f} s   overhead {100 * (m / base - 1):+.2f}%")
    # The cost of entering and leaving, for a decorator on a short function.
    enter = per_call(lambda: memtriage.track(pss=False).__enter__().__exit__(None, None, None), 200)
    print(f"  enter + exit of one block (pss=False): {enter * 1e6:.0f} us")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--big-mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--loop", type=int, default=5_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--all-rounds", type=int, default=61)
    ap.add_argument("--only", choices=("snapshot", "all", "track"))
    args = ap.parse_args()
    print(f"memtriage {memtriage.__version__} ({memtriage.__file__}); "
          f"psutil {psutil.__version__ if psutil else 'not installed: skipped'}; "
          f"{os.cpu_count()} CPUs")
    if args.only in (None, "snapshot"):
        bench_snapshot(0, args.repeat)
        bench_snapshot(args.big_mib, max(10, args.repeat // 10))
    if args.only in (None, "all"):
        bench_all(args.all_rounds)
    if args.only in (None, "track"):
        bench_track(args.loop, args.rounds)


if __name__ == "__main__":
    main()
