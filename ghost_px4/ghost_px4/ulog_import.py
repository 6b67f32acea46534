"""ghost_import: turn a flight log into a rosbag2 MCAP input bag for Ghost.

    ghost_import LOG --output BAG [--rate HZ] [--accuracy-profile NAME] [--gps-delay-ms MS]

One command for both autopilots: LOG is a PX4 ULog or an ArduPilot DataFlash log, told apart by
its first bytes (not its name). A ULog is read here; a DataFlash log by ghost_ardupilot
(ghost_ardupilot.dataflash_import), which writes the same bag with the helpers below.

The bag holds /state/nav (nav_msgs/msg/Odometry, the EKF's belief), /observations
(geometry_msgs/msg/PoseWithCovarianceStamped, the GNSS fixes projected into the EKF's local
frame) and /vehicle_status (ghost_interfaces/msg/VehicleStatus, from vehicle_status and
vehicle_land_detected: ghost_px4.ulog_status). Conventions: docs/real-data.md. The frame and
covariance conversions are in ghost_px4.convert, the beliefs and fixes
ghost_px4.ulog_streams'. One cohesive job, hence one module: the command (its arguments,
warnings, bag and summary).

Exit codes (docs/cli.md): 0 the bag was written; 2 usage error (a bad option, the output
exists or cannot be written); 3 the log cannot be used (neither a ULog nor a DataFlash log,
damaged before any usable data, no position topic, no sample with a position). A log without
usable GNSS imports, with a warning. The bag is written beside the output and renamed into
place once complete: a failed or interrupted import leaves nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
import shutil
import sys
import tempfile
from typing import Any, TextIO

import numpy

from ghost_core.cli import ExitCode, guarded, tool_error, ToolParser
from ghost_core.profiles import accuracy_profile, ACCURACY_PROFILES, DEFAULT_PROFILE
from ghost_px4 import convert as px4
from ghost_px4.live import CHILD_FRAME_ID, FRAME_ID
from ghost_px4.ulog_orientation import ORIENTATION_TOPICS
from ghost_px4.ulog_read import Damage, load_ulog, px4_version_label, UlogReadError
from ghost_px4.ulog_status import import_statuses, STATUS_TOPICS
from ghost_px4.ulog_streams import (
    import_beliefs,
    import_fixes,
    ImportOrientation,
    RATE_TOLERANCE,
    Stream,
)

__all__ = [
    'BELIEF_TOPIC',
    'ImportUsageError',
    'accuracy_lines',
    'check_output',
    'finite_float',
    'gaps',
    'one_line',
    'same_gnss_line',
    'span',
    'stream_lines',
    'write_bag',
    'CHILD_FRAME_ID',
    'FRAME_ID',
    'OBSERVATION_TOPIC',
    'RATE_TOLERANCE',
    'main',
]

PROG = 'ghost_import'
BELIEF_TOPIC = '/state/nav'
OBSERVATION_TOPIC = '/observations'
STATUS_TOPIC = '/vehicle_status'
STATUS_TYPE = 'ghost_interfaces/msg/VehicleStatus'
ODOMETRY_TYPE = 'nav_msgs/msg/Odometry'
POSE_TYPE = 'geometry_msgs/msg/PoseWithCovarianceStamped'

_BELIEF_TOPICS = ('vehicle_odometry', 'vehicle_local_position')
# vehicle_gps_position is the (blended) receiver EKF2 fuses; sensor_gps is the per-receiver topic.
_GNSS_TOPICS = ('vehicle_gps_position', 'sensor_gps')
_LOADED_TOPICS = (*_BELIEF_TOPICS, *_GNSS_TOPICS, *ORIENTATION_TOPICS, *STATUS_TOPICS)


class ImportUsageError(ValueError):
    """A usage error found after argument parsing (exit code 2), for either autopilot."""


# --- reading the log ---

def _load_ulog(path: Path) -> tuple[Any, Damage]:
    return load_ulog(path, _LOADED_TOPICS)


# --- command line ---

def finite_float(minimum: float, inclusive: bool) -> Callable[[str], float]:
    """An argparse type: a finite number > minimum (>= when ``inclusive``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f'not a number: {text!r}') from err
        if not (math.isfinite(value) and (value >= minimum if inclusive else value > minimum)):
            relation = '>=' if inclusive else '>'
            raise argparse.ArgumentTypeError(
                f'must be a finite number {relation} {minimum:g}, got {text!r}')
        return value
    return parse


