"""The artefact a user installs: the wheel, in a fresh venv, with its command."""

import glob
import json
import os
import subprocess
import sys
import venv

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel ./test.sh built (MEMTRIAGE_WHEEL), else built here with maturin."""
    path = os.environ.get("MEMTRIAGE_WHEEL")
    if path:
        assert os.path.isfile(path), f"MEMTRIAGE_WHEEL={path} does not exist"
        return path
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "maturin", "build", "--release", "-q",
         "-m", os.path.join(REPO, "crates/memtriage-py/Cargo.toml"), "-o", str(out)],
        check=True,
    )
    (path,) = glob.glob(str(out / "memtriage-*.whl"))
    return path


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, wheel):
    d = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(d)
    py = str(d / "bin" / "python")
    # --no-index: the wheel has no dependencies; nothing is downloaded.
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", wheel], check=True)
    return d


def test_wheel_is_abi3_for_python_3_9_and_up(wheel):
    assert "-cp39-abi3-" in os.path.basename(wheel)


def test_import_in_a_fresh_venv(fresh_venv):
    py = str(fresh_venv / "bin" / "python")
    code = (
        "import memtriage, os, sys\n"
        "assert memtriage.__file__.startswith(sys.prefix), memtriage.__file__\n"
        "s = memtriage.snapshot()\n"
        "assert s.pid == os.getpid() and s.pss > 0\n"
        "print(memtriage.__version__)\n"
    )
    out = subprocess.run([py, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()[0].isdigit()


def test_memtriage_command_from_the_venv(fresh_venv):
    exe = str(fresh_venv / "bin" / "memtriage")
    assert os.access(exe, os.X_OK)
    v = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("memtriage "), (v.stdout, v.stderr)
    out = subprocess.run([exe, "inspect", "--json", str(os.getpid())], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "memtriage.inspect/v1"
    assert doc["processes"][0]["pid"] == os.getpid()
    # Exit codes are the command's own: 2 for a pid that does not exist.
    gone = subprocess.run([exe, "inspect", "999999999"], capture_output=True, text=True)
    assert gone.returncode == 2 and "no such process" in gone.stderr
    # And a usage error is 2 with clap's message, not a Python traceback.
    bad = subprocess.run([exe, "--no-such-flag"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_python_dash_m_runs_the_command(fresh_venv):
    py = str(fresh_venv / "bin" / "python")
    out = subprocess.run([py, "-m", "memtriage", "explain", "-"], input="Killed\n",
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "out of memory" in out.stdout.lower() or "oom" in out.stdout.lower(), out.stdout
