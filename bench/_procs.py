"""Processes for the machine-wide benchmarks: a node's worth of small holders, and a
process's CPU time and peak RSS from /proc."""

import os
import subprocess
import sys

TICK = os.sysconf("SC_CLK_TCK")

# A process with a few MiB of its own, as a node's daemons and workers have.
HOLDER = "import time\nb = bytearray(4 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\ntime.sleep(3600)\n"


def start_holders(n):
    return [subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.DEVNULL) for _ in range(n)]


def stop_holders(holders):
    for h in holders:
        h.kill()
    for h in holders:
        h.wait()


def cpu_seconds(pid):
    """utime + stime of every thread (fields 14 and 15 of stat, 12 and 13 after the comm)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_rss_mib(pid):
    """VmHWM, in MiB; NaN where the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")