_positive_float = finite_float(0.0, inclusive=False)
_non_negative_float = finite_float(0.0, inclusive=True)


def _parser() -> argparse.ArgumentParser:
    parser = ToolParser(
        PROG, 'Write a rosbag2 MCAP input bag (/state/nav, /observations, /vehicle_status) '
              'from a PX4 ULog or an ArduPilot DataFlash log: the EKF belief and the GNSS '
              'fixes in its local ENU frame.',
        'ghost_px4', epilog='See docs/real-data.md.')
    parser.add_argument('log', type=Path, metavar='LOG',
                        help='the flight log: a PX4 ULog (.ulg) or an ArduPilot DataFlash log '
                             '(.bin), told apart by its content')
    parser.add_argument('--output', '-o', type=Path, required=True, metavar='BAG',
                        help='the bag directory to create (must not exist)')
    parser.add_argument('--rate', type=_positive_float, default=None, metavar='HZ',
                        help='keep at most HZ beliefs per second (a belief is kept when its '
                             'stamp is >= the last kept + 0.9/HZ s); default: every sample. '
                             'Fixes are never decimated.')
    parser.add_argument('--accuracy-profile', default=DEFAULT_PROFILE,
                        choices=tuple(ACCURACY_PROFILES), metavar='NAME',
                        help="the Ghost accuracy profile the summary compares the log's own "
                             f'autopilot limits with ({", ".join(ACCURACY_PROFILES)}; '
                             f'docs/parameters.md); default: {DEFAULT_PROFILE}. It does not '
                             'change the bag.')
    parser.add_argument('--gps-delay-ms', type=_non_negative_float, default=None, metavar='MS',
                        help='GNSS measurement delay (default: the log parameter: PX4 '
                             'EKF2_GPS_DELAY, 0 when it is missing; ArduPilot GPS_DELAY_MS, '
                             "else its GNSS driver's own lag)")
    return parser


def _msg_dir() -> Path:
    """The ghost_interfaces msg directory: installed share, else the source tree."""
    try:
        from ament_index_python.packages import get_package_share_directory

        installed = Path(get_package_share_directory('ghost_interfaces')) / 'msg'
        if installed.is_dir():
            return installed
    except (ImportError, LookupError, ValueError):
        pass
    return Path(__file__).resolve().parents[2] / 'ghost_interfaces' / 'msg'


def check_output(output: Path) -> None:
    """ImportUsageError when the output exists; create its missing parent folders."""
    if output.exists() or output.is_symlink():
        raise ImportUsageError(f'{output}: already exists (the output bag directory must not '
                               'exist)')
    # Like `ros2 bag record -o`, missing parent folders are created.
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ImportUsageError(f'{output}: its parent directory {output.parent} cannot be '
                               f'created: {err.strerror}') from err


def write_bag(output: Path, beliefs: Stream, fixes: Stream,
              statuses: list[tuple[int, int, dict[str, object]]]) -> int:
    """Write the input bag (staged beside ``output``, renamed into place); messages written."""
    from ghost_bag.errors import BagWriteError
    from ghost_bag.write import GhostBagWriter

    # At one log time: the status first (in force from its belief on), then fixes, beliefs.
    events = sorted(
        [(log_time, 0, index, STATUS_TOPIC, STATUS_TYPE, msg)
         for index, (_, log_time, msg) in enumerate(statuses)]
        + [(log_time, 1, index, OBSERVATION_TOPIC, POSE_TYPE, msg)
           for index, (_, log_time, msg) in enumerate(fixes.messages)]
        + [(log_time, 2, index, BELIEF_TOPIC, ODOMETRY_TYPE, msg)
           for index, (_, log_time, msg) in enumerate(beliefs.messages)],
        key=lambda event: event[:3])
    # Written beside the output, renamed into place once complete (nothing half-written).
    staging = Path(tempfile.mkdtemp(prefix=f'.{output.name}.partial-', dir=output.parent))
    try:
        with GhostBagWriter(staging / output.name, _msg_dir()) as writer:
            writer.add_topic(BELIEF_TOPIC, ODOMETRY_TYPE)
            writer.add_topic(OBSERVATION_TOPIC, POSE_TYPE)
            if statuses:
                writer.add_topic(STATUS_TOPIC, STATUS_TYPE)
            for log_time, _, _, topic, type_name, msg in events:
                writer.write(topic, type_name, msg, log_time)
        (staging / output.name).rename(output)
    except (BagWriteError, OSError) as err:
        raise ImportUsageError(f'{output}: the bag cannot be written: {err}') from err
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return len(events)


