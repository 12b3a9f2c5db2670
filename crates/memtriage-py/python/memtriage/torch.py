"""PyTorch views for memtriage: importing this module imports ``torch``.

- :func:`summary`: this process as the kernel sees it (RSS, PSS, USS), beside what
  PyTorch's CUDA caching allocator holds (allocated vs reserved), what the driver
  says is free (``mem_get_info``), and what NVML attributes to the process (with
  ``pynvml`` installed). On a machine without CUDA it says so and still reports the
  process.
- :func:`dataloader_workers`: each DataLoader worker's private memory (USS: pages it
  copied or allocated) against what it still shares with the main process.
- :func:`explain_oom`: a CUDA out-of-memory explained from the caching allocator's
  snapshot (live, a dict, or a pickle saved with ``_dump_snapshot``): what was asked,
  allocated, reserved but free, the largest free block per pool, and so
  fragmentation (``expandable_segments``) or real demand, with the top allocation
  sites when history was recorded.
"""

from __future__ import annotations

import os
import pickle
import re
from typing import Any, Dict, List, Optional, Union

import torch as _torch

from . import _native, snapshot, snapshots, tree
from ._types import Finding, Record, Report, iec

__all__ = ["summary", "dataloader_workers", "explain_oom", "Summary", "Workers"]

_PROCESS_FIELDS = ("status", "rollup")


def _process(pid: int) -> Dict[str, Any]:
    p = snapshot(pid, fields=_PROCESS_FIELDS)
    m = p.to_dict().get("memory") or {}
    return {
        "pid": pid,
        "rss": p.rss,
        "pss": p.pss,
        "uss": p.uss,
        "swap": p.swap,
        "rss_anon": m.get("rss_anon"),
        "rss_file": m.get("rss_file"),
        "rss_shmem": m.get("rss_shmem"),
        "vm_hwm": m.get("vm_hwm"),
    }


def _nvml() -> Any:
    """The initialised ``pynvml`` module, or the reason it cannot be used."""
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return "pynvml is not installed (pip install nvidia-ml-py)"
    try:
        pynvml.nvmlInit()
    except Exception as e:  # NVMLError has many subclasses; any means "no NVML"
        return f"NVML could not be initialised: {e}"
    return pynvml


def _nvml_device(nvml: Any, index: int, props: Any) -> Dict[str, Any]:
    """NVML's view of torch device ``index``, matched by UUID (CUDA_VISIBLE_DEVICES
    renumbers devices; NVML does not)."""
    try:
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            handle = nvml.nvmlDeviceGetHandleByUUID("GPU-" + str(uuid))
        else:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
        mem = nvml.nvmlDeviceGetMemoryInfo(handle)
        used_by_us = None
        reason = None
        procs = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        mine = [p for p in procs if p.pid == os.getpid()]
        if mine:
            used_by_us = sum(p.usedGpuMemory or 0 for p in mine)
        else:
            reason = (
                "this pid is not in NVML's process list (in a container NVML reports "
                "host pids; or the process has no CUDA context yet)"
            )
        return {
            "available": True,
            "reason": reason,
            "used_by_process": used_by_us,
            "device_used": mem.used,
            "device_total": mem.total,
        }
    except Exception as e:
        return {"available": False, "reason": f"NVML query failed: {e}"}


def _cuda_devices(device: Optional[int]) -> Dict[str, Any]:
    cuda = _torch.cuda
    if not cuda.is_available():
        why = "no CUDA device (a CPU-only build of torch)" if _torch.version.cuda is None else (
            "no CUDA device visible (torch is built with CUDA "
            f"{_torch.version.cuda}; check the driver and CUDA_VISIBLE_DEVICES)"
        )
        return {"available": False, "reason": why, "devices": [], "nvml": None}
    nvml = _nvml()
    nvml_reason = nvml if isinstance(nvml, str) else None
    indices = range(cuda.device_count()) if device is None else [device]
    devices = []
    for i in indices:
        props = cuda.get_device_properties(i)
        # memory_stats() never creates a CUDA context; mem_get_info() does, so it is
        # asked only of devices this process already initialised.
        stats = cuda.memory_stats(i)
        allocated = stats.get("allocated_bytes.all.current", 0)
        reserved = stats.get("reserved_bytes.all.current", 0)
        free = total = None
        if cuda.is_initialized() and reserved > 0:
            free, total = cuda.mem_get_info(i)
        d = {
            "index": i,
            "name": props.name,
            "total": props.total_memory,
            "allocated": allocated,
            "reserved": reserved,
            "reserved_unallocated": reserved - allocated,
            "peak_allocated": stats.get("allocated_bytes.all.peak", 0),
            "peak_reserved": stats.get("reserved_bytes.all.peak", 0),
            "alloc_retries": stats.get("num_alloc_retries", 0),
            "ooms": stats.get("num_ooms", 0),
            "driver_free": free,
            "driver_total": total,
            "nvml": (
                {"available": False, "reason": nvml_reason}
                if nvml_reason
                else _nvml_device(nvml, i, props)
            ),
        }
        devices.append(d)
    return {"available": True, "reason": None, "devices": devices, "nvml": nvml_reason}


