#!/usr/bin/env python3
"""What a user waits for before memtriage has read anything: `explain` of a one-line log
(healthy, and one line that holds a rule's literal), and `run -- /bin/true` over
/bin/true's own time, beside `grep -c -F -f` of the rule table's literals (the floor of
a tool that reads a line against them) and, with --baseline, another build. And 500
pod logs (the corpus's excerpts, repeated) triaged in a shell loop, one process each,
against one `explain DIR`.

  python3 bench/startup_bench.py [--runs 40] [--baseline OLD_BINARY]

Medians of whole-process wall times. Targets (issue 32): explain <= 15 ms, run <= 20 ms
over the job's. Printed, never asserted: a slow machine is not a failure.
"""

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")


def median_ms(cmd, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def figures(binary, logs, runs):
    true_ms = median_ms(["/bin/true"], runs)
    return {
        "explain, a healthy line": median_ms([binary, "explain", logs["healthy"]], runs),
        "explain, a line with a literal": median_ms([binary, "explain", logs["killed"]], runs),
        "run -- /bin/true, over the job's": median_ms([binary, "run", "--", "/bin/true"], runs) - true_ms,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=MEMTRIAGE)
    ap.add_argument("--baseline", help="another memtriage binary, measured in the same run")
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        logs = {"healthy": os.path.join(tmp, "healthy.log"), "killed": os.path.join(tmp, "killed.log")}
        with open(logs["healthy"], "w") as f:
            f.write("epoch 1 step 100 loss 0.412\n")
        with open(logs["killed"], "w") as f:
            f.write("Killed\n")
        table = json.loads(subprocess.run([args.binary, "explain", "--rules", "--json"],
                                          capture_output=True, text=True, check=True).stdout)
        literals = os.path.join(tmp, "literals.txt")
        with open(literals, "w") as f:
            f.write("\n".join({lit for r in table["rules"] for lit in r["literals"]}) + "\n")
        grep_ms = median_ms(["grep", "-c", "-F", "-f", literals, logs["killed"]], args.runs)
        ours = figures(args.binary, logs, args.runs)
        base = figures(args.baseline, logs, args.runs) if args.baseline else None
    print(f"{'what':36} {'memtriage ms':>13} {'baseline ms':>12} {'vs grep -F -f':>14}")
    for what, ms in ours.items():
        old = f"{base[what]:12.1f}" if base else f"{'-':>12}"
        vs = f"{ms / grep_ms:13.1f}x" if what.startswith("explain") else f"{'-':>14}"
        print(f"{what:36} {ms:13.1f} {old} {vs}")
    print(f"{'grep -c -F -f (the literals)':36} {grep_ms:13.1f}")
    many_logs(args.binary)


def many_logs(binary, count=500):
    """500 logs: a loop of `explain FILE` against one `explain DIR` (both cores)."""
    excerpts = sorted(glob.glob(os.path.join(ROOT, "corpus", "*", "*.log")))
    if not excerpts:
        return
    with tempfile.TemporaryDirectory(prefix="many-logs-") as tmp:
        for i in range(count):
            shutil.copy(excerpts[i % len(excerpts)], os.path.join(tmp, f"pod-{i:04}.log"))
        names = sorted(os.listdir(tmp))
        start = time.perf_counter()
        for n in names:
            subprocess.run([binary, "explain", os.path.join(tmp, n)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
        loop = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([binary, "explain", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        once = time.perf_counter() - start
    print(f"\n{count} logs: a loop of explain FILE {loop:.2f} s, one explain DIR {once:.2f} s "
          f"({loop / once:.0f}x)")


if __name__ == "__main__":
    main()