def _seconds(stamp_ns: int) -> str:
    return f'{stamp_ns / 1e9:.3f}'


def span(stream: Stream) -> str:
    """The stream's first and last stamp, and its duration."""
    if not stream.messages:
        return 'none'
    first, last = stream.messages[0][0], stream.messages[-1][0]
    return f'{_seconds(first)} .. {_seconds(last)} s since boot ({(last - first) / 1e9:.1f} s)'


def gaps(stream: Stream) -> str:
    """The median and largest period of the stream, and its gaps (for the summary)."""
    stamps = numpy.array([stamp for stamp, _, _ in stream.messages], dtype=numpy.int64)
    if len(stamps) < 3:
        return ''
    steps = numpy.diff(stamps)
    median = float(numpy.median(steps))
    long = int(numpy.sum(steps > 2.0 * median))
    return (f'; period median {median / 1e6:.0f} ms, max {float(steps.max()) / 1e6:.0f} ms, '
            f'{long} gap{"s" if long != 1 else ""} > 2x median')


def stream_lines(stream: Stream, topic: str) -> list[str]:
    """The summary lines of one stream: samples, written, dropped per reason."""
    dropped = sum(stream.dropped.values())
    line = (f'{topic} from {stream.source}: {stream.samples} samples, '
            f'{len(stream.messages)} written, {dropped} dropped')
    if stream.decimated:
        line += f', {stream.decimated} skipped by --rate'
    lines = [line]
    lines += [f'  dropped {count}: {reason}' for reason, count in sorted(stream.dropped.items())]
    return lines


def _range(values: Sequence[float], unit: str) -> str:
    return f'{min(values):.3g}..{max(values):.3g} {unit}' if values else 'n/a'


def accuracy_lines(beliefs: Stream, fixes: Stream) -> list[str]:
    """The ranges of the beliefs' and the fixes' 1-sigma (eph, epv)."""
    def diag(stream: Stream, part: str, k: int) -> list[float]:
        return [float(msg[part]['covariance'][k])  # type: ignore[index]
                for _, _, msg in stream.messages]

    def std(values: list[float], factor: float = 1.0) -> list[float]:
        # Blocks PX4 flags invalid (+inf) are counted apart (_invalid_lines), not ranged.
        return [math.sqrt(max(value, 0.0) * factor) for value in values if math.isfinite(value)]

    lines = []
    if beliefs.messages:
        lines.append('  belief 1-sigma: horizontal position (eph) '
                     + _range(std(diag(beliefs, 'pose', 0), 2.0), 'm')
                     + ', vertical (epv) ' + _range(std(diag(beliefs, 'pose', 14)), 'm'))
    if fixes.messages:
        vertical = [v for v in diag(fixes, 'pose', 14) if v < px4.UNMEASURED_VARIANCE_M2]
        lines.append('  fix 1-sigma: horizontal (eph) '
                     + _range(std(diag(fixes, 'pose', 0), 2.0), 'm') + ', vertical (epv) '
                     + (_range(std(vertical), 'm') if vertical else 'not measured'))
    return lines


def _orientation_lines(orientation: ImportOrientation) -> list[str]:
    lines = []
    if orientation.variances:
        med = [float(numpy.median([v[k] for v in orientation.variances])) for k in range(3)]
        lines.append('  orientation variance (rad², ENU axes x/y/z, median): '
                     + ', '.join(f'{value:.2e}' for value in med)
                     + ' (1-sigma ' + ', '.join(f'{math.degrees(math.sqrt(v)):.2f}' for v in med)
                     + ' deg)')
    return lines


def _orientation_source_lines(beliefs: Stream) -> list[str]:
    return [f'  orientation uncertainty from {source}: {count} beliefs'
            for source, count in beliefs.orientation_sources.most_common()]


