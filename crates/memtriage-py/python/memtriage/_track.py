"""``memtriage.track()``: faults, peak RSS/PSS and wall time of a block of code."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, List, Optional, TextIO, TypeVar

from . import _native
from ._types import iec

__all__ = ["track"]

F = TypeVar("F", bound=Callable[..., Any])


class track:
    """Measures a block: ``with memtriage.track() as t: ...`` or ``@memtriage.track()``.

    After the block (or each call of a decorated function) these attributes hold the
    figures; they are ``None`` before:

    - ``minor_faults``, ``major_faults``: page faults of the whole process during the
      block (``getrusage``; all threads). A minor fault maps a page already in memory
      or a fresh zero page (4 KiB each); a major one waited for I/O.
    - ``peak_rss``: the highest RSS seen, in bytes. Sampled from ``/proc/self/statm``
      every ``interval`` seconds by a thread in Rust (no GIL), and exact when the
      block set a new high for the process (the kernel's ``VmHWM``).
    - ``peak_pss``: the highest PSS read from ``/proc/self/smaps_rollup``. That read
      walks the page tables under the mmap lock, so it is taken at most every 200 ms
      and within 1% of the wall time; it is a lower bound on the true peak. ``None``
      with ``pss=False``.
    - ``wall_seconds``, ``start_rss``, ``end_rss``, ``rss_samples``, ``pss_samples``.

    ``report()`` prints a one-line summary (to stderr, so stdout stays yours).
    With ``report=True`` it is printed at the end of every block.

    Nested and recursive use is fine: each entry gets its own sampler, and the
    attributes hold the figures of the block that ended last.
    """

    minor_faults: Optional[int]
    major_faults: Optional[int]
    peak_rss: Optional[int]
    peak_pss: Optional[int]
    wall_seconds: Optional[float]
    start_rss: Optional[int]
    end_rss: Optional[int]
    rss_samples: Optional[int]
    pss_samples: Optional[int]
    peak_rss_exact: Optional[bool]

    def __init__(
        self,
        label: Optional[str] = None,
        *,
        interval: float = 0.001,
        pss: bool = True,
        report: bool = False,
    ) -> None:
        # Validated now (ValueError), not at the first entry.
        _native.Tracker(interval, pss)
        self.label = label
        self.interval = interval
        self.pss = pss
        self._report = report
        self._running: List[_native.Tracker] = []
        self._set({})

    _FIELDS = (
        "minor_faults",
        "major_faults",
        "peak_rss",
        "peak_pss",
        "wall_seconds",
        "start_rss",
        "end_rss",
        "rss_samples",
        "pss_samples",
        "peak_rss_exact",
    )

    def _set(self, figures: dict) -> None:
        for name in self._FIELDS:
            setattr(self, name, figures.get(name))

    def __enter__(self) -> "track":
        t = _native.Tracker(self.interval, self.pss)
        t.start()
        self._running.append(t)
        return self

    def __exit__(self, *exc: Any) -> None:
        t = self._running.pop()
        self._set(t.stop())
        if self._report:
            self.report()

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def to_dict(self) -> dict:
        """The figures as a dict."""
        return {name: getattr(self, name) for name in self._FIELDS}

    def summary(self) -> str:
        """The one-line summary ``report()`` prints."""
        if self.wall_seconds is None:
            return "memtriage.track: not run yet"
        name = f" {self.label}" if self.label else ""
        grew = ""
        if self.peak_rss is not None and self.start_rss is not None:
            grew = f" (+{iec(self.peak_rss - self.start_rss)} over the start)"
        pss = "" if self.peak_pss is None else f", peak PSS {iec(self.peak_pss)}"
        return (
            f"memtriage.track{name}: {self.wall_seconds:.3f} s, "
            f"peak RSS {iec(self.peak_rss)}{grew}{pss}, "
            f"{self.minor_faults:,} minor faults ({iec(self.minor_faults * 4096)} of 4 KiB pages), "
            f"{self.major_faults:,} major"
        )

    def report(self, file: Optional[TextIO] = None) -> str:
        """Prints the summary to ``file`` (stderr by default) and returns it."""
        text = self.summary()
        print(text, file=file if file is not None else sys.stderr)
        return text

    def __repr__(self) -> str:
        return f"<memtriage.track {self.summary()}>"
