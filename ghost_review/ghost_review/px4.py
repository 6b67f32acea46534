"""What a PX4 ULog says of itself: vehicle, PX4 version, its events classified, its fixes' source.

ghost_px4 is imported here only, and only for a ULog input (a review of bags needs nothing of
PX4); it owns the reading (``ghost_px4.ulog_read``) and the events (``ghost_px4.events``).
This module maps PX4's events to the review's ``EventClass``es (``ghost_review.events`` decides
which are credited): a failsafe is classified by its cause, the failsafe flags that turned bad
shortly before it, else the warning messages just before it, else the announcement's own text;
a failsafe whose cause the log does not state is listed, never credited. GNSS losses are the
edges of the receiver's fix type, as EKF2 needs a 3-D fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import contextlib
import io
from pathlib import Path
import re
from typing import Any

from ghost_core.cli import ExitCode

from .errors import ReviewInputError, ReviewUsageError
from .events import EventClass, FixSource, LogEvent, LogInfo

__all__ = ['CAUSE_WINDOW_NS', 'failsafe_cause', 'import_ulog', 'log_info', 'message_class']

#: A failsafe's cause is looked for this long before it: PX4 waits up to COM_FAIL_ACT_T
#: (5 s by default) between a failsafe condition and its action.
CAUSE_WINDOW_NS = 6_000_000_000
#: The receiver topics, in the importer's order (vehicle_gps_position is what EKF2 fuses).
GNSS_TOPICS = ('vehicle_gps_position', 'sensor_gps')
#: A fix type below this is no 3-D fix (EKF2 does not use it).
MIN_FIX_TYPE = 3
#: Topics whose flags name a failsafe's cause, newest generation first.
_FLAG_TOPICS = ('failsafe_flags', 'vehicle_status_flags', 'vehicle_status')
#: Flag (or message) words -> class, first match wins: navigation causes before the others.
_CAUSES: tuple[tuple[re.Pattern[str], EventClass], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), event_class) for pattern, event_class in (
        (r'gps|gnss', EventClass.GNSS_LOSS),
        (r'local_position|local_velocity|global_position|local_altitude|position|velocity'
         r'|altitude estimate', EventClass.POSITION_INVALID),
        (r'attitude|angular_velocity|ekf|estimator|heading|navigation',
         EventClass.ESTIMATOR_FAILSAFE),
        (r'batter', EventClass.BATTERY_FAILSAFE),
        (r'geofence|fence', EventClass.GEOFENCE_FAILSAFE),
        (r'manual_control|manual control|rc_signal|rc signal|rc lost|rc loss|no rc|data_link'
         r'|data link|gcs|ground station|offboard', EventClass.LINK_FAILSAFE),
    ))
#: Flag names that say something is wrong when set (the others: 'valid' when set).
_BAD_WORDS = ('invalid', 'lost', 'breach', 'warning', 'failure', 'exceeded', 'unhealthy', 'low',
              'fail')
_KIND_CLASSES = {'position_invalid': EventClass.POSITION_INVALID,
                 'position_valid': EventClass.RECOVERED,
                 'ekf_reset': EventClass.ESTIMATOR_RESET, 'nav_state': EventClass.MODE}


def _px4() -> None:
    try:
        import ghost_px4  # noqa: F401
    except ImportError as err:
        raise ReviewInputError(f'a PX4 ULog needs ghost_px4, which is not installed ({err})'
                               ) from err


def message_class(text: str) -> EventClass | None:
    """The cause a flag name or a message names (``_CAUSES``), None when it names none."""
    return next((event_class for pattern, event_class in _CAUSES if pattern.search(text)),
                None)


def _turned_bad(name: str, values: Sequence[int]) -> Iterable[int]:
    """Rows where flag `name` turned bad (set for a 'bad' flag, cleared for a 'valid' one)."""
    bad_when_set = any(word in name for word in _BAD_WORDS)
    for row in range(1, len(values)):
        before, now = bool(values[row - 1]), bool(values[row])
        if before != now and now == bad_when_set:
            yield row


def _flag_rises(ulog: Any) -> list[tuple[int, str]]:
    """(time ns, topic.field) of every flag that turned bad, in the first flag topic logged."""
    from ghost_px4.ulog_read import dataset, ns

    for topic in _FLAG_TOPICS:
        data = dataset(ulog, topic)
        if data is None or 'timestamp' not in data:
            continue
        times = [int(t) for t in ns(data['timestamp']).tolist()]
        rises = []
        for name, column in data.items():
            if name == 'timestamp' or name.startswith('mode_req') or name == 'failsafe' \
                    or message_class(name) is None and not any(w in name for w in _BAD_WORDS):
                continue
            values = [int(v) for v in column.tolist()]
            rises += [(times[row], f'{topic}.{name}') for row in _turned_bad(name, values)]
        if topic != 'vehicle_status' or rises:
            return sorted(rises)
    return []


def failsafe_cause(time_ns: int, announcement: str, rises: Sequence[tuple[int, str]],
                   warnings: Sequence[tuple[int, str]]) -> tuple[EventClass, str]:
    """The class of a failsafe at `time_ns` and what named its cause.

    The flags that turned bad within ``CAUSE_WINDOW_NS`` before it, else the warning messages
    in that window, else the announcement's own text; FAILSAFE_CAUSE_UNKNOWN when none names
    a cause. Several causes: the first by ``_CAUSES``' order (navigation first).
    """
    for found in (rises, warnings, [(time_ns, announcement)]):
        named = [(message_class(text) or EventClass.OTHER_FAILSAFE, text)
                 for at, text in found if time_ns - CAUSE_WINDOW_NS <= at <= time_ns]
        if found is not rises:
            named = [(event_class, text) for event_class, text in named
                     if event_class is not EventClass.OTHER_FAILSAFE]
        if named:
            order = [event_class for _, event_class in _CAUSES] + [EventClass.OTHER_FAILSAFE]
            named.sort(key=lambda pair: order.index(pair[0]))
            return named[0][0], ', '.join(dict.fromkeys(text for _, text in named))
    return EventClass.FAILSAFE_CAUSE_UNKNOWN, ''


def _gnss_events(ulog: Any) -> list[LogEvent]:
    """GNSS loss (the fix type falling below a 3-D fix, or none at first) and its return."""
    from ghost_px4.ulog_read import dataset, ns

    for topic in GNSS_TOPICS:
        data = dataset(ulog, topic)
        if data is None or 'fix_type' not in data or 'timestamp' not in data:
            continue
        times = [int(t) for t in ns(data['timestamp']).tolist()]
        events, previous = [], None
        for time_ns, fix in zip(times, (int(v) for v in data['fix_type'].tolist()), strict=True):
            good = fix >= MIN_FIX_TYPE
            if previous is None and not good:
                events.append(LogEvent(time_ns, 'gnss', f'{topic}.fix_type {fix} at first '
                                       'sample (no 3-D fix)', EventClass.GNSS_LOSS))
            elif previous is not None and good != (previous >= MIN_FIX_TYPE):
                detail = f'{topic}.fix_type {previous} -> {fix}'
                events.append(LogEvent(time_ns, 'gnss', detail + ('' if good else
                                       ' (no 3-D fix)'),
                                       EventClass.RECOVERED if good else EventClass.GNSS_LOSS))
            previous = fix
        return events
    return []


def _classified(ulog: Any) -> list[LogEvent]:
    from ghost_px4.events import FAILSAFE_MESSAGE, px4_events

    raw = px4_events(ulog)
    rises = _flag_rises(ulog)
    warnings = [(event.time_ns, event.detail) for event in raw if event.kind == 'log_message'
                and FAILSAFE_MESSAGE.match(event.detail) is None]
    events = []
    for event in raw:
        detail, event_class = event.detail, _KIND_CLASSES.get(event.kind, EventClass.MESSAGE)
        announced = event.kind == 'log_message' and FAILSAFE_MESSAGE.match(event.detail)
        if event.kind == 'failsafe' and event.detail.startswith('failsafe off'):
            event_class = EventClass.RECOVERED
        elif event.kind == 'failsafe' or announced:
            event_class, cause = failsafe_cause(event.time_ns, event.detail, rises, warnings)
            detail += f' (cause: {cause})' if cause else ' (no cause logged)'
        events.append(LogEvent(event.time_ns, event.kind, detail, event_class))
    return sorted(events + _gnss_events(ulog), key=lambda e: (e.time_ns, e.kind, e.detail))


def _fix_source(ulog: Any) -> FixSource | None:
    """The GNSS topic the importer takes the fixes from, and whether EKF2 fuses it."""
    names = {item.name for item in ulog.data_list}
    topic = next((name for name in GNSS_TOPICS if name in names), None)
    if topic is None:
        return None
    parameters: Mapping[str, Any] = getattr(ulog, 'initial_parameters', None) or {}
    for name, meaning in (('EKF2_GPS_CTRL', 'bit 0: horizontal position'),
                          ('EKF2_AID_MASK', 'bit 0: use GPS')):
        if name in parameters:
            value = int(parameters[name])
            return FixSource(topic, bool(value & 1), f'{name}={value}, {meaning}')
    return FixSource(topic, True, "neither EKF2_GPS_CTRL nor EKF2_AID_MASK is in the log: "
                                  "PX4's default fuses GNSS")


def log_info(path: Path) -> LogInfo:
    """Read the log's vehicle, version, events and fix source; ReviewInputError when unreadable."""
    _px4()
    from ghost_px4.events import EVENT_TOPICS
    from ghost_px4.ulog_read import load_ulog, px4_version_label, UlogReadError

    try:
        ulog, _ = load_ulog(path, (*EVENT_TOPICS, *GNSS_TOPICS))
    except UlogReadError as err:
        raise ReviewInputError(str(err)) from err
    info = ulog.msg_info_dict
    vehicle = ' '.join(str(info[key]) for key in ('ver_hw', 'ver_hw_subtype')
                       if info.get(key)) or 'not stated'
    return LogInfo('PX4', vehicle, px4_version_label(ulog), tuple(_classified(ulog)),
                   _fix_source(ulog))


def import_ulog(path: Path, output: Path) -> list[str]:
    """Import the log into an input bag at `output` (ghost_import); its warnings.

    ReviewInputError with the importer's own one-line error when the log cannot be used;
    ReviewUsageError when the bag cannot be written; KeyboardInterrupt when it was
    interrupted; RuntimeError (an internal fault) for any other failure.
    """
    _px4()
    from ghost_px4.ulog_import import main as import_main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = import_main([str(path), '--output', str(output)])
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    if code == ExitCode.INTERRUPTED:
        # The importer turned Ctrl-C into its exit code: it stops the review, not this log.
        raise KeyboardInterrupt
    if code != ExitCode.OK:
        errors = [line for line in lines if ': error: ' in line] or lines or [f'exit {code}']
        message = errors[-1].split(': error: ', 1)[-1]
        if code == ExitCode.BAD_INPUT:
            raise ReviewInputError(message)
        if code == ExitCode.USAGE:
            # The only usage error left to it: the bag cannot be written under the output.
            raise ReviewUsageError(message)
        raise RuntimeError(f'ghost_import exited {code}: {message}')
    return [line.split(': warning: ', 1)[-1] for line in lines if ': warning: ' in line]
