"""memtriage: measure and diagnose the memory of ML jobs on Linux, from Python.

The engine is Rust (the same as the ``memtriage`` command, which ``pip install``
also puts on your PATH). Reads release the GIL. Sizes are bytes; a value that could
not be read is ``None``, never 0, and the snapshot's ``unreadable`` says why.

- ``snapshot(pid=None)``: one process, the fields of ``memtriage inspect --json``.
- ``tree(pid=None)``: a process and its descendants, totals, copy-on-write finding.
- ``system()`` and ``doctor(profile="training")``: the machine's memory settings
  and the findings of auditing them.
- ``gpu()``: NVIDIA GPUs through NVML (memory, ECC, remaps, who holds memory), or
  why they cannot be read (``available`` false and a ``reason``).
- ``track()``: faults, peak RSS/PSS and wall time of a block (context manager or
  decorator).
- ``explain(text)``: findings for a log (OOM kills, shm bus errors, CUDA OOM, …).
- ``memtriage.cache``: page-cache residency of model files (per tensor for
  ``.safetensors``), ``warm`` them at the disk's speed (optionally locked in
  memory), ``evict`` them.
- ``memtriage.torch``: PyTorch's allocator view joined with the process view, and
  DataLoader workers' private vs shared memory (imported on its own; ``import
  memtriage`` never imports torch).

Errors: ``ProcessLookupError`` for a pid that does not exist (or exited),
``PermissionError`` when a process is not ours to read or a limit refuses the
request, ``FileNotFoundError`` for a missing file, ``ValueError`` for bad arguments,
``OSError`` for other I/O failures, ``RuntimeError`` for a bug in memtriage (please
report it).
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Union

from . import _native, cache
from ._track import track
from ._types import Finding, ProcessSnapshot, Record, Report, TreeSnapshot, iec

__all__ = [
    "snapshot",
    "snapshots",
    "tree",
    "system",
    "gpu",
    "doctor",
    "explain",
    "track",
    "cache",
    "Finding",
    "ProcessSnapshot",
    "TreeSnapshot",
    "Record",
    "Report",
    "iec",
    "FIELDS",
]

#: What ``fields=`` may name: each is a file or two read per process. ``status``: the
#: RSS split and peaks; ``rollup``: PSS/USS/swap/huge pages (``smaps_rollup``, walks
#: the page tables); ``oom``: OOM score; ``cgroup``: the memory cgroup, its limit and
#: headroom; ``cmdline``: the arguments and the executable; ``faults``: page faults.
#: Who the process is (pid, parent, name, state, user) is always read; the fields not
#: asked for are ``None``. Faults come free without ``status`` (both are in ``stat``).
FIELDS = tuple(_native.FIELDS)


def _fields(fields: Optional[Iterable[str]]) -> Optional[List[str]]:
    if fields is None:
        return None
    if isinstance(fields, str):
        return [fields]
    return list(fields)


def snapshot(pid: Optional[int] = None, *, fields: Optional[Iterable[str]] = None) -> ProcessSnapshot:
    """One process (this one by default), as ``memtriage inspect --json`` shows it.

    ``fields`` limits what is read to some of :data:`FIELDS` (faster: e.g.
    ``fields=("rollup",)`` for PSS/USS alone); the others are then ``None``.
    """
    return ProcessSnapshot(_native.snapshot(pid, _fields(fields)))


def snapshots(
    pids: Sequence[int], *, fields: Optional[Iterable[str]] = None
) -> List[Optional[ProcessSnapshot]]:
    """Many processes, read on all cores; ``None`` in place of each that exited."""
    return [
        None if d is None else ProcessSnapshot(d)
        for d in _native.snapshot_many(list(pids), _fields(fields))
    ]


def tree(pid: Optional[int] = None, *, fields: Optional[Iterable[str]] = None) -> TreeSnapshot:
    """A process (this one by default) and all its descendants, parents first, with
    ``totals`` (sum of RSS, total PSS, sum of USS, swap, GPU memory) and ``findings``
    such as ``fork.copy-on-write`` (forked workers that copied their parent's memory)
    and ``gpu.worker-context`` (a worker holding a CUDA context of its own)."""
    return TreeSnapshot(_native.tree(pid, _fields(fields)))


def system() -> Record:
    """The machine's memory settings and state (``memtriage.system/v1``): meminfo,
    swap, pressure, THP, hugepages, vm sysctls, /dev/shm, limits, cgroup, OOM kills."""
    return Record(_native.system())


def gpu() -> Record:
    """The machine's NVIDIA GPUs (``memtriage.gpu/v1``): per device memory, ECC counts,
    retired/remapped memory, persistence and MIG mode, and the processes holding GPU
    memory joined to this machine's pids. Without a GPU or driver, ``available`` is
    false and ``reason`` says why; nothing is raised."""
    return Record(_native.gpu())


def doctor(profile: str = "training") -> Report:
    """Audits this machine's memory settings for a ``training``, ``inference`` or
    ``shared`` machine; one finding per check, passed checks at severity ``ok``."""
    report = _native.doctor(profile)
    return Report([Finding(f) for f in report["findings"]], report)


def explain(text: Union[str, bytes], *, source: str = "log") -> Report:
    """Findings for a log (str or bytes), as ``memtriage explain`` gives them: one per
    failure class seen, most severe first. ``source`` names the log in the evidence."""
    report = _native.explain(text, source)
    return Report([Finding(f) for f in report["findings"]], report)


def __getattr__(name: str):  # PEP 562: `memtriage.torch` without importing torch eagerly
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'memtriage' has no attribute {name!r}")


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memtriage")
    except PackageNotFoundError:  # running from a source tree
        return "0.0.0+unknown"


__version__ = _package_version()


def __dir__() -> List[str]:
    # The API only: not the typing names, helpers and private modules this
    # module's code needs (they stay importable, just not advertised).
    return sorted([*__all__, "__version__"])
