"""GPU paths on a real NVIDIA GPU with PyTorch (skipped where CUDA is not available):
NVML's view of processes that allocated a known amount, a job that asks for more
than the card has, two processes on one device, an out-of-bounds index in a CUDA
kernel, a deliberately fragmented allocator, and the zero-code snapshot of a real
out-of-memory. They drive the installed package's `memtriage` command (python -m
memtriage) and `memtriage.torch`, as a user would."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device here", allow_module_level=True)

GIB = 1 << 30
MIB = 1 << 20


def memtriage(*args, check=True):
    return subprocess.run(
        [sys.executable, "-m", "memtriage", *args], capture_output=True, text=True, check=check
    )


def run_report(*args):
    out = memtriage("run", "--json", "--interval", "100ms", *args, check=False)
    start = out.stderr.rfind("\n{\n")
    return out, json.loads(out.stderr[start + 1 if start >= 0 else 0 :])


class Holder:
    """A Python child that allocates `size` bytes on `device` and waits."""

    def __init__(self, size: int, device: int = 0):
        code = (
            "import sys, torch  # memtriage-gpu-holder\n"
            f"x = torch.empty({size}, dtype=torch.uint8, device='cuda:{device}')\n"
            "torch.cuda.synchronize()\n"
            "print('READY', flush=True)\n"
            "sys.stdin.read()\n"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "READY"
        self.pid = self.proc.pid

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def gpu_total(report, pid):
    for p in report["processes"]:
        if p["pid"] == pid:
            return p["gpu"]["total"]
    raise AssertionError(f"pid {pid} not in {report['processes']}")


def test_inspect_reports_what_torch_allocated_for_that_pid():
    h = Holder(2 * GIB)
    try:
        report = json.loads(memtriage("inspect", "--json", str(h.pid)).stdout)
    finally:
        h.close()
    assert report["gpu"]["available"] is True, report["gpu"]
    held = gpu_total(report, h.pid)
    # The tensor plus the CUDA context (a few hundred MiB).
    assert 2 * GIB <= held <= 2 * GIB + 1536 * MIB, held


def test_two_processes_on_one_device_are_told_apart():
    small, big = Holder(1 * GIB), Holder(3 * GIB)
    try:
        report = json.loads(memtriage("inspect", "--json", str(small.pid), str(big.pid)).stdout)
    finally:
        small.close()
        big.close()
    a, b = gpu_total(report, small.pid), gpu_total(report, big.pid)
    assert abs((b - a) - 2 * GIB) <= 256 * MIB, (a, b)


def test_a_job_asking_for_more_than_the_card_has_gets_the_device_evidence(tmp_path):
    total = torch.cuda.get_device_properties(0).total_memory
    code = (
        "import torch\n"
        "keep = torch.empty(1 << 30, dtype=torch.uint8, device='cuda')\n"
        f"torch.empty({2 * total}, dtype=torch.uint8, device='cuda')\n"
    )
    out, report = run_report("--record", str(tmp_path / "job.jsonl"), "--", sys.executable, "-c", code)
    assert out.returncode == 1
    ids = [f["id"] for f in report["findings"]]
    assert "log.cuda-oom" in ids, ids
    oom = next(f for f in report["findings"] if f["id"] == "log.cuda-oom")
    labels = [e["label"] for e in oom["evidence"]]
    assert "GPU 0 peak during the run" in labels, labels
    # The zero-code hook saved the allocator's snapshot, and it was explained.
    assert report.get("cuda_snapshots"), report.get("notes")
    assert any(i.startswith("cuda-snapshot.") for i in ids), ids
    print(json.dumps(oom, indent=1))


def test_an_out_of_bounds_index_in_a_kernel_is_explained():
    code = (
        "import torch\n"
        "a = torch.zeros(10, device='cuda')\n"
        "i = torch.tensor([1000], device='cuda')\n"
        "print(a[i])\n"
        "torch.cuda.synchronize()\n"
    )
    out, report = run_report("--", sys.executable, "-c", code)
    assert out.returncode != 0
    ids = [f["id"] for f in report["findings"]]
    assert {"log.cuda-device-assert", "log.cuda-illegal-memory-access"} & set(ids), (ids, out.stderr[-2000:])


def test_explain_oom_says_fragmentation_for_a_fragmented_allocator():
    from memtriage.torch import explain_oom

    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history(max_entries=100000)
    blocks = []
    # 6 MiB tensors share 20 MiB segments three to a segment; fill the device.
    try:
        while True:
            blocks.append(torch.empty(6 * MIB, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError:
        pass
    # Keep the middle one of every three: each segment keeps a tensor, the rest is
    # free in holes of at most 8 MiB, and no segment is entirely free to hand back.
    blocks = blocks[1::3]
    try:
        torch.empty(16 * MIB, dtype=torch.uint8, device="cuda")
        pytest.fail("expected an out-of-memory")
    except torch.OutOfMemoryError as e:
        report = explain_oom(exc=e)
    finally:
        blocks.clear()
        torch.cuda.memory._record_memory_history(enabled=None)
        torch.cuda.empty_cache()
    ids = [f.id for f in report]
    assert "cuda-snapshot.fragmentation" in ids, [f.title for f in report]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape_until(url, want, timeout=60):
    """The exposition once every series in `want` (a predicate per line) is in it."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        try:
            text = urllib.request.urlopen(url, timeout=5).read().decode()
        except OSError:
            text = ""
        if text and all(any(w(line) for line in text.splitlines()) for w in want):
            return text
        time.sleep(0.5)
    raise AssertionError(f"not all series came in {timeout} s:\n{text}")


