#!/usr/bin/env python3
"""`memtriage run`'s Python line sampling against the Python memory profilers, side by
side in one run: the cost each adds to a CPU training job with 2 DataLoader workers,
and whether they name the same top line.

The job is bench/lines_train.py (torch on the CPU, a small MLP on synthetic data, a
Dataset that builds each sample with numpy, 150 steps after a warm-up of 20; one
line of its main loop keeps a buffer each step, about 340 MiB in all: the dominant
allocation). It measures itself: median and mean step time after the warm-up, and
VmHWM of the main process and of each worker (written from inside the Dataset).
Modes, run interleaved (ABCDEF ABCDEF ...) for --repeats rounds so drift hits all
alike:

  alone          python3 lines_train.py
  memtriage      memtriage run --report R -- python3 lines_train.py  (lines on by default)
  memtriage -L   the same with --no-python-lines (the hook off), for reference
  memray         python3 -m memray run --follow-fork -o OUT lines_train.py
  scalene        python3 -m scalene run -o OUT lines_train.py  (a failure is reported)
  tracemalloc    python3 -X tracemalloc lines_train.py

A mode that fails or runs past --timeout is reported with its error and not run
again. Top lines: memtriage's is the first of `lines` of the main process (the
memory_by_line entry started == "exec" whose pid is the report's pid); memray's is
the line of the job's own code (the innermost frame outside the standard library and
site-packages) holding the most bytes at the main process's high-water mark, which
is what a line memory grew under and kept is compared with; `memray stats` (bytes
allocated in all, freed or not, by innermost frame) is shown beside it. Targets:
memtriage <= 1.02x the step time alone, <= 10 MiB extra per process, and its main
top line == memray's.

Every mode runs with MALLOC_MMAP_THRESHOLD_=131072 (glibc's threshold fixed at its
default), so that VmHWM repeats to the MiB and 'extra MiB' measures the tool; glibc's
dynamic threshold (--malloc-default) moves the main process's VmHWM by 10-30 MiB
from run to run of the same job.

A benchmark, not a test: timings on a shared or small machine drift; the ratios,
measured side by side, hold. Needs torch, numpy, and for the profilers `pip install
memray scalene`; uses target/release/memtriage as built (cargo build --release -p
memtriage). Run from the repository root:

  python3 bench/lines_bench.py [--quick] [--repeats N] [--json] [--device cuda]
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRIAGE = os.path.join(ROOT, "target", "release", "memtriage")
TRAIN = os.path.join(ROOT, "bench", "lines_train.py")
PY = sys.executable

TARGET_RATIO = 1.02
TARGET_EXTRA_MIB = 10.0

# torch's profiler (kineto) logs these on every start and stop under scalene.
KINETO_LOG = re.compile(r"^(USDT|ERROR|WARNING|INFO):\S+ \S+ \d+:\d+ \S+\.cpp:\d+\]")
PROGRESS = re.compile(r"^lines_train: step (\d+) of (\d+)$")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def has_module(name):
    return subprocess.run([PY, "-c", f"import {name}"], capture_output=True).returncode == 0


def memtriage_flags():
    try:
        out = subprocess.run([MEMTRIAGE, "run", "--help"], capture_output=True, text=True)
    except OSError:
        return None
    return out.stdout


def modes(memtriage_help):
    """(name, command maker, why skipped or None, note). A maker takes the run's
    directory and returns the command."""
    train = [PY, TRAIN]
    out = []
    out.append(("alone", lambda d: train, None, None))
    if memtriage_help is None:
        skip = f"{MEMTRIAGE} not found: cargo build --release -p memtriage"
        out.append(("memtriage", None, skip, None))
        out.append(("memtriage --no-python-lines", None, skip, None))
    else:
        out.append(("memtriage", lambda d: [MEMTRIAGE, "run", "--report",
                                            os.path.join(d, "report.json"), "--", *train],
                    None, None))
        flag, note = ["--no-python-lines"], None
        if "--no-python-lines" not in memtriage_help:
            flag, note = [], "this binary has no --no-python-lines: ran without it"
        out.append(("memtriage --no-python-lines",
                    lambda d: [MEMTRIAGE, "run", *flag, "--report",
                               os.path.join(d, "report.json"), "--", *train], None, note))
    if has_module("memray"):
        out.append(("memray", lambda d: [PY, "-m", "memray", "run", "-q", "--follow-fork",
                                         "-o", os.path.join(d, "memray.bin"), TRAIN],
                    None, None))
    else:
        out.append(("memray", None, "not installed (pip install memray)", None))
    if has_module("scalene"):
        out.append(("scalene", lambda d: [PY, "-m", "scalene", "run", "-o",
                                          os.path.join(d, "scalene.json"), TRAIN],
                    None, None))
    else:
        out.append(("scalene", None, "not installed (pip install scalene)", None))
    out.append(("tracemalloc", lambda d: [PY, "-X", "tracemalloc", TRAIN], None, None))
    return out


def descendants(root):
    """Pids under `root` (any depth), from /proc, children first."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for c in children.get(pid, []):
            out.append(c)
            todo.append(c)
    return out[::-1]


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def stop_tree(proc):
    """Kill the run we started and every process under it, each by its pid; what
    they held just before, for the report."""
    pids = [proc.pid] + descendants(proc.pid)
    held = {pid: rss_mib(pid) for pid in pids}
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()
    return held


