"""PX4's own safety-relevant events in a ULog flight log, and its position failsafe limits.

One cohesive job (what PX4 itself said and decided during a flight), so one module past 400
lines.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
import math
from pathlib import Path
import re
from typing import Any

import numpy

from ghost_px4.ulog_read import dataset, load_ulog, ns

__all__ = [
    'COMMANDER_POSITION_FLAGS',
    'EKF_POSITION_FLAG',
    'EVENT_KINDS',
    'EVENT_TOPICS',
    'FAILSAFE_MESSAGE',
    'LIMIT_PARAMETERS',
    'LimitParameter',
    'Px4Event',
    'Px4Limits',
    'RESET_COUNTERS',
    'SAFETY_KINDS',
    'WARNING_LEVEL',
    'load_px4_events',
    'nav_state_name',
    'px4_events',
    'px4_limits',
]

EVENT_KINDS = ('failsafe', 'nav_state', 'position_invalid', 'position_valid', 'ekf_reset',
               'log_message')
#: The kinds that count as PX4 acting on a degraded position/estimator (what Ghost should lead).
SAFETY_KINDS = ('failsafe', 'position_invalid')
#: PX4's own announcement of a failsafe in a logged message, by generation, after the module
#: tag v1.14 on puts first ('[failsafe] '): 'failsafe mode on' (the oldest commander),
#: 'Failsafe enabled: <reason>' (to v1.13, beside vehicle_status.failsafe), 'Failsafe
#: activated' and 'Failsafe activated, entering Hold for N seconds' (v1.14 on, also when the
#: action is only a warning, which leaves vehicle_status.failsafe unset).
FAILSAFE_MESSAGE = re.compile(
    r'(?:\[\w+\]\s*)?(?:failsafe activated|failsafe enabled|failsafe mode on)\b',
    re.IGNORECASE)

#: The log topics ``px4_events`` reads (``load_px4_events`` loads only these).
EVENT_TOPICS = ('vehicle_status', 'vehicle_status_flags', 'failsafe_flags',
                'vehicle_local_position', 'estimator_event_flags', 'estimator_selector_status')

#: Commander's own verdict on the local position, by generation: (topic, field, whether the
#: field says "invalid"). The first one the log has is used.
COMMANDER_POSITION_FLAGS: tuple[tuple[str, str, bool], ...] = (
    ('failsafe_flags', 'local_position_invalid', True),  # v1.14 and later
    ('vehicle_status_flags', 'local_position_valid', False),  # the condition_ prefix dropped
    ('vehicle_status_flags', 'condition_local_position_valid', False),  # v1.7 .. v1.12
    ('vehicle_status', 'condition_local_position_valid', False),  # before vehicle_status_flags
)
#: EKF2's own position validity, logged by every generation.
EKF_POSITION_FLAG = ('vehicle_local_position', 'xy_valid')
#: vehicle_local_position's reset counters (heading_reset_counter from about v1.13 on).
RESET_COUNTERS = ('xy_reset_counter', 'z_reset_counter', 'vxy_reset_counter',
                  'vz_reset_counter', 'heading_reset_counter')
#: ULog message log levels are syslog's (0 emergency .. 7 debug): warning or worse is kept.
WARNING_LEVEL = 4

# vehicle_status.nav_state codes (PX4 commander NAVIGATION_STATE_*). Codes 6-9 and 16 were
# freed and some reused: the name depends on the log's PX4 version.
_NAV_STATES = {
    0: 'MANUAL', 1: 'ALTCTL', 2: 'POSCTL', 3: 'AUTO_MISSION', 4: 'AUTO_LOITER', 5: 'AUTO_RTL',
    10: 'ACRO', 11: 'UNUSED', 12: 'DESCEND', 13: 'TERMINATION', 14: 'OFFBOARD', 15: 'STAB',
    17: 'AUTO_TAKEOFF', 18: 'AUTO_LAND', 19: 'AUTO_FOLLOW_TARGET', 20: 'AUTO_PRECLAND',
    21: 'ORBIT', 22: 'AUTO_VTOL_TAKEOFF',
}
# Up to v1.14 (the codes were already unused by v1.14, so older names are safe there).
_NAV_STATES_OLD = {6: 'AUTO_RCRECOVER', 7: 'AUTO_RTGS', 8: 'AUTO_LANDENGFAIL',
                   9: 'AUTO_LANDGPSFAIL', 16: 'RATTITUDE'}
# v1.15 added POSITION_SLOW and the external (ROS 2) modes, v1.17 ALTITUDE_CRUISE.
_NAV_STATES_NEW = {6: ((1, 15), 'POSITION_SLOW'), 8: ((1, 17), 'ALTITUDE_CRUISE'),
                   **{22 + n: ((1, 15), f'EXTERNAL{n}') for n in range(1, 9)}}


# --- events ---

@dataclass(frozen=True, slots=True, order=True)
class Px4Event:
    """One thing PX4 did or said, at PX4 time since boot; events order by time, kind, detail."""

    time_ns: int  # PX4 time since boot, nanoseconds (ULog timestamps are microseconds)
    kind: str  # one of EVENT_KINDS
    detail: str  # short human text, e.g. 'failsafe on (nav_state AUTO_RTL)'

    def __post_init__(self) -> None:
        if isinstance(self.time_ns, bool) or not isinstance(self.time_ns, int) \
                or self.time_ns < 0:
            raise ValueError(f'Px4Event.time_ns: {self.time_ns!r} is not a non-negative '
                             'integer number of nanoseconds')
        if self.kind not in EVENT_KINDS:
            raise ValueError(f'Px4Event.kind: {self.kind!r} is not one of '
                             f'{", ".join(EVENT_KINDS)}')
        if not isinstance(self.detail, str):
            raise ValueError(f'Px4Event.detail: {self.detail!r} is not a string')

    @property
    def safety(self) -> bool:
        """PX4 acting on a degraded position or estimator, what Ghost should lead.

        A failsafe's start, a position becoming invalid, or a logged message announcing a
        failsafe (``FAILSAFE_MESSAGE``); a failsafe ending is none.
        """
        if self.kind == 'log_message':
            return FAILSAFE_MESSAGE.match(self.detail) is not None
        return self.kind in SAFETY_KINDS and not self.detail.startswith('failsafe off')


def _version(ulog: Any) -> tuple[int, int] | None:
    """(major, minor) of the PX4 that wrote the log (ver_sw_release 0xMMmmpptt), or None."""
    info = getattr(ulog, 'msg_info_dict', None) or {}
    release = info.get('ver_sw_release')
    if not isinstance(release, int) or release <= 0:
        return None
    return (release >> 24) & 0xFF, (release >> 16) & 0xFF


def nav_state_name(code: int, version: tuple[int, int] | None = None) -> str:
    """The commander's name of a vehicle_status.nav_state code, as PX4 ``version`` names it.

    Codes whose meaning changed across generations get both names ('A/B') when the version is
    not known; a code no generation names prints as the number.
    """
    new = _NAV_STATES_NEW.get(code)
    old = _NAV_STATES_OLD.get(code)
    if code in _NAV_STATES:
        return _NAV_STATES[code]
    if version is None:
        names = [name for name in (old, new[1] if new else None) if name]
        return '/'.join(names) if names else str(code)
    if new is not None and version >= new[0]:
        return new[1]
    if old is not None and version < (1, 15):
        return old
    return str(code)


def _instances(ulog: Any, name: str) -> list[tuple[int, dict[str, numpy.ndarray]]]:
    """Every logged instance (multi_id) of topic ``name`` with its columns, by multi_id."""
    found = [(int(item.multi_id), dict(item.data)) for item in ulog.data_list
             if item.name == name]
    return sorted(found, key=lambda pair: pair[0])


def _times_ns(data: Mapping[str, numpy.ndarray]) -> list[int]:
    return [int(t) for t in ns(data['timestamp']).tolist()]


def _changes(values: numpy.ndarray) -> Iterator[tuple[int, int, int | None]]:
    """(row, value, previous value; None on the first row) of the first row and every change."""
    previous: int | None = None
    for row, value in enumerate(numpy.asarray(values).astype(numpy.int64).tolist()):
        if previous is None or value != previous:
            yield row, int(value), previous
        previous = int(value)


def _status_events(ulog: Any) -> list[Px4Event]:
    """nav_state changes (the first sample too) and vehicle_status.failsafe edges."""
    status = dataset(ulog, 'vehicle_status')
    if status is None or 'timestamp' not in status:
        return []
    times = _times_ns(status)
    version = _version(ulog)
    events: list[Px4Event] = []
    nav = status.get('nav_state')
    names = None
    if nav is not None:
        names = [nav_state_name(int(code), version) for code in nav.tolist()]
        for row, _, previous in _changes(nav):
            detail = (f'{names[row]} (first sample)' if previous is None
                      else f'{nav_state_name(previous, version)} -> {names[row]}')
            events.append(Px4Event(times[row], 'nav_state', detail))
    failsafe = status.get('failsafe')
    if failsafe is not None:
        for row, value, previous in _changes(failsafe != 0):
            if previous is None and not value:
                continue
            state = 'on' if value else 'off'
            where = f' (nav_state {names[row]})' if names is not None else ''
            first = ' at first sample' if previous is None else ''
            events.append(Px4Event(times[row], 'failsafe', f'failsafe {state}{where}{first}'))
    return events


def _validity_events(data: Mapping[str, numpy.ndarray], topic: str, field: str,
                     says_invalid: bool) -> list[Px4Event]:
    """position_invalid/position_valid at each edge of one validity field.

    The first sample gives an event only when it says invalid.
    """
    if field not in data or 'timestamp' not in data:
        return []
    times = _times_ns(data)
    invalid = (data[field] != 0) if says_invalid else (data[field] == 0)
    events = []
    for row, value, previous in _changes(invalid):
        if previous is None and not value:
            continue
        said = bool(value) == says_invalid
        first = ' at first sample' if previous is None else ''
        kind = 'position_invalid' if value else 'position_valid'
        events.append(Px4Event(times[row], kind,
                               f'{topic}.{field} {str(said).lower()}{first}'))
    return events


def _position_events(ulog: Any) -> list[Px4Event]:
    """Edges of the commander's position verdict (first source logged) and of EKF2's xy_valid."""
    events: list[Px4Event] = []
    for topic, field, says_invalid in COMMANDER_POSITION_FLAGS:
        data = dataset(ulog, topic)
        if data is not None and field in data:
            events += _validity_events(data, topic, field, says_invalid)
            break
    topic, field = EKF_POSITION_FLAG
    local = dataset(ulog, topic)
    if local is not None:
        events += _validity_events(local, topic, field, False)
    return events


def _counter_events(local: Mapping[str, numpy.ndarray]) -> list[Px4Event]:
    """ekf_reset at every change of a vehicle_local_position reset counter (not the first)."""
    if 'timestamp' not in local:
        return []
    times = _times_ns(local)
    events = []
    for counter in RESET_COUNTERS:
        if counter not in local:
            continue
        for row, value, previous in _changes(local[counter]):
            if previous is not None:
                events.append(Px4Event(times[row], 'ekf_reset',
                                       f'{counter} {previous} -> {value}'))
    return events


def _primary_instance(ulog: Any) -> Callable[[int], int]:
    """The primary EKF2 instance at a time (ns), from estimator_selector_status; else 0."""
    selector = dataset(ulog, 'estimator_selector_status')
    if selector is None or 'primary_instance' not in selector or 'timestamp' not in selector \
            or not len(selector['timestamp']):
        return lambda time_ns: 0
    times = _times_ns(selector)
    primary = [int(v) for v in selector['primary_instance'].tolist()]

    def at(time_ns: int) -> int:
        return primary[max(bisect_right(times, time_ns) - 1, 0)]
    return at


def _event_flag_events(ulog: Any) -> list[Px4Event]:
    """ekf_reset for each reset_* flag of a new estimator_event_flags sample of the primary EKF.

    EKF2 republishes its last event flags about once a second with a new timestamp, so a sample
    is new only when its information_event_changes counter moved (where that counter is
    logged; else a flag counts on its rising edge). The first sample is new only when its
    event (timestamp_sample) happened after logging started: the logger's first copy may carry
    an event from long before.
    """
    primary = _primary_instance(ulog)
    log_start_ns = int(getattr(ulog, 'start_timestamp', 0)) * 1000
    events: list[Px4Event] = []
    for instance, data in _instances(ulog, 'estimator_event_flags'):
        flags = sorted(name for name in data if name.startswith('reset_'))
        if not flags or 'timestamp' not in data:
            continue
        times = _times_ns(data)
        happened = ([int(t) for t in ns(data['timestamp_sample']).tolist()]
                    if 'timestamp_sample' in data else times)
        counter = data.get('information_event_changes')
        for row, time_ns in enumerate(times):
            if primary(time_ns) != instance:
                continue
            if row == 0:
                fresh = happened[0] >= log_start_ns
            elif counter is not None:
                fresh = bool(counter[row] != counter[row - 1])
            else:
                fresh = True
            if not fresh:
                continue
            for flag in flags:
                rising = counter is not None or row == 0 or not data[flag][row - 1]
                if data[flag][row] and rising:
                    events.append(Px4Event(time_ns, 'ekf_reset',
                                           f'{flag} (estimator {instance})'))
    return events


def _level(raw: int) -> int:
    """A ULog message's syslog level: PX4 writes it as the character '0'..'7'."""
    return raw - ord('0') if raw >= ord('0') else raw