def _invalid_lines(beliefs: Stream) -> list[str]:
    lines = [f'  beliefs with a block PX4 flags invalid: {sum(beliefs.invalid.values())} '
             '(kept, judged UNKNOWN)']
    lines += [f'    {count}: {reason}' for reason, count in sorted(beliefs.invalid.items())]
    return lines


def same_gnss_line(estimator: str, receiver: str) -> str:
    """One line: the fixes are the GNSS the estimator fuses, what that means, what would add."""
    return (f'fixes: {receiver} is the GNSS {estimator} fuses, so the check sees the estimator '
            'leaving its own GNSS (a filter fault, a jump, a wrong claimed accuracy), not a '
            'GNSS fault both share; an independent source (RTK, motion capture, vision) '
            'would check the position itself')


def _limit_lines(parameters: Mapping[str, float], profile_name: str) -> list[str]:
    """The log's own PX4 limits beside the Ghost thresholds of ``profile_name``."""
    from ghost_px4.events import px4_limits

    profile = accuracy_profile(profile_name)
    lines = ['PX4 limits of this log (Ghost compares beliefs against its own thresholds):']
    try:
        lines += [f'  {line}' for line in px4_limits(parameters).lines()]
    except ValueError as err:  # a corrupt parameter: the import does not depend on it
        lines.append(f'  not shown: {err}')
    lines.append(f'Ghost accuracy profile {profile_name!r}: {profile.describe()}')
    return lines


def _delay(args: argparse.Namespace, parameters: Mapping[str, float]) -> tuple[int, str]:
    if args.gps_delay_ms is not None:
        ms = float(args.gps_delay_ms)
        return int(round(ms * 1e6)), f'{ms:g} ms (--gps-delay-ms)'
    value = parameters.get('EKF2_GPS_DELAY')
    if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
        return int(round(float(value) * 1e6)), f'{float(value):g} ms (EKF2_GPS_DELAY)'
    return 0, ('0 ms (EKF2_GPS_DELAY not in the log and no --gps-delay-ms: fix stamps are '
               'their logged times)')


@dataclass(frozen=True, slots=True)
class _Log:
    """A read log: its path, its data, its damage and the topics the import reads."""

    path: Path
    ulog: Any
    damage: Damage
    #: What is cut off at the end ('' for a complete log).
    truncated: str
    belief_source: str
    gnss_source: str | None


def _truncation(ulog: Any, damage: Damage) -> str:
    """Where a truncated log ends, '' for a complete one."""
    if damage.truncated_at_byte is None:
        return ''
    at = (f't = {ulog.last_timestamp / 1e6:.3f} s since boot, '
          f'{(ulog.last_timestamp - ulog.start_timestamp) / 1e6:.1f} s into the log')
    return (f'the log is truncated: its last message (byte {damage.truncated_at_byte} '
            f'of {damage.file_size}) is incomplete; '
            + (f'the data ends at {at}' if ulog.data_list else 'it ends before any topic data'))


def _open_log(path: Path, warn: Callable[[str], None]) -> _Log:
    """Read the log; UlogReadError without a belief topic; warn of its damage."""
    ulog, damage = _load_ulog(path)
    truncated = _truncation(ulog, damage)
    names = {item.name for item in ulog.data_list}
    belief_source = next((name for name in _BELIEF_TOPICS if name in names), None)
    gnss_source = next((name for name in _GNSS_TOPICS if name in names), None)
    if belief_source is None:
        why = f' ({truncated})' if truncated else (
            ' (the log is corrupt)' if damage.corrupt else '')
        raise UlogReadError(f'{path}: neither vehicle_odometry nor vehicle_local_position is '
                            f'logged{why}')
    if truncated:
        warn(f'{path}: {truncated}; importing the complete part')
    if damage.corrupt:
        warn(f'{path}: the log has corrupt data (pyulog: '
             f'{damage.pyulog_said or "file corruption"}); samples in the damaged parts are lost')
    return _Log(path, ulog, damage, truncated, belief_source, gnss_source)


