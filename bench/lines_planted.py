#!/usr/bin/env python3
"""How often `memtriage run` names a planted leak's line first, over N runs of each
planted job (the scripts of crates/memtriage/tests/lines and tests/torch, each with its
leaking line marked), each OOM-killed under `run --limit`.

For each job: the first line of the `run.oom-killed` finding's evidence that comes
from the Python hook, and whether it is the planted line, in the process kind the job
plants it in (a DataLoader worker, the main process, a torchrun rank). The CLI tests
check one run each; this counts how many of N agree, which a test cannot do on a busy
2-core CI machine in its time.

Needs root (for --limit's cgroup) and torch. Run from the repository root:
  python3 bench/lines_planted.py [--runs 10] [--memtriage target/release/memtriage]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINES = os.path.join(ROOT, "crates", "memtriage", "tests", "lines")
TORCH = os.path.join(ROOT, "crates", "memtriage", "tests", "torch")

# (name, limit, command after `--`, script with the marker, marker, expected in label)
JOBS = [
    ("forked worker keeps samples", "1500M",
     ["python3", os.path.join(LINES, "worker_leak.py")],
     os.path.join(LINES, "worker_leak.py"), "# LEAK", "DataLoader worker"),
    ("spawned workers keep batches in collate_fn", "2500M",
     ["python3", os.path.join(LINES, "spawn_collate_leak.py")],
     os.path.join(LINES, "spawn_collate_leak.py"), "# LEAK", "DataLoader worker"),
    ("main loop keeps each step's output", "1000M",
     ["python3", os.path.join(LINES, "main_activations.py")],
     os.path.join(LINES, "main_activations.py"), "# LEAK", ""),
    ("torchrun rank caches", "1500M",
     ["python3", "-m", "torch.distributed.run", "--nproc_per_node", "2",
      "--master_port", "29533", os.path.join(TORCH, "torchrun_rank_oom.py")],
     os.path.join(TORCH, "torchrun_rank_oom.py"), "held.append", "rank 1"),
]


def marked_line(path, marker):
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if marker in text and not text.lstrip().startswith("#"):
                return n
    raise SystemExit(f"{path}: no line with {marker!r}")


def first_named(report):
    for f in report.get("findings", []):
        if f["id"] != "run.oom-killed":
            continue
        for e in f["evidence"]:
            if e["source"] == "memtriage's Python hook":
                return e["label"], e["value"]
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--memtriage", default=os.path.join(ROOT, "target", "release", "memtriage"))
    args = ap.parse_args()
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, limit, cmd, script, marker, who in JOBS:
            line = marked_line(script, marker)
            want = f"{os.path.basename(script)}:{line} in "
            hits, misses = 0, []
            for i in range(args.runs):
                report_path = os.path.join(tmp, f"r{i}.json")
                subprocess.run(
                    [args.memtriage, "run", "--limit", limit, "--report", report_path, "--"] + cmd,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
                with open(report_path) as f:
                    label, value = first_named(json.load(f))
                if label and want in label and who in label and value.startswith("a leak"):
                    hits += 1
                else:
                    misses.append(f"{label}: {(value or '')[:80]}")
            totals.append((name, hits, args.runs))
            print(f"{name:45} {hits}/{args.runs} name {os.path.basename(script)}:{line} first", flush=True)
            for m in misses:
                print(f"    instead: {m}")
    ok = all(h == n for _, h, n in totals)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