def _message_events(ulog: Any) -> list[Px4Event]:
    """log_message for each logged message (plain and tagged) of warning level or worse."""
    messages = list(getattr(ulog, 'logged_messages', None) or [])
    for tagged in (getattr(ulog, 'logged_messages_tagged', None) or {}).values():
        messages += list(tagged)
    seen: set[tuple[int, str]] = set()
    events = []
    for message in messages:
        key = (int(message.timestamp), str(message.message))
        if _level(int(message.log_level)) > WARNING_LEVEL or key in seen:
            continue
        seen.add(key)
        time_ns = int(ns(numpy.array([key[0]], dtype=numpy.uint64))[0])
        events.append(Px4Event(time_ns, 'log_message', key[1].strip()))
    return events


def px4_events(ulog: Any) -> tuple[Px4Event, ...]:
    """PX4's own safety-relevant events in a pyulog ULog, sorted by time_ns, then kind.

    Only what the log has, read by each topic's own field list (PX4 v1.7 to v1.17):

    - ``failsafe``: edges of vehicle_status.failsafe (on at the first sample is one too). A
      failsafe whose action is only a warning does not set it from about v1.15 on: PX4 then
      only says 'Failsafe activated' (a ``log_message``).
    - ``nav_state``: the first vehicle_status.nav_state and every change, by name.
    - ``position_invalid``/``position_valid``: edges of the commander's verdict (the first of
      ``COMMANDER_POSITION_FLAGS`` logged) and of vehicle_local_position.xy_valid, each event
      naming its field; a first sample gives one only when it says invalid.
    - ``ekf_reset``: changes of the vehicle_local_position reset counters, and the reset_*
      flags of new estimator_event_flags samples of the primary EKF2 instance.
    - ``log_message``: logged messages of warning level or worse.

    Times are PX4's own: a topic's first sample may be older than ``ulog.start_timestamp``
    (the logger starts with the last message published before it).
    """
    events = (_status_events(ulog) + _position_events(ulog) + _event_flag_events(ulog)
              + _message_events(ulog))
    local = dataset(ulog, 'vehicle_local_position')
    if local is not None:
        events += _counter_events(local)
    return tuple(sorted(events))


