"""The tests import the *installed* package (the wheel ./test.sh builds and installs
into a venv), so they test what a user gets, not the source tree."""

import subprocess
import sys
import time

import pytest

MIB = 1 << 20


def pytest_configure(config):
    # On a machine with proactive reclaim every unlocked warm warns; one test checks
    # that warning, the others need not repeat it.
    config.addinivalue_line("filterwarnings", "ignore::memtriage.cache.ReclaimWarning")


def pytest_report_header(config):
    import memtriage

    return f"memtriage {memtriage.__version__} from {memtriage.__file__}"


class Child:
    """A Python child process that runs `code`, prints READY, and waits for stdin to
    close. Its memory is measured while it waits."""

    def __init__(self, code: str):
        script = code + "\nimport sys\nprint('READY', flush=True)\nsys.stdin.read()\n"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        assert line.strip() == "READY", f"child did not start: {line!r}"
        self.pid = self.proc.pid

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


@pytest.fixture
def child():
    made = []

    def make(code: str) -> Child:
        c = Child(code)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def wait_until(pred, timeout=10.0, step=0.02):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return False
