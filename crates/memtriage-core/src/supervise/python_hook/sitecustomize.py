# Written by `memtriage run` into a directory it puts first on the job's PYTHONPATH,
# with memtriage_lines.py beside it, which measures where each Python process's memory
# grows, line by line (opt out: `--no-python-lines`; see that file).
#
# The CUDA out-of-memory snapshot (opt out: `memtriage run --no-cuda-snapshot`) never
# imports torch itself and never changes what the job computes. When the job imports torch, it asks torch to
# run two calls at CUDA's first use (torch.cuda._lazy_call: nothing initialises CUDA
# early, so forked DataLoader workers stay CUDA-free):
#   - record the caching allocator's history: Python stacks only, a bounded number
#     of entries (MEMTRIAGE_CUDA_HISTORY_ENTRIES);
#   - on a CUDA out-of-memory, save the allocator's snapshot (and what was asked)
#     into MEMTRIAGE_CUDA_SNAPSHOT_DIR, for `memtriage run` to explain.
# Then the sitecustomize this one shadows, if any, runs as it would have.
import os
import sys


def _memtriage_install():
    out_dir = os.environ.get("MEMTRIAGE_CUDA_SNAPSHOT_DIR")
    if not out_dir:
        return
    try:
        entries = int(os.environ.get("MEMTRIAGE_CUDA_HISTORY_ENTRIES", "20000"))
    except ValueError:
        entries = 20000
    saved = [0]

    def observer(device, alloc, device_alloc, device_free):
        # At most three per process: the first failure is the one that matters, and a
        # job that catches OOMs and retries must not fill the disk.
        if saved[0] >= 3:
            return
        saved[0] += 1
        try:
            import json
            import pickle

            import torch

            stem = os.path.join(out_dir, "cuda-oom-%d-%d" % (os.getpid(), saved[0]))
            snap = torch.cuda.memory._snapshot()
            with open(stem + ".pickle.part", "wb") as f:
                pickle.dump(snap, f)
            os.replace(stem + ".pickle.part", stem + ".pickle")
            with open(stem + ".json", "w") as f:
                json.dump(
                    {
                        "pid": os.getpid(),
                        "device": int(device),
                        "requested": int(alloc),
                        "device_allocated": int(device_alloc),
                        "device_free": int(device_free),
                    },
                    f,
                )
        except Exception as e:  # never the job's failure
            _memtriage_note("could not save the CUDA snapshot: %r" % (e,))

    def on_cuda_init():
        try:
            import torch

            torch.cuda.memory._record_memory_history(
                enabled="all", stacks="python", max_entries=entries
            )
            torch._C._cuda_attach_out_of_memory_observer(observer)
        except Exception as e:
            _memtriage_note("CUDA history not recorded: %r" % (e,))

    def after_torch(torch):
        # Not torch.cuda.is_available(): it initialises the driver, and a process that
        # forks DataLoader workers afterwards could no longer use CUDA in them.
        try:
            torch.cuda._lazy_call(on_cuda_init)
        except Exception as e:
            _memtriage_note("CUDA hook not installed: %r" % (e,))

    if "torch" in sys.modules:
        after_torch(sys.modules["torch"])
        return

    import importlib.abc

    class TorchWatcher(importlib.abc.MetaPathFinder):
        """Finds nothing itself: wraps torch's own loader so the hook runs once
        torch has finished importing. It stays until then: a probe such as
        importlib.util.find_spec("torch") asks without importing."""

        searching = False

        def find_spec(self, name, path=None, target=None):
            if name != "torch" or self.searching:
                return None
            self.searching = True
            try:
                spec = None
                for finder in sys.meta_path:
                    find = getattr(finder, "find_spec", None)
                    if finder is self or find is None:
                        continue
                    spec = find(name, path, target)
                    if spec is not None:
                        break
            finally:
                self.searching = False
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            real_exec = spec.loader.exec_module
            watcher = self

            def exec_module(module):
                real_exec(module)
                if watcher in sys.meta_path:
                    sys.meta_path.remove(watcher)
                after_torch(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, TorchWatcher())


def _memtriage_note(text):
    if os.environ.get("MEMTRIAGE_DEBUG"):
        sys.stderr.write("memtriage hook: %s\n" % text)


def _memtriage_chain():
    """Runs the sitecustomize this file shadows, as site.py would have. What it does
    to sys.path stays (this directory is not needed once this module has run)."""
    here = os.path.dirname(os.path.abspath(__file__))
    mine = sys.modules.get("sitecustomize")
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    del sys.modules["sitecustomize"]
    import importlib

    try:
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            raise
    finally:
        sys.modules.setdefault("sitecustomize", mine)


def _memtriage_lines():
    if not os.environ.get("MEMTRIAGE_LINES_DIR"):
        return
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "_memtriage_lines", os.path.join(here, "memtriage_lines.py")
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["_memtriage_lines"] = module
    spec.loader.exec_module(module)
    module.install()


for _part in (_memtriage_lines, _memtriage_install):
    try:
        _part()
    except Exception as _e:  # never the job's failure
        _memtriage_note("hook failed: %r" % (_e,))
_memtriage_chain()