def load_px4_events(path: Path | str) -> tuple[Px4Event, ...]:
    """``px4_events`` of the log at ``path``, reading only ``EVENT_TOPICS``.

    ``UlogReadError`` (a ValueError naming the file) when it cannot be read as a ULog.
    """
    ulog, _ = load_ulog(Path(path), EVENT_TOPICS)
    return px4_events(ulog)


# --- the log's own limits ---

@dataclass(frozen=True, slots=True)
class LimitParameter:
    """A PX4 parameter bounding PX4's position/velocity failsafe, and its PX4 default."""

    parameter: str
    attribute: str  # the Px4Limits field
    default: float
    unit: str
    meaning: str


#: The limits, with PX4's defaults (commander_params.c, ekf2_params.c). Not every generation
#: has every one (e.g. COM_POS_FS_EPV left with PX4 1.13, COM_POS_FS_DELAY by 1.16): a log
#: that does not state one is shown with PX4's default, marked "not in this log".
LIMIT_PARAMETERS = (
    LimitParameter('COM_POS_FS_EPH', 'com_pos_fs_eph_m', 5.0, 'm',
                   "PX4's position failsafe fires when eph exceeds this (2.5x this once the "
                   'position was valid, 1x to become valid again; -1 disables)'),
    LimitParameter('COM_POS_FS_EPV', 'com_pos_fs_epv_m', 10.0, 'm',
                   "older PX4's vertical position error (epv) failsafe threshold"),
    LimitParameter('COM_VEL_FS_EVH', 'com_vel_fs_evh_m_s', 1.0, 'm/s',
                   "PX4's velocity failsafe fires when evh exceeds this (same 2.5x "
                   'hysteresis)'),
    LimitParameter('EKF2_NOAID_TOUT', 'ekf2_noaid_tout_us', 5_000_000.0, 'us',
                   'EKF2 declares its horizontal position invalid after this long without '
                   'aiding measurements'),
    LimitParameter('COM_POS_FS_DELAY', 'com_pos_fs_delay_s', 1.0, 's',
                   'a position estimate older than this counts as invalid (stale)'),
    LimitParameter('EKF2_REQ_EPH', 'ekf2_req_eph_m', 3.0, 'm',
                   'GNSS eph must be below this before EKF2 starts using GNSS (older PX4: '
                   'default 5 m)'),
)
_DEFAULTS = {limit.parameter: limit.default for limit in LIMIT_PARAMETERS}


