"""Light read-only views over the engine's data: attribute access, ``to_dict()``.

The engine hands over plain dicts shaped like the CLI's ``--json``. Wrapping is lazy:
a nested dict becomes a view only when an attribute reaches it, so a snapshot costs
one small object until you look inside it.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional

__all__ = ["Record", "Report", "Finding", "ProcessSnapshot", "TreeSnapshot", "iec"]

PROCESS_SCHEMA = "memtriage.process/v1"
TREE_SCHEMA = "memtriage.tree/v1"

_FINDING_KEYS = frozenset(("id", "severity", "title", "evidence", "why", "fix"))


def _plain(value: Any) -> Any:
    """A deep copy of JSON-shaped data (much cheaper than copy.deepcopy)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        if _FINDING_KEYS.issubset(value):
            return Finding(value)
        if "pid" in value and "faults" in value and "rollup" in value:
            return ProcessSnapshot(value)
        return Record(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Record:
    """A read-only view of one JSON object: ``r.field``, ``r["field"]``, ``r.to_dict()``.

    Missing values are ``None`` ("could not be read"), never 0; a ``None`` attribute
    still exists, while a name the data does not have raises AttributeError.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._data[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r} "
                f"(fields: {', '.join(self._data)})"
            ) from None
        return _wrap(value)

    def __getitem__(self, name: str) -> Any:
        return _wrap(self._data[name])

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __dir__(self) -> List[str]:
        return sorted(set(object.__dir__(self)) | set(self._data))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self._data == other._data
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def keys(self) -> List[str]:
        return list(self._data)

    def to_dict(self) -> Dict[str, Any]:
        """The data as plain dicts and lists (a copy), ready for ``json.dumps``."""
        return _plain(self._data)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={_short(v)}" for k, v in self._data.items())
        return f"{type(self).__name__}({inner})"

    # Pickling goes through the data, not __getattr__.
    def __getstate__(self) -> Dict[str, Any]:
        return self._data

    def __setstate__(self, state: Dict[str, Any]) -> None:
        object.__setattr__(self, "_data", state)


def _short(v: Any) -> str:
    if isinstance(v, dict):
        return "{…}"
    if isinstance(v, list):
        return f"[{len(v)} items]" if v else "[]"
    return repr(v)


class Report(list):
    """A command's results as a list (its findings, or a record per file) that also
    carries the report they came from: ``schema`` and ``to_dict()``, the whole report
    as the CLI's ``--json`` prints it."""

    def __init__(self, items: List[Any], report: Dict[str, Any]) -> None:
        super().__init__(items)
        self._report = report

    @property
    def schema(self) -> str:
        return self._report["schema"]

    def to_dict(self) -> Dict[str, Any]:
        return _plain(self._report)

    @property
    def skipped(self) -> List["Record"]:
        """What a directory walk found but could not work on: ``path`` and ``reason``
        (deleted meanwhile, or refused). Empty where nothing was skipped."""
        return [Record(s) for s in self._report.get("skipped", [])]


class Finding(Record):
    """A diagnosis: ``id``, ``severity`` (ok|info|warn|error), ``title``,
    ``evidence`` (each with ``label``, ``value``, ``source``, and, where the value is
    one measurement, ``quantity`` and ``unit``: bytes, count, ratio or seconds),
    ``why`` and ``fix``. A diagnosis of a failure (``explain``, ``run``) also has
    ``certainty`` (confirmed|likely|possible), ``cause`` (capacity, configuration,
    user_code, driver, hardware) and ``confirm``, the check that would confirm it.

    ``str(finding)`` renders it as the CLI does.
    """

    __slots__ = ()

    def __str__(self) -> str:
        d = self._data
        lines = [f"{d['severity']:<5} {d['title']}"]
        for e in d.get("evidence") or []:
            src = f"  ({e['source']})" if e.get("source") else ""
            lines.append(f"      {e['label']}: {e['value']}{src}")
        if d.get("why"):
            lines.append(f"      why: {d['why']}")
        fix = (d.get("fix") or "").splitlines()
        for i, line in enumerate(fix):
            lines.append(("      fix: " if i == 0 else "           ") + line)
        return "\n".join(lines)


class ProcessSnapshot(Record):
    """One process at one moment (``memtriage.process/v1``, as in ``inspect --json``).

    Sizes are bytes. ``rss``, ``pss``, ``uss`` and ``swap`` are shortcuts over
    ``rollup`` (``smaps_rollup``) and ``memory`` (``status``); ``None`` when unreadable.
    ``schema`` names the shape (the CLI's ``process_schema``).
    """

    __slots__ = ()

    @property
    def schema(self) -> str:
        return PROCESS_SCHEMA

    @property
    def rss(self) -> Optional[int]:
        r, m = self._data.get("rollup"), self._data.get("memory")
        if r is not None:
            return r["rss"]
        return m.get("rss") if m is not None else None

    @property
    def pss(self) -> Optional[int]:
        r = self._data.get("rollup")
        return r["pss"] if r is not None else None

    @property
    def uss(self) -> Optional[int]:
        """Memory only this process maps: ``private_clean + private_dirty``."""
        r = self._data.get("rollup")
        return r["private_clean"] + r["private_dirty"] if r is not None else None

    @property
    def shared(self) -> Optional[int]:
        """Resident memory it shares with others: ``shared_clean + shared_dirty``."""
        r = self._data.get("rollup")
        return r["shared_clean"] + r["shared_dirty"] if r is not None else None

    @property
    def swap(self) -> Optional[int]:
        r, m = self._data.get("rollup"), self._data.get("memory")
        if r is not None:
            return r["swap"]
        return m.get("swap") if m is not None else None

    def __str__(self) -> str:
        return (
            f"pid {self._data['pid']} ({self._data['comm']}): RSS {iec(self.rss)}, "
            f"PSS {iec(self.pss)}, USS {iec(self.uss)}, swap {iec(self.swap)}"
        )


class TreeSnapshot(Record):
    """A process and its descendants (``memtriage.tree/v1``): ``root``, ``nodes``
    (``depth`` and ``process``), ``totals`` and ``findings``."""

    __slots__ = ()

    @property
    def schema(self) -> str:
        return TREE_SCHEMA

    @property
    def processes(self) -> List[ProcessSnapshot]:
        """The processes, parents before children."""
        return [ProcessSnapshot(n["process"]) for n in self._data["nodes"]]

    def __str__(self) -> str:
        t = self._data["totals"]
        return (
            f"tree of pid {self._data['root']}: {t['processes']} processes, "
            f"sum of RSS {iec(t['rss_sum'])}, total PSS {iec(t['pss'])}, "
            f"sum of USS {iec(t['uss_sum'])}, swap {iec(t['swap'])}"
        )


def iec(n: Optional[float]) -> str:
    """Bytes in IEC units, as the CLI shows them: ``3.2 GiB``; ``-`` for unreadable."""
    if n is None:
        return "-"
    n = float(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n /= 1024
        i += 1
    if i == 0:
        return f"{sign}{int(n)} B"
    return f"{sign}{n:.1f} {units[i]}" if n < 100 else f"{sign}{n:.0f} {units[i]}"
