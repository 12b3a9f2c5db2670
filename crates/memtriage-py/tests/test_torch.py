import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed: memtriage.torch not tested")

import memtriage  # noqa: E402
import memtriage.torch as mt  # noqa: E402
from conftest import MIB  # noqa: E402


def test_import_memtriage_does_not_import_torch():
    code = "import sys, memtriage; memtriage.snapshot(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_summary_joins_process_and_allocator_views():
    s = mt.summary()
    me = memtriage.snapshot(fields=("status", "rollup"))
    assert s.process.pid == os.getpid()
    # Both readings of the same process within a few MiB of each other.
    assert abs(s.process.rss - me.rss) < 32 * MIB
    assert s.process.pss > 0 and s.process.uss > 0
    assert s.torch.version == torch.__version__
    if torch.cuda.is_available():
        assert s.cuda.available and len(s.cuda.devices) == torch.cuda.device_count()
        d = s.cuda.devices[0]
        assert d.reserved >= d.allocated >= 0
        assert d.reserved_unallocated == d.reserved - d.allocated
    else:
        assert s.cuda.available is False
        assert "CUDA" in s.cuda.reason
        assert s.cuda.devices == []
        assert "cuda: unavailable" in str(s)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_summary_on_a_gpu_sees_an_allocation():
    x = torch.empty(256 * MIB, dtype=torch.uint8, device="cuda")
    d = mt.summary(0).cuda.devices[0]
    assert d.allocated >= 256 * MIB and d.reserved >= d.allocated
    assert d.driver_free is not None and d.driver_total >= d.total * 0.9
    del x


class Objects(torch.utils.data.Dataset):
    """A dataset held as Python objects: ~96 MiB of floats."""

    def __init__(self, n):
        self.items = [float(i) for i in range(n)]

    def __len__(self):
        return 64

    def __getitem__(self, i):
        # What a careless dataset does: touch every object (here: sum them).
        if i < 4:
            s = 0.0
            for x in self.items:
                s += x
        return torch.tensor(i)


def test_dataloader_workers_private_vs_shared():
    loader = torch.utils.data.DataLoader(
        Objects(4_000_000), batch_size=1, num_workers=2, multiprocessing_context="fork"
    )
    it = iter(loader)
    for _ in range(8):  # items 0..3 went to both workers (round robin)
        next(it)
    w = mt.dataloader_workers(it)
    assert w.source == "iterator._workers"
    assert [x.pid for x in w.workers] == [p.pid for p in it._workers]
    for x in w.workers:
        assert x.alive
        assert x.uss >= 64 * MIB, x.uss / MIB  # the objects it touched, copied
        assert x.shared > 0
        assert x.private_dirty >= 64 * MIB
    assert w.totals.uss >= 2 * 64 * MIB
    assert "worker 0 pid" in str(w)
    del it


def test_dataloader_without_workers_reports_none():
    loader = torch.utils.data.DataLoader(list(range(4)), num_workers=0)
    w = mt.dataloader_workers(iter(loader))
    assert w.workers == [] and w.totals.uss == 0


SNAPSHOTS = Path(__file__).resolve().parents[2] / "memtriage-core" / "tests" / "fixtures" / "cuda-snapshots"


def test_explain_oom_tells_fragmentation_from_a_saved_snapshot():
    from memtriage.torch import explain_oom

    report = explain_oom(SNAPSHOTS / "fragmented.pickle")
    assert report.schema == "memtriage.cuda-snapshot/v1"
    (f,) = report
    assert f.id == "cuda-snapshot.fragmentation"
    assert "expandable_segments:True" in f.fix
    device = report.to_dict()["devices"][0]
    assert device["oom"]["requested"] == 4 << 30
    assert device["top_sites"][0]["site"] == "model.py:131 in forward"


def test_explain_oom_takes_the_request_from_the_exception():
    import pickle

    from memtriage.torch import explain_oom

    with open(SNAPSHOTS / "no-history.pickle", "rb") as fh:
        snap = pickle.load(fh)
    exc = torch.OutOfMemoryError(
        "CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of "
        "79.11 GiB of which 512.00 MiB is free. Of the allocated memory 6.00 GiB is allocated by PyTorch"
    )
    (f,) = explain_oom(snap, exc=exc)
    assert f.id == "cuda-snapshot.real-demand"
    assert f.certainty == "confirmed"
    assert "3.0 GiB asked for" in f.title
    # 1.5 GiB fits the 2 GiB free block: that snapshot is not the moment of failure.
    (f,) = explain_oom(snap, requested=3 << 29)
    assert f.id == "cuda-snapshot.state"


def test_explain_oom_refuses_what_is_not_a_snapshot(tmp_path):
    from memtriage.torch import explain_oom

    with pytest.raises(ValueError, match="the pickle holds no dict"):
        explain_oom(SNAPSHOTS / "not-a-snapshot.pickle")
    cut = tmp_path / "cut.pickle"
    cut.write_bytes((SNAPSHOTS / "fragmented.pickle").read_bytes()[:500])
    with pytest.raises(ValueError, match="truncated"):
        explain_oom(cut)
    with pytest.raises(FileNotFoundError):
        explain_oom(tmp_path / "missing.pickle")
    with pytest.raises(TypeError):
        explain_oom(42)