class Summary(Record):
    """``process`` (rss, pss, uss, swap, rss_anon/file/shmem, vm_hwm), ``torch``
    (version), ``cuda`` (``available``, ``reason``, ``devices``: allocated, reserved,
    reserved_unallocated, peaks, driver_free/driver_total, ``nvml``)."""

    __slots__ = ()

    def __str__(self) -> str:
        p = self._data["process"]
        lines = [
            f"process {p['pid']}: RSS {iec(p['rss'])} (anon {iec(p['rss_anon'])}, "
            f"file {iec(p['rss_file'])}, shmem {iec(p['rss_shmem'])}), "
            f"PSS {iec(p['pss'])}, USS {iec(p['uss'])}, peak RSS {iec(p['vm_hwm'])}"
        ]
        c = self._data["cuda"]
        if not c["available"]:
            lines.append(f"cuda: unavailable: {c['reason']}")
        for d in c["devices"]:
            lines.append(
                f"cuda:{d['index']} {d['name']}: allocated {iec(d['allocated'])}, "
                f"reserved {iec(d['reserved'])} ({iec(d['reserved_unallocated'])} cached, "
                f"not allocated), peak allocated {iec(d['peak_allocated'])}"
            )
            if d["driver_free"] is not None:
                lines.append(
                    f"        driver: {iec(d['driver_free'])} free of {iec(d['driver_total'])}"
                )
            n = d["nvml"]
            if n.get("available"):
                used = n.get("used_by_process")
                lines.append(
                    f"        nvml: this process {iec(used) if used is not None else '-'}"
                    f"{'' if n.get('reason') is None else ' (' + n['reason'] + ')'}, "
                    f"device used {iec(n['device_used'])} of {iec(n['device_total'])}"
                )
            else:
                lines.append(f"        nvml: unavailable: {n.get('reason')}")
        return "\n".join(lines)


def summary(device: Optional[int] = None) -> Summary:
    """This process's memory joined with PyTorch's CUDA allocator and NVML.

    ``device`` limits the CUDA part to one device index. Never initialises CUDA on a
    device the process has not used. Works without CUDA (``cuda.available`` False
    and the reason)."""
    return Summary(
        {
            "process": _process(os.getpid()),
            "torch": {"version": _torch.__version__, "cuda_build": _torch.version.cuda},
            "cuda": _cuda_devices(device),
        }
    )


class Workers(Record):
    """``source`` (how the workers were found), ``workers`` (``index``, ``pid``,
    ``alive``, ``rss``, ``pss``, ``uss``, ``shared``, ``private_dirty``, ``swap``),
    ``totals`` (``uss``, ``pss``, ``rss``) and ``parent`` (the main process)."""

    __slots__ = ()

    def __str__(self) -> str:
        rows = [f"DataLoader workers ({self._data['source']}):"]
        for w in self._data["workers"]:
            if not w["alive"]:
                rows.append(f"  worker {w['index']} pid {w['pid']}: exited")
                continue
            rows.append(
                f"  worker {w['index']} pid {w['pid']}: private {iec(w['uss'])} "
                f"(dirty {iec(w['private_dirty'])}), shared {iec(w['shared'])}, "
                f"PSS {iec(w['pss'])}"
            )
        t = self._data["totals"]
        rows.append(
            f"  total: private {iec(t['uss'])}, PSS {iec(t['pss'])}, "
            f"sum of RSS {iec(t['rss'])}"
        )
        return "\n".join(rows)


def _worker_pids(obj: Any) -> "tuple[List[int], str]":
    it = obj
    # A DataLoader keeps its iterator only with persistent_workers=True.
    if not hasattr(it, "_workers") and hasattr(it, "_iterator"):
        it = it._iterator
    workers = getattr(it, "_workers", None) if it is not None else None
    if workers:
        return [w.pid for w in workers], "iterator._workers"
    # No iterator to ask: forked children of this process (they run its executable).
    me = tree(os.getpid(), fields=())
    root = me.nodes[0].process
    pids = [
        n.process.pid
        for n in me.nodes
        if n.depth == 1 and n.process.comm != "" and _same_exe(n.process, root)
    ]
    return pids, f"forked children of pid {os.getpid()}"


def _same_exe(child: Any, parent: Any) -> bool:
    # fields=() reads no `status`, so exe is unknown: compare the command names, as
    # the engine's copy-on-write rule does. PyTorch renames its workers.
    return child.comm == parent.comm or child.comm.startswith("pt_data_worker")


