"""GPUs from Python: ``memtriage.gpu()`` and GPU memory in ``tree()``. NVML is loaded
once per process, so each case runs in a fresh interpreter with its own environment:
without NVML (a path that does not exist), and with memtriage-fake-nvml, the test
stand-in for libnvidia-ml that ./test.sh builds and names in MEMTRIAGE_FAKE_NVML."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Child

GIB = 1 << 30
REPO = Path(__file__).resolve().parents[3]


def fake_nvml() -> str:
    path = os.environ.get("MEMTRIAGE_FAKE_NVML") or str(
        REPO / "target" / "debug" / "libmemtriage_fake_nvml.so"
    )
    if not os.path.exists(path):
        pytest.skip("memtriage-fake-nvml is not built (./test.sh builds it)")
    return path


def in_fresh_python(code: str, **env: str):
    out = subprocess.run(
        [sys.executable, "-c", "import json, memtriage\n" + code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_without_nvml_gpu_says_why_and_tree_leaves_gpu_unknown():
    got = in_fresh_python(
        "print(json.dumps({'gpu': memtriage.gpu().to_dict(), "
        "'tree': memtriage.tree()['totals'].to_dict()}))",
        MEMTRIAGE_NVML_LIB="/nonexistent/libnvidia-ml.so.1",
    )
    assert got["gpu"]["available"] is False
    assert got["gpu"]["reason"].startswith("MEMTRIAGE_NVML_LIB=/nonexistent/libnvidia-ml.so.1")
    assert got["gpu"]["devices"] == []
    assert got["tree"]["gpu"] is None


def test_gpu_lists_devices_and_joins_a_live_process(tmp_path):
    lib = fake_nvml()
    child = Child("x = 1")
    try:
        config = {
            "devices": [
                {
                    "name": "NVIDIA A100-SXM4-40GB",
                    "uuid": "GPU-0000",
                    "pci_bus_id": "00000000:07:00.0",
                    "total": 40 * GIB,
                    "used": 6 * GIB,
                    "compute": [{"pid": child.pid, "used": 6 * GIB}],
                }
            ]
        }
        (tmp_path / "nvml.json").write_text(json.dumps(config))
        got = in_fresh_python(
            f"g = memtriage.gpu(); t = memtriage.tree({child.pid})\n"
            "print(json.dumps({'gpu': g.to_dict(), 'total': t['totals']['gpu'], "
            "'node': t['nodes'][0]['process']['gpu'].to_dict()}))",
            MEMTRIAGE_NVML_LIB=lib,
            FAKE_NVML_CONFIG=str(tmp_path / "nvml.json"),
        )
    finally:
        child.close()
    device = got["gpu"]["devices"][0]
    assert got["gpu"]["available"] is True
    assert device["name"] == "NVIDIA A100-SXM4-40GB"
    assert device["memory"]["total"] == 40 * GIB
    held = [p for p in device["processes"] if p["pid"] == child.pid]
    assert held and held[0]["used"] == 6 * GIB and held[0]["comm"].startswith("python")
    assert got["total"] == 6 * GIB
    assert got["node"]["total"] == 6 * GIB
