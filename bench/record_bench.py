#!/usr/bin/env python3
"""`memtriage record` side by side with `atop -w` (issue 17), in one run: both record
the same machine, with N extra processes on it (500 by default, each holding a few
MiB of its own), at the same interval (10 s), at the same time.

For each recorder, over --window seconds after a warm-up:
  CPU       utime+stime of all its threads (/proc/PID/stat), as percent of one core
            (the issue asks < 0.5% for memtriage)
  RSS       peak resident memory (VmHWM) (the issue asks < 30 MiB)
  growth    bytes its files grew by over the window (memtriage: the database, its
            WAL; atop: its raw log), extrapolated to a day (the issue aims < 200 MB)

Prints a table and memtriage's ratios to atop. A missing atop is reported and
skipped. It builds the release binary first. Run from the repository root:

  python3 bench/record_bench.py [--processes 500] [--interval 10] [--window 300] [--smoke]
"""

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time

from _procs import cpu_seconds, peak_rss_mib, start_holders, stop_holders

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")


def files_bytes(paths):
    """What the recording holds: atop's log file's size; for SQLite, the pages of the
    database as a reader sees it (what the WAL holds included, but not the WAL's
    preallocated, reused room, which does not grow with time)."""
    total = 0
    for p in paths:
        if p.endswith(".db") and os.path.exists(p):
            with sqlite3.connect(f"file:{p}?mode=ro", uri=True) as c:
                pages = c.execute("PRAGMA page_count").fetchone()[0]
                size = c.execute("PRAGMA page_size").fetchone()[0]
            total += pages * size
        elif os.path.exists(p):
            total += os.path.getsize(p)
    return total


def recorders(tmp, interval):
    db = os.path.join(tmp, "history.db")
    yield ("memtriage record",
           [MEMTRIAGE, "record", "--db", db, "--interval", f"{interval}s"],
           [db])
    if shutil.which("atop"):
        raw = os.path.join(tmp, "atop.raw")
        yield ("atop -w", ["atop", "-w", raw, str(interval)], [raw])
    else:
        print("atop is not installed (apt-get install atop): skipped")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--processes", type=int, default=500)
    ap.add_argument("--interval", type=int, default=10)
    ap.add_argument("--window", type=float, default=300)
    ap.add_argument("--warmup", type=float, default=25)
    ap.add_argument("--smoke", action="store_true", help="a few processes and seconds: does it run")
    args = ap.parse_args()
    if args.smoke:
        args.processes, args.interval, args.window, args.warmup = 20, 1, 3, 2
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "memtriage"], cwd=ROOT, check=True)

    holders = start_holders(args.processes)
    live = sum(1 for d in os.listdir("/proc") if d.isdigit())
    print(f"{args.processes} extra processes, {live} on the machine; every {args.interval} s, "
          f"measured over {args.window:.0f} s after {args.warmup:.0f} s of warm-up, both at once\n")
    results = {}
    procs = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            started = []
            for name, cmd, files in recorders(tmp, args.interval):
                p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
                procs.append(p)
                started.append((name, p, files))
            time.sleep(args.warmup)
            at0 = time.monotonic()
            first = {name: (cpu_seconds(p.pid), files_bytes(files)) for name, p, files in started}
            time.sleep(args.window)
            elapsed = time.monotonic() - at0
            for name, p, files in started:
                if p.poll() is not None:
                    print(f"{name} exited early ({p.returncode}): skipped")
                    continue
                cpu0, bytes0 = first[name]
                grown = files_bytes(files) - bytes0
                results[name] = {
                    "cpu_percent": 100 * (cpu_seconds(p.pid) - cpu0) / elapsed,
                    "rss_mib": peak_rss_mib(p.pid),
                    "mb_per_day": grown / elapsed * 86400 / 1e6,
                }
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        stop_holders(holders)

    print(f"{'recorder':<18}{'CPU %':>8}{'RSS MiB':>9}{'MB/day':>9}")
    for name, r in results.items():
        print(f"{name:<18}{r['cpu_percent']:>8.3f}{r['rss_mib']:>9.1f}{r['mb_per_day']:>9.1f}")
    ours = results.get("memtriage record")
    if ours is None:
        return
    peer = results.get("atop -w")
    if peer:
        def ratio(a, b):
            return f"{a / b:.2f}x" if b else "n/a"
        print(f"\nmemtriage record / atop -w: CPU {ratio(ours['cpu_percent'], peer['cpu_percent'])}, "
              f"RSS {ratio(ours['rss_mib'], peer['rss_mib'])}, "
              f"growth per day {ratio(ours['mb_per_day'], peer['mb_per_day'])}")
    met = ours["cpu_percent"] < 0.5 and ours["rss_mib"] < 30
    print(f"\nissue 17's figures (< 0.5% of a core, < 30 MiB; growth aimed < 200 MB/day): "
          f"{'met' if met else 'NOT met'}, {ours['mb_per_day']:.0f} MB/day")


if __name__ == "__main__":
    main()