def dataloader_workers(loader_or_iterator: Any) -> Workers:
    """Private (USS) vs shared memory of each worker of a running DataLoader.

    Pass the iterator (``it = iter(loader)``) while it runs, or a DataLoader with
    ``persistent_workers=True``; otherwise the forked children of this process are
    taken as the workers. A worker's USS growing while it iterates a dataset of
    Python objects is copy-on-write: reference counts dirty the pages it shares with
    the main process (``memtriage.tree()`` raises ``fork.copy-on-write`` for it).
    """
    pids, source = _worker_pids(loader_or_iterator)
    snaps = snapshots(pids, fields=("rollup",)) if pids else []
    rows = []
    totals = {"uss": 0, "pss": 0, "rss": 0}
    for i, (pid, s) in enumerate(zip(pids, snaps)):
        if s is None:
            rows.append({"index": i, "pid": pid, "alive": False, "rss": None, "pss": None,
                         "uss": None, "shared": None, "private_dirty": None, "swap": None})
            continue
        r = s.to_dict().get("rollup") or {}
        row = {
            "index": i,
            "pid": pid,
            "alive": True,
            "rss": s.rss,
            "pss": s.pss,
            "uss": s.uss,
            "shared": s.shared,
            "private_dirty": r.get("private_dirty"),
            "swap": s.swap,
        }
        for k in totals:
            totals[k] += row[k] or 0
        rows.append(row)
    return Workers(
        {
            "source": source,
            "workers": rows,
            "totals": totals,
            "parent": _process(os.getpid()),
        }
    )


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_SIZE = r"([0-9.]+) (B|KiB|MiB|GiB|TiB)"


def _size(number: str, unit: str) -> int:
    return int(float(number) * _UNITS[unit])


def _oom_of(message: str) -> Dict[str, int]:
    """What PyTorch's out-of-memory message says: the request, the GPU, its free bytes."""
    out: Dict[str, int] = {}
    asked = re.search(r"Tried to allocate " + _SIZE, message)
    if asked:
        out["requested"] = _size(*asked.groups())
    gpu = re.search(r"GPU (\d+) has a total capacity of [0-9.]+ \w+ of which " + _SIZE + " is free", message)
    if gpu:
        out["device"] = int(gpu.group(1))
        out["device_free"] = _size(gpu.group(2), gpu.group(3))
    return out


def explain_oom(
    snapshot: Union[None, str, "os.PathLike[str]", bytes, Dict[str, Any]] = None,
    *,
    exc: Optional[BaseException] = None,
    requested: Optional[int] = None,
    device: Optional[int] = None,
) -> Report:
    """Explains a CUDA out-of-memory from the allocator's snapshot: one finding per
    GPU, ``cuda-snapshot.fragmentation`` (the memory was free but in pieces:
    ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``) or
    ``cuda-snapshot.real-demand`` (tensors held it: batch size, activation
    checkpointing, precision), with the figures and top allocation sites as evidence.

    ``snapshot``: ``None`` takes ``torch.cuda.memory._snapshot()`` now (call it in the
    ``except torch.OutOfMemoryError`` handler); a path reads a pickle saved with
    ``torch.cuda.memory._dump_snapshot``; bytes are such a pickle; a dict is a snapshot.
    ``exc``: the OutOfMemoryError, whose message gives the request, the GPU and what it
    had free when the snapshot's history does not; ``requested``/``device`` give them
    directly. Raises ValueError for what is not a snapshot, FileNotFoundError for a
    missing file. The report's ``to_dict()`` is ``memtriage explain-snapshot --json``.
    """
    source = "torch.cuda.memory._snapshot()"
    if snapshot is None:
        data = pickle.dumps(_torch.cuda.memory._snapshot())
    elif isinstance(snapshot, (str, os.PathLike)):
        source = os.fspath(snapshot)
        with open(source, "rb") as f:
            data = f.read()
    elif isinstance(snapshot, (bytes, bytearray)):
        source, data = "snapshot bytes", bytes(snapshot)
    elif isinstance(snapshot, dict):
        source, data = "snapshot dict", pickle.dumps(snapshot)
    else:
        raise TypeError(
            f"explain_oom() takes a path, pickle bytes, a snapshot dict or None, not {type(snapshot).__name__}"
        )
    said = _oom_of(str(exc)) if exc is not None else {}
    if requested is not None:
        said["requested"] = int(requested)
    if device is not None:
        said["device"] = int(device)
    report = _native.explain_snapshot(
        data,
        source,
        said.get("requested"),
        said.get("device", 0),
        said.get("device_free"),
    )
    return Report([Finding(f) for f in report["findings"]], report)


def __dir__() -> List[str]:
    # The API only, not the os and typing names the code above uses.
    return sorted(__all__)
