"""The page cache and model files, with the semantics of ``memtriage cache/warm/evict``.

- ``residency(path)``: how much of each file is in the page cache, a residency bar
  along it, per-tensor residency for ``.safetensors`` files, and the processes that
  map it. Directories are walked.
- ``warm(path)``: read files into the page cache at the disk's speed, leaving large
  folios (a later mmap takes few faults). ``warm(path, lock=True)`` then maps and
  mlocks them and returns a ``Lock`` that holds them until ``release()`` (or the end
  of a ``with`` block); it refuses with ``PermissionError`` when locking would exceed
  ``max``, RLIMIT_MEMLOCK, or leave the machine under 10% of its memory free.
- ``evict(path)``: drop the files' clean, unmapped pages; says what stayed and which
  processes map it.

The records are the ``files`` of ``memtriage cache/warm/evict --json`` (schemas
``memtriage.cache/v1``, ``memtriage.warm/v1``, ``memtriage.evict/v1``).
Nothing here changes the machine unless called. Every call releases the GIL.
Errors: ``FileNotFoundError``/``OSError`` for unreadable paths, ``ValueError`` for
special files or bad arguments, ``PermissionError`` for a refused lock or a file whose
residency the kernel hides from you. Inside a directory, a file deleted or refused
while it is walked is not an error: it is listed in the report's ``skipped`` (``path``,
``reason``) and the other files are measured.
"""

from __future__ import annotations

import os
import warnings
from typing import List, Optional, Sequence, Union

from . import _native
from ._types import Record, Report

__all__ = ["residency", "warm", "evict", "Lock", "ReclaimWarning"]

PathLike = Union[str, "os.PathLike[str]"]


def _paths(path: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    return [os.fspath(p) for p in path]


def residency(path: Union[PathLike, Sequence[PathLike]], *, mappers: bool = True) -> Report:
    """One record per file: ``size``, ``cached``, ``dirty``, ``segments`` (cached share
    of up to 24 consecutive parts, split on page boundaries), ``tensors``
    (``.safetensors``: name, dtype, shape, bytes, cached) and ``mapped_by`` (pid, comm,
    mapped, resident; skipped with ``mappers=False``, which reads every process's maps).
    A ``.safetensors`` file whose header is broken has ``tensors`` None and
    ``tensors_error`` saying why; its residency is still measured."""
    report = _native.cache_residency(_paths(path), mappers)
    return Report([Record(r) for r in report["files"]], report)


class Lock:
    """Files held in memory (mlock) until ``release()``; a context manager."""

    def __init__(self, native: "_native.CacheLock", warmed: List[Record]) -> None:
        self._native = native
        self.warmed = warmed

    @property
    def bytes(self) -> int:
        """Bytes locked."""
        return self._native.bytes

    @property
    def held(self) -> bool:
        return self._native.held

    def release(self) -> None:
        """Unlock and unmap; later calls do nothing."""
        self._native.release()

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<memtriage.cache.Lock {self.bytes} bytes, {'held' if self.held else 'released'}>"


def warm(
    path: Union[PathLike, Sequence[PathLike]],
    *,
    lock: bool = False,
    threads: int = 4,
    offset: int = 0,
    length: Optional[int] = None,
    max: Optional[int] = None,
    hugepages: bool = False,
) -> Union[Report, Lock]:
    """Read files into the page cache. Records per file: ``bytes`` (the range),
    ``read``, ``already_cached`` (skipped), ``seconds``, ``method`` (``"populate"``:
    MADV_POPULATE_READ with huge-page advice, or ``"pread"`` where the kernel cannot),
    ``cached_after``, ``size``; for a file whose residency the kernel hides from you,
    ``cached_after`` is None and ``unknown`` says why (every byte was read).

    With ``lock=True`` the files are then mapped and mlocked, after the same checks as
    the CLI (``max`` in bytes, RLIMIT_MEMLOCK, MemAvailable), and a ``Lock`` is
    returned: the memory stays pinned until it is released."""
    report, held = _native.cache_warm(_paths(path), threads, offset, length, lock, max, hugepages)
    warmed = Report([Record(r) for r in report["files"]], report)
    if held is None:
        _warn_if_reclaimed()
        return warmed
    return Lock(held, warmed)


class ReclaimWarning(RuntimeWarning):
    """Warmed files will be paged out again once idle: the machine runs proactive
    reclaim (a DAMON ``pageout`` scheme). ``warm(..., lock=True)`` pins them."""


def _warn_if_reclaimed() -> None:
    reclaim = _native.cache_proactive_reclaim()
    if not reclaim:
        return
    idle = [r["min_idle_seconds"] for r in reclaim if r["min_idle_seconds"] is not None]
    after = f"{min(idle):.0f} s" if idle else "a while"
    warnings.warn(
        f"this machine pages out memory idle for {after} (DAMON pageout, "
        f"{reclaim[0]['source']}): the warmed files leave the page cache again once "
        "unused that long; warm(..., lock=True) pins them",
        ReclaimWarning,
        stacklevel=3,
    )


def evict(path: Union[PathLike, Sequence[PathLike]], sync: bool = False) -> Report:
    """Drop files' pages from the page cache. Records: ``size``, ``cached_before``,
    ``cached_after``, ``dirty_after`` and ``writeback_after`` (pages not yet on disk
    stay; ``sync=True`` writes them back first so they go too, ``synced``) and
    ``mapped_by`` (pid, comm, mapped, resident: pages a process maps stay too). For a
    file whose residency the kernel hides from you, the cached figures are None and
    ``unknown`` says why (the pages are still dropped)."""
    report = _native.cache_evict(_paths(path), sync)
    return Report([Record(r) for r in report["files"]], report)


def __dir__() -> List[str]:
    # The API only, not the os, warnings and typing names the code above uses.
    return sorted(__all__)
