#!/usr/bin/env python3
"""Benchmark `memtriage explain` against what users run instead, in one run.

Generates a realistic training log (default ~500 MB): step and loss lines, tqdm
progress bars rewritten with \\r, HF Trainer dicts, NCCL INFO chatter, warnings,
torchrun rank prefixes, with a few real failures sprinkled in (an OOM kill, a CUDA
OOM, a DataLoader bus error, an Xid, an NCCL timeout). Then times, median of 3, with
the file in the page cache:

  memtriage   target/release/memtriage explain FILE --json
  grep        grep -c -E 'a few of the patterns' FILE   (what people do by hand)
  floor       cat FILE > /dev/null                       (reading the bytes at all)

and prints MB/s and ratios, plus memtriage's peak RSS (bounded whatever the size).
Target: >= 1000 MB/s. --baseline BINARY times an earlier build on the same file, so
a change is judged by its ratio on one machine; the two are timed in turns, so drift
weighs on both. Run from the repository root:  python3 bench/explain_bench.py
Timings on shared machines drift; the ratios, measured side by side, hold.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from _timing import run_timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")

GREP_PATTERNS = "Killed process|CUDA out of memory|Bus error|Segmentation fault|NVRM: Xid|Watchdog caught"

FAILURES = [
    "[612301.112700] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
    "oom_memcg=/kubepods/pod1,task_memcg=/kubepods/pod1/ctr,task=python,pid=48213,uid=1000\n"
    "[612301.112750] Memory cgroup out of memory: Killed process 48213 (python) total-vm:281018368kB, "
    "anon-rss:256032492kB, file-rss:1024kB, shmem-rss:2048kB, UID:1000 pgtables:508000kB oom_score_adj:0\n",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.11 GiB memory in "
    "use. Of the allocated memory 74.50 GiB is allocated by PyTorch, and 2.91 GiB is reserved by PyTorch but "
    "unallocated.\n",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
    "RuntimeError: DataLoader worker (pid 2207) is killed by signal: Bus error. It is possible that "
    "dataloader's workers are out of shared memory.\n",
    "Nov 21 03:12:09 gpu-node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
    "GPU has fallen off the bus.\n",
    "[rank3]:[E1121 06:26:42.123456789 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=52113, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, "
    "Timeout(ms)=600000) ran for 600023 milliseconds before timing out.\n",
]


def healthy_block(rng, size):
    """About `size` bytes of healthy training output."""
    out = []
    n = 0
    step = rng.randrange(100000)
    while n < size:
        step += 1
        r = rng.random()
        if r < 0.45:
            line = (
                f"[rank{rng.randrange(8)}]: step {step} | loss {rng.uniform(0.5, 3):.4f} | lr {rng.uniform(1e-5, 3e-4):.2e} "
                f"| grad_norm {rng.uniform(0.1, 5):.3f} | mem alloc {rng.uniform(30, 70):.1f} GiB | tokens/s {rng.randrange(50000, 120000)} "
                f"| killed_frac={rng.random():.3f}\n"
            )
        elif r < 0.65:
            pct = rng.randrange(100)
            bars = "".join(
                f"\rEpoch {step % 10}: {p:3d}%|{'#' * (p // 10):<10}| {p * 10}/1000 [00:{p % 60:02d}<01:40, {rng.uniform(1, 9):.2f}it/s, loss={rng.uniform(0.5, 2):.3f}]"
                for p in range(pct, min(pct + 8, 100))
            )
            line = bars + "\n"
        elif r < 0.8:
            line = (
                f"{{'loss': {rng.uniform(0.5, 3):.4f}, 'grad_norm': {rng.uniform(0.1, 5):.4f}, "
                f"'learning_rate': {rng.uniform(1e-5, 3e-4):.3e}, 'epoch': {step / 1e4:.2f}}}\n"
            )
        elif r < 0.9:
            line = (
                f"gpu-node-{rng.randrange(16)}:{rng.randrange(99999)}:{rng.randrange(99999)} [{rng.randrange(8)}] NCCL INFO "
                f"Channel {rng.randrange(32):02d}/32 : {rng.randrange(8)}[{rng.randrange(8)}] -> {rng.randrange(8)}[{rng.randrange(8)}] via P2P/CUMEM/read\n"
            )
        elif r < 0.96:
            line = (
                f"2026-11-21 06:{rng.randrange(60):02d}:{rng.randrange(60):02d},{rng.randrange(1000):03d} - INFO - "
                f"saving checkpoint to /ckpt/step-{step} (memory peak {rng.uniform(40, 70):.1f} GiB, out-of-memory retries 0)\n"
            )
        else:
            line = (
                "/opt/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader "
                "will create 16 worker processes in total. Our suggested max number of worker in current system is 8.\n"
            )
        out.append(line)
        n += len(line)
    return "".join(out).encode()


def generate(path, target_bytes, seed=7):
    rng = random.Random(seed)
    blocks = [healthy_block(rng, 4 << 20) for _ in range(6)]
    written = 0
    failures = 0
    with open(path, "wb", buffering=1 << 20) as f:
        i = 0
        while written < target_bytes:
            b = blocks[i % len(blocks)]
            f.write(b)
            written += len(b)
            # A failure every ~60 MB: rare, as in real logs.
            if i % 15 == 14:
                fail = FAILURES[failures % len(FAILURES)].encode()
                f.write(fail)
                written += len(fail)
                failures += 1
            i += 1
    return written, failures


def peak_rss_mib(cmd):
    """Peak RSS of `cmd` by GNU time: a spawned child's own ru_maxrss starts from this
    Python process's size, so it cannot be read here. None without /usr/bin/time."""
    if not os.path.exists("/usr/bin/time"):
        return None
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        return int(r.stderr.strip().splitlines()[-1]) / 1024
    except (ValueError, IndexError):
        return None