def series(text, name, **labels):
    """The value of the series `name` whose labels include `labels`."""
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        head, value = line.rsplit(" ", 1)
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            return float(value)
    return None


def test_serve_exports_each_devices_memory_and_what_a_group_holds_on_it():
    h = Holder(2 * GIB)
    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "memtriage", "serve", "--listen", f"127.0.0.1:{port}",
         "--interval", "1s", "--no-doctor", "--group", "holder=memtriage-gpu-holder"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        text = scrape_until(
            f"http://127.0.0.1:{port}/metrics",
            [lambda l: l.startswith('memtriage_group_gpu_memory_bytes{') and 'group="holder"' in l,
             lambda l: l.startswith("memtriage_gpu_memory_total_bytes{")],
        )
    finally:
        serve.terminate()
        serve.wait(timeout=30)
        h.close()
    print("\n".join(l for l in text.splitlines() if "gpu" in l))
    total = series(text, "memtriage_gpu_memory_total_bytes", gpu="0")
    used = series(text, "memtriage_gpu_memory_used_bytes", gpu="0")
    held = series(text, "memtriage_group_gpu_memory_bytes", group="holder", gpu="0")
    card = torch.cuda.get_device_properties(0).total_memory
    assert abs(total - card) <= 0.05 * card, (total, card)
    assert 2 * GIB <= held <= 2 * GIB + 1536 * MIB, held
    assert held <= used <= total, (held, used, total)
    assert series(text, "memtriage_source_up", source="nvml") == 1.0


def test_top_shows_the_device_and_ranks_the_holder_by_gpu_memory():
    h = Holder(3 * GIB)
    try:
        out = memtriage("top", "--once", "--json", "--interval", "500ms", "--sort", "gpu")
    finally:
        h.close()
    frame = json.loads(out.stdout)
    gpus = frame["header"]["gpus"]
    assert gpus and gpus[0]["index"] == 0, frame["header"]
    assert gpus[0]["used"] >= 3 * GIB, gpus[0]
    row = next(p for p in frame["processes"] if p["pid"] == h.pid)
    assert 3 * GIB <= row["gpu"] <= 3 * GIB + 1536 * MIB, row
    holders = [p for p in frame["processes"] if p.get("gpu")]
    assert max(holders, key=lambda p: p["gpu"])["pid"] == h.pid, holders