def stderr_summary(text, lines=12):
    """The last lines of a run's stderr, verbatim, less the job's progress lines and
    kineto's log lines (counted)."""
    kept, kineto, progress = [], 0, None
    for line in text.splitlines():
        m = PROGRESS.match(line)
        if m:
            progress = (int(m.group(1)), int(m.group(2)))
        elif KINETO_LOG.match(line):
            kineto += 1
        elif line.strip():
            kept.append(line)
    return kept[-lines:], kineto, progress


def run_one(name, cmd, d, env, timeout):
    os.makedirs(os.path.join(d, "hwm"), exist_ok=True)
    env = dict(env, LINES_RESULT=os.path.join(d, "result.json"),
               LINES_HWM_DIR=os.path.join(d, "hwm"), LINES_PROGRESS="1")
    err_path = os.path.join(d, "stderr.txt")
    start = time.perf_counter()
    with open(err_path, "w") as err:
        # Its own session: a profiler that ignores SIGTERM cannot outlive us.
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, env=env, cwd=d, start_new_session=True)
        held = None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            held = stop_tree(proc)
            code = None
    wall = time.perf_counter() - start
    with open(err_path, errors="replace") as f:
        tail, kineto, progress = stderr_summary(f.read())
    run = {"mode": name, "command": " ".join(cmd), "wall_s": wall, "exit_code": code}
    result_path = os.path.join(d, "result.json")
    if code == 0 and os.path.exists(result_path):
        with open(result_path) as f:
            run["result"] = json.load(f)
        run["ok"] = True
        return run
    run["ok"] = False
    if code is None:
        why = f"ran past the {timeout:.0f} s timeout; killed"
        if held:
            why += ("; it held " + ", ".join(f"{m:.0f}" for m in held.values())
                    + f" MiB RSS in {len(held)} processes")
    else:
        why = f"exited {code}" + ("" if code else " without writing its result")
    if progress:
        why += f"; last progress: step {progress[0]} of {progress[1]}"
    if kineto:
        why += f"; {kineto} kineto log lines left out of stderr"
    run["error"] = why
    run["stderr_tail"] = tail
    return run


# ---- top lines -------------------------------------------------------------------

LIBRARY_DIRS = tuple(sorted({os.path.realpath(sysconfig.get_paths()[k]) + os.sep
                             for k in ("stdlib", "platstdlib", "purelib", "platlib")}))


def is_library(path):
    return path.startswith("<") or os.path.realpath(path).startswith(LIBRARY_DIRS)


def frame_dict(function, path, line):
    return {"file": path, "line": line, "function": function}


def memray_top(out_bin, d):
    """The main process's top line at its high-water mark, attributed to the job's
    own innermost frame; the innermost frames of the top records; `memray stats`'
    top location by bytes allocated; the follow-fork children's files."""
    res = {"children_files": sorted(os.path.basename(p) for p in os.listdir(d)
                                    if p.startswith("memray.bin."))}
    try:
        import memray
        reader = memray.FileReader(out_bin)
        by_line = {}
        for rec in reader.get_high_watermark_allocation_records(merge_threads=True):
            stack = rec.stack_trace()
            if not stack:
                key = ("<no Python frame>", "<native>", 0)
            else:
                key = next((f for f in stack if not is_library(f[1])), stack[0])
            by_line[key] = by_line.get(key, 0) + rec.size
        ranked = sorted(by_line.items(), key=lambda kv: -kv[1])
        res["peak_bytes"] = reader.metadata.peak_memory
        res["top_at_peak"] = [dict(frame_dict(*k), bytes=v) for k, v in ranked[:3]]
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        res["reader_error"] = f"{type(e).__name__}: {e}"
    stats_path = os.path.join(d, "memray-stats.json")
    p = subprocess.run([PY, "-m", "memray", "stats", "--json", "-f", "-o", stats_path,
                        out_bin], capture_output=True, text=True)
    if p.returncode == 0 and os.path.exists(stats_path):
        with open(stats_path) as f:
            top = json.load(f).get("top_allocations_by_size") or []
        if top:
            function, _, rest = top[0]["location"].partition(":")
            path, _, line = rest.rpartition(":")
            res["stats_top_by_size"] = dict(frame_dict(function, path, int(line) if line.isdigit() else 0),
                                            bytes=top[0]["size"])
    else:
        res["stats_error"] = (p.stderr or p.stdout).strip()[-500:]
    return res


