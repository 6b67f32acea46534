"""Running the auditor (ghost_verify) on a bag the runtime wrote, as a separate process.

The runtime does not depend on the auditor: ghost_run and ghost_replay verify what they
wrote by running ``python -m ghost_verify`` (the command an auditor runs), never by importing
it. When ghost_verify is not installed they say so, and how to verify the bag later.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

__all__ = ['VERIFIER', 'verifier_command', 'verifier_missing', 'verify_bag']

#: The auditor's package (run as ``python -m ghost_verify``).
VERIFIER = 'ghost_verify'


def verifier_missing(bag: str | os.PathLike[str]) -> str | None:
    """Why the bag cannot be verified here (ghost_verify is not installed), or None."""
    spec = importlib.util.find_spec(VERIFIER)
    # A folder of that name on sys.path without the package in it (a namespace package, no
    # origin) is not the verifier either.
    if spec is not None and spec.origin is not None:
        return None
    return (f'{bag}: not verified: {VERIFIER} (the auditor) is not installed in this Python '
            f'({sys.executable}); install it and run `{VERIFIER} {bag}`')


def verifier_command(bag: str | os.PathLike[str], *options: str) -> list[str]:
    """The command line that verifies `bag` (ghost_verify's verify_all) with `options`."""
    return [sys.executable, '-m', VERIFIER, str(bag), *options]


def verify_bag(bag: str | os.PathLike[str], *options: str) -> int:
    """Verify `bag` in a child process; its exit code, its report written to sys.stdout/stderr.

    The report is passed on through this process's sys.stdout and sys.stderr (not the
    inherited descriptors), so it comes in order with what the caller prints. Exit 3 (the
    verifier's code for a bag it cannot verify) with a one-line reason on stderr when
    ghost_verify is not installed.
    """
    missing = verifier_missing(bag)
    if missing is not None:
        print(f'error: {missing}', file=sys.stderr, flush=True)
        return 3
    done = subprocess.run(verifier_command(bag, *options), capture_output=True,  # noqa: S603
                          text=True, check=False)
    sys.stdout.write(done.stdout)
    sys.stdout.flush()
    sys.stderr.write(done.stderr)
    sys.stderr.flush()
    return done.returncode
