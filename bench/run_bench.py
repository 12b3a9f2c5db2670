#!/usr/bin/env python3
"""Benchmark `memtriage run` against running the job without it, in one run.

  passthrough   a 1 GiB stdout stream: `memtriage run -- cat F` against `cat F | cat`
                (memtriage stands where the second cat stands). Target >= 0.9x.
  overhead      a CPU-bound job with 8 worker processes, paired runs with and without
                memtriage at its default interval; ratio of medians. Target <= 1.01.
  mmap latency  a job of several GiB that maps and unmaps memory in a loop, with 1 ms of
                other work between allocations: its p99 mmap and munmap latency alone,
                under `memtriage run`, and beside a naive 10 Hz smaps_rollup reader
                (each read walks 3 GiB of page tables under the job's mmap lock).
                Targets: memtriage <= 2x; the naive reader about 1000x.

Run from the repository root: python3 bench/run_bench.py [--quick]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")

CPU_JOB = r"""
import multiprocessing as mp, sys
def work(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
if __name__ == "__main__":
    with mp.get_context("fork").Pool(8) as pool:
        pool.map(work, [int(sys.argv[1])] * 8)
"""

MMAP_JOB = r"""
import json, mmap, sys, time
gib = float(sys.argv[1]); seconds = float(sys.argv[2])
big = bytearray(int(gib * (1 << 30)))
for i in range(0, len(big), 4096):
    big[i] = 1
print("ready", flush=True)
lat = []
end = time.perf_counter() + seconds
pc = time.perf_counter_ns
while time.perf_counter() < end:
    t = pc()
    m = mmap.mmap(-1, 1 << 16)
    lat.append(pc() - t)
    m[0] = 1
    t = pc()
    m.close()
    lat.append(pc() - t)
    time.sleep(0.001)  # the job's own work between allocations
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] / 1000.0
print(json.dumps({"n": len(lat), "p50_us": q(0.5), "p99_us": q(0.99), "max_us": lat[-1] / 1000.0}), flush=True)
"""


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "memtriage"], cwd=ROOT, check=True)


def timed(cmd, **kw):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, **kw)
    return time.perf_counter() - start


def passthrough(size_mib, repeat):
    with tempfile.NamedTemporaryFile(dir="/tmp", delete=False) as f:
        path = f.name
        block = os.urandom(1 << 20)
        for _ in range(size_mib):
            f.write(block)
    try:
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # page cache warm
        cat, mt = [], []
        for _ in range(repeat):
            cat.append(timed(["sh", "-c", f"cat {path} | cat > /dev/null"]))
            mt.append(timed([MEMTRIAGE, "run", "--", "cat", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        t_cat, t_mt = statistics.median(cat), statistics.median(mt)
        gib = size_mib / 1024
        print(f"  cat F | cat                {t_cat * 1000:8.0f} ms  {gib / t_cat:6.2f} GiB/s")
        print(f"  memtriage run -- cat F     {t_mt * 1000:8.0f} ms  {gib / t_mt:6.2f} GiB/s")
        print(f"  throughput memtriage / cat = {t_cat / t_mt:.2f}x (target >= 0.9x)")
    finally:
        os.unlink(path)


def overhead(n, pairs):
    script = ["python3", "-c", CPU_JOB, str(n)]
    alone, under = [], []
    for _ in range(pairs):
        alone.append(timed(script))
        under.append(timed([MEMTRIAGE, "run", "--", *script], stderr=subprocess.DEVNULL))
    a, u = statistics.median(alone), statistics.median(under)
    print(f"  job alone                  {a:8.2f} s   (median of {pairs})")
    print(f"  under memtriage run        {u:8.2f} s")
    print(f"  ratio of medians = {u / a:.3f} (target <= 1.01)")
    # The ratio of wall times on a small machine moves by a few percent from run to
    # run whatever memtriage does; its own CPU time is the cost it adds.
    own, wall = own_cpu_seconds([MEMTRIAGE, "run", "--", *script])
    cores = os.cpu_count() or 1
    print(f"  memtriage's own CPU time   {own * 1000:8.0f} ms over {wall:.2f} s "
          f"= {own / (wall * cores) * 100:.2f}% of the machine's {cores} cores")


def own_cpu_seconds(cmd):
    """CPU time of the process `cmd` starts, itself only (not its children), read
    from /proc/PID/stat until it exits; and the wall time."""
    began = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    hz = os.sysconf("SC_CLK_TCK")
    last = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            last = int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.02)
    return last / hz, time.perf_counter() - began


def naive_reader(pid, stop):
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                f.read()
        except OSError:
            return
        time.sleep(0.1)


def mmap_job(prefix, gib, seconds, naive=False):
    proc = subprocess.Popen(prefix + ["python3", "-c", MMAP_JOB, str(gib), str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout.readline().strip() == "ready"
    stop = threading.Event()
    reader = None
    if naive:
        reader = threading.Thread(target=naive_reader, args=(proc.pid, stop))
        reader.start()
    result = json.loads(proc.stdout.readline())
    stop.set()
    proc.wait()
    if reader:
        reader.join()
    return result


def mmap_latency(gib, seconds):
    alone = mmap_job([], gib, seconds)
    under = mmap_job([MEMTRIAGE, "run", "--"], gib, seconds)
    naive = mmap_job([], gib, seconds, naive=True)
    for name, r in (("alone", alone), ("under memtriage run", under), ("naive 10 Hz smaps_rollup", naive)):
        print(f"  {name:<26} p50 {r['p50_us']:8.1f} us  p99 {r['p99_us']:10.1f} us  max {r['max_us']:10.1f} us  ({r['n']} calls)")
    print(f"  p99 memtriage / alone = {under['p99_us'] / alone['p99_us']:.2f}x (target <= 2x)")
    print(f"  p99 naive / alone     = {naive['p99_us'] / alone['p99_us']:.0f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes: checks that it runs, not how fast")
    args = ap.parse_args()
    build()
    q = args.quick
    print(f"kernel {os.uname().release}, {os.cpu_count()} cpus")
    print(f"\n== passthrough of a {'64 MiB' if q else '1 GiB'} stdout stream ==")
    passthrough(64 if q else 1024, 1 if q else 5)
    print("\n== overhead on a CPU-bound job with 8 worker processes ==")
    overhead(200_000 if q else 25_000_000, 1 if q else 3)
    print(f"\n== mmap+munmap latency of a {'0.25' if q else '3'} GiB job ==")
    mmap_latency(0.25 if q else 3, 1 if q else 15)


if __name__ == "__main__":
    sys.exit(main())