def _parameters(log: _Log, warn: Callable[[str], None]) -> dict[str, float]:
    """The log's initial parameters; warn when one the import reads changes in flight."""
    parameters: dict[str, float] = dict(log.ulog.initial_parameters)
    watched = ('EKF2_HGT_MODE', 'EKF2_HGT_REF', 'EKF2_GPS_DELAY')
    for stamp_us, name, value in log.ulog.changed_parameters:
        if name in watched and value != parameters.get(name):
            warn(f'{log.path}: {name} changes to {value} at t = {stamp_us / 1e6:.3f} s; the '
                 f'initial value {parameters.get(name)} is used for the whole log')
    return parameters


def _import_streams(log: _Log, rate_hz: float | None, orientation: ImportOrientation,
                    delay_ns: int, height: px4.HeightReference) -> tuple[Stream, Stream]:
    """The beliefs and the fixes; UlogReadError when a field they need is not logged."""
    try:
        beliefs = import_beliefs(log.ulog, log.belief_source, rate_hz, orientation)
        fixes = (import_fixes(log.ulog, log.gnss_source, delay_ns, height)
                 if log.gnss_source is not None else Stream('no GNSS topic'))
    except KeyError as err:
        raise UlogReadError(f'{log.path}: a field the importer needs is not logged: {err} '
                            f'(topics {log.belief_source}, {log.gnss_source})') from err
    return beliefs, fixes


def _most_common(stream: Stream) -> str:
    return '; '.join(f'{count} {reason}' for reason, count
                     in stream.dropped.most_common(3)) or 'no samples'


def _check_streams(log: _Log, beliefs: Stream, fixes: Stream,
                   warn: Callable[[str], None]) -> None:
    """UlogReadError without a belief; warn of no fix and of beliefs judged UNKNOWN."""
    path = log.path
    if not beliefs.messages:
        extra = f'; {log.truncated}' if log.truncated else ''
        raise UlogReadError(f'{path}: no usable belief in {beliefs.source} '
                            f'({beliefs.samples} samples: {_most_common(beliefs)}){extra}')
    if not fixes.messages:
        where = (f'in {fixes.source} ({fixes.samples} samples: {_most_common(fixes)})'
                 if log.gnss_source is not None else
                 'is logged (neither vehicle_gps_position nor sensor_gps)')
        warn(f'{path}: no usable GNSS fix {where}: the bag has no /observations, so '
             'nothing confirms the beliefs (Ghost judges them unconfirmed past its horizon)')
    unknown = sum(beliefs.no_orientation_uncertainty.values())
    if unknown:
        reasons = '; '.join(f'{count} {reason}' for reason, count
                            in sorted(beliefs.no_orientation_uncertainty.items()))
        warn(f'{path}: {unknown} of the {len(beliefs.messages)} beliefs written have no '
             f'orientation uncertainty ({reasons}): their orientation covariance is left all '
             'zeros, which Ghost judges UNKNOWN (no uncertainty information is not certainty)')
    if beliefs.position_invalid:
        warn(f'{path}: {beliefs.position_invalid} of the {len(beliefs.messages)} beliefs '
             'written have a position PX4 flags invalid: imported with an unbounded position '
             'variance, which Ghost judges UNKNOWN (estimator_position_invalid)')


@dataclass(frozen=True, slots=True)
class _Imported:
    """What the summary reports besides the streams."""

    height: px4.HeightReference
    delay_text: str
    limits: list[str]
    output: Path
    written: int
    statuses: int


def _summary(log: _Log, beliefs: Stream, fixes: Stream, orientation: ImportOrientation,
             imported: _Imported) -> list[str]:
    """The summary lines printed after the bag was written."""
    info = log.ulog.msg_info_dict
    version = info.get('ver_sw', '')
    hardware = str(info.get('ver_hw', '') or 'hardware not stated')
    unknown = sum(beliefs.no_orientation_uncertainty.values())
    return [
        f'{PROG}: {log.path} ({log.damage.file_size} bytes, PX4 '
        f'{px4_version_label(log.ulog)} {str(version)[:8] or "unknown"}, {hardware}'
        + (', TRUNCATED' if log.truncated else '') + ')',
        *stream_lines(beliefs, f'beliefs {BELIEF_TOPIC}'),
        *stream_lines(fixes, f'fixes {OBSERVATION_TOPIC}'),
        *accuracy_lines(beliefs, fixes),
        *_orientation_lines(orientation),
        *_orientation_source_lines(beliefs),
        f'  beliefs without orientation uncertainty (orientation block all zeros): {unknown}',
        *_invalid_lines(beliefs),
        f'unmeasured axes: {imported.height.describe()}',
        f'GNSS delay: {imported.delay_text}; fix stamp = sample time - delay, written at its '
        'log time',
        f'time span: beliefs {span(beliefs)}{gaps(beliefs)}',
        f'           fixes {span(fixes)}{gaps(fixes)}',
        same_gnss_line('EKF2', f'{fixes.source} (the receiver EKF2 uses)'),
        *imported.limits,
        f'output: {imported.output} ({imported.written} messages: {len(beliefs.messages)} on '
        f'{BELIEF_TOPIC}, {len(fixes.messages)} on {OBSERVATION_TOPIC}, {imported.statuses} on '
        f'{STATUS_TOPIC}; frame {FRAME_ID}, '
        f'child {CHILD_FRAME_ID})',
    ]


