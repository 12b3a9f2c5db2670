#!/usr/bin/env python3
"""The job bench/lines_bench.py runs in every mode: a CPU training loop (torch, a small
MLP on synthetic data) fed by a DataLoader with 2 worker processes.

It measures itself, so every mode is measured the same way:
  step time   wall time of each step after the warm-up (fetch the batch, forward,
              backward, optimizer step, the kept buffer), median and mean.
  peak memory VmHWM of the main process at the end, and of each worker, which writes
              its own VmHWM from inside the Dataset to LINES_HWM_DIR/<pid>.json
              every few items (workers leave through os._exit: no atexit).

One allocation line dominates the main process on purpose: each step keeps a
KEEP_MIB MiB buffer (`kept.append(...)`, marked DOMINANT below), so the job's top
line by bytes allocated and at its peak is unambiguous; the result names it.

Environment: LINES_RESULT (JSON result file; or argv[1]), LINES_HWM_DIR (worker
files; default: a fresh temporary directory), LINES_STEPS (150), LINES_WARMUP (20),
LINES_BATCH (512), LINES_KEEP_MIB (2), LINES_THREADS (torch threads in the main
process, 1), LINES_PROGRESS (1: a line on stderr every 10 steps, to see where a
profiler stopped it), LINES_DEVICE (cpu; cuda: the model and each batch on the GPU,
the batches pinned by the DataLoader, as a GPU training job has them).
"""

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

STEPS = int(os.environ.get("LINES_STEPS", "150"))
WARMUP = int(os.environ.get("LINES_WARMUP", "20"))
BATCH = int(os.environ.get("LINES_BATCH", "512"))
KEEP_MIB = float(os.environ.get("LINES_KEEP_MIB", "2"))
THREADS = int(os.environ.get("LINES_THREADS", "1"))
PROGRESS = os.environ.get("LINES_PROGRESS") == "1"
DEVICE = os.environ.get("LINES_DEVICE", "cpu")
FEATURES, HIDDEN, CLASSES = 512, 1024, 10


def vm_hwm_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


class Synthetic(Dataset):
    """Each item is built on demand with numpy and torch, as an augmenting loader does."""

    def __init__(self, n, hwm_dir):
        self.n = n
        self.hwm_dir = hwm_dir
        self.items = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        x = rng.standard_normal((FEATURES, 8)).astype(np.float32)
        x = np.tanh(x @ rng.standard_normal((8, 8)).astype(np.float32)).mean(axis=1)
        y = int(i % CLASSES)
        self.items += 1
        if self.items % 16 == 1:
            self.note_hwm()
        return torch.from_numpy(x), y

    def note_hwm(self):
        info = torch.utils.data.get_worker_info()
        pid = os.getpid()
        rec = {"pid": pid, "ppid": os.getppid(), "worker": info.id if info else None,
               "hwm_kib": vm_hwm_kib()}
        tmp = os.path.join(self.hwm_dir, f".{pid}.tmp")
        with open(tmp, "w") as f:
            json.dump(rec, f)
        os.replace(tmp, os.path.join(self.hwm_dir, f"{pid}.json"))


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LINES_RESULT")
    hwm_dir = os.environ.get("LINES_HWM_DIR") or tempfile.mkdtemp(prefix="lines_hwm_")
    os.makedirs(hwm_dir, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(THREADS)
    total = STEPS + WARMUP
    loader = DataLoader(Synthetic(total * BATCH, hwm_dir), batch_size=BATCH,
                        num_workers=2, shuffle=False, pin_memory=DEVICE != "cpu")
    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(),
                          nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
                          nn.Linear(HIDDEN, CLASSES)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    keep_floats = int(KEEP_MIB * (1 << 20)) // 4
    kept = []
    times = []
    it = iter(loader)
    t = time.perf_counter()
    for step in range(total):
        x, y = next(it)
        x, y = x.to(DEVICE, non_blocking=True), y.to(DEVICE, non_blocking=True)
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        kept.append(np.full(keep_floats, loss.item(), dtype=np.float32))  # DOMINANT
        now = time.perf_counter()
        if step >= WARMUP:
            times.append(now - t)
        if PROGRESS and step % 10 == 0:
            print(f"lines_train: step {step} of {total}", file=sys.stderr, flush=True)
        t = now
    main_hwm = vm_hwm_kib()
    del it  # the workers stop here; their last VmHWM is already written
    workers = []
    for name in sorted(os.listdir(hwm_dir)):
        if name.endswith(".json"):
            try:
                with open(os.path.join(hwm_dir, name)) as f:
                    workers.append(json.load(f))
            except (OSError, ValueError):
                pass
    if not os.environ.get("LINES_HWM_DIR"):
        shutil.rmtree(hwm_dir, ignore_errors=True)
    workers.sort(key=lambda w: (w.get("worker") is None, w.get("worker"), w["pid"]))
    here = os.path.abspath(__file__)
    with open(here) as f:
        dominant = next(n for n, line in enumerate(f, 1) if line.rstrip().endswith("# DOMINANT"))
    result = {
        "pid": os.getpid(),
        "steps": STEPS, "warmup": WARMUP, "batch": BATCH, "keep_mib": KEEP_MIB,
        "threads": THREADS, "device": DEVICE,
        "median_ms": statistics.median(times) * 1e3,
        "mean_ms": statistics.fmean(times) * 1e3,
        "main_hwm_kib": main_hwm,
        "workers": workers,
        "dominant": {"file": here, "line": dominant},
        "final_loss": float(loss.item()),
    }
    import tracemalloc
    if tracemalloc.is_tracing():  # under python3 -X tracemalloc: its own top line
        top = tracemalloc.take_snapshot().statistics("lineno")[0]
        frame = top.traceback[0]
        result["tracemalloc_top"] = {"file": os.path.abspath(frame.filename),
                                     "line": frame.lineno, "bytes": top.size}
    if out_path:
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)
    else:
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
