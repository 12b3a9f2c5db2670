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
