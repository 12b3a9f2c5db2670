#!/usr/bin/env python3
"""Benchmark `memtriage inspect` against what users run instead, in one run.

Scenarios (issue 2):
  many-small  a few hundred small processes: `memtriage inspect --all --json`
              against `smem` (Debian) and a psutil loop calling memory_full_info()
  few-big     a 2 GiB parent and 4 forked workers that touched its pages:
              memtriage against the floor, reading every /proc/PID/smaps_rollup
  peak RSS    memtriage's own peak RSS over the whole run

Timings on shared machines drift; the ratios, measured side by side, hold.
Run from the repository root:  python3 bench/inspect_bench.py
Needs: smem (apt-get install smem), psutil (pip install psutil); a missing peer is
reported and skipped, not faked.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

from _timing import run_timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")
HELPER = os.path.join(ROOT, "target", "release", "memtriage-testhelper")


def build():
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "memtriage", "-p", "memtriage-testhelper"],
        cwd=ROOT,
        check=True,
    )


def peak_rss_kib(cmd):
    """Peak RSS of a command by GNU time, which forks from its own small process.

    Not from os.wait4 here: a child spawned by Python starts with the interpreter's
    memory map, and ru_maxrss carries that high-water mark across exec.
    """
    gnu_time = "/usr/bin/time"
    if not os.path.exists(gnu_time):
        return None
    out = subprocess.run([gnu_time, "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    return int(out.stderr.decode().strip().splitlines()[-1])


def pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def floor_read_rollups(pid_list, name="smaps_rollup"):
    """The floor: open and read each smaps_rollup (or `name`), nothing else."""
    start = time.perf_counter()
    for pid in pid_list:
        try:
            fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
        except OSError:
            continue
        try:
            while os.read(fd, 65536):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
    return time.perf_counter() - start


def psutil_loop():
    """What a Python user writes: memory_full_info() on every process."""
    import psutil

    start = time.perf_counter()
    rows = []
    for p in psutil.process_iter(["pid", "name"]):
        try:
            m = p.memory_full_info()
            rows.append((p.pid, m.rss, m.pss, m.uss, m.swap))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return time.perf_counter() - start


def median_of(fn, repeat):
    fn()  # warm-up: dentries, page cache of binaries
    return statistics.median(fn() for _ in range(repeat))


def spawn_small(n):
    procs = []
    for _ in range(n):
        procs.append(subprocess.Popen(["sleep", "600"]))
    time.sleep(0.5)
    return procs


def spawn_big(mib, workers):
    proc = subprocess.Popen(
        [HELPER, "anon", str(mib), "fork", str(workers), "read", str(mib)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    line = proc.stdout.readline().decode().split()
    if not line or line[0] != "ready":
        raise RuntimeError(f"helper did not start: {line}")
    return proc, [int(p) for p in line[1:]]


def report(rows):
    width = max(len(r[0]) for r in rows)
    for name, seconds, note in rows:
        print(f"  {name:<{width}}  {seconds * 1000:9.1f} ms  {note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", type=int, default=300, help="small processes to start (default 300)")
    ap.add_argument("--big-mib", type=int, default=2048, help="parent size in MiB (default 2048)")
    ap.add_argument("--workers", type=int, default=4, help="forked workers (default 4)")
    ap.add_argument("--repeat", type=int, default=7, help="runs per measurement, median kept")
    args = ap.parse_args()

    build()
    have_smem = shutil.which("smem") is not None
    try:
        import psutil  # noqa: F401

        have_psutil = True
    except ImportError:
        have_psutil = False

    peaks = []

    def memtriage_all():
        return run_timed([MEMTRIAGE, "inspect", "--all", "--json"])

    def record_peak(*extra):
        peak = peak_rss_kib([MEMTRIAGE, "inspect", *extra, "--json"])
        if peak is not None:
            peaks.append(peak)

    print(f"kernel {os.uname().release}, {os.cpu_count()} cpus, memtriage {MEMTRIAGE}")
    print(f"\n== many small processes ({args.small} started) ==")
    small = spawn_small(args.small)
    try:
        n = len(pids())
        t_mt = median_of(memtriage_all, args.repeat)
        t_floor = median_of(lambda: floor_read_rollups(pids()), args.repeat)
        rows = [
            ("memtriage inspect --all --json", t_mt, f"({n} processes, incl. process start)"),
            ("floor: read every smaps_rollup", t_floor, "(python os.read loop)"),
        ]
        ratios = []
        if have_smem:
            t_smem = median_of(lambda: run_timed(["smem", "-c", "pid user command swap uss pss rss"]), args.repeat)
            rows.append(("smem", t_smem, ""))
            ratios.append(f"smem / memtriage = {t_smem / t_mt:.1f}x (target >= 10x)")
        else:
            ratios.append("smem not installed: skipped (apt-get install smem)")
        if have_psutil:
            t_ps = median_of(psutil_loop, args.repeat)
            script = (
                "import psutil\n"
                "for p in psutil.process_iter():\n"
                "    try: p.memory_full_info()\n"
                "    except psutil.Error: pass\n"
            )
            t_ps_script = median_of(lambda: run_timed([sys.executable, "-c", script]), args.repeat)
            rows.append(("psutil loop, in-process", t_ps, "(loop alone: no interpreter start or import)"))
            rows.append(("psutil loop, as a script", t_ps_script, "(python3 -c: what a user runs)"))
            ratios.append(f"psutil script / memtriage = {t_ps_script / t_mt:.1f}x (target >= 5x)")
            ratios.append(f"psutil loop alone / memtriage = {t_ps / t_mt:.1f}x")
        else:
            ratios.append("psutil not installed: skipped (pip install psutil)")
        record_peak("--all")
        report(rows)
        for r in ratios:
            print("  " + r)
    finally:
        for p in small:
            p.kill()
        for p in small:
            p.wait()

    print(f"\n== few big processes ({args.big_mib} MiB parent, {args.workers} forked workers that touched it) ==")
    big, tree = spawn_big(args.big_mib, args.workers)
    try:
        t_mt = median_of(memtriage_all, args.repeat)
        t_floor = median_of(lambda: floor_read_rollups(pids()), args.repeat)
        t_tree = median_of(
            lambda: run_timed([MEMTRIAGE, "inspect", "--tree", str(tree[0]), "--json"]), args.repeat
        )
        t_tree_floor = median_of(lambda: floor_read_rollups(tree), args.repeat)
        # What --tree reports needs each forked worker's whole smaps (the copies it
        # made): the floor of those figures reads every smaps of the tree once.
        t_tree_smaps = median_of(lambda: floor_read_rollups(tree, "smaps"), args.repeat)
        report(
            [
                ("memtriage inspect --all --json", t_mt, ""),
                ("floor: every smaps_rollup", t_floor, ""),
                ("memtriage inspect --tree --json", t_tree, ""),
                ("floor: smaps_rollup of the tree", t_tree_floor, ""),
                ("floor: smaps of the tree, once", t_tree_smaps, ""),
            ]
        )
        record_peak("--all")
        record_peak("--tree", str(tree[0]))
        print(f"  --all  / floor = {t_mt / t_floor:.2f}x (target <= 1.2x)")
        print(f"  --tree / smaps_rollup floor = {t_tree / t_tree_floor:.2f}x")
        print(f"  --tree / every smaps once = {t_tree / t_tree_smaps:.2f}x (target <= 1.2x)")
    finally:
        big.stdin.close()
        big.wait()

    if peaks:
        print(f"\n== memtriage peak RSS over the run: {max(peaks) / 1024:.1f} MiB (target < 20 MiB; GNU time %M) ==")
    else:
        print("\n== memtriage peak RSS: not measured (/usr/bin/time missing: apt-get install time) ==")


if __name__ == "__main__":
    sys.exit(main())
