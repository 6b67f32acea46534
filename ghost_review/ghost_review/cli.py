"""ghost_review: see what Ghost decided, when and why, for one flight or a fleet.

    ghost_review INPUT... --output DIR [--params-file FILE ...]

INPUT: a PX4 ULog (imported, then replayed), an input bag (replayed), a Ghost bag (read as it
is), or a folder of any of these. Writes DIR/index.html and, per flight, DIR/<flight>/
report.html, decisions.csv and the bags it made (input/, bag/). DIR is written whole or not
at all (built beside it, then renamed).

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

from .csv_out import decisions_csv
from .errors import ReviewInputError, ReviewUsageError
from .index import index_html
from .report import report_html
from .review import find_inputs, FlightReview, review_flight

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
    return parser


def _config(files: Sequence[Path] | None) -> tuple[PipelineConfig, str]:
    from ghost.replay import default_params_files
    from ghost_nodes.agent_config import pipeline_config_from_files

    try:
        chosen = list(files) if files else default_params_files()
        return pipeline_config_from_files(chosen), ', '.join(str(f) for f in chosen)
    except (FileNotFoundError, GhostError, ValueError, OSError) as err:
        raise ReviewUsageError(f'--params-file: {err}') from err


def _write(folder: Path, review: FlightReview) -> Path:
    (folder / 'decisions.csv').write_text(decisions_csv(review.data.cycles), encoding='utf-8')
    report = folder / 'report.html'
    report.write_text(report_html(review), encoding='utf-8')
    return report


def review(inputs: Sequence[Path], output: Path, params_files: Sequence[Path] | None = None
           ) -> tuple[list[FlightReview], list[str]]:
    """Review every input into `output` (created whole); the reviews and the input errors.

    Raises ReviewUsageError when `output` exists or cannot be created, ReviewInputError when
    no input at all could be reviewed (each input's error is printed on stderr as it comes).
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
        for message in errors:
            print(f'{PROG}: error: {" ".join(message.split())}', file=sys.stderr)
        reviews = []
        for flight in flights:
            folder = staging / flight.name
            folder.mkdir()
            try:
                done = review_flight(flight, folder, config, source)
            except ReviewInputError as err:
                errors.append(str(err))
                print(f'{PROG}: error: {" ".join(str(err).split())}', file=sys.stderr)
                shutil.rmtree(folder)
                continue
            report = _write(folder, done)
            reviews.append(done)
            size = report.stat().st_size / 1024
            print(f'{PROG}: {flight.name}: {len(done.data.cycles)} cycles, '
                  f'{len(done.episodes)} episode{"s" if len(done.episodes) != 1 else ""} not '
                  f'PROCEED -> {output / flight.name / "report.html"} ({size:.0f} KB)',
                  flush=True)
            for warning in done.warnings:
                print(f'{PROG}: warning: {flight.name}: {warning}', file=sys.stderr)
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
    args = _parser().parse_args(argv)

    def error(message: str, code: int) -> int:
        print(f'{PROG}: error: {" ".join(message.split())}', file=sys.stderr)
        return code

    try:
        reviews, errors = review(args.inputs, args.output, args.params_file)
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