def memtriage_lines(report_path, main_pid):
    """What the report says by line: presence, the main process's top line, the hook's
    cost over all processes."""
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        return {"status": f"no report: {e}"}
    res = {"report_pid": report.get("pid")}
    if report.get("pid") != main_pid:
        res["pid_note"] = f"report pid {report.get('pid')} != job's main pid {main_pid}"
    procs = report.get("memory_by_line")
    if procs is None:
        res["status"] = "absent"
        return res
    res["status"] = "present"
    res["processes"] = [{"pid": p.get("pid"), "started": p.get("started"), "role": p.get("role"),
                         "hook_cpu_seconds": p.get("hook_cpu_seconds"), "ticks": p.get("ticks"),
                         "lines": len(p.get("lines") or []),
                         "top": (p.get("lines") or [{}])[0].get("at")} for p in procs]
    res["hook_cpu_seconds"] = sum(p.get("hook_cpu_seconds") or 0 for p in procs)
    main = [p for p in procs if p.get("started") == "exec" and p.get("pid") == report.get("pid")]
    if not main:
        res["main_top"] = None
        res["main_note"] = "no entry with started == \"exec\" and the report's pid"
    elif not main[0].get("lines"):
        res["main_top"] = None
        res["main_note"] = "the main process's entry has no lines"
    else:
        top = main[0]["lines"][0]
        res["main_top"] = dict(top.get("at") or {}, kind=top.get("kind"),
                               anon=top.get("anon"))
    return res


def scalene_top(path):
    try:
        with open(path) as f:
            prof = json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"no profile: {e}"}
    res = {}
    if prof.get("max_footprint_fname"):
        res["max_footprint"] = {"file": prof["max_footprint_fname"],
                                "line": prof.get("max_footprint_lineno"),
                                "mib": prof.get("max_footprint_mb")}
    best = None
    for fname, data in (prof.get("files") or {}).items():
        for ln in data.get("lines") or []:
            if best is None or ln.get("n_peak_mb", 0) > best[2]:
                best = (fname, ln.get("lineno"), ln.get("n_peak_mb", 0))
    if best:
        res["top_by_peak"] = {"file": best[0], "line": best[1], "mib": best[2]}
    return res


def analyse(run, d):
    r = run["result"]
    extra = {}
    if run["mode"].startswith("memtriage"):
        extra = memtriage_lines(os.path.join(d, "report.json"), r["pid"])
    elif run["mode"] == "memray":
        extra = memray_top(os.path.join(d, "memray.bin"), d)
    elif run["mode"] == "scalene":
        extra = scalene_top(os.path.join(d, "scalene.json"))
    elif run["mode"] == "tracemalloc" and "tracemalloc_top" in r:
        extra = {"top": r["tracemalloc_top"]}
    run["lines"] = extra


