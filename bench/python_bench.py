#!/usr/bin/env python3
"""Benchmark the Python package against what Python users run instead, in one run.

  snapshot   memtriage.snapshot(pid) against psutil's Process(pid).memory_full_info()
             for the same process (a small Python process and one holding --big-mib),
             with the floor: reading /proc/PID/smaps_rollup and statm from Python.
             snapshot() reads more (stat, status, cmdline, smaps_rollup, oom, cgroup,
             exe); fields=("status", "rollup") reads what memory_full_info() reports.
  track      the cost of `with memtriage.track():` around a tight Python loop
             (the sampler thread reads /proc/self/statm every millisecond).

Timings on shared machines drift; the ratios, measured side by side, hold.
Run with the package installed (./test.sh --python builds it into target/py-venv):
  target/py-venv/bin/python bench/python_bench.py
"""

import argparse
import os
import statistics
import subprocess
import sys
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
    args = ap.parse_args()
    print(f"memtriage {memtriage.__version__} ({memtriage.__file__}); "
          f"psutil {psutil.__version__ if psutil else 'not installed: skipped'}; "
          f"{os.cpu_count()} CPUs")
    bench_snapshot(0, args.repeat)
    bench_snapshot(args.big_mib, max(10, args.repeat // 10))
    bench_track(args.loop, args.rounds)


if __name__ == "__main__":
    main()
