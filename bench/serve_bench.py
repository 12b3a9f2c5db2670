#!/usr/bin/env python3
"""`memtriage serve` side by side with the exporters a fleet runs, in one run (issue 15):
memtriage serve, prometheus-process-exporter (PSS from smaps, grouped by name) and
prometheus-node-exporter (its default collectors), each scraping the same node with
N extra processes on it (500 by default, each holding a few MiB of its own).

For each exporter:
  scrape    latency of GET /metrics, one connection per scrape as Prometheus opens
            them when idle: median and p99 over --scrapes scrapes back to back
            (the issue asks median < 50 ms, p99 < 150 ms for serve)
  idle      CPU (utime+stime from /proc/PID/stat, all threads) and RSS over
            --window seconds while scraped every 15 s, as Prometheus would: percent
            of one core, and peak RSS (VmHWM) (the issue asks < 0.5% and < 25 MiB)
  size      bytes and series in one exposition

Prints a table and memtriage's ratios to each peer. A missing peer is reported and
skipped. It builds the release binary first. Run from the repository root:

  python3 bench/serve_bench.py [--processes 500] [--window 60] [--smoke]
"""

import argparse
import http.client
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from _procs import cpu_seconds, peak_rss_mib, start_holders, stop_holders

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")



def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]






def scrape(port):
    began = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics")
    body = conn.getresponse().read()
    conn.close()
    return time.perf_counter() - began, body


def wait_ready(port, proc, within=30):
    deadline = time.time() + within
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"exporter on {port} exited with {proc.returncode}")
        try:
            _, body = scrape(port)
            if body:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"exporter on {port} never answered")


def exporters(tmp):
    port = free_port()
    # The default configuration, doctor's checks (every 5 minutes) included.
    yield "memtriage serve", [MEMTRIAGE, "serve", "--listen", f"127.0.0.1:{port}"], port, "memtriage_group_pss_bytes"
    pe = shutil.which("prometheus-process-exporter")
    if pe:
        config = os.path.join(tmp, "process-exporter.yml")
        with open(config, "w") as f:
            f.write("process_names:\n  - name: '{{.Comm}}'\n    cmdline:\n      - '.+'\n")
        port = free_port()
        yield "process-exporter", [pe, "-config.path", config, "-web.listen-address", f"127.0.0.1:{port}"], port, "namedprocess_namegroup_memory_bytes"
    else:
        print("process-exporter: not installed (apt-get install prometheus-process-exporter)", file=sys.stderr)
    ne = shutil.which("prometheus-node-exporter")
    if ne:
        port = free_port()
        yield "node_exporter", [ne, f"--web.listen-address=127.0.0.1:{port}"], port, "node_memory_MemAvailable_bytes"
    else:
        print("node_exporter: not installed (apt-get install prometheus-node-exporter)", file=sys.stderr)


def measure(name, cmd, port, expect, scrapes, window, warmup):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        # Let a sampler settle (serve's first PSS sweep, process-exporter's first walk).
        time.sleep(warmup)
        latencies = []
        body = b""
        for _ in range(scrapes):
            took, body = scrape(port)
            latencies.append(took)
        if expect.encode() not in body:
            raise SystemExit(f"{name}: {expect} missing from its exposition")
        series = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
        latencies.sort()
        # Idle: scraped every 15 s over the window, CPU counted from its first scrape.
        c0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        next_scrape = t0
        while time.perf_counter() - t0 < window:
            if time.perf_counter() >= next_scrape:
                scrape(port)
                next_scrape += 15
            time.sleep(0.2)
        c1, t1 = cpu_seconds(proc.pid), time.perf_counter()
        return {
            "median_ms": statistics.median(latencies) * 1000,
            "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
            "cpu_percent": 100 * (c1 - c0) / (t1 - t0),
            "rss_mib": peak_rss_mib(proc.pid),
            "bytes": len(body),
            "series": series,
        }
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--processes", type=int, default=500)
    ap.add_argument("--scrapes", type=int, default=200)
    ap.add_argument("--window", type=float, default=60)
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--smoke", action="store_true", help="a few processes and seconds: does it run")
    ap.add_argument("--only", help="measure only exporters whose name contains this")
    ap.add_argument("--serve-args", default="", help="extra arguments for memtriage serve")
    args = ap.parse_args()
    if args.smoke:
        args.processes, args.scrapes, args.window, args.warmup = 20, 10, 2, 2
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "memtriage"], cwd=ROOT, check=True)

    holders = start_holders(args.processes)
    live = sum(1 for d in os.listdir("/proc") if d.isdigit())
    print(f"{args.processes} extra processes, {live} on the machine; "
          f"{args.scrapes} scrapes back to back, then {args.window:.0f} s scraped every 15 s\n")
    results = {}
    try:
        time.sleep(2)
        with tempfile.TemporaryDirectory() as tmp:
            for name, cmd, port, expect in exporters(tmp):
                if args.only and args.only not in name:
                    continue
                if name == "memtriage serve":
                    cmd = cmd + args.serve_args.split()
                results[name] = measure(name, cmd, port, expect, args.scrapes, args.window, args.warmup)
    finally:
        stop_holders(holders)

    header = f"{'exporter':<18}{'median ms':>10}{'p99 ms':>9}{'CPU %':>8}{'RSS MiB':>9}{'series':>8}{'KiB':>8}"
    print(header)
    for name, r in results.items():
        print(f"{name:<18}{r['median_ms']:>10.1f}{r['p99_ms']:>9.1f}{r['cpu_percent']:>8.2f}"
              f"{r['rss_mib']:>9.1f}{r['series']:>8}{r['bytes'] / 1024:>8.0f}")
    ours = results.get("memtriage serve")
    if ours is None:
        return
    for peer, r in results.items():
        if peer == "memtriage serve":
            continue
        def ratio(a, b):
            if not b:
                return "n/a"
            r = a / b
            return f"{r:.2f}x" if r >= 0.1 else f"{r:.4f}x ({1 / r:.0f}x less)" if r else "0x"
        print(f"\nmemtriage serve / {peer}: scrape median {ratio(ours['median_ms'], r['median_ms'])}, "
              f"p99 {ratio(ours['p99_ms'], r['p99_ms'])}, CPU {ratio(ours['cpu_percent'], r['cpu_percent'])}, "
              f"RSS {ratio(ours['rss_mib'], r['rss_mib'])}")
    met = ours["median_ms"] < 50 and ours["p99_ms"] < 150 and ours["cpu_percent"] < 0.5 and ours["rss_mib"] < 25
    print(f"\nissue 15's figures (median < 50 ms, p99 < 150 ms, < 0.5% of a core, < 25 MiB): "
          f"{'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
