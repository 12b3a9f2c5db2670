"""``memtriage.track()``: faults, peak RSS/PSS and wall time of a block of code, and
the lines its memory grew under."""

from __future__ import annotations

import functools
import json
import sys
import types
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
    - ``lines``: the lines the block's memory grew under, weightiest first, as
      ``memtriage run`` measures them in every Python process of a job (page-fault
      samples of the main thread, each sample's page followed until it is given
      back): dicts with ``file``, ``line``, ``function``, ``text``, ``kind``
      (``leak``, ``peak``, ``copy_on_write``, ``held`` or ``None`` when too small to
      tell), ``anon_kept``, ``anon_grown``, ``file_kept``, ``shmem_kept``,
      ``copied_after_fork``, ``minor_faults``, ``major_faults`` and ``path`` (the
      calls that led there, outermost first). ``None`` with ``lines=False``, in a
      block nested in another that measures lines, or where the measurement could
      not start; ``lines_unavailable`` then says why.

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
        lines: bool = True,
    ) -> None:
        # Validated now (ValueError), not at the first entry.
        _native.Tracker(interval, pss)
        self.label = label
        self.interval = interval
        self.pss = pss
        self._report = report
        self._lines = lines
        self._running: List[_native.Tracker] = []
        self._samplers: List[Any] = []
        self.lines: Optional[List[dict]] = None
        self.lines_unavailable: Optional[str] = None
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
        self._samplers.append(_start_lines() if self._lines else (None, "lines=False"))
        return self

    def __exit__(self, *exc: Any) -> None:
        t = self._running.pop()
        sampler, why = self._samplers.pop()
        self._set(t.stop())
        self.lines, self.lines_unavailable = _stop_lines(sampler, why)
        if self._report:
            self.report()

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def to_dict(self) -> dict:
        """The figures as a dict, the lines included."""
        d = {name: getattr(self, name) for name in self._FIELDS}
        d["lines"] = self.lines
        return d

    def summary(self) -> str:
        """The one-line summary ``report()`` prints."""
        if self.wall_seconds is None:
            return "memtriage.track: not run yet"
        name = f" {self.label}" if self.label else ""
        grew = ""
        if self.peak_rss is not None and self.start_rss is not None:
            grew = f" (+{iec(self.peak_rss - self.start_rss)} over the start)"
        pss = "" if self.peak_pss is None else f", peak PSS {iec(self.peak_pss)}"
        top = ""
        told = [line for line in (self.lines or []) if line["kind"]]
        if told:
            t = told[0]
            where = f"{t['file'].rsplit('/', 1)[-1]}:{t['line']} in {t['function']}"
            top = f"; most under {where} ({t['kind']}, kept {iec(t['anon_kept'] + t['shmem_kept'])})"
        return (
            f"memtriage.track{name}: {self.wall_seconds:.3f} s, "
            f"peak RSS {iec(self.peak_rss)}{grew}{pss}, "
            f"{self.minor_faults:,} minor faults ({iec(self.minor_faults * 4096)} of 4 KiB pages), "
            f"{self.major_faults:,} major{top}"
        )

    def report(self, file: Optional[TextIO] = None) -> str:
        """Prints the summary to ``file`` (stderr by default) and returns it."""
        text = self.summary()
        print(text, file=file if file is not None else sys.stderr)
        return text

    def __repr__(self) -> str:
        return f"<memtriage.track {self.summary()}>"


_SAMPLER_MODULE: Any = None
_LINES_RUNNING = [0]


def _line_sampler() -> Any:
    """The line measurement `memtriage run` puts in a job's processes, loaded once."""
    global _SAMPLER_MODULE
    if _SAMPLER_MODULE is None:
        name = "<memtriage line sampler>"
        mod = types.ModuleType("memtriage._line_sampler")
        mod.__file__ = name
        exec(compile(_native.line_sampler_source(), name, "exec"), mod.__dict__)
        _SAMPLER_MODULE = mod
    return _SAMPLER_MODULE


def _start_lines() -> tuple:
    """A running sampler, or None and why not."""
    if _LINES_RUNNING[0]:
        return None, "a block around this one measures the lines"
    try:
        sampler = _line_sampler().measure_block()
    except Exception as e:  # never the tracked code's failure
        return None, f"{type(e).__name__}: {e}"
    _LINES_RUNNING[0] += 1
    return sampler, None


def _stop_lines(sampler: Any, why: Optional[str]) -> tuple:
    if sampler is None:
        return None, why
    _LINES_RUNNING[0] -= 1
    try:
        table = json.loads(_native.tell_lines(json.dumps(sampler.stop())))
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"
    return [_line(entry) for entry in table["lines"]], table.get("fault_signals_unavailable")


def _line(entry: dict) -> dict:
    def place(c: dict) -> str:
        return f"{c['file']}:{c['line']} in {c['function']}"

    return {
        "file": entry["at"]["file"],
        "line": entry["at"]["line"],
        "function": entry["at"]["function"],
        "text": entry["at"].get("text"),
        "kind": entry.get("kind"),
        "anon_kept": entry["anon"]["kept"],
        "anon_grown": entry["anon"]["grown"],
        "file_kept": entry["file"]["kept"],
        "shmem_kept": entry["shmem"]["kept"],
        "copied_after_fork": entry.get("copied_after_fork", 0),
        "minor_faults": entry["minor_faults"],
        "major_faults": entry["major_faults"],
        "path": [place(c) for c in entry.get("path", [])],
    }