# ---- summary ----------------------------------------------------------------------

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarise(names, runs):
    rows = {}
    for name in names:
        ok = [r for r in runs if r["mode"] == name and r["ok"]]
        failed = [r for r in runs if r["mode"] == name and not r["ok"]]
        if not ok:
            rows[name] = {"runs": 0, "failed": len(failed)}
            continue
        workers = {}
        for r in ok:
            for w in r["result"]["workers"]:
                key = w.get("worker") if w.get("worker") is not None else f"pid {w['pid']}"
                workers.setdefault(key, []).append(w["hwm_kib"] / 1024)
        rows[name] = {
            "runs": len(ok), "failed": len(failed),
            "median_ms": med([r["result"]["median_ms"] for r in ok]),
            "mean_ms": med([r["result"]["mean_ms"] for r in ok]),
            "wall_s": med([r["wall_s"] for r in ok]),
            "main_mib": med([r["result"]["main_hwm_kib"] / 1024 for r in ok]),
            "main_mib_range": [min(r["result"]["main_hwm_kib"] for r in ok) / 1024,
                               max(r["result"]["main_hwm_kib"] for r in ok) / 1024],
            "workers_mib": {str(k): med(v) for k, v in sorted(workers.items(), key=lambda kv: str(kv[0]))},
        }
    base = rows.get("alone", {})
    for name, row in rows.items():
        if not row.get("runs") or not base.get("runs"):
            continue
        row["ratio"] = row["median_ms"] / base["median_ms"]
        row["extra_main_mib"] = row["main_mib"] - base["main_mib"]
        row["extra_workers_mib"] = {k: v - base["workers_mib"][k]
                                    for k, v in row["workers_mib"].items()
                                    if k in base["workers_mib"]}
    return rows


def same_line(a, b):
    if not a or not b or not a.get("file") or not b.get("file"):
        return None
    return (os.path.realpath(a["file"]), a.get("line")) == (os.path.realpath(b["file"]), b.get("line"))


def where(f):
    if not f:
        return "-"
    s = f"{os.path.relpath(f['file'], ROOT) if f['file'].startswith(ROOT) else f['file']}:{f.get('line')}"
    if f.get("function"):
        s += f" ({f['function']})"
    return s


def targets(rows, runs):
    mt = rows.get("memtriage", {})
    first = lambda mode: next((r for r in runs if r["mode"] == mode and r["ok"]), None)  # noqa: E731
    mt_run, mr_run = first("memtriage"), first("memray")
    mt_lines = (mt_run or {}).get("lines", {})
    mt_top = mt_lines.get("main_top")
    mr_top = ((mr_run or {}).get("lines", {}).get("top_at_peak") or [None])[0]
    dominant = (mt_run or mr_run or first("alone") or {}).get("result", {}).get("dominant")
    out = {}
    if mt.get("ratio") is not None:
        out["step_ratio"] = {"value": mt["ratio"], "target": TARGET_RATIO,
                             "met": mt["ratio"] <= TARGET_RATIO}
        extras = [mt["extra_main_mib"], *mt["extra_workers_mib"].values()]
        out["extra_mib_per_process"] = {"value": max(extras), "target": TARGET_EXTRA_MIB,
                                        "met": max(extras) <= TARGET_EXTRA_MIB}
    off = rows.get("memtriage --no-python-lines", {})
    if mt.get("median_ms") and off.get("median_ms"):
        out["hook_ratio_vs_hook_off"] = mt["median_ms"] / off["median_ms"]
    out["top_line"] = {"memtriage": mt_top, "memray": mr_top, "dominant": dominant,
                       "memtriage_status": mt_lines.get("status", "no memtriage run"),
                       "met": same_line(mt_top, mr_top)}
    return out


def fmt(x, spec, dash="-"):
    return dash if x is None else format(x, spec)