@dataclass(frozen=True, slots=True)
class Px4Limits:
    """The log's own position/velocity failsafe limits (PX4's default where it states none)."""

    com_pos_fs_eph_m: float = _DEFAULTS['COM_POS_FS_EPH']
    com_pos_fs_epv_m: float = _DEFAULTS['COM_POS_FS_EPV']
    com_vel_fs_evh_m_s: float = _DEFAULTS['COM_VEL_FS_EVH']
    ekf2_noaid_tout_us: float = _DEFAULTS['EKF2_NOAID_TOUT']
    com_pos_fs_delay_s: float = _DEFAULTS['COM_POS_FS_DELAY']
    ekf2_req_eph_m: float = _DEFAULTS['EKF2_REQ_EPH']
    #: The parameters (PX4 names) the log stated; the rest are PX4's defaults.
    from_log: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for limit in LIMIT_PARAMETERS:
            value = getattr(self, limit.attribute)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise ValueError(f'Px4Limits.{limit.attribute} ({limit.parameter}): {value!r} '
                                 'is not a finite number')
        unknown = sorted(self.from_log - set(_DEFAULTS))
        if unknown:
            raise ValueError(f'Px4Limits.from_log: {", ".join(unknown)} not among '
                             f'{", ".join(_DEFAULTS)}')

    def value(self, parameter: str) -> float:
        """The value of a parameter by its PX4 name (KeyError for one not in LIMIT_PARAMETERS)."""
        for limit in LIMIT_PARAMETERS:
            if limit.parameter == parameter:
                return float(getattr(self, limit.attribute))
        raise KeyError(f'{parameter!r} is not one of {", ".join(_DEFAULTS)}')

    def lines(self) -> list[str]:
        """One line per limit: name, value, unit, where it comes from, what PX4 does with it."""
        out = []
        for limit in LIMIT_PARAMETERS:
            value = float(getattr(self, limit.attribute))
            shown = str(int(value)) if value.is_integer() else f'{value:g}'
            source = ('log' if limit.parameter in self.from_log
                      else 'not in this log: PX4 default')
            out.append(f'{limit.parameter} {shown} {limit.unit} ({source}): {limit.meaning}')
        return out


def px4_limits(parameters: Mapping[str, float]) -> Px4Limits:
    """The limits a log's parameters state (e.g. ``ulog.initial_parameters``), else defaults.

    ValueError naming the parameter when the log states one as something not a finite number.
    """
    values: dict[str, Any] = {}
    stated = set()
    for limit in LIMIT_PARAMETERS:
        if limit.parameter not in parameters:
            continue
        value = parameters[limit.parameter]
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise ValueError(f'parameter {limit.parameter}: {value!r} is not a finite number')
        values[limit.attribute] = float(value)
        stated.add(limit.parameter)
    return Px4Limits(**values, from_log=frozenset(stated))
