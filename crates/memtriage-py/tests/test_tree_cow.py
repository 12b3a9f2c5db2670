import multiprocessing as mp
import os

import memtriage
from conftest import MIB

# ~100 MiB of distinct float objects (24 bytes each) in the parent; the list itself
# (pointers) is only read by the workers. Iterating touches each object's reference
# count, which dirties its page: the worker gets a private copy of it.
N = 4_000_000
DATA = None
_touched = None
_release = None


def _init(touched, release):
    global _touched, _release
    _touched, _release = touched, release


def _iterate(_):
    total = 0.0
    for x in DATA:
        total += x
    _touched.release()
    _release.wait(60)  # stay alive while the parent reads the tree
    return os.getpid()


def test_forked_workers_iterating_python_objects_show_copy_on_write():
    global DATA
    DATA = [float(i) for i in range(N)]
    ctx = mp.get_context("fork")
    touched, release = ctx.Semaphore(0), ctx.Event()
    workers = 2
    with ctx.Pool(workers, initializer=_init, initargs=(touched, release)) as pool:
        result = pool.map_async(_iterate, range(workers), chunksize=1)
        for _ in range(workers):
            assert touched.acquire(timeout=120), "a worker did not finish iterating"
        t = memtriage.tree()
        release.set()
        pids = set(result.get(60))
    DATA = None

    assert t.root == os.getpid()
    by_pid = {p.pid: p for p in t.processes}
    assert pids <= set(by_pid), "the tree has the pool's workers"
    for pid in pids:
        w = by_pid[pid]
        # Each worker copied most of the ~92 MiB of floats it touched.
        assert w.uss >= 64 * MIB, (pid, w.uss / MIB)
        assert w.rollup.private_dirty >= 64 * MIB
        assert w.shared > 0  # the rest still shared with the parent
    totals = t.totals
    assert totals.processes == len(t.nodes) >= 1 + workers
    assert totals.rss_sum > totals.pss  # shared pages counted once per process in RSS
    assert totals.uss_sum >= workers * 64 * MIB
    cow = [f for f in t.findings if f.id == "fork.copy-on-write"]
    assert len(cow) == 1, [f.id for f in t.findings]
    f = cow[0]
    assert f.severity in ("warn", "error")
    assert str(os.getpid()) in f.title
    worker_lines = [e for e in f.evidence if e.label.startswith("worker pid")]
    assert {int(e.label.split()[-1]) for e in worker_lines} >= pids
