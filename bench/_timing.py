"""Timing one command with the least overhead, shared by the benchmarks."""

import os
import time


def run_timed(cmd, stdout_path=os.devnull, ok_codes=(0,)):
    """Wall seconds of one command, started with posix_spawn (no shell, no fork of
    the interpreter): stdin from /dev/null, stdout to `stdout_path`, stderr kept for
    the error raised when the exit code is not in `ok_codes`."""
    out_fd = os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    in_fd = os.open(os.devnull, os.O_RDONLY)
    err_r, err_w = os.pipe()
    start = time.perf_counter()
    try:
        pid = os.posix_spawnp(
            cmd[0],
            cmd,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, in_fd, 0),
                (os.POSIX_SPAWN_DUP2, out_fd, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ],
        )
    finally:
        os.close(out_fd)
        os.close(in_fd)
        os.close(err_w)
    with os.fdopen(err_r, "rb") as err_pipe:
        err = err_pipe.read().decode(errors="replace")
    _, status, _ = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok_codes:
        raise RuntimeError(f"{' '.join(cmd)} exited {code}: {err.strip()}")
    return elapsed
