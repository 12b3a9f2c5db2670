"""The ``memtriage`` command installed by pip: the same command as the Rust binary,
linked into the extension module, run in this process."""

from __future__ import annotations

import signal
import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> None:
    from . import _native

    args = sys.argv[1:] if argv is None else argv
    # Python turns SIGINT into KeyboardInterrupt, which only Python code would see;
    # the command expects the default action, as the binary has it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        code = _native.cli_main(["memtriage", *args])
        sys.stdout.flush()
    except BrokenPipeError:
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()
