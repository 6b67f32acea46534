"""Command-line tools: verify_baud, verify_erur, trace_decisions and verify_all."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
import sys
from typing import TextIO

from ghost_bag.errors import BagError
from ghost_bag.manifest import load_public_key, ManifestError
from ghost_core.cli import ExitCode, guarded, tool_error, ToolParser
from ghost_core.properties import BAUD_V1, CycleProperty, ERUR_V1, JsonValue

from .bag import DEFAULT_CYCLE_WINDOW
from .cycle_properties import verify_property
from .fleet import BagVerdict, SchedulerError, verify_bag, verify_fleet, VerifyOptions
from .report_json import canonical_report_json, read_error_notes
from .trace import trace_decisions

__all__ = [
    'trace_decisions_main',
    'verify_all_main',
    'verify_baud_main',
    'verify_erur_main',
]


_EXIT_CODES = """\
what each exit code means here (the last line of verify_all says VERIFIED or NOT VERIFIED):
  0  everything checked holds over the whole bag. A property whose precondition never held
     says 'HOLDS vacuously' (with --require-coverage: exit 1). Cycles the recording cut at
     its start or end, and histories whose evidence starts before the bag, are listed as
     unverifiable, not failures (--strict: exit 1).
  1  a verdict does not hold: a property violated, a chain link broken or missing, a cycle
     incomplete or logged out of order (replayed, flooded), a history or a policy not
     matching what was recorded, a recorded configuration that cannot be used, a gate
     record failing GATE-v1, a recorded message differing from the one re-derived from the
     inputs, the
     signed manifest not verifying (--public-key), or part of the bag unreadable (the
     verdicts then cover what was read; a note says what was not).
  2  usage error: a bad option or value, an output that cannot be written, an unreadable
     --public-key.
  3  the input is not a Ghost bag it can read: not a bag (a PX4 ULog: run ghost_import
     first), no ghost message readable at all, no ghost topics, a ghost schema it does not
     read or that is not the installed ghost_interfaces definition, a metadata.yaml too
     large or nested too deeply, or a message after its cycle left the --cycle-window.
  4  internal fault; with several bags, that bag's line says exit 4 and the others go on.
