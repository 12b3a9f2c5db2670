#!/usr/bin/env python3
"""Every speed figure of the project in one run (issue 32's table): each of the
repository's benchmarks is run in turn, its whole output shown, and then the lines that
state the figures and their ratios to the peer or floor are printed together.

  explain    503 MB training log against rg/grep -F -f of the rule table's literals
  startup    explain of a one-line log, run -- /bin/true, 500 logs in one call
  inspect    --all over 300 small processes (floor, smem), --tree of a 2 GiB parent
             with 4 forked workers (floors)
  python     snapshots() of every process against a psutil loop and the C floor
             (needs the wheel in target/py-venv: ./test.sh --python)
  top        top against btop and htop, the first 35 s and steady state
  serve      serve against process-exporter and node_exporter
  cache      warm against vmtouch/cat, cache against fincore
  record     record against atop -w
  run        run's passthrough, overhead and latency

Benchmarks are not tests: nothing here fails because the machine was slow. Timings
drift on a shared machine; each benchmark measures its peers side by side, in the same
run, so the ratios hold. The whole run takes about 25 minutes (--quick: a few, with
small sizes: it checks that every benchmark runs, its figures are not the real ones).

  python3 bench/all.py [--quick] [--only explain,top]
"""

import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(ROOT, "target", "py-venv", "bin", "python")

# name: (script, arguments, quick arguments, the lines that state figures and ratios)
BENCHES = {
    "explain": ("explain_bench.py", ["--no-build"], ["--no-build", "--size-mb", "50", "--runs", "1"],
                [r"^memtriage\b.*\d", r"^(rg|grep)\b.*x$", r"^tool\b"]),
    "startup": ("startup_bench.py", [], ["--runs", "5"],
                [r"^(what|explain|run --|grep -c)", r"logs: a loop"]),
    "inspect": ("inspect_bench.py", ["--repeat", "5"],
                ["--repeat", "1", "--small", "50", "--big-mib", "256"],
                [r"memtriage inspect|/ floor|floor =|smem|psutil|peak RSS"]),
    "python": ("python_bench.py", ["--only", "all"], ["--only", "all", "--all-rounds", "5"],
               [r"ratio|snapshots\(|psutil:|floor:"]),
    "top": ("top_bench.py", ["--window", "30"], ["--smoke"],
            [r"^tool|^memtriage top|^btop|^htop|memtriage top /"]),
    "serve": ("serve_bench.py", [], ["--smoke"],
              [r"^exporter|^memtriage serve|^process-exporter|^node_exporter"]),
    "cache": ("cache_bench.py", [], ["--size-gib", "0.5", "--repeat", "1"],
              [r"memtriage (warm|cache)|vmtouch|fincore|faster|warm then mmap"]),
    "record": ("record_bench.py", ["--window", "120"], ["--smoke"],
               [r"^recorder|^memtriage record|^atop"]),
    "run": ("run_bench.py", [], ["--quick"], [r"memtriage's own CPU|/ alone|overhead|x "]),
}


def python_for(name):
    """The interpreter a benchmark runs under: the wheel's venv for the Python one."""
    if name != "python":
        return sys.executable
    if os.path.exists(VENV_PYTHON):
        return VENV_PYTHON
    return None


def run_one(name, quick):
    script, full, small, _ = BENCHES[name]
    py = python_for(name)
    if py is None:
        return None, "no wheel installed in target/py-venv: run ./test.sh --python first"
    cmd = [py, os.path.join(ROOT, "bench", script)] + (small if quick else full)
    print(f"\n######## {name}: {' '.join(cmd[1:])}", flush=True)
    began = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(p.stdout)
    took = time.perf_counter() - began
    if p.returncode != 0:
        return p.stdout, f"exited {p.returncode} after {took:.0f} s"
    return p.stdout, f"{took:.0f} s"


def figures(name, output):
    patterns = [re.compile(p) for p in BENCHES[name][3]]
    return [line.rstrip() for line in output.splitlines()
            if any(p.search(line.strip()) for p in patterns)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="small sizes and windows: checks that each runs, not how fast")
    ap.add_argument("--only", help="comma-separated names: " + ", ".join(BENCHES))
    args = ap.parse_args()
    names = list(BENCHES) if not args.only else [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        raise SystemExit(f"unknown benchmark {', '.join(unknown)}: one of {', '.join(BENCHES)}")
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "memtriage"],
                   cwd=ROOT, check=True)
    results = {}
    for name in names:
        results[name] = run_one(name, args.quick)
    print("\n\n================ every figure, side by side with its peer or floor ================")
    print(f"{os.cpu_count()} CPUs, kernel {os.uname().release}"
          + ("; --quick: sizes too small for the figures to mean anything" if args.quick else ""))
    for name in names:
        output, status = results[name]
        print(f"\n-- {name} ({status})")
        for line in figures(name, output or ""):
            print(f"   {line}")


if __name__ == "__main__":
    main()
