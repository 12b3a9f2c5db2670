"""GPU paths on a real NVIDIA GPU with PyTorch (skipped where CUDA is not available):
NVML's view of processes that allocated a known amount, a job that asks for more
than the card has, two processes on one device, an out-of-bounds index in a CUDA
kernel, a deliberately fragmented allocator, and the zero-code snapshot of a real
out-of-memory. They drive the installed package's `memtriage` command (python -m
memtriage) and `memtriage.torch`, as a user would."""

import json
import os
import subprocess
import sys

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
            "import sys, torch\n"
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