def median_of(cmd, runs, **kw):
    return statistics.median(run_timed(cmd, **kw) for _ in range(runs))


def medians_alternating(first, second, runs, first_out, second_out):
    """Medians of two commands timed in turns (first, second, first, ...), so that a
    machine slowing down or speeding up during the run weighs on both alike."""
    a, b = [], []
    for _ in range(runs):
        a.append(run_timed(first, stdout_path=first_out))
        b.append(run_timed(second, stdout_path=second_out))
    return statistics.median(a), statistics.median(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=500, help="size of the generated log (default 500)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--file", help="time this log instead of generating one")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--baseline", metavar="BINARY",
                    help="another memtriage build (an earlier release) to time side by side")
    args = ap.parse_args()

    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "memtriage"], cwd=ROOT, check=True)

    tmp = None
    if args.file:
        path = args.file
        size = os.path.getsize(path)
        print(f"log: {path}, {size / 1e6:.0f} MB")
    else:
        tmp = tempfile.TemporaryDirectory(prefix="explain-bench-")
        path = os.path.join(tmp.name, "train.log")
        t0 = time.perf_counter()
        size, failures = generate(path, args.size_mb * 1_000_000)
        print(f"generated {size / 1e6:.0f} MB log with {failures} failures in {time.perf_counter() - t0:.1f} s: {path}")
    try:
        # Page cache warm for everyone: the comparison is of scanning, not of the disk.
        run_timed(["cat", path])

        report = os.path.join(tempfile.gettempdir(), f"explain-bench-{os.getpid()}.json")
        base = None
        if args.baseline:
            base_report = report + ".baseline"
            mt, base = medians_alternating(
                [MEMTRIAGE, "explain", path, "--json"], [args.baseline, "explain", path, "--json"],
                args.runs, report, base_report)
            with open(base_report) as f:
                base_rules = json.load(f).get("rules", "?")
            os.unlink(base_report)
        else:
            mt = median_of([MEMTRIAGE, "explain", path, "--json"], args.runs, stdout_path=report)
        gr = median_of(["grep", "-c", "-E", GREP_PATTERNS, path], args.runs, ok_codes=(0, 1))
        ct = median_of(["cat", path], args.runs)
        mt_rss = peak_rss_mib([MEMTRIAGE, "explain", path, "--json"])
        with open(report) as f:
            v = json.load(f)
        os.unlink(report)

        mb = size / 1e6
        print()
        print(f"{'tool':<44} {'median s':>9} {'MB/s':>8} {'vs memtriage':>13}")
        rows = [
            ("memtriage explain FILE --json", mt),
            ("grep -c -E '<6 patterns>' FILE", gr),
            ("cat FILE > /dev/null (floor)", ct),
        ]
        if base is not None:
            rows.insert(1, (f"baseline explain ({base_rules} rules)", base))
        for name, t in rows:
            print(f"{name:<44} {t:>9.3f} {mb / t:>8.0f} {t / mt:>12.2f}x")
        print()
        print(f"memtriage: {mb / mt:.0f} MB/s with {v.get('rules', '?')} rules "
              f"(target >= 1000 MB/s: {'met' if mb / mt >= 1000 else 'NOT met'}), "
              f"{mt / ct:.1f}x the time of cat, {gr / mt:.2f}x the speed of grep -E; "
              f"peak RSS {'unknown (no /usr/bin/time)' if mt_rss is None else f'{mt_rss:.1f} MiB'}")
        if base is not None:
            print(f"memtriage: {base / mt:.2f}x the speed of the baseline")
        print(f"memtriage found {len(v['findings'])} findings, {len(v['matches'])} kept matches in {v['lines']} lines: "
              + ", ".join(f["id"] for f in v["findings"]))
    finally:
        if tmp:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
