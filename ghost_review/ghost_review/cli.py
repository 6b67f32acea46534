"""ghost_review: see what Ghost decided, when and why, for one flight or a fleet.

    ghost_review INPUT... --output DIR [--params-file FILE ...] [--jobs N | --scheduler ADDRESS]

INPUT: a PX4 ULog or an ArduPilot DataFlash log (imported, then replayed), an input bag
(replayed), a Ghost bag (read as it is), or a folder of any of these. Writes DIR/index.html
and, per flight, DIR/<flight>/report.html, decisions.csv and the bags it made (input/, bag/).
DIR is written whole or not at all (built beside it, then renamed): a failed or interrupted
review leaves nothing, so the same command can be run again. Flights are reviewed one at a
time, N at a time in local processes (--jobs N), or on an existing Dask cluster (--scheduler
ADDRESS, as verify_all --scheduler): the files are the same either way. On a terminal a
progress bar (tqdm, stderr); otherwise a line per flight on stdout, and a status line on
stderr every 10 s while a flight takes long. The command-line vocabulary and exit codes are
ghost_core.cli's (docs/cli.md).

Exit codes (the largest that applies, as verify_all over many bags): 0 every input reviewed and
every flight VERIFIED (with or without limits); 1 a flight is NOT VERIFIED (its files are
still written, and the index and its report say why first); 2 usage error (bad option or
value, DIR exists or cannot be written, no Dask scheduler answers); 3 an input cannot be read
or used (the others are still reviewed, and the index names it); 4 internal fault; 130
interrupted.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import os
from pathlib import Path
import shutil
import sys
import tempfile

from ghost_bag.manifest import load_public_key, ManifestError
from ghost_core.cli import ExitCode, guarded, positive, tool_error, ToolParser
from ghost_core.errors import GhostError
from ghost_core.pipeline import PipelineConfig
from ghost_core.properties import JsonValue
from ghost_verify.fleet import SchedulerError, VerifyOptions
from ghost_verify.report_json import canonical_report_json

from .errors import ReviewInputError, ReviewUsageError
from .fleet import review_fleet
from .index import index_html
from .progress import FleetProgress
from .review import find_inputs, FlightReview
from .verdict import NOT_VERIFIED

__all__ = ['PROG', 'exit_code', 'main', 'review']

PROG = 'ghost_review'
#: The distribution whose version --version prints (setup.py's name).
DISTRIBUTION = 'ghost_review'


class _NothingReviewed(ReviewInputError):
    """No input could be reviewed (each one's error was printed as it came)."""


def _address(text: str) -> str:
    """An argparse type: a Dask scheduler address, not blank."""
    if not text.strip():
        raise argparse.ArgumentTypeError('an empty address (e.g. tcp://host:8786)')
    return text


def _parser() -> ToolParser:
    parser = ToolParser(PROG, __doc__.split('\n\n')[0], DISTRIBUTION,
                        epilog='Exit 1 when a flight is NOT VERIFIED, as verify_all: every '
                               'file is still written. An input that cannot be read is named '
                               'on stderr and in the index; the others are still reviewed, '
                               'and the exit code is 3.')
    parser.add_argument('inputs', nargs='+', type=Path, metavar='INPUT',
                        help='PX4 ULog, ArduPilot DataFlash (.bin), input bag, Ghost bag, or '
                             'a folder of them')
    parser.add_argument('--output', '-o', type=Path, required=True, metavar='DIR',
                        help='folder to write (must not exist; built beside it and renamed '
                             'into place when complete)')
    parser.add_argument('--params-file', type=Path, action='append', default=None,
                        metavar='FILE',
                        help='node parameter file(s) the replays use, in load order (default: '
                             'the installed config/ghost.yaml)')
    parser.add_argument('--jobs', '-j', type=positive(int), default=None, metavar='N',
                        help='review N flights at a time, in local processes (default 1)')
    parser.add_argument('--scheduler', type=_address, metavar='ADDRESS',
                        help='review the flights on the Dask distributed cluster whose '
                             'scheduler is at ADDRESS (e.g. tcp://host:8786; its workers must '
                             'see the inputs and DIR at the same paths; needs '
                             'dask[distributed]); not with --jobs')
    parser.add_argument('--json', type=Path, metavar='PATH',
                        help="one flight only: write its verification, verify_all's JSON report "
                             '(with the lines it prints), to PATH; ghost_run and ghost_replay '
                             'verify and review a run in this one process')
    parser.add_argument('--public-key', metavar='KEY',
                        help="check each Ghost bag's signed manifest with this Ed25519 public "
                             'key (PEM, from ghost_keygen), as verify_all --public-key')
    parser.add_argument('--require-coverage', action='store_true',
                        help='a property whose precondition never held fails the verification, '
                             'as verify_all --require-coverage')
    return parser


def _config(files: Sequence[Path] | None) -> tuple[PipelineConfig, str]:
    from ghost.replay import default_params_files
    from ghost_nodes.agent_config import pipeline_config_from_files

    try:
        chosen = list(files) if files else default_params_files()
        return pipeline_config_from_files(chosen), ', '.join(str(f) for f in chosen)
    except (FileNotFoundError, GhostError, ValueError, OSError) as err:
        raise ReviewUsageError(f'--params-file: {err}') from err


def _staging(output: Path) -> Path:
    """A private folder beside `output` to build it in; ReviewUsageError when impossible."""
    if output.exists() or output.is_symlink():
        raise ReviewUsageError(f'{output}: the output folder exists; choose a new path')
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f'.{output.name}.partial-', dir=output.parent))
    except OSError as err:
        raise ReviewUsageError(f'{output}: cannot be created: {err.strerror}') from err