"""

_BAG_HELP = ('a rosbag2 directory (metadata.yaml + .mcap files, read in the listed order) '
             'or a single .mcap file')


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not an integer') from None
    if value < 0:
        raise argparse.ArgumentTypeError(f'{value} is negative')
    return value


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError('must be at least 1')
    return value


def _parser(prog: str, description: str) -> ToolParser:
    parser = ToolParser(prog, description, 'ghost_verify', _EXIT_CODES, raw_epilog=True)
    parser.add_argument('--cycle-window', type=_positive, default=DEFAULT_CYCLE_WINDOW,
                        metavar='N',
                        help='how many cycles may be open at once while streaming the bag '
                             f'(default {DEFAULT_CYCLE_WINDOW}); raise it if messages of one '
                             'cycle lie far apart in the bag')
    parser.add_argument('--strict', action='store_true',
                        help='judge strictly: cycles cut at the start or end '
                             'of the recording, and histories counting outcomes recorded '
                             'before the bag, are failures (not unverifiable), and every cycle '
                             'is judged with the first recorded M and K')
    return parser


def _add_property_options(parser: ToolParser, *, several: bool = False) -> None:
    if several:
        parser.add_argument('bag', nargs='+', metavar='BAG',
                            help=_BAG_HELP + '; with several, each is verified as alone and '
                                 'one line per bag is printed, then a total line; --json '
                                 'PATH then writes JSON Lines, one {"bag", "exit_code", '
                                 '"report" (the one-bag --json document, or null), "error"} '
                                 'object per bag in the order given; the exit code is the '
                                 "largest of the bags'")
    else:
        parser.add_argument('bag', help=_BAG_HELP)
    parser.add_argument('--min-outcomes', '-m', type=_positive, metavar='M',
                        help="M of the drift condition, at least 1 (default: the run's "
                             'recorded configuration in force at each cycle; without one, '
                             "the messages' own, with a warning)")
    parser.add_argument('--downgrade-threshold', '-k', type=_positive, metavar='K',
                        help='K of the drift condition, at least 1 (default: as for M)')
    if several:
        parser.add_argument('--window-size', '-w', type=_positive, metavar='W',
                            help='W, the window of outcomes each calibration history is '
                                 'recomputed with, at least 1 (default: as for M)')
    parser.add_argument('--json', metavar='PATH',
                        help="write the full report as canonical JSON to PATH ('-' for stdout)")
    parser.add_argument('--require-coverage', action='store_true',
                        help='exit 1 when a precondition never held (a vacuous verdict)')


def _write_json(prog: str, path: str, document: dict[str, JsonValue]) -> int | None:
    """Write a report; return an exit code on failure, None on success."""
    text = canonical_report_json(document)
    if path == '-':
        sys.stdout.write(text)
        return None
    try:
        Path(path).write_text(text, encoding='utf-8')
    except OSError as err:
        return tool_error(prog, f'cannot write {path}: {err.strerror}', ExitCode.USAGE)
    return None


def _guarded(prog: str, run: Callable[[], int]) -> int:
    """Run a tool's work with ghost_core.cli's guard; a bag it cannot read is exit 3."""
    def work() -> int:
        try:
            return run()
        except BagError as err:
            return tool_error(prog, str(err), ExitCode.BAD_INPUT)
    return guarded(prog, work)


def _property_main(
    prog: str,
    description: str,
    cycle_property: CycleProperty,
    argv: Sequence[str] | None,
) -> int:
    parser = _parser(prog, description)
    _add_property_options(parser)
    args = parser.parse_args(argv)

    def run() -> int:
        report = verify_property(cycle_property, args.bag, min_outcomes=args.min_outcomes,
                                 downgrade_threshold=args.downgrade_threshold,
                                 cycle_window=args.cycle_window, strict=args.strict)
        out: TextIO = sys.stderr if args.json == '-' else sys.stdout
        print(report.summary(), file=out)
        for note in report.parameter_notes:
            print(f'note: {note}', file=out)
        for note in read_error_notes(report.read_errors):
            print(f'note: {note}', file=out)
        if args.json is not None:
            failed = _write_json(prog, args.json, report.to_json())
            if failed is not None:
                return failed
        if not report.holds or report.incomplete_input:
            return ExitCode.VIOLATED
        if args.require_coverage and not report.covered:
            print(f'{report.property_version}: precondition never held '
                  '(--require-coverage)', file=out)
            return ExitCode.VIOLATED
        return ExitCode.OK

    return _guarded(prog, run)


def verify_baud_main(argv: Sequence[str] | None = None) -> int:
    """Check BAUD-v1 on a bag; print the verdict; return the exit code."""
    return _property_main(
        'verify_baud',
        'Check BAUD-v1 (bounded action under drift) on a bag: under drift the adjusted level '
        'is not KNOWN, the decision is not PROCEED and the command is conservative.',
        BAUD_V1, argv,
    )


def verify_erur_main(argv: Sequence[str] | None = None) -> int:
    """Check ERUR-v1 on a bag; print the verdict; return the exit code."""
    return _property_main(
        'verify_erur',
        'Check ERUR-v1 (eventual reactivation under recovery) on a bag: without drift and '
        'with a KNOWN raw level, the adjusted level is KNOWN and the decision is PROCEED.',
        ERUR_V1, argv,
    )


def trace_decisions_main(argv: Sequence[str] | None = None) -> int:
    """Trace every decision's hash chain; print the summary (JSON with --json); exit code."""
    prog = 'trace_decisions'
    parser = _parser(
        prog,
        'Trace every decision of a bag (ADR-0022) and check each SHA-256 link of the chain '
        'assessment -> calibrated -> rationale -> actuation. Prints a one-line summary; '
        "--json PATH writes the per-decision JSON report ('-': to stdout, the summary then "
        'on stderr).',
    )
    parser.add_argument('bag', nargs='?', help=_BAG_HELP)
    parser.add_argument('--mcap', metavar='BAG', help='the bag, as ADR-0022 spells it')
    parser.add_argument('--json', metavar='PATH',
                        help="write the per-decision JSON report to PATH ('-': stdout)")
    args = parser.parse_args(argv)
    if (args.bag is None) == (args.mcap is None):
        parser.error('give the bag either as an argument or with --mcap, once')
    bag = args.bag if args.bag is not None else args.mcap

    def run() -> int:
        report = trace_decisions(bag, cycle_window=args.cycle_window, strict=args.strict)
        if args.json is not None:
            failed = _write_json(prog, args.json, report.to_json())
            if failed is not None:
                return failed
        out = sys.stderr if args.json == '-' else sys.stdout
        print(report.summary(), file=out)
        for note in read_error_notes(report.read_errors):
            print(f'note: {note}', file=out)
        return ExitCode.OK if report.holds and not report.incomplete_input else ExitCode.VIOLATED

    return _guarded(prog, run)


