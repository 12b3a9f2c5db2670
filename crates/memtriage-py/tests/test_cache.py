"""memtriage.cache on real files in the real page cache."""

import json
import mmap
import os
import struct
import subprocess
import sys
import tempfile

import pytest

import memtriage
import memtriage.cache as cache
from memtriage import _native

MIB = 1 << 20


@pytest.fixture
def scratch():
    # On the disk: tmpfs pages are not a cache that can be evicted.
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        yield d


def write(path, mib):
    block = bytes(range(256)) * (MIB // 256)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    return path


def test_evict_then_warm_takes_a_file_from_cold_to_cached(scratch):
    f = write(os.path.join(scratch, "w.bin"), 64)
    ev = cache.evict(f)[0]
    assert ev.size == 64 * MIB
    assert cache.residency(f)[0].cached < 2 * MIB
    w = cache.warm(f)[0]
    assert w.read == 64 * MIB and w.cached_after == 64 * MIB
    # This kernel (5.14+, THP not "never") populates; elsewhere warm falls back to pread.
    thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    assert w.method == ("pread" if "[never]" in thp else "populate")
    r = cache.residency(f, mappers=False)[0]
    assert r.cached == r.size == 64 * MIB
    assert len(r.segments) == 24 and min(r.segments) > 0.99
    again = cache.warm(f)[0]
    assert again.already_cached == 64 * MIB and again.read == 0


def test_per_tensor_residency_of_a_safetensors_file(scratch):
    header = b'{"a":{"dtype":"F32","shape":[4194304],"data_offsets":[0,16777216]},"b":{"dtype":"U8","shape":[16777216],"data_offsets":[16777216,33554432]}}'
    header += b" " * ((8 - (8 + len(header)) % 8) % 8)
    path = os.path.join(scratch, "m.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\x01" * (32 * MIB))
    cache.warm(path)
    tensors = cache.residency(path)[0].tensors
    assert [t.name for t in tensors] == ["a", "b"]
    assert all(t.cached == t.bytes for t in tensors)
    assert tensors[0].shape == [4194304]


def test_a_lock_holds_memory_until_released(scratch):
    f = write(os.path.join(scratch, "l.bin"), 16)
    with cache.warm(f, lock=True, max=64 * MIB) as lk:
        assert lk.held and lk.bytes == 16 * MIB
        locked_kb = int(next(l for l in open("/proc/self/status") if l.startswith("VmLck:")).split()[1])
        assert locked_kb * 1024 >= 16 * MIB
    assert not lk.held
    locked_kb = int(next(l for l in open("/proc/self/status") if l.startswith("VmLck:")).split()[1])
    assert locked_kb * 1024 < 16 * MIB


def test_evict_with_sync_drops_a_freshly_written_file(scratch):
    # Not fsynced: without sync=True its pages would be dirty or under writeback.
    path = os.path.join(scratch, "fresh.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(32 * MIB))
    ev = cache.evict(path, sync=True)[0]
    assert ev.synced and ev.cached_after == 0 and ev.writeback_after == 0


def test_a_lock_beyond_max_is_refused_before_anything_is_read(scratch):
    f = write(os.path.join(scratch, "big.bin"), 32)
    cache.evict(f)
    # Refused by a limit: PermissionError, and the engine names the concept, not a flag.
    with pytest.raises(PermissionError, match="exceed the maximum of 1.0 MiB") as refused:
        cache.warm(f, lock=True, max=MIB)
    assert "--max" not in str(refused.value)
    assert cache.residency(f)[0].cached < 2 * MIB, "refused before warming"


def test_bad_inputs_raise_python_exceptions(scratch):
    with pytest.raises(FileNotFoundError):
        cache.residency("/no/such/file")
    with pytest.raises(ValueError, match="not a regular file"):
        cache.warm("/dev/zero")
    bad = os.path.join(scratch, "bad.safetensors")
    with open(bad, "wb") as f:
        f.write(struct.pack("<Q", 1 << 63) + b"{}")
    with pytest.raises(ValueError, match="threads"):
        cache.warm(bad, threads=0)


def test_each_error_kind_is_its_python_exception(scratch):
    # Not found: FileNotFoundError with the errno Python's own would carry.
    with pytest.raises(FileNotFoundError) as missing:
        cache.evict(os.path.join(scratch, "gone.bin"))
    assert missing.value.errno == 2 and "gone.bin" in str(missing.value)
    # Bad input: ValueError naming the thing.
    with pytest.raises(ValueError, match="/dev/null: a device, not a regular file"):
        cache.evict("/dev/null")
    with pytest.raises(ValueError, match="choose between 1 and 64"):
        cache.warm(os.path.join(scratch), threads=65)
    # Refused: PermissionError with the fix.
    f = write(os.path.join(scratch, "r.bin"), 2)
    with pytest.raises(PermissionError, match=r"lock fewer files"):
        cache.warm(f, lock=True, max=1)


def test_results_carry_the_schema_of_the_commands_json(scratch):
    f = write(os.path.join(scratch, "s.bin"), 4)
    assert _native.cache_residency([f], False)["schema"] == "memtriage.cache/v1"
    report, held = _native.cache_warm([f])
    assert report["schema"] == "memtriage.warm/v1" and held is None
    assert report["bytes_read"] == sum(w["read"] for w in report["files"])
    assert report["locked"] is None
    evicted = _native.cache_evict([f])
    assert evicted["schema"] == "memtriage.evict/v1"
    assert [e["path"] for e in evicted["files"]] == [f]


def test_public_results_are_lists_that_carry_their_report(scratch):
    f = write(os.path.join(scratch, "p.bin"), 4)
    for result, schema in (
        (cache.residency(f), "memtriage.cache/v1"),
        (cache.warm(f), "memtriage.warm/v1"),
        (cache.evict(f), "memtriage.evict/v1"),
    ):
        assert result.schema == schema
        assert [r.path for r in result] == [f]
        whole = result.to_dict()
        assert whole["schema"] == schema
        assert whole["files"] == [r.to_dict() for r in result]


def test_evict_names_the_processes_that_keep_a_file_cached(scratch):
    """The pages a process maps stay cached; evict says who maps them, as the
    command does (Python's evict once lacked `mapped_by`)."""
    f = write(os.path.join(scratch, "m.bin"), 8)
    with open(f, "rb") as fh:
        m = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
        try:
            touched = sum(m[i + 1] for i in range(0, 8 * MIB, 4096))  # fault every page in
            assert touched > 0
            ev = cache.evict(f)[0]
            assert ev.cached_after > 0, "mapped pages cannot be dropped"
            mine = [p for p in ev.mapped_by if p.pid == os.getpid()]
            assert mine and mine[0].mapped == 8 * MIB, ev.mapped_by
        finally:
            m.close()
    after = cache.evict(f)[0]
    assert after.cached_after < 2 * MIB and after.mapped_by == []


def test_python_and_the_command_report_evict_alike(scratch):
    f = write(os.path.join(scratch, "c.bin"), 2)
    from_python = _native.cache_evict([f])
    out = subprocess.run(
        [sys.executable, "-m", "memtriage", "evict", "--json", f],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    from_cli = json.loads(out.stdout)
    assert from_cli["schema"] == from_python["schema"]
    assert from_cli["files"][0].keys() == from_python["files"][0].keys()


def _damon_pageout_over_physical_memory():
    """Read here from sysfs, apart from memtriage: a running kdamond over physical
    memory with a pageout scheme, or DAMON_RECLAIM on. None where unreadable."""
    base = "/sys/kernel/mm/damon/admin/kdamonds"
    try:
        found = False
        if os.path.isdir(base):
            for k in range(int(open(f"{base}/nr_kdamonds").read())):
                if open(f"{base}/{k}/state").read().strip() != "on":
                    continue
                for c in range(int(open(f"{base}/{k}/contexts/nr_contexts").read())):
                    ctx = f"{base}/{k}/contexts/{c}"
                    if open(f"{ctx}/operations").read().strip() != "paddr":
                        continue
                    for s in range(int(open(f"{ctx}/schemes/nr_schemes").read())):
                        found |= open(f"{ctx}/schemes/{s}/action").read().strip() == "pageout"
        module = "/sys/module/damon_reclaim/parameters/enabled"
        if os.path.exists(module):
            found |= open(module).read().strip() == "Y"
        return found
    except PermissionError:
        return None


def test_warm_warns_where_proactive_reclaim_will_drop_the_files(scratch):
    import warnings

    f = write(os.path.join(scratch, "r.bin"), 8)
    expected = _damon_pageout_over_physical_memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache.warm(f)
    reclaim = [w for w in caught if issubclass(w.category, cache.ReclaimWarning)]
    assert bool(reclaim) == bool(expected), [str(w.message) for w in caught]
    if reclaim:
        assert "lock=True" in str(reclaim[0].message)
        assert reclaim[0].filename == __file__, "points at the caller's line"


def test_a_broken_safetensors_header_is_reported_not_raised(scratch):
    # Truncated: the header says 4096 bytes, 10 follow. Its residency is still given,
    # and a good file beside it is measured in the same call.
    bad = os.path.join(scratch, "truncated.safetensors")
    with open(bad, "wb") as f:
        f.write(struct.pack("<Q", 4096) + b'{"a": {"dt')
    good = os.path.join(scratch, "good.bin")
    with open(good, "wb") as f:
        f.write(b"x" * MIB)
    report = cache.residency([bad, good], mappers=False)
    assert [r.size for r in report] == [18, MIB]
    assert report[0].tensors is None
    assert "more than the 10 bytes after it" in report[0].tensors_error
    assert report[1].tensors_error is None
    assert report.skipped == []


def test_a_file_deleted_during_the_walk_is_skipped_not_raised(scratch):
    import threading

    keep = os.path.join(scratch, "keep.bin")
    with open(keep, "wb") as f:
        f.write(b"k" * MIB)
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            for i in range(16):
                p = os.path.join(scratch, f"churn-{i}.bin")
                with open(p, "wb") as f:
                    f.write(b"c" * 65536)
            for i in range(16):
                try:
                    os.unlink(os.path.join(scratch, f"churn-{i}.bin"))
                except FileNotFoundError:
                    pass

    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(20):
            report = cache.residency(scratch, mappers=False)
            assert keep in [r.path for r in report]
            assert all(s.reason == "vanished during the walk" for s in report.skipped)
    finally:
        stop.set()
        t.join()
