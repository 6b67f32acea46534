"""A node process stopped as a user stops it: wait for a line on its stderr, then Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import time


def interrupt_after(proc: subprocess.Popen[str], marker: str,
                    timeout_s: float = 30.0) -> tuple[str, str]:
    """Read `proc`'s stderr up to the first line holding `marker`, send SIGINT, wait.

    Returns (that line, the rest of stderr). The process is killed if it outlives the wait;
    asserts when it ends before the marker.
    """
    try:
        deadline = time.monotonic() + timeout_s
        line = ''
        while marker not in line and time.monotonic() < deadline:
            line = proc.stderr.readline() if proc.stderr else ''
            assert line or proc.poll() is None, f'the process ended before {marker!r}'
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return line, stderr
