"""ghost_import for an ArduPilot DataFlash log: the same input bag as for a PX4 ULog.

``ghost_import`` (ghost_px4.ulog_import.main) hands a log that starts as a DataFlash log does
to ``import_dataflash``, with its parsed arguments; the bag, the staging and the summary's
stream lines are that command's (ghost_px4.ulog_import), so both autopilots give the same bag
and the same summary layout. Conventions: docs/real-data.md, "ArduPilot".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
import statistics
from typing import TextIO

from ghost_ardupilot import ekf
from ghost_ardupilot.dataflash_read import DataflashLog, DataflashReadError, load_dataflash
from ghost_ardupilot.dataflash_streams import (
    BELIEF_TYPES,
    BeliefStream,
    EkfLayout,
    FixStream,
    GNSS_TYPES,
    gps_delay,
    GpsDelay,
    import_beliefs,
    import_fixes,
    import_statuses,
    STATUS_TYPES,
    XKV_MAX_AGE_NS,
)
from ghost_ardupilot.events import ardupilot_events, ardupilot_limits, ArduPilotEvent
from ghost_core.cli import ExitCode
from ghost_core.profiles import accuracy_profile
from ghost_px4.live import CHILD_FRAME_ID, FRAME_ID
from ghost_px4.ulog_import import (
    accuracy_lines,
    BELIEF_TOPIC,
    check_output,
    gaps,
    OBSERVATION_TOPIC,
    PROG,
    same_gnss_line,
    span,
    stream_lines,
    write_bag,
)

__all__ = ['LOADED_TYPES', 'import_dataflash']

LOADED_TYPES = (*BELIEF_TYPES, *GNSS_TYPES, *STATUS_TYPES, 'ERR')
#: Parameters whose change in flight the summary warns of (the import uses the first value).
_WATCHED = ('EK3_SRC1_POSZ', 'EK2_ALT_SOURCE', 'GPS_DELAY_MS', 'GPS1_DELAY_MS',
            'AHRS_EKF_TYPE')
#: How many ArduPilot events of each kind the summary lists before it says "and N more".
_LISTED = 12


def _layout(log: DataflashLog) -> EkfLayout:
    layout = EkfLayout.of(log)
    if layout is None:
        extra = f' ({log.damage.describe(log.last_time_us)})' if log.damage.damaged else ''
        raise DataflashReadError(f'{log.path}: no EKF state is logged (neither XKF1 nor NKF1)'
                                 f'{extra}')
    return layout


def _used_instances(fixes: FixStream) -> list[int]:
    return sorted(fixes.instances) or [0]


def _delays(log: DataflashLog, given_ms: float | None) -> dict[int, GpsDelay]:
    return {instance: gps_delay(log, instance, given_ms) for instance in (0, 1, 2)}


def _event_lines(events: tuple[ArduPilotEvent, ...]) -> list[str]:
    lines = []
    for kind, title in (('error', 'ERR'), ('event', 'EV'), ('mode', 'MODE'),
                        ('message', 'MSG')):
        found = [event for event in events if event.kind == kind]
        lines.append(f'  {title}: {len(found)}' + (
            '' if found else ' (none logged)'))
        for event in found[:_LISTED]:
            mark = ' [navigation: Ghost lead time is measured against it]' if event.safety else ''
            lines.append(f'    t = {event.time_ns / 1e9:.3f} s: {event.detail}{mark}')
        if len(found) > _LISTED:
            lines.append(f'    ... and {len(found) - _LISTED} more')
    return lines


def _covariance_lines(layout: EkfLayout, beliefs: BeliefStream) -> list[str]:
    written = len(beliefs.messages)
    missing = sum(beliefs.no_covariance.values())
    if not layout.variances:
        why = ('EKF2 logs no state variances' if layout.generation == 2
               else 'this EKF3 log has no XKV1/XKV2')
        return [f'  covariance: none: {why}, so the estimator states no uncertainty; all '
                f'{written} beliefs are imported with an all-zero covariance, which Ghost '
                'judges UNKNOWN (no_covariance_information): it never proceeds on them']
    lines = [f'  covariance from XKV1/XKV2 of the primary core (about 2 Hz): each belief takes '
             f'the latest at or before it, at most {XKV_MAX_AGE_NS / 1e9:g} s old (before the '
             f'first: the first, if within {XKV_MAX_AGE_NS / 1e9:g} s); beliefs without one: '
             f'{missing} (all-zero covariance: UNKNOWN)']
    lines += [f'    {count}: {reason}' for reason, count in sorted(beliefs.no_covariance.items())]
    if beliefs.variance_ages:
        ages = sorted(beliefs.variance_ages)
        lines.append(f'    time to the XKV used: median {statistics.median(ages) / 1e6:.0f} ms, '
                     f'max {ages[-1] / 1e6:.0f} ms')
    return lines


def _invalid_lines(beliefs: BeliefStream) -> list[str]:
    lines = [f'  beliefs with a block the EKF flags invalid (XKF4 SS/TS/FS): '
             f'{beliefs.flagged} (kept, +inf variances: judged UNKNOWN)']
    lines += [f'    {count}: {reason}' for reason, count in sorted(beliefs.invalid.items())]
    return lines


def _height_line(fixes: FixStream) -> str:
    if not fixes.heights:
        return 'unmeasured axes: no fix written'
    parts = []
    for text, count in fixes.heights.most_common():
        compared = ekf.GPS_HEIGHT.value in text
        parts.append(f'{text}: {count} fixes, vertical axis '
                     + ('compared (variance VAcc²)' if compared
                        else 'marked not measured (variance 1e6 m²)'))
    return "unmeasured axes: the EKF's height source " + '; '.join(parts)


def _limit_lines(parameters: Mapping[str, float], profile_name: str) -> list[str]:
    profile = accuracy_profile(profile_name)
    lines = ['ArduPilot limits of this log (Ghost compares beliefs against its own thresholds):']
    try:
        lines += [f'  {line}' for line in ardupilot_limits(parameters).lines()]
    except ValueError as err:
        lines.append(f'  not shown: {err}')
    lines.append(f'Ghost accuracy profile {profile_name!r}: {profile.describe()}')
    return lines


@dataclass(frozen=True, slots=True)
class _Imported:
    layout: EkfLayout
    delays: Mapping[int, GpsDelay]
    written: int
    statuses: int


def _summary(log: DataflashLog, args: argparse.Namespace, beliefs: BeliefStream,
             fixes: FixStream, events: tuple[ArduPilotEvent, ...],
             imported: _Imported) -> list[str]:
    layout = imported.layout
    damage = log.damage.describe(log.last_time_us)
    cores = ', '.join(f'core {core}: {count}' for core, count in sorted(beliefs.cores.items()))
    instances = _used_instances(fixes)
    delays = '; '.join(f'GPS {i + 1}: {imported.delays[i].source}' for i in instances)
    return [
        f'{PROG}: {log.path} ({log.damage.file_size} bytes, {log.firmware()}, {log.board()}, '
        f'{layout.label}' + (', DAMAGED' if damage else '') + ')',
        *([f'damage: {damage}'] if damage else []),
        *stream_lines(beliefs, f'beliefs {BELIEF_TOPIC}'),
        f'  primary core (XKF4.PI): {cores or "none"}; rows of the other cores, not read: '
        f'{beliefs.other_cores}',
        *stream_lines(fixes, f'fixes {OBSERVATION_TOPIC}'),
        f'  receiver the EKF uses ({layout.selection}.GI): '
        + ', '.join(f'GPS {i + 1}' for i in instances),
        *accuracy_lines(beliefs, fixes),
        *_covariance_lines(layout, beliefs),
        *_invalid_lines(beliefs),
        _height_line(fixes),
        f'GNSS delay: {delays}; fix stamp = GPS.TimeUS - delay, written at its log time',
        f'time span: beliefs {span(beliefs)}{gaps(beliefs)}',
        f'           fixes {span(fixes)}{gaps(fixes)}',
        same_gnss_line(layout.label, 'GPS/GPA (the receiver the EKF selects)'),
        "ArduPilot's own events (ERR, EV, MODE, MSG):",
        *_event_lines(events),
        *_limit_lines(log.parameters, args.accuracy_profile),
        f'output: {args.output} ({imported.written} messages: {len(beliefs.messages)} on '
        f'{BELIEF_TOPIC}, {len(fixes.messages)} on {OBSERVATION_TOPIC}, {imported.statuses} on '
        f'/vehicle_status; frame {FRAME_ID}, child {CHILD_FRAME_ID})',
    ]


def _warnings(log: DataflashLog, layout: EkfLayout, beliefs: BeliefStream, fixes: FixStream,
              warn: Callable[[str], None]) -> None:
    path = log.path
    damage = log.damage.describe(log.last_time_us)
    if damage:
        warn(f'{path}: {damage}')
    for stamp_us, name, value in log.changed_parameters:
        if name in _WATCHED:
            warn(f'{path}: {name} changes to {value:g} at t = {stamp_us / 1e6:.3f} s; the '
                 f'initial value {log.parameters[name]:g} is used for the whole log')
    if not layout.variances:
        warn(f'{path}: {layout.label} states no uncertainty ('
             + ('EKF2 logs no state variances' if layout.generation == 2
                else 'no XKV1/XKV2 in this log')
             + f'): all {len(beliefs.messages)} beliefs have an all-zero covariance, which '
             'Ghost judges UNKNOWN: it never proceeds on this log')
    if not fixes.messages:
        common = '; '.join(f'{count} {reason}' for reason, count in
                           fixes.dropped.most_common(3)) or 'no GPS logged'
        warn(f'{path}: no usable GNSS fix ({fixes.samples} samples: {common}): the bag has no '
             '/observations, so nothing confirms the beliefs')
    if beliefs.position_invalid:
        warn(f'{path}: {beliefs.position_invalid} of the {len(beliefs.messages)} beliefs have '
             'a position the EKF flags invalid (XKF4): imported with an unbounded position '
             'variance, which Ghost judges UNKNOWN (estimator_position_invalid)')


def import_dataflash(args: argparse.Namespace, out: TextIO,
                     warn: Callable[[str], None]) -> int:
    """Import ``args.log`` (a DataFlash log) into the bag ``args.output``; print the summary.

    ``DataflashReadError`` when the log cannot be used; ImportUsageError (ghost_px4) when the
    bag cannot be written.
    """
    check_output(args.output)
    log = load_dataflash(args.log, LOADED_TYPES)
    layout = _layout(log)
    beliefs = import_beliefs(log, layout, args.rate)
    if not beliefs.messages:
        reasons = '; '.join(f'{count} {reason}' for reason, count
                            in beliefs.dropped.most_common(3)) or 'no samples'
        raise DataflashReadError(f'{log.path}: no usable belief in {layout.state} '
                                 f'({beliefs.samples} samples: {reasons})')
    delays = _delays(log, args.gps_delay_ms)
    fixes = import_fixes(log, layout, delays)
    _warnings(log, layout, beliefs, fixes, warn)
    statuses = import_statuses(log, beliefs.messages)
    written = write_bag(args.output, beliefs, fixes, statuses)
    events = ardupilot_events(log)
    imported = _Imported(layout, delays, written, len(statuses))
    print('\n'.join(_summary(log, args, beliefs, fixes, events, imported)), file=out)
    return ExitCode.OK