def print_table(info, names, rows, runs, tg, skipped):
    print(f"\n{info}")
    hdr = (f"  {'mode':<28}{'runs':>5}{'step ms':>9}{'mean':>8}{'x alone':>9}{'wall s':>8}"
           f"{'main MiB':>10}{'w0 MiB':>8}{'w1 MiB':>8}   extra MiB main/w0/w1")
    print(hdr)
    for name in names:
        if name in skipped:
            print(f"  {name:<28}  skipped: {skipped[name]}")
            continue
        r = rows[name]
        if not r.get("runs"):
            print(f"  {name:<28}{0:>5}  failed (below)")
            continue
        w = r["workers_mib"]
        ex = r.get("extra_workers_mib", {})
        extra = "/".join(fmt(v, "+.1f") for v in (r.get("extra_main_mib"), ex.get("0"), ex.get("1")))
        if name == "alone":
            extra = ""
        print(f"  {name:<28}{r['runs']:>5}{r['median_ms']:>9.1f}{r['mean_ms']:>8.1f}"
              f"{fmt(r.get('ratio'), '.3f'):>9}{r['wall_s']:>8.1f}{r['main_mib']:>10.0f}"
              f"{fmt(w.get('0'), '.0f'):>8}{fmt(w.get('1'), '.0f'):>8}   {extra}")
    fails = [r for r in runs if not r["ok"]]
    if fails:
        print("\nfailures (the job's progress lines and kineto's log lines left out of stderr):")
        for r in fails:
            print(f"  {r['mode']}: {r['error']}\n    $ {r['command']}")
            for line in r["stderr_tail"]:
                print(f"    | {line}")
    for name in names:
        note = next((m[3] for m in MODES if m[0] == name and m[3]), None)
        if note:
            print(f"  note, {name}: {note}")

    a = rows.get("alone", {})
    if a.get("runs", 0) > 1:
        lo, hi = a["main_mib_range"]
        print(f"  alone's main VmHWM ranged {lo:.0f}-{hi:.0f} MiB over {a['runs']} runs: "
              "the noise under 'extra MiB main'")

    print("\ntop line of the main process")
    first = lambda mode: next((r for r in runs if r["mode"] == mode and r["ok"]), None)  # noqa: E731
    t = tg["top_line"]
    print(f"  the job's dominant line         {where(t['dominant'])}")
    mtl = (first("memtriage") or {}).get("lines", {})
    if t["memtriage"]:
        mt = t["memtriage"]
        print(f"  memtriage memory_by_line        {where(mt)}  kind {mt.get('kind')}"
              f"  anon {mt.get('anon')}")
    else:
        print(f"  memtriage memory_by_line        {t['memtriage_status']}"
              + (f" ({mtl['main_note']})" if mtl.get("main_note") else ""))
    if mtl.get("processes"):
        print(f"    processes {len(mtl['processes'])}, hook CPU {mtl['hook_cpu_seconds']:.3f} s in all:")
        for p in mtl["processes"]:
            print(f"    pid {p['pid']} {p['started']} {p['role']!s:<26} cpu {p['hook_cpu_seconds']}"
                  f" s, {p['ticks']} ticks, {p['lines']} lines, top {where(p['top'])}")
    mr = (first("memray") or {}).get("lines", {})
    if mr:
        for i, f in enumerate(mr.get("top_at_peak") or []):
            label = "memray at peak, job's line" if i == 0 else "  then"
            print(f"  {label:<32}{where(f)}  {f['bytes'] / 2**20:.0f} MiB")
        if "reader_error" in mr:
            print(f"  memray at peak                  could not read: {mr['reader_error']}")
        s = mr.get("stats_top_by_size")
        if s:
            print(f"  memray stats, top by size       {where(s)}  {s['bytes'] / 2**20:.0f} MiB allocated"
                  " in all (innermost frame, freed or not)")
        elif "stats_error" in mr:
            print(f"  memray stats                    failed: {mr['stats_error']}")
        print(f"  memray follow-fork files        {', '.join(mr['children_files']) or 'none'}")
    tm = (first("tracemalloc") or {}).get("lines", {}).get("top")
    if tm:
        print(f"  tracemalloc at the end          {where(tm)}  {tm['bytes'] / 2**20:.0f} MiB")
    sc = (first("scalene") or {}).get("lines", {})
    for key, label in (("max_footprint", "scalene max footprint"), ("top_by_peak", "scalene top n_peak_mb")):
        if sc.get(key):
            print(f"  {label:<32}{where(sc[key])}  {sc[key]['mib']:.0f} MiB")

    print("\ntargets (memtriage, lines on)")
    if "step_ratio" in tg:
        s, e = tg["step_ratio"], tg["extra_mib_per_process"]
        print(f"  step time vs alone      {s['value']:.3f}x   target <= {TARGET_RATIO}x   "
              f"{'met' if s['met'] else 'NOT met'}")
        print(f"  extra MiB per process   {e['value']:+.1f}    target <= {TARGET_EXTRA_MIB:.0f} MiB  "
              f"{'met' if e['met'] else 'NOT met'} (largest of main and workers)")
    if "hook_ratio_vs_hook_off" in tg:
        print(f"  step time vs --no-python-lines  {tg['hook_ratio_vs_hook_off']:.3f}x  (the hook's own cost)")
    met = t["met"]
    print(f"  main top line == memray's       "
          f"{'yes' if met else 'no' if met is False else 'cannot tell'}"
          + ("" if met is not None else f" (memtriage: {t['memtriage_status']})"))


MODES = []


