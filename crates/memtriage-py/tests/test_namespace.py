"""The public namespace shows the API, and help() leads to every part of it."""

import pydoc
import typing

import memtriage
import memtriage.cache

# Names a module's code imports for itself; none is part of the API.
IMPORTED = {"os", "sys", "warnings", "functools", "signal", "annotations", "importlib"} | set(
    typing.__all__
)


def public(module):
    return {n for n in dir(module) if not n.startswith("__")}


def test_dir_of_memtriage_is_the_api():
    names = public(memtriage)
    assert names & IMPORTED == set(), names & IMPORTED
    assert not {n for n in names if n.startswith("_")}, names
    assert set(memtriage.__all__) <= names
    assert {"snapshot", "tree", "doctor", "explain", "track", "cache"} <= names
    # help() reads every listed name: `torch` (imported on first use) is not listed,
    # so help(memtriage) works without PyTorch installed.
    assert "torch" not in names
    assert "__version__" in dir(memtriage)


def test_dir_of_submodules_is_their_api():
    for module in (memtriage.cache,):
        names = public(module)
        assert names == set(module.__all__), names ^ set(module.__all__)


def test_help_names_the_cache_module():
    text = pydoc.render_doc(memtriage, renderer=pydoc.plaintext)
    assert "memtriage.cache" in text
    assert "warm" in text and "evict" in text


def test_cache_is_there_without_importing_it():
    import importlib
    import subprocess
    import sys

    code = "import memtriage; print(memtriage.cache.residency.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "residency"
    assert importlib.import_module("memtriage.cache") is memtriage.cache