def verify_all_main(argv: Sequence[str] | None = None) -> int:
    """Check BAUD-v1, ERUR-v1 and the chain in one pass; print a summary; return the code."""
    prog = Path(sys.argv[0]).name if argv is None and sys.argv[0] else 'verify_all'
    if prog not in ('verify_all', 'ghost_verify'):
        prog = 'verify_all'
    parser = _verify_all_parser(prog)
    args = parser.parse_args(argv)
    if args.scheduler is not None and args.jobs > 1:
        parser.error('--jobs and --scheduler: give one (the cluster has its own workers)')
    if args.public_key is not None:
        try:
            load_public_key(args.public_key)
        except ManifestError as err:
            return tool_error(prog, f'--public-key {err}', ExitCode.USAGE)
    options = VerifyOptions(
        min_outcomes=args.min_outcomes, downgrade_threshold=args.downgrade_threshold,
        window_size=args.window_size, cycle_window=args.cycle_window, strict=args.strict,
        replay=not args.no_replay, require_coverage=args.require_coverage,
        public_key=args.public_key, prog=prog)
    def run() -> int:
        # Chosen here: guarded() has made sys.stdout safe against a closed pipe by now.
        out: TextIO = sys.stderr if args.json == '-' else sys.stdout
        try:
            if len(args.bag) > 1:
                return _verify_fleet(prog, args, options, out)
            if args.scheduler is not None:
                verdict = verify_fleet(args.bag, options, scheduler=args.scheduler).verdicts[0]
            else:
                verdict = verify_bag(args.bag[0], options)
        except SchedulerError as err:
            return tool_error(prog, f'--scheduler: {err}', ExitCode.USAGE)
        return _print_verdict(prog, verdict, args.json, out)

    return guarded(prog, run)


def _verify_all_parser(prog: str) -> ToolParser:
    """verify_all's arguments: the property options, several bags, and its own options."""
    parser = _parser(
        prog,
        'Check BAUD-v1, ERUR-v1, the SHA-256 chain, the completeness of every cycle and the '
        'consistency of every recorded calibration history with the recorded outcomes and '
        'the conformance of every cycle to the policies it names, and GATE-v1 on the command '
        "gate's records when the bag holds some, in one pass, and print one line per check.",
    )
    _add_property_options(parser, several=True)
    parser.add_argument('--public-key', metavar='KEY',
                        help='check the signed run manifest (manifest.json) with this Ed25519 '
                             'public key (PEM, from ghost_keygen) before anything else')
    parser.add_argument('--no-replay', action='store_true',
                        help='skip the re-derivation: by default the agent (and its bridge, '
                             'px4_bridge, ap_bridge or mavros_bridge, when the bag holds its '
                             'inputs) is re-run from the '
                             'inputs the bag holds, with the configuration it recorded, and '
                             'every recorded message compared with the re-derived one exactly '
                             '(exit 1 when one differs; a bag without inputs or configuration '
                             'is reported not re-derivable, exit 1 only with --strict)')
    parser.add_argument('--jobs', '-j', type=_positive, default=1, metavar='N',
                        help='bags verified at a time, in N local processes (default 1; one '
                             'bag is always one pass in one process)')
    parser.add_argument('--scheduler', metavar='ADDRESS',
                        help='verify the bags on the Dask distributed cluster whose scheduler '
                             'is at ADDRESS (e.g. tcp://host:8786; its workers must see the '
                             'bags at the same paths; needs dask[distributed])')
    return parser


def _print_verdict(prog: str, verdict: BagVerdict, json_path: str | None, out: TextIO) -> int:
    """Print one bag's lines (its errors on stderr), write its --json report; the exit code."""
    for line in verdict.lines:
        print(line, file=out)
    for line in verdict.errors:
        print(line, file=sys.stderr)
    if json_path is not None and verdict.document is not None:
        failed = _write_json(prog, json_path, verdict.document)
        if failed is not None:
            return failed
    return verdict.code


def _verify_fleet(prog: str, args: argparse.Namespace, options: VerifyOptions,
                  out: TextIO) -> int:
    """verify_all BAG BAG ...: one line per bag, then the total; --json writes JSON Lines."""
    sink: TextIO | None = None
    if args.json is not None and args.json != '-':
        try:
            sink = Path(args.json).open('w', encoding='utf-8')
        except OSError as err:
            return tool_error(prog, f'cannot write {args.json}: {err.strerror}', ExitCode.USAGE)

    def each(verdict: BagVerdict) -> None:
        print(verdict.line, file=out, flush=True)
        for line in verdict.errors:
            print(line, file=sys.stderr)
        if args.json == '-':
            sys.stdout.write(verdict.to_json_line())
        elif sink is not None:
            sink.write(verdict.to_json_line())

    try:
        run = verify_fleet(args.bag, options, jobs=args.jobs, scheduler=args.scheduler,
                           each=each)
    finally:
        if sink is not None:
            sink.close()
    print(run.total_line(), file=out)
    return run.code
