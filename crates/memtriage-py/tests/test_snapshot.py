import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

import memtriage
from conftest import MIB

# 64 MiB written byte by byte into anonymous memory: every page touched.
ALLOC = "buf = b'\\x01' * (64 << 20)\n"


def test_snapshots_name_their_schema():
    assert memtriage.snapshot().schema == "memtriage.process/v1"
    assert memtriage.tree().schema == "memtriage.tree/v1"
    assert memtriage.system().schema == "memtriage.system/v1"
    out = subprocess.run(
        [sys.executable, "-m", "memtriage", "inspect", str(os.getpid()), "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(out.stdout)["process_schema"] == memtriage.snapshot().schema


def test_snapshot_sees_what_a_child_allocated(child):
    base = child("buf = b''\n")
    big = child(ALLOC)
    a, b = memtriage.snapshot(base.pid), memtriage.snapshot(big.pid)
    assert a.pid == base.pid and b.pid == big.pid
    d_anon = b.memory.rss_anon - a.memory.rss_anon
    d_uss = b.uss - a.uss
    d_pss = b.pss - a.pss
    # The same interpreter with and without the buffer: the difference is the buffer.
    assert 62 * MIB <= d_anon <= 68 * MIB, d_anon / MIB
    assert 62 * MIB <= d_uss <= 68 * MIB, d_uss / MIB
    assert 62 * MIB <= d_pss <= 68 * MIB, d_pss / MIB
    assert b.rollup.private_dirty >= 64 * MIB
    assert b.rss >= b.memory.rss_anon
    assert b.faults.minor >= 16384  # 64 MiB of 4 KiB pages


def test_snapshot_of_self_by_default():
    s = memtriage.snapshot()
    assert s.pid == os.getpid()
    assert s.ppid == os.getppid()
    assert s.cmdline[0].endswith("python") or "python" in s.comm or "pytest" in s.comm
    assert s.memory.rss > 0 and s.rollup.pss > 0
    assert s.unreadable == []
    assert s.to_dict()["pid"] == os.getpid()


def test_fields_limit_what_is_read():
    s = memtriage.snapshot(fields=("rollup",))
    assert s.rollup is not None and s.pss > 0
    assert s.memory is None and s.oom is None and s.cgroup is None
    bare = memtriage.snapshot(fields=())
    assert bare.rollup is None and bare.pss is None and bare.faults.minor > 0


def test_the_memory_fields_alone_read_no_more_than_memory():
    """fields=("status", "rollup") reads those two files: who the process is comes
    from status; the command line, executable and faults, not asked for, are None,
    not empty or 0."""
    full = memtriage.snapshot()
    s = memtriage.snapshot(fields=("status", "rollup"))
    assert (s.pid, s.ppid, s.comm, s.state, s.uid, s.kernel_thread) == (
        full.pid, full.ppid, full.comm, full.state, full.uid, full.kernel_thread)
    assert s.memory.rss > 0 and s.pss > 0
    assert s.cmdline is None and s.exe is None and s.faults is None
    assert s.unreadable == []
    asked = memtriage.snapshot(fields=("status", "faults", "cmdline"))
    assert asked.faults.minor > 0 and asked.cmdline == full.cmdline and asked.exe == full.exe
    assert set(memtriage.FIELDS) == {"status", "rollup", "oom", "cgroup", "cmdline", "faults"}


def _cgroup_growth_seen_by_a_kept_reader():
    """MiB a child's cgroup grew, as two calls of the kept reader see it, around the
    child's allocating 512 MiB."""
    code = ("import sys\nprint('READY', flush=True)\nsys.stdin.readline()\n"
            "buf = b'\\x01' * (512 << 20)\nprint('GREW', flush=True)\nsys.stdin.read()\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "READY"
        before = memtriage.snapshot(p.pid, fields=("cgroup",)).cgroup
        assert before is not None, "this machine puts every process in a memory cgroup"
        p.stdin.write("grow\n")
        p.stdin.flush()
        assert p.stdout.readline().strip() == "GREW"
        after = memtriage.snapshot(p.pid, fields=("cgroup",)).cgroup
        return (after.usage - before.usage) / MIB
    finally:
        p.stdin.close()
        p.wait()


def test_a_kept_reader_reads_the_cgroup_again():
    """Readers are kept between calls; a cgroup's usage must still be of now. Other
    work in the same cgroup may give memory back meanwhile: up to three tries (a
    reader that kept the first usage sees 0 growth in every one)."""
    seen = []
    for _ in range(3):
        seen.append(_cgroup_growth_seen_by_a_kept_reader())
        if seen[-1] >= 384:
            return
    raise AssertionError(f"the cgroup grew by {seen} MiB as read, not by the 512 MiB allocated")


def test_fields_match_inspect_json():
    """Same fields as `memtriage inspect --json`, from the command the wheel installed."""
    exe = shutil.which("memtriage", path=os.path.dirname(sys.executable))
    assert exe, "the wheel did not install the `memtriage` command next to python"
    out = subprocess.run(
        [exe, "inspect", "--json", str(os.getpid())], capture_output=True, text=True, check=True
    ).stdout
    cli = json.loads(out)["processes"][0]
    py = memtriage.snapshot().to_dict()
    assert set(py) == set(cli)
    for key in ("memory", "rollup", "faults", "oom"):
        assert set(py[key]) == set(cli[key]), key
    assert py["pid"] == cli["pid"] and py["cmdline"] == cli["cmdline"]


def test_snapshots_carry_the_values_and_order_of_inspect_json():
    """The dicts Python gets are the CLI's JSON: same keys in the same order, same
    types, same values, for a process that cannot change between the two reads."""
    exe = shutil.which("memtriage", path=os.path.dirname(sys.executable))
    assert exe, "the wheel did not install the `memtriage` command next to python"
    p = subprocess.Popen(["sleep", "600"])
    try:
        os.kill(p.pid, signal.SIGSTOP)
        out = subprocess.run(
            [exe, "inspect", "--json", str(p.pid)], capture_output=True, text=True, check=True
        ).stdout
        cli = json.loads(out)["processes"][0]
        (py,) = memtriage.snapshots([p.pid])
        py = py.to_dict()
    finally:
        p.kill()
        p.wait()

    def same(a, b, where):
        assert type(a) is type(b), (where, a, b)
        if isinstance(a, dict):
            assert list(a) == list(b), where
            for k in a:
                same(a[k], b[k], f"{where}.{k}")
        elif isinstance(a, list):
            assert len(a) == len(b), where
            for i, (x, y) in enumerate(zip(a, b)):
                same(x, y, f"{where}[{i}]")
        else:
            assert a == b, (where, a, b)

    # Others' processes starting and exiting move the shares of the pages sleep maps
    # with them (PSS; and whether a clean file page counts as shared or private: a
    # page is shared while another process maps it) and the cgroup's usage; the rest
    # of a stopped process holds still.
    for moving in ("pss", "pss_anon", "pss_file", "pss_shmem", "swap_pss",
                   "shared_clean", "private_clean"):
        assert type(py["rollup"][moving]) is type(cli["rollup"][moving])
        py["rollup"][moving] = cli["rollup"][moving]
    if cli["cgroup"] is not None:
        for moving in ("usage", "peak", "headroom"):
            assert type(py["cgroup"][moving]) is type(cli["cgroup"][moving])
            py["cgroup"][moving] = cli["cgroup"][moving]
    same(py, cli, "snapshot")
    assert py["state"] == "T" and py["comm"] == "sleep"


def test_snapshots_many_with_an_exited_pid(child):
    c = child("pass\n")
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    got = memtriage.snapshots([c.pid, p.pid, os.getpid()], fields=["rollup"])
    assert got[0].pid == c.pid and got[1] is None and got[2].pid == os.getpid()


def test_snapshots_of_every_process_come_back_in_the_order_asked():
    """Read on several threads and converted as they arrive, yet each result sits at
    its pid's place: a list of every pid, reversed, with repeats and a gone pid."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    pids = sorted((int(d) for d in os.listdir("/proc") if d.isdigit()), reverse=True)
    asked = pids + [gone.pid, os.getpid()] + pids[:5]
    got = memtriage.snapshots(asked, fields=("status", "rollup"))
    assert len(got) == len(asked)
    for pid, snap in zip(asked, got):
        assert snap is None or snap.pid == pid, (pid, snap)
    assert got[len(pids)] is None, "an exited pid is None"
    assert got[len(pids) + 1].pid == os.getpid() and got[len(pids) + 1].memory is not None
    assert sum(s is not None for s in got) >= len(pids) // 2, "most processes were read"


def test_records_read_like_objects_and_dicts():
    s = memtriage.snapshot()
    assert s["faults"].minor == s.faults.minor
    assert "rollup" in s and "nope" not in s
    with pytest.raises(AttributeError, match="no field 'nope'"):
        s.nope
    with pytest.raises(AttributeError, match="read-only"):
        s.pid = 3
    d = s.to_dict()
    d["memory"]["rss"] = -1
    assert s.memory.rss != -1, "to_dict() is a copy"
    json.dumps(d)


def test_system_and_doctor():
    sys_ = memtriage.system()
    assert sys_.schema == "memtriage.system/v1"
    with open("/proc/meminfo") as f:
        total_kb = int(f.readline().split()[1])
    assert sys_.memory.total == total_kb * 1024
    findings = memtriage.doctor("training")
    assert findings, "doctor lists passed checks too"
    ids = {f.id for f in findings}
    assert len(ids) == len(findings)
    for f in findings:
        assert f.severity in ("ok", "info", "warn", "error")
        assert f.title and isinstance(f.evidence, list)
        assert set(f.to_dict()) >= {"id", "severity", "title", "evidence", "why", "fix"}
    assert str(findings[0]).startswith(findings[0].severity)
    # The memory figures behind the findings come from the same snapshot.
    assert any(e.source.startswith(("/proc", "/sys", "/dev")) for f in findings for e in f.evidence)