def run_summary(tmp_path, *args):
    """`run` as a user sees it (its summary on stderr), with its JSON report; both
    kept as fixtures in MEMTRIAGE_GPU_FIXTURES, where it is set, under the test's name."""
    path = tmp_path / "report.json"
    out = memtriage("run", "--interval", "100ms", "--report", str(path), *args, check=False)
    keep = os.environ.get("MEMTRIAGE_GPU_FIXTURES")
    if keep:
        name = os.environ["PYTEST_CURRENT_TEST"].split("::")[-1].split(" ")[0]
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, f"{name}.report.json"), "w") as f:
            f.write(path.read_text())
        with open(os.path.join(keep, f"{name}.stderr.txt"), "w") as f:
            f.write(out.stderr)
    return out, json.loads(path.read_text())


def run_job(tmp_path, name, source):
    """A job written to `name` and run under `run_summary`; it must end well."""
    job = tmp_path / name
    job.write_text(source)
    out, report = run_summary(tmp_path, "--", sys.executable, str(job))
    assert out.returncode == 0, out.stderr[-3000:]
    return out, report


def main_lines(report):
    """The main process's lines (the one started by exec) in `run`'s report."""
    procs = report.get("memory_by_line") or []
    main = [p for p in procs if p["started"] == "exec"]
    assert main, [(p["pid"], p["started"], p.get("failed")) for p in procs]
    return main[0]


def test_pinned_host_memory_is_told_as_pinned_not_dev_shm(tmp_path):
    # torch's pinned allocator (cudaHostAlloc): its pages count as shared memory in
    # /proc/PID/status; the line that pinned them is named, and it is not /dev/shm.
    out, report = run_job(
        tmp_path,
        "pin.py",
        "import time, torch\n"
        "torch.cuda.init()\n"
        "bufs = []\n"
        "for i in range(16):\n"
        "    bufs.append(torch.empty(128 << 20, dtype=torch.uint8, pin_memory=True))  # PINNED\n"
        "time.sleep(1.5)\n",
    )
    main = main_lines(report)
    assert main["pinned_host"] and main["pinned_host"]["peak"] >= 2 * GIB, main.get("pinned_host")
    pinned = [l for l in main["lines"] if l["at"]["line"] == 5 and l["at"]["file"].endswith("pin.py")]
    assert pinned, [(l["at"], l["anon"], l["shmem"]) for l in main["lines"][:5]]
    print(json.dumps({k: pinned[0][k] for k in ("anon", "file", "shmem", "kind", "episodes")}))
    assert pinned[0]["shmem"]["grown"] + pinned[0]["anon"]["grown"] >= GIB, pinned[0]
    print(out.stderr[-3000:])
    ids = [f["id"] for f in report["findings"]]
    assert not [i for i in ids if "shm" in i], ids


def test_a_gpu_jobs_host_leak_is_named_by_its_line(tmp_path):
    # A GPU training loop that copies each step's gradient to the host and keeps it:
    # the line is named first in the main process, as a leak.
    out, report = run_job(
        tmp_path,
        "train_gpu.py",
        "import torch\n"
        "from torch import nn\n"
        "model = nn.Linear(2048, 2048).cuda()\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
        "kept = []\n"
        "for step in range(90):\n"
        "    x = torch.randn(512, 2048, device='cuda')\n"
        "    loss = model(x).square().mean()\n"
        "    opt.zero_grad(); loss.backward(); opt.step()\n"
        "    kept.append(model.weight.grad.cpu())  # LEAK: 16 MiB a step\n",
    )
    lines = main_lines(report)["lines"]
    first = lines[0]
    assert first["at"]["file"].endswith("train_gpu.py") and first["at"]["line"] == 10, first["at"]
    assert first["kind"] == "leak", first
    ids = [f["id"] for f in report["findings"]]
    assert "run.python-leak" in ids, ids
    assert "train_gpu.py:10" in out.stderr, out.stderr[-3000:]
    # The first optimizer's lazy imports (seconds on the stack) are held, not a leak.
    loading = [l for l in lines if l["at"]["line"] == 4 and l["at"]["file"].endswith("train_gpu.py")]
    assert not loading or loading[0]["kind"] != "leak", loading[0]