def _run(args: argparse.Namespace, out: TextIO, warn: Callable[[str], None]) -> int:
    output: Path = args.output
    check_output(output)
    log = _open_log(args.log, warn)
    parameters = _parameters(log, warn)
    height = px4.height_reference(parameters)
    delay_ns, delay_text = _delay(args, parameters)
    if delay_ns == 0 and args.gps_delay_ms is None:
        warn(f'{log.path}: EKF2_GPS_DELAY is not in the log: GNSS fixes are stamped at their '
             'logged time (give --gps-delay-ms to set the delay)')
    orientation = ImportOrientation.of(log.ulog)
    beliefs, fixes = _import_streams(log, args.rate, orientation, delay_ns, height)
    _check_streams(log, beliefs, fixes, warn)
    limits = _limit_lines(parameters, args.accuracy_profile)
    statuses = import_statuses(log.ulog, beliefs.messages)
    if not statuses:
        warn(f'{log.path}: no vehicle_status is logged: the bag has no {STATUS_TOPIC}, so '
             'the decisions record the flight and mission status UNKNOWN')
    written = write_bag(output, beliefs, fixes, statuses)
    imported = _Imported(height, delay_text, limits, output, written, len(statuses))
    print('\n'.join(_summary(log, beliefs, fixes, orientation, imported)), file=out)
    return ExitCode.OK


def one_line(text: str) -> str:
    """``text`` on one line (whitespace runs become one space)."""
    return ' '.join(str(text).split())


def _is_dataflash(path: Path) -> bool:
    """Whether ``path`` is a readable file that starts as a DataFlash log does."""
    try:
        with path.open('rb') as handle:
            return handle.read(3) == b'\xa3\x95\x80'
    except OSError:
        return False  # the ULog reader says what is wrong with it


def _run_dataflash(args: argparse.Namespace, out: TextIO, warn: Callable[[str], None]) -> int:
    """The ArduPilot import (ghost_ardupilot); BAD_INPUT when it is not installed."""
    try:
        from ghost_ardupilot.dataflash_import import import_dataflash
        from ghost_ardupilot.dataflash_read import DataflashReadError
    except ImportError as err:
        return tool_error(PROG, f'{args.log}: an ArduPilot DataFlash log needs ghost_ardupilot, '
                                f'which is not installed ({err})', ExitCode.BAD_INPUT)
    try:
        return import_dataflash(args, out, warn)
    except DataflashReadError as err:
        return tool_error(PROG, str(err), ExitCode.BAD_INPUT)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ghost_import; return the exit code (0, 2 or 3, see the module docstring)."""
    args = _parser().parse_args(argv)

    def warn(message: str) -> None:
        print(f'{PROG}: warning: {one_line(message)}', file=sys.stderr)

    def run() -> int:
        try:
            if _is_dataflash(args.log):
                return _run_dataflash(args, sys.stdout, warn)
            return _run(args, sys.stdout, warn)
        except ImportUsageError as err:
            return tool_error(PROG, str(err), ExitCode.USAGE)
        except UlogReadError as err:
            message = str(err)
            if not message.startswith(str(args.log)):
                message = f'{args.log}: {message}'
            return tool_error(PROG, message, ExitCode.BAD_INPUT)

    return guarded(PROG, run)


if __name__ == '__main__':
    sys.exit(main())

