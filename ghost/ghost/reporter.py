"""Writing the flight review (ghost_review) of a bag the runtime wrote, as a separate process.

Like the verifier (``ghost.verifier``), the review is its own package: ghost_run and
ghost_replay run ``python -m ghost_review`` rather than importing it, and say so when it is not
installed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
import subprocess
import sys

__all__ = ['REVIEWER', 'write_report']

#: The review's package (run as ``python -m ghost_review``).
REVIEWER = 'ghost_review'


def write_report(bag: str | os.PathLike[str], output: Path,
                 params_files: list[Path] | None = None) -> Path | None:
    """Review `bag` into the folder `output`; the report's path, or None (said on stderr).

    The review's own lines go to stderr (what it made is the one line the caller prints).
    """
    spec = importlib.util.find_spec(REVIEWER)
    if spec is None or spec.origin is None:
        print(f'note: no report: {REVIEWER} is not installed in this Python '
              f'({sys.executable}); install it and run `{REVIEWER} {bag} --output {output}`',
              file=sys.stderr, flush=True)
        return None
    command = [sys.executable, '-m', REVIEWER, str(bag), '--output', str(output)]
    for path in params_files or ():
        command += ['--params-file', str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    sys.stderr.write(done.stderr)
    sys.stderr.flush()
    name = Path(bag).stem if Path(bag).is_file() else Path(bag).name
    report = output / name / 'report.html'
    if done.returncode != 0 or not report.is_file():
        print(f'note: no report: {REVIEWER} exited {done.returncode}', file=sys.stderr,
              flush=True)
        return None
    return report
