"""A run's bag verified and reviewed (ghost_review) in one separate process.

Like the verifier (``ghost.verifier``), the review is its own package: ghost_run and
ghost_replay run ``python -m ghost_review`` rather than importing it, and fall back to the
verifier alone, saying so, when it is not installed. The review verifies the bag with the
auditor's code anyway, so it writes the run's verification report too: the bag is verified
once, and the report costs only the review.
"""

from __future__ import annotations

from dataclasses import dataclass
import importlib.util
import json
import os
from pathlib import Path
import subprocess
import sys

__all__ = ['REVIEWER', 'ReviewedRun', 'review_and_verify']

#: The review's package (run as ``python -m ghost_review``).
REVIEWER = 'ghost_review'


@dataclass(frozen=True)
class ReviewedRun:
    """A run's bag verified and reviewed in one ghost_review process."""

    #: verify_all's exit code for the bag (3 when it could not be read).
    code: int
    #: The lines verify_all prints for it (its last one VERIFIED or NOT VERIFIED).
    lines: tuple[str, ...]
    #: The report, or None when the review wrote none (said on stderr).
    report: Path | None


def review_and_verify(bag: str | os.PathLike[str], output: Path, reports: Path,
                      verify_options: list[str],
                      params_files: list[Path] | None = None) -> ReviewedRun | None:
    """Verify and review `bag` in one ghost_review process (None: ghost_review is missing).

    The review verifies the bag anyway; this has it write verify_all's JSON report to
    `reports` (with `verify_options`: --public-key, --require-coverage) so that the run is
    verified once, in the auditor's code, and the report costs only the review itself.
    """
    spec = importlib.util.find_spec(REVIEWER)
    if spec is None or spec.origin is None:
        return None
    command = [sys.executable, '-m', REVIEWER, str(bag), '--output', str(output), '--json',
               str(reports), *verify_options]
    for path in params_files or ():
        command += ['--params-file', str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    sys.stderr.write(done.stderr)
    sys.stderr.flush()
    try:
        document = json.loads(reports.read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return ReviewedRun(3, (), None)  # the bag could not be read: said on stderr
    name = Path(bag).stem if Path(bag).is_file() else Path(bag).name
    report = output / name / 'report.html'
    return ReviewedRun(int(document['exit_code']), tuple(document['lines']),
                       report if done.returncode in (0, 1) and report.is_file() else None)
