#!/usr/bin/env python3
"""`memtriage top` side by side with htop and btop, in one run (issue 16): each runs in
its own tmux pane (200x50) refreshing every second, with N extra processes on the
machine (500 by default, each holding a few MiB of its own), one tool at a time.

For each: CPU (utime+stime from /proc/PID/stat, all threads) over --window seconds
after a warm-up ("first": top is still reading every process's PSS for the first
time, on its budget) and again from --steady-after seconds ("steady": readings of
processes that did not fault are kept), as percent of one core, and peak RSS (VmHWM).
Issue 16 asks `top` under 1% of a core and 20 MiB, issue 32 half of btop's CPU.
Prints a table and memtriage's ratios.

Needs tmux (and htop, btop to compare: apt-get install tmux htop btop). It builds the
release binary first. Run from the repository root:

  python3 bench/top_bench.py [--processes 500] [--window 60] [--steady-after 100] [--smoke]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from _procs import cpu_seconds, peak_rss_mib, start_holders, stop_holders

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")


def tmux(socket, *args):
    """A tmux command on the measurement's own server: on a shared one, killing one
    tool's session ended the server while the next tool's new-session was connecting to
    it ("server exited unexpectedly")."""
    return ["tmux", "-S", socket, *args]


def pane_pid(socket, session):
    out = subprocess.run(tmux(socket, "list-panes", "-t", session, "-F", "#{pane_pid}"),
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def tools(tmp):
    yield "memtriage top", [MEMTRIAGE, "top", "--interval", "1s"], {}
    if shutil.which("htop"):
        yield "htop", ["htop", "-d", "10"], {}
    else:
        print("htop: not installed (apt-get install htop)", file=sys.stderr)
    if shutil.which("btop"):
        conf = os.path.join(tmp, "btop")
        os.makedirs(conf, exist_ok=True)
        with open(os.path.join(conf, "btop.conf"), "w") as f:
            f.write("update_ms = 1000\n")
        yield "btop", ["btop"], {"XDG_CONFIG_HOME": tmp}
    else:
        print("btop: not installed (apt-get install btop)", file=sys.stderr)


def measure(name, cmd, env, windows, tmp):
    """CPU percent over each (start, length) window, seconds after the tool started."""
    session = f"topbench{os.getpid()}"
    socket = os.path.join(tmp, f"tmux-{name.replace(' ', '-')}")
    full_env = dict(os.environ, TERM="xterm-256color", **env)
    # exec: the pane's process is the tool itself.
    shell_cmd = "exec " + " ".join(cmd)
    subprocess.run(tmux(socket, "new-session", "-d", "-s", session, "-x", "200", "-y", "50",
                        shell_cmd), env=full_env, check=True)
    try:
        began = time.perf_counter()
        cpu = []
        for start, length in windows:
            time.sleep(max(0.0, began + start - time.perf_counter()))
            pid = pane_pid(socket, session)
            c0, t0 = cpu_seconds(pid), time.perf_counter()
            time.sleep(length)
            c1, t1 = cpu_seconds(pid), time.perf_counter()
            cpu.append(100 * (c1 - c0) / (t1 - t0))
        return {"cpu_percent": cpu, "rss_mib": peak_rss_mib(pid)}
    finally:
        subprocess.run(tmux(socket, "kill-server"), check=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--processes", type=int, default=500)
    ap.add_argument("--window", type=float, default=60)
    ap.add_argument("--warmup", type=float, default=5)
    ap.add_argument("--steady-after", type=float, default=100,
                    help="start of a second window, once top has read every process's "
                         "PSS and keeps the readings of those that did not move (0: none)")
    ap.add_argument("--smoke", action="store_true", help="a few processes and seconds: does it run")
    args = ap.parse_args()
    if args.smoke:
        args.processes, args.window, args.warmup, args.steady_after = 20, 3, 2, 0
    if not shutil.which("tmux"):
        raise SystemExit("tmux is missing: apt-get install tmux")
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "memtriage"], cwd=ROOT, check=True)
    holders = start_holders(args.processes)
    live = sum(1 for d in os.listdir("/proc") if d.isdigit())
    windows = [(args.warmup, args.window)]
    if args.steady_after > 0:
        windows.append((args.steady_after, args.window))
    said = " and ".join(f"{w:.0f} s from {s:.0f} s" for s, w in windows)
    print(f"{args.processes} extra processes, {live} on the machine; 1 s refresh; "
          f"CPU over {said}\n")
    results = {}
    try:
        time.sleep(2)
        with tempfile.TemporaryDirectory() as tmp:
            for name, cmd, env in tools(tmp):
                results[name] = measure(name, cmd, env, windows, tmp)
    finally:
        stop_holders(holders)
    heads = ["CPU % first"] + (["CPU % steady"] if len(windows) > 1 else [])
    print(f"{'tool':<16}" + "".join(f"{h:>14}" for h in heads) + f"{'peak RSS MiB':>14}")
    for name, r in results.items():
        print(f"{name:<16}" + "".join(f"{c:>14.2f}" for c in r["cpu_percent"])
              + f"{r['rss_mib']:>14.1f}")
    ours = results["memtriage top"]
    for peer, r in results.items():
        if peer == "memtriage top":
            continue
        ratios = ", ".join(f"{a / b:.2f}x" if b > 0 else "-"
                           for a, b in zip(ours["cpu_percent"], r["cpu_percent"]))
        print(f"memtriage top / {peer}: CPU {ratios} ({' / '.join(heads)}), "
              f"RSS {ours['rss_mib'] / r['rss_mib']:.2f}x")
    met = max(ours["cpu_percent"]) < 1 and ours["rss_mib"] < 20
    print(f"\nissue 16's figures (< 1% of a core, < 20 MiB): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