def main():
    global MODES, MEMTRIAGE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 repeat, 40 steps: checks that it runs, not how fast")
    ap.add_argument("--repeats", type=int, help="interleaved rounds of all modes (default 3)")
    ap.add_argument("--steps", type=int, help="steps after the warm-up (default 150)")
    ap.add_argument("--warmup", type=int, help="warm-up steps (default 20)")
    ap.add_argument("--timeout", type=float,
                    help="seconds a run may take (default: 10x the first run alone, at least 60)")
    ap.add_argument("--only", help="comma-separated modes to run (alone always runs)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--malloc-default", action="store_true",
                    help="leave glibc's mmap threshold dynamic (VmHWM then varies by 10-30 MiB)")
    ap.add_argument("--memtriage", default=MEMTRIAGE, help="the binary (default: %(default)s)")
    ap.add_argument("--device", default="cpu",
                    help="where the model trains: cpu (default) or cuda (batches pinned by the DataLoader)")
    args = ap.parse_args()
    MEMTRIAGE = args.memtriage
    repeats = args.repeats or (1 if args.quick else 3)
    steps = args.steps or (40 if args.quick else 150)
    warmup = args.warmup if args.warmup is not None else (10 if args.quick else 20)

    MODES = modes(memtriage_flags())
    if args.only:
        wanted = {"alone", *args.only.split(",")}
        MODES = [m for m in MODES if m[0] in wanted]
    names = [m[0] for m in MODES]
    skipped = {m[0]: m[2] for m in MODES if m[2]}
    # The kept buffer holds about 340 MiB at the end whatever the steps, so the
    # dominant line stays well above the next ones (imports, optimizer set-up).
    keep_mib = max(2.0, 340.0 / (steps + warmup))
    env = dict(os.environ, LINES_STEPS=str(steps), LINES_WARMUP=str(warmup),
               LINES_KEEP_MIB=f"{keep_mib:.2f}", LINES_DEVICE=args.device)
    if not args.malloc_default:
        # glibc's mmap threshold moves with what was freed, so the heap and VmHWM
        # differ by 10-30 MiB from run to run of the same job; fixed, VmHWM repeats
        # to the MiB, and 'extra MiB' measures the tool, not the allocator.
        env["MALLOC_MMAP_THRESHOLD_"] = "131072"
    runs, dead = [], {}
    timeout = args.timeout
    with tempfile.TemporaryDirectory(prefix="lines_bench_") as tmp:
        # One run alone first, not counted: the page cache warm (torch's libraries)
        # for every mode alike, and the timeout from it.
        d = os.path.join(tmp, "warm")
        os.makedirs(d)
        warm = run_one("alone", [PY, TRAIN], d, env, timeout or 600.0)
        if not warm["ok"]:
            log(f"the job fails alone: {warm['error']}\n" + "\n".join(warm["stderr_tail"]))
            return 1
        if timeout is None:
            timeout = max(60.0, 10 * warm["wall_s"])
        log(f"warm-up run alone: {warm['wall_s']:.1f} s; timeout per run {timeout:.0f} s")
        shutil.rmtree(d, ignore_errors=True)
        for rep in range(repeats):
            for name, make, skip, _ in MODES:
                if skip or name in dead:
                    continue
                d = os.path.join(tmp, f"{rep}-{name.replace(' ', '_')}")
                os.makedirs(d)
                run = run_one(name, make(d), d, env, timeout)
                run["repeat"] = rep
                if run["ok"]:
                    if not any(r["mode"] == name and r["ok"] for r in runs):
                        analyse(run, d)  # the top lines are the same each time
                    log(f"repeat {rep + 1}/{repeats} {name:<28} {run['result']['median_ms']:7.1f} ms/step"
                        f"  {run['wall_s']:6.1f} s")
                else:
                    dead[name] = run["error"]
                    log(f"repeat {rep + 1}/{repeats} {name:<28} FAILED: {run['error']}")
                runs.append(run)
                shutil.rmtree(d, ignore_errors=True)
    rows = summarise(names, runs)
    tg = targets(rows, runs)
    info = (f"{repeats} interleaved repeat(s) of {steps} steps after {warmup} warm-up, "
            f"{keep_mib:.1f} MiB kept a step; "
            f"{'dynamic' if args.malloc_default else 'fixed (128 KiB)'} glibc mmap threshold; median of the per-run median step time; VmHWM medians; "
            f"{os.cpu_count()} CPUs, kernel {os.uname().release}, model on {args.device}")
    if args.json:
        json.dump({"info": info, "steps": steps, "warmup": warmup, "repeats": repeats,
                   "skipped": skipped, "notes": {m[0]: m[3] for m in MODES if m[3]},
                   "modes": rows, "targets": tg, "runs": runs}, sys.stdout, indent=1, default=str)
        print()
    else:
        print_table(info, names, rows, runs, tg, skipped)


if __name__ == "__main__":
    sys.exit(main())
