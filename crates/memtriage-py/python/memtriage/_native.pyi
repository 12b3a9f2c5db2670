"""Type stubs of the Rust extension module ``memtriage._native``.

Use the ``memtriage`` package instead: it wraps these plain-dict results in classes
with attribute access. Every function releases the GIL while it reads."""

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

PROCESS_SCHEMA: str
TREE_SCHEMA: str
SYSTEM_SCHEMA: str
INSPECT_SCHEMA: str
DOCTOR_SCHEMA: str
EXPLAIN_SCHEMA: str
CACHE_SCHEMA: str
WARM_SCHEMA: str
EVICT_SCHEMA: str
FIELDS: List[str]

def snapshot(pid: Optional[int] = None, fields: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """One process as ``inspect --json`` shows it. Raises ProcessLookupError,
    PermissionError, ValueError (bad pid or field name), OSError, RuntimeError (a
    bug in memtriage)."""

def snapshot_many(
    pids: Sequence[int], fields: Optional[Sequence[str]] = None
) -> List[Optional[Dict[str, Any]]]:
    """Many processes, read on all cores; ``None`` for each that exited."""

def tree(pid: Optional[int] = None, fields: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``{"root", "nodes": [{"depth", "process"}], "totals", "findings"}``."""

def system() -> Dict[str, Any]:
    """The machine's memory settings (``memtriage.system/v1``)."""

def explain_snapshot(
    data: bytes,
    source: str,
    requested: Optional[int] = None,
    device: int = 0,
    device_free: Optional[int] = None,
) -> Dict[str, Any]:
    """A pickled CUDA memory snapshot explained (``memtriage.cuda-snapshot/v1``);
    ValueError when the bytes are not one."""

def gpu() -> Dict[str, Any]:
    """NVIDIA GPUs and who holds their memory (``memtriage.gpu/v1``); ``available``
    false with a ``reason`` where NVML cannot be used."""

def doctor(profile: str = "training") -> Dict[str, Any]:
    """``{"schema", "profile", "system", "findings"}`` (``memtriage.doctor/v1``);
    ValueError for an unknown profile."""

def explain(text: Union[str, bytes], source: str = "log") -> Dict[str, Any]:
    """``{"schema", "source", "lines", "bytes", "matches", "findings"}``
    (``memtriage.explain/v1``); TypeError unless ``text`` is str or bytes."""

def cli_main(argv: Sequence[str]) -> int:
    """Runs the ``memtriage`` command in this process; returns its exit code."""

class Tracker:
    """One measurement of one block. ``memtriage.track`` wraps it."""

    running: bool

    def __init__(self, interval: float = 0.001, pss: bool = True) -> None: ...
    def start(self) -> None:
        """Starts the sampling thread; RuntimeError if already running."""
    def stop(self) -> Dict[str, Any]:
        """Stops it; ``{"wall_seconds", "minor_faults", "major_faults", "start_rss",
        "end_rss", "peak_rss", "peak_rss_exact", "peak_pss", "rss_samples",
        "pss_samples"}``. RuntimeError if not started."""

def cache_residency(paths: List[str], mappers: bool = True) -> Dict[str, Any]:
    """``{"schema": "memtriage.cache/v1", "files"}``."""
def cache_warm(
    paths: List[str],
    threads: int = 4,
    offset: int = 0,
    length: Optional[int] = None,
    lock: bool = False,
    max: Optional[int] = None,
    hugepages: bool = False,
) -> Tuple[Dict[str, Any], Optional[CacheLock]]:
    """``({"schema": "memtriage.warm/v1", "files", "bytes_read", "seconds", "locked",
    "proactive_reclaim"}, the lock when ``lock``)``; a lock that would not be allowed
    raises PermissionError before anything is read."""
def cache_evict(paths: List[str], sync: bool = False) -> Dict[str, Any]:
    """``{"schema": "memtriage.evict/v1", "files"}``."""
def cache_proactive_reclaim() -> Optional[List[Dict[str, Any]]]: ...

class CacheLock:
    @property
    def bytes(self) -> int: ...
    @property
    def held(self) -> bool: ...
    def release(self) -> None: ...
