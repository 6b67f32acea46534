"""ghost_review: see what Ghost decided, when and why, for one flight or a fleet.

    ghost_review INPUT... --output DIR [--params-file FILE ...] [--jobs N | --scheduler ADDR]

INPUT: a PX4 ULog (imported, then replayed), an input bag (replayed), a Ghost bag (read as it
is), or a folder of any of these. Writes DIR/index.html and, per flight, DIR/<flight>/
report.html, decisions.csv and the bags it made (input/, bag/). DIR is written whole or not
at all (built beside it, then renamed). Flights are reviewed one at a time, N at a time in
local processes (--jobs N), or on an existing Dask cluster (--scheduler ADDR, as verify_all
--scheduler): the files are the same either way. A progress bar on a terminal (stderr), a
line per flight otherwise.

Exit codes: 0 every input reviewed; 2 usage error (bad option, DIR exists); 3 an input cannot
be read (the others are still reviewed, and the index names it); 4 internal fault.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import os
from pathlib import Path
import shutil
import sys
import tempfile

from ghost_core.errors import GhostError
from ghost_core.pipeline import PipelineConfig
from ghost_verify.fleet import SchedulerError

from .errors import ReviewInputError, ReviewUsageError
from .fleet import FlightOutcome, review_fleet
from .index import index_html
from .review import find_inputs, FlightReview

__all__ = ['EXIT_FAULT', 'EXIT_INPUT', 'EXIT_OK', 'EXIT_USAGE', 'main', 'review']

PROG = 'ghost_review'
EXIT_OK, EXIT_USAGE, EXIT_INPUT, EXIT_FAULT = 0, 2, 3, 4


class _NothingReviewed(ReviewInputError):
    """No input could be reviewed (each one's error was printed as it came)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split('\n\n')[0],
        epilog='exit codes: 0 done; 2 usage error; 3 an input cannot be read; 4 internal fault')
    parser.add_argument('inputs', nargs='+', type=Path, metavar='INPUT',
                        help='PX4 ULog, input bag, Ghost bag, or a folder of them')
    parser.add_argument('--output', '-o', type=Path, required=True, metavar='DIR',
                        help='folder to write (must not exist)')
    parser.add_argument('--params-file', type=Path, action='append', default=None,
                        help='node parameter file(s) the replays use, in load order (default: '
                             'the installed config/ghost.yaml)')
    parser.add_argument('--jobs', '-j', type=_positive, default=1, metavar='N',
                        help='review N flights at a time, in local processes (default 1)')
    parser.add_argument('--scheduler', metavar='ADDRESS',
                        help='review the flights on the Dask distributed cluster whose '
                             'scheduler is at ADDRESS (e.g. tcp://host:8786; its workers must '
                             'see the inputs and DIR at the same paths; needs '
                             'dask[distributed])')
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f'must be an integer >= 1, got {text!r}')
    return value


class _Progress:
    """A bar on stderr when it is a terminal; else a line per flight on stdout."""

    def __init__(self, total: int, output: Path) -> None:
        self._total = total
        self._done = 0
        self._output = output
        self._bar = sys.stderr.isatty()
        self._width = 0

    def _clear(self) -> None:
        if self._bar and self._width:
            sys.stderr.write('\r' + ' ' * self._width + '\r')
            self._width = 0

    def error(self, message: str) -> None:
        """One error line (the bar, if any, is drawn again after it)."""
        self._clear()
        print(f'{PROG}: error: {" ".join(message.split())}', file=sys.stderr, flush=True)

    def flight(self, outcome: FlightOutcome) -> None:
        """One flight done: its line, or the bar moved on."""
        self._done += 1
        done = outcome.review
        if done is None:
            self.error(outcome.error or f'{outcome.name}: not reviewed')
        elif not self._bar:
            count = len(done.episodes)
            print(f'{PROG}: {outcome.name}: {len(done.data.cycles)} cycles, {count} '
                  f'episode{"s" if count != 1 else ""} not PROCEED -> '
                  f'{self._output / outcome.name / "report.html"} '
                  f'({outcome.report_bytes / 1024:.0f} KB)', flush=True)
        if done is not None and done.warnings:
            self._clear()
            for warning in done.warnings:
                print(f'{PROG}: warning: {outcome.name}: {warning}', file=sys.stderr)
        if self._bar:
            filled = round(30 * self._done / max(self._total, 1))
            line = (f'{PROG}: [{"#" * filled}{"." * (30 - filled)}] '
                    f'{self._done}/{self._total} flights ({outcome.name})')
            self._clear()
            sys.stderr.write(line)
            self._width = len(line)
            if self._done == self._total:
                sys.stderr.write('\n')
                self._width = 0
            sys.stderr.flush()


