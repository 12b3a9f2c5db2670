#!/usr/bin/env python3
"""Benchmark `memtriage warm` and `memtriage cache` against the tools people use, in one run.

  warm    a cold 4 GiB file read into the page cache: memtriage warm against cat,
          dd bs=16M and vmtouch -t (target: >= 1.3x faster than the best of them),
          and the minor faults a lazy mmap of the file takes afterwards (target: at
          most 1.2x the faults after a plain sequential cat: large folios left behind)
  cache   residency of a 4 GiB file: memtriage cache against fincore (util-linux,
          mincore based). Target >= 50x faster on kernels with cachestat.
  populate  hot populate of a 4 GiB mapping: `warm` then mmap against the fastest method
            `bench load` finds (target: within 0.9x; each hot figure is the best of 5 runs)

Timings on this VM's virtual disk vary by 2x from run to run (the host caches it);
every measurement is the median of --repeat runs, all tools interleaved.
Run from the repository root: python3 bench/cache_bench.py [--size-gib 4] [--repeat 3]
Needs vmtouch (apt-get install vmtouch); fincore comes with util-linux.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys

from _timing import run_timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")

FAULTS = r"""
import mmap, resource, sys
f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
b = resource.getrusage(resource.RUSAGE_SELF).ru_minflt; s = 0
for i in range(0, len(m), 4096): s += m[i]
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - b)
"""


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def evict(path):
    sh(f"{MEMTRIAGE} evict {path}")


def lazy_faults(path):
    return int(subprocess.run(["python3", "-c", FAULTS, path], capture_output=True, text=True, check=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-gib", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default="/var/tmp", help="a directory on the disk to measure (not tmpfs)")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "memtriage"], cwd=ROOT, check=True)
    path = os.path.join(args.dir, f"memtriage-cache-bench-{os.getpid()}.bin")
    size = int(args.size_gib * (1 << 30))
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    gib = size / (1 << 30)
    try:
        tools = {
            "memtriage warm": [MEMTRIAGE, "warm", path],
            "cat": ["cat", path],
            "dd bs=16M": ["dd", f"if={path}", "of=/dev/null", "bs=16M"],
        }
        if shutil.which("vmtouch"):
            tools["vmtouch -t"] = ["vmtouch", "-qt", path]
        else:
            print("vmtouch not installed: skipped (apt-get install vmtouch)")
        times = {name: [] for name in tools}
        faults = {"memtriage warm": [], "cat": []}
        for _ in range(args.repeat):
            for name, cmd in tools.items():
                evict(path)
                times[name].append(run_timed(cmd))
                if name in faults:
                    faults[name].append(lazy_faults(path))
        print(f"kernel {os.uname().release}, {os.cpu_count()} cpus, {gib:.1f} GiB file, median of {args.repeat}")
        print(f"\n== warm a cold file ==")
        med = {n: statistics.median(t) for n, t in times.items()}
        for name, t in med.items():
            spread = f"{min(times[name]):.2f}-{max(times[name]):.2f} s"
            print(f"  {name:<16} {t:7.2f} s  {gib / t:5.2f} GiB/s   (runs {spread})")
        best_peer = min((t, n) for n, t in med.items() if n != "memtriage warm")
        print(f"  memtriage warm vs best peer ({best_peer[1]}) = {best_peer[0] / med['memtriage warm']:.2f}x faster (target >= 1.3x)")
        fw, fc = statistics.median(faults["memtriage warm"]), statistics.median(faults["cat"])
        print(f"  lazy mmap afterwards: {fw:.0f} faults after warm, {fc:.0f} after cat = {fw / fc:.2f}x (target <= 1.2x; 4 KiB folios would be {size // 65536})")

        print(f"\n== residency of a {gib:.1f} GiB file ==")
        sh(f"{MEMTRIAGE} warm {path}")
        n = max(args.repeat, 7)
        mt = statistics.median(run_timed([MEMTRIAGE, "cache", "--no-mappers", path]) for _ in range(n))
        mt_full = statistics.median(run_timed([MEMTRIAGE, "cache", path]) for _ in range(n))
        fin = statistics.median(run_timed(["fincore", path]) for _ in range(n))
        print(f"  memtriage cache --no-mappers {mt * 1000:8.1f} ms  (cachestat; what fincore measures)")
        print(f"  memtriage cache              {mt_full * 1000:8.1f} ms  (also finds the processes mapping it)")
        print(f"  fincore                      {fin * 1000:8.1f} ms  (mincore)")
        print(f"  fincore / memtriage = {fin / mt:.1f}x like for like (target >= 50x), {fin / mt_full:.1f}x with the process scan")

        print("\n== hot populate of the mapping (memtriage bench load, hot column) ==")
        out = subprocess.run([MEMTRIAGE, "bench", "load", path, "--json"], capture_output=True, text=True, check=True).stdout
        import json
        hot = [r for r in json.loads(out)["results"] if not r["cold"]]
        best = max(hot, key=lambda r: r["bytes_per_second"])
        for r in sorted(hot, key=lambda r: -r["bytes_per_second"]):
            print(f"  {r['method']:<20} {r['seconds'] * 1000:8.1f} ms  {r['bytes_per_second'] / 1e9:7.2f} GB/s  faults {r['minor_faults']}")
        warm = next(r for r in hot if r["method"] == "warm_then_mmap")
        print(f"  fastest: {best['method']}; warm then mmap runs at "
              f"{warm['bytes_per_second'] / best['bytes_per_second']:.2f}x its speed (target >= 0.9x)")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
