import json
import os
import subprocess
import sys

import pytest

import memtriage

LOG = """\
epoch 1 step 100 loss 2.314
[Sat Nov 21 06:16:42 2026] Memory cgroup out of memory: Killed process 7731 (pt_main_thread) total-vm:41943040kB, anon-rss:33030144kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:65000kB oom_score_adj:0
RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
"""


def test_explain_finds_the_failures_of_a_log():
    findings = memtriage.explain(LOG, source="train.log")
    ids = [f.id for f in findings]
    assert "log.oom-kill" in ids and "log.dataloader-shm" in ids
    oom = findings[ids.index("log.oom-kill")]
    assert oom.severity == "error"
    assert "pt_main_thread" in oom.title and "7731" in oom.title
    assert any("train.log:2" in e.source for e in oom.evidence)
    assert oom.fix
    # How sure, and whom to call: the kernel's own line proves the kill.
    assert oom.certainty == "confirmed" and oom.cause == "capacity"


def test_a_sigkill_alone_names_no_sender_and_says_what_would_confirm_it():
    (f,) = memtriage.explain("Error: container exited with code 137\n")
    assert f.id == "log.sigkill" and f.severity == "warn"
    assert "dmesg" in f.confirm


def test_explain_and_doctor_carry_the_schema_of_the_commands_json():
    report = memtriage._native.explain(LOG, "train.log")
    assert report["schema"] == "memtriage.explain/v1"
    assert report["source"] == "train.log" and report["lines"] == 4
    assert report["bytes"] == len(LOG.encode())
    assert {f["id"] for f in report["findings"]} >= {"log.oom-kill", "log.dataloader-shm"}
    doc = memtriage._native.doctor("inference")
    assert doc["schema"] == "memtriage.doctor/v1" and doc["profile"] == "inference"
    assert doc["system"]["schema"] == "memtriage.system/v1"
    assert [f["id"] for f in doc["findings"]] == [f.id for f in memtriage.doctor("inference")]


def test_python_and_the_command_explain_alike(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(LOG)
    out = subprocess.run(
        [sys.executable, "-m", "memtriage", "explain", "--json", str(log)],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    from_cli = json.loads(out.stdout)
    from_python = memtriage._native.explain(LOG, str(log))
    assert from_cli == from_python


def test_explain_takes_bytes_and_a_healthy_log_has_no_findings():
    assert memtriage.explain(b"epoch 1 loss 0.1\nkilled_frac=0.1\n") == []
    assert memtriage.explain(LOG.encode())[0].id == memtriage.explain(LOG)[0].id


def test_vanished_pid_is_process_lookup_error():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    with pytest.raises(ProcessLookupError, match=f"pid {p.pid}: no such process"):
        memtriage.snapshot(p.pid)
    with pytest.raises(ProcessLookupError):
        memtriage.tree(p.pid)


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: memtriage.snapshot(0), ValueError, "positive"),
        (lambda: memtriage.snapshot(-3), ValueError, "positive"),
        (lambda: memtriage.snapshot(2**40), ValueError, "no kernel hands out ids above"),
        (lambda: memtriage.snapshot(fields=["rss"]), ValueError, "unknown field"),
        (lambda: memtriage.tree(fields="bogus"), ValueError, "unknown field"),
        (lambda: memtriage.doctor("gpu"), ValueError, "unknown profile"),
        (lambda: memtriage.explain(42), TypeError, "str or bytes"),
        (lambda: memtriage.snapshot("1"), TypeError, None),
    ],
)
def test_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_permission_denied_is_permission_error():
    """A non-root user cannot read another user's smaps_rollup: the snapshot says
    so in `unreadable` (as the CLI does); a hard refusal is PermissionError."""
    code = (
        "import os, memtriage\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = memtriage.snapshot(1)\n"
        "assert s.rollup is None, s.rollup\n"
        "assert any(u.field == 'smaps_rollup' and 'permission denied' in u.reason for u in s.unreadable), s.unreadable\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_public_results_carry_the_schema_and_the_whole_report():
    found = memtriage.explain(LOG, source="train.log")
    assert found.schema == "memtriage.explain/v1"
    assert found.to_dict()["lines"] == 4
    assert [f.id for f in found] == [f["id"] for f in found.to_dict()["findings"]]
    doc = memtriage.doctor("shared")
    assert doc.schema == "memtriage.doctor/v1"
    assert doc.to_dict()["profile"] == "shared"
    assert doc.to_dict()["system"]["schema"] == "memtriage.system/v1"