def _config(files: Sequence[Path] | None) -> tuple[PipelineConfig, str]:
    from ghost.replay import default_params_files
    from ghost_nodes.agent_config import pipeline_config_from_files

    try:
        chosen = list(files) if files else default_params_files()
        return pipeline_config_from_files(chosen), ', '.join(str(f) for f in chosen)
    except (FileNotFoundError, GhostError, ValueError, OSError) as err:
        raise ReviewUsageError(f'--params-file: {err}') from err


def review(inputs: Sequence[Path], output: Path, params_files: Sequence[Path] | None = None,
           *, jobs: int = 1, scheduler: str | None = None
           ) -> tuple[list[FlightReview], list[str]]:
    """Review every input into `output` (created whole); the reviews and the input errors.

    `jobs` > 1 reviews that many flights at a time in local processes; `scheduler` on the
    Dask cluster there. Raises ReviewUsageError when `output` exists or cannot be created,
    or no Dask scheduler answers; ReviewInputError when no input at all could be reviewed
    (each input's error is printed on stderr as it comes).
    """
    if output.exists():
        raise ReviewUsageError(f'{output}: the output folder exists; choose a new path')
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f'.{output.name}.', dir=output.parent))
    except OSError as err:
        raise ReviewUsageError(f'{output}: cannot be created: {err.strerror}') from err
    try:
        config, source = _config(params_files)
        flights, errors = find_inputs(inputs)
        progress = _Progress(len(flights), output)
        for message in errors:
            progress.error(message)
        try:
            outcomes = review_fleet(flights, staging, config, source, jobs=jobs,
                                    scheduler=scheduler, each=progress.flight)
        except SchedulerError as err:
            raise ReviewUsageError(f'--scheduler: {err}') from err
        reviews = [outcome.review for outcome in outcomes if outcome.review is not None]
        errors += [outcome.error for outcome in outcomes if outcome.error is not None]
        if not reviews:
            # Every input's error is printed already.
            raise _NothingReviewed('; '.join(errors))
        (staging / 'index.html').write_text(index_html(reviews, errors), encoding='utf-8')
        # mkdtemp made it private; the folder is the user's, as mkdir would have made it.
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)
        os.rename(staging, output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return reviews, errors


def main(argv: Sequence[str] | None = None) -> int:
    """Run ghost_review; return the exit code (see the module docstring)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.scheduler is not None and args.jobs > 1:
        parser.error('--jobs and --scheduler: give one (the cluster has its own workers)')

    def error(message: str, code: int) -> int:
        print(f'{PROG}: error: {" ".join(message.split())}', file=sys.stderr)
        return code

    try:
        reviews, errors = review(args.inputs, args.output, args.params_file, jobs=args.jobs,
                                 scheduler=args.scheduler)
    except ReviewUsageError as err:
        return error(str(err), EXIT_USAGE)
    except _NothingReviewed:
        return EXIT_INPUT
    except ReviewInputError as err:
        return error(str(err), EXIT_INPUT)
    except KeyboardInterrupt:
        return error('interrupted', 130)
    except Exception as err:  # noqa: BLE001 - the documented internal-fault exit, one line
        return error(f'internal fault: {type(err).__name__}: {err}', EXIT_FAULT)
    print(f'{PROG}: {len(reviews)} flight{"s" if len(reviews) != 1 else ""} -> '
          f'{args.output / "index.html"}')
    return EXIT_INPUT if errors else EXIT_OK


if __name__ == '__main__':
    sys.exit(main())