def _publish(staging: Path, output: Path) -> None:
    """Rename the complete `staging` into place as `output`, with the user's permissions."""
    # mkdtemp made it private; the folder is the user's, as mkdir would have made it.
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)
    if output.exists() or output.is_symlink():
        raise ReviewUsageError(f'{output}: the output folder appeared while reviewing; '
                               'choose a new path')
    try:
        os.rename(staging, output)
    except OSError as err:
        raise ReviewUsageError(f'{output}: cannot be moved into place: {err.strerror}'
                               ) from err


def review(inputs: Sequence[Path], output: Path, params_files: Sequence[Path] | None = None,
           *, jobs: int = 1, scheduler: str | None = None, verify: VerifyOptions | None = None,
           one_flight: bool = False) -> tuple[list[FlightReview], list[str]]:
    """Review every input into `output` (created whole); the reviews and the input errors.

    `jobs` > 1 reviews that many flights at a time in local processes; `scheduler` on the
    Dask cluster there. `verify`: the verification's options; `one_flight`: more than one
    flight is a usage error (a --json report is one flight's). Raises ReviewUsageError when
    `output` exists or cannot be written, a parameter file cannot be used, or no Dask
    scheduler answers; ReviewInputError when no input at all could be reviewed (each input's
    error is printed on stderr as it comes). Whatever stops it, nothing is left at `output`
    nor beside it.
    """
    staging = _staging(output)
    try:
        config, source = _config(params_files)
        flights, errors = find_inputs(inputs)
        if one_flight and len(flights) + len(errors) > 1:
            raise ReviewUsageError(f'--json: the inputs hold {len(flights) + len(errors)} '
                                   "flights; it writes one flight's report")
        with FleetProgress(PROG, len(flights), output) as progress:
            for message in errors:
                progress.error(message)
            try:
                outcomes = review_fleet(flights, staging, config, source, jobs=jobs,
                                        scheduler=scheduler, each=progress.flight,
                                        started=progress.start, verify=verify)
            except SchedulerError as err:
                raise ReviewUsageError(f'--scheduler: {err}') from err
        reviews = [outcome.review for outcome in outcomes if outcome.review is not None]
        errors += [outcome.error for outcome in outcomes if outcome.error is not None]
        if not reviews:
            # Every input's error is printed already.
            raise _NothingReviewed('; '.join(errors))
        (staging / 'index.html').write_text(index_html(reviews, errors), encoding='utf-8')
        _publish(staging, output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return reviews, errors


def _write_json(path: Path, document: dict[str, JsonValue] | None) -> None:
    """Write the verification report beside, then into place (none: the bag is unreadable)."""
    if document is None:
        return
    staging = path.with_name(f'.{path.name}.partial')
    try:
        staging.write_text(canonical_report_json(document), encoding='utf-8')
        os.replace(staging, path)
    except OSError as err:
        staging.unlink(missing_ok=True)
        raise ReviewUsageError(f'--json {path}: cannot be written: {err.strerror}') from err


def main(argv: Sequence[str] | None = None) -> int:
    """Run ghost_review; return the exit code (see the module docstring)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.scheduler is not None and args.jobs is not None:
        parser.error('--jobs and --scheduler: give one (the cluster has its own workers)')
    return guarded(PROG, lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    if args.public_key is not None:
        try:
            load_public_key(args.public_key)
        except ManifestError as err:
            return tool_error(PROG, f'--public-key {err}', ExitCode.USAGE)
    verify = VerifyOptions(prog=PROG, public_key=args.public_key,
                           require_coverage=args.require_coverage)
    try:
        reviews, errors = review(args.inputs, args.output, args.params_file,
                                 jobs=args.jobs or 1, scheduler=args.scheduler, verify=verify,
                                 one_flight=args.json is not None)
        if args.json is not None and reviews:
            _write_json(args.json, reviews[0].verdict_document)
    except ReviewUsageError as err:
        return tool_error(PROG, str(err), ExitCode.USAGE)
    except _NothingReviewed:
        return int(ExitCode.BAD_INPUT)
    except ReviewInputError as err:
        return tool_error(PROG, str(err), ExitCode.BAD_INPUT)
    failing = [review.name for review in reviews if review.glance.word == NOT_VERIFIED]
    print(f'{PROG}: {len(reviews)} flight{"s" if len(reviews) != 1 else ""} -> '
          f'{args.output / "index.html"}'
          + (f'; NOT VERIFIED: {", ".join(failing)}' if failing else ''), flush=True)
    return exit_code(reviews, errors)


def exit_code(reviews: Sequence[FlightReview], errors: Sequence[str]) -> int:
    """The review's exit code: the largest that applies (see the module docstring).

    A NOT VERIFIED flight gives verify_all's own code for its bag (1, or 3 when verify_all
    could not read what the review could).
    """
    codes = [int(ExitCode.BAD_INPUT) if errors else int(ExitCode.OK)]
    codes += [review.verdict_code for review in reviews if review.glance.word == NOT_VERIFIED]
    return max(codes)


if __name__ == '__main__':
    sys.exit(main())
