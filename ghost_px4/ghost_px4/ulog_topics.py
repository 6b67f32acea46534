"""The log player's messages from a PX4 ULog, and the px4_bridge parameters a log sets.

Pure (no rclpy, no px4_msgs): a message type is known only by its field names and rosidl types
(``Msg.get_fields_and_field_types()``), given by the caller.

- ``playback``: the messages the ``px4_log_player`` node publishes, as px4_msgs field values,
  in log order; ``ulog_duration_s``: how much log time that is;
- ``bridge_parameters``: the px4_bridge parameters a log's vehicle parameters set.

Reading the log is ghost_px4.ulog_read's (``load_ulog``, ``dataset``...), the attitude and its
uncertainty at a stamp ghost_px4.ulog_orientation's. One cohesive job, hence one module: what
a played log gives the PX4 graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import heapq
import math
from pathlib import Path
import re
from typing import Any

import numpy

from ghost_px4 import convert as px4
from ghost_px4.ulog_orientation import Orientation, ORIENTATION_TOPICS
from ghost_px4.ulog_read import (
    column,
    dataset,
    has,
    load_ulog,
    log_times_us,
    stamps_ns,
    UlogReadError,
    validity_flags,
)

__all__ = [
    'DERIVED_ODOMETRY',
    'FieldValue',
    'LOG_SOURCES',
    'PLAYED_TOPICS',
    'PLAYER_LOADED_TOPICS',
    'Playback',
    'RENAMED_FIELDS',
    'TopicPlay',
    'bridge_parameters',
    'bridge_parameters_of',
    'describe_topic',
    'playback',
    'ulog_duration_s',
]


# --- the px4_bridge parameters a log states ---

def bridge_parameters_of(parameters: Mapping[str, float]) -> dict[str, int | float]:
    """px4_bridge's read-only parameters as the vehicle's parameters set them.

    ``ekf2_hgt_ref`` from EKF2_HGT_REF (PX4 1.14+), else EKF2_HGT_MODE (up to 1.13; the same
    codes: 0 baro, 1 GNSS, 2 range, 3 vision); ``gps_delay_ms`` from EKF2_GPS_DELAY (ms).
    A parameter the log does not state, or states as a value the bridge cannot take (not an
    integer code 0..3, a negative or non-finite delay), is left out: the bridge keeps its own
    default. ``parameters`` is a ULog's ``initial_parameters``.
    """
    out: dict[str, int | float] = {}
    for name in ('EKF2_HGT_REF', 'EKF2_HGT_MODE'):
        if name in parameters:
            value = parameters[name]
            if (isinstance(value, (int, float)) and math.isfinite(value)
                    and float(value).is_integer() and 0 <= value <= 3):
                out['ekf2_hgt_ref'] = int(value)
            break
    delay = parameters.get('EKF2_GPS_DELAY')
    if isinstance(delay, (int, float)) and math.isfinite(delay) and delay >= 0:
        out['gps_delay_ms'] = float(delay)
    return out


def bridge_parameters(log: Path | str) -> dict[str, int | float]:
    """The px4_bridge parameter overrides of the log at ``log`` (``ghost_run --px4-ulog``).

    ``bridge_parameters_of`` the log's initial parameters (only those are read, no topic data).

    E.g. ``{'ekf2_hgt_ref': 0, 'gps_delay_ms': 110.0}`` for both logs of ../shared/realdata.
    ``UlogReadError`` when the file cannot be read as a ULog.
    """
    ulog, _ = load_ulog(Path(log), ())
    return bridge_parameters_of(dict(ulog.initial_parameters))


# --- the log player's messages ---

#: What the player publishes, each on fmu/out/<topic>, as PX4's uXRCE-DDS bridge names them.
PLAYED_TOPICS = ('vehicle_odometry', 'vehicle_local_position', 'vehicle_gps_position',
                 'vehicle_status', 'vehicle_land_detected', 'mission_result')
#: Where each played topic is read in the log, in order of preference: vehicle_gps_position is
#: the (blended) receiver EKF2 fuses; sensor_gps the per-receiver topic of PX4 1.14+.
LOG_SOURCES: Mapping[str, tuple[str, ...]] = {
    'vehicle_odometry': ('vehicle_odometry',),
    'vehicle_local_position': ('vehicle_local_position',),
    'vehicle_gps_position': ('vehicle_gps_position', 'sensor_gps'),
    'vehicle_status': ('vehicle_status',),
    'vehicle_land_detected': ('vehicle_land_detected',),
    'mission_result': ('mission_result',),
}
#: The log topics the player loads (the played ones, and what a derived odometry needs).
PLAYER_LOADED_TOPICS = ('vehicle_odometry', 'vehicle_local_position', 'vehicle_gps_position',
                        'sensor_gps', 'vehicle_status', 'vehicle_land_detected',
                        'mission_result', *ORIENTATION_TOPICS)
#: The source of a vehicle_odometry the player composes (``playback(derive_odometry=True)``).
DERIVED_ODOMETRY = 'vehicle_local_position + vehicle_attitude + estimator_status (derived)'

#: Message fields an older PX4 logged under another name (or unit): message field -> (log
#: field, scale). Used only when the log lacks the message's own name.
RENAMED_FIELDS: Mapping[str, Mapping[str, tuple[str, float]]] = {
    'vehicle_gps_position': {
        # vehicle_gps_position up to PX4 1.13: int 1e-7 degrees, int millimetres.
        'latitude_deg': ('lat', 1e-7), 'longitude_deg': ('lon', 1e-7),
        'altitude_msl_m': ('alt', 1e-3), 'altitude_ellipsoid_m': ('alt_ellipsoid', 1e-3),
    },
    'vehicle_local_position': {'heading': ('yaw', 1.0)},
    'vehicle_status': {'gcs_connection_lost': ('data_link_lost', 1.0),
                       'gcs_connection_lost_counter': ('data_link_lost_counter', 1.0)},
}

# vehicle_odometry frame codes up to PX4 1.13 (local_frame, velocity_frame: 0 NED, 1 FRD,
# 3 body FRD) as the codes of px4_msgs release/1.17 (1 NED, 2 FRD, 3 body FRD; 0 unknown).
_OLD_POSE_FRAMES = {0: 1, 1: 2}
_OLD_VELOCITY_FRAMES = {0: 1, 1: 2, 3: 3}
# Indices of the diagonal in PX4 1.10-1.13's 21-value upper-right-triangle 6x6 covariances.
_URT_DIAGONAL = (0, 6, 11, 15, 18, 20)

_INT_RANGES = {
    'int8': (-2**7, 2**7 - 1), 'uint8': (0, 2**8 - 1), 'int16': (-2**15, 2**15 - 1),
    'uint16': (0, 2**16 - 1), 'int32': (-2**31, 2**31 - 1), 'uint32': (0, 2**32 - 1),
    'int64': (-2**63, 2**63 - 1), 'uint64': (0, 2**64 - 1), 'octet': (0, 255),
    'byte': (0, 255), 'char': (0, 255),
}
_FLOAT_TYPES = frozenset({'float', 'double'})
_ARRAY = re.compile(r'^([a-z0-9]+)\[(\d+)\]$')

#: A built field value: a number, a bool, or a list of numbers (a fixed-size array).
FieldValue = int | float | bool | list[float] | list[int] | list[bool]


def _fill(kind: str, values: numpy.ndarray, name: str) -> tuple[numpy.ndarray | None, str]:
    """``values`` as a column of the rosidl ``kind``, or (None, why it cannot be one)."""
    if kind == 'boolean':
        if values.dtype.kind not in 'biu':
            return None, f'{name} logged as {values.dtype}, the message field is boolean'
        return values != 0, ''
    if kind in _FLOAT_TYPES:
        return numpy.asarray(values, dtype=numpy.float64), ''
    bounds = _INT_RANGES.get(kind)
    if bounds is None:
        return None, f'{name}: message field type {kind} is not copied'
    if values.dtype.kind not in 'biu':
        return None, f'{name} logged as {values.dtype}, the message field is {kind}'
    if len(values) and (int(values.min()) < bounds[0] or int(values.max()) > bounds[1]):
        return None, f'{name}: logged values out of the range of {kind}'
    return values, ''


@dataclass(slots=True)
class TopicPlay:
    """One played topic: where it comes from, its rows in log order, how a message is filled.

    ``columns`` maps a message field to its values, already in the field's type: one column,
    or one per element of the fixed-size arrays named in ``arrays``. ``missing`` names the
    message fields left at their defaults (the log lacks them), ``refused`` those the log has
    but cannot fill, with the reason.
    """

    topic: str
    source: str
    timestamps_us: numpy.ndarray
    columns: dict[str, list[numpy.ndarray]]
    arrays: frozenset[str]
    missing: tuple[str, ...]
    refused: tuple[str, ...] = ()

    def fields(self, row: int) -> dict[str, FieldValue]:
        """The message fields of ``row`` (a row of the whole log topic), as Python values."""
        out: dict[str, FieldValue] = {}
        for name, cols in self.columns.items():
            if name in self.arrays:
                out[name] = [c[row].item() for c in cols]
            else:
                out[name] = cols[0][row].item()
        return out


@dataclass(frozen=True, slots=True)
class Playback:
    """What the player publishes: per topic its rows, and every message in log order.

    ``order`` lists ``(timestamp_us, topic, row)`` in log order (by timestamp; each topic's
    own order kept); ``start_us``/``end_us`` are the played window (log timestamps), the log
    spanning ``log_start_us`` .. ``log_end_us``.
    """

    topics: Mapping[str, TopicPlay]
    order: list[tuple[int, str, int]]
    log_start_us: int
    log_end_us: int
    start_us: int
    end_us: int
    absent: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """Messages per played topic (every played topic, 0 when none)."""
        counts = dict.fromkeys(self.topics, 0)
        for _, topic, _ in self.order:
            counts[topic] += 1
        return counts

    @property
    def span_s(self) -> float:
        """Seconds of log time from the first played message to the last."""
        return (self.order[-1][0] - self.order[0][0]) / 1e6 if self.order else 0.0


def _topic_columns(topic: str, data: Mapping[str, numpy.ndarray],
                   message_fields: Mapping[str, str],
                   special: Mapping[str, list[numpy.ndarray]]) -> TopicPlay:
    """Fill each message field from ``special``, else the log's own name, else a renaming."""
    renamed = RENAMED_FIELDS.get(topic, {})
    columns: dict[str, list[numpy.ndarray]] = {}
    arrays: set[str] = set()
    missing: list[str] = []
    refused: list[str] = []
    for name, rosidl in message_fields.items():
        match = _ARRAY.match(rosidl)
        kind, size = (match.group(1), int(match.group(2))) if match else (rosidl, 0)
        raw: list[numpy.ndarray] | None = None
        if name in special:
            raw = special[name]
        elif size == 0 and name in data:
            raw = [data[name]]
        elif size and has(data, *(f'{name}[{i}]' for i in range(size))):
            raw = [data[f'{name}[{i}]'] for i in range(size)]
        elif size == 0 and name in renamed and renamed[name][0] in data:
            old, scale = renamed[name]
            raw = [data[old] if scale == 1.0 else column(data, old) * scale]
        if raw is None:
            missing.append(name)
            continue
        filled = [_fill(kind, values, name) for values in raw]
        problems = [why for col, why in filled if col is None]
        if problems:
            refused.append(problems[0])
            continue
        columns[name] = [col for col, _ in filled if col is not None]
        if size:
            arrays.add(name)
    return TopicPlay(topic, '', log_times_us(data), columns, frozenset(arrays), tuple(missing),
                     tuple(refused))


def _old_odometry(data: Mapping[str, numpy.ndarray]) -> dict[str, list[numpy.ndarray]]:
    """A PX4 1.10-1.13 vehicle_odometry's columns in the px4_msgs release/1.17 layout.

    x, y, z; local_frame; 21-value covariances become position, velocity, rates, variances
    and the new frame codes.
    """
    def recode(name: str, codes: Mapping[int, int]) -> numpy.ndarray:
        return numpy.array([codes.get(int(v), 0) for v in data[name]], dtype=numpy.uint8)

    out = {'position': [data[k] for k in ('x', 'y', 'z')],
           'velocity': [data[k] for k in ('vx', 'vy', 'vz')],
           'pose_frame': [recode('local_frame', _OLD_POSE_FRAMES)],
           'velocity_frame': [recode('velocity_frame' if 'velocity_frame' in data
                                     else 'local_frame', _OLD_VELOCITY_FRAMES)]}
    if has(data, 'rollspeed', 'pitchspeed', 'yawspeed'):
        out['angular_velocity'] = [data[k] for k in ('rollspeed', 'pitchspeed', 'yawspeed')]
    if has(data, *(f'pose_covariance[{i}]' for i in _URT_DIAGONAL)):
        diag = [data[f'pose_covariance[{i}]'] for i in _URT_DIAGONAL]
        out['position_variance'], out['orientation_variance'] = diag[:3], diag[3:]
    if has(data, *(f'velocity_covariance[{i}]' for i in _URT_DIAGONAL[:3])):
        out['velocity_variance'] = [data[f'velocity_covariance[{i}]']
                                    for i in _URT_DIAGONAL[:3]]
    return out


def _variance_columns(accuracy: Sequence[numpy.ndarray]) -> list[numpy.ndarray]:
    """diag(h²/2, h²/2, v²) of 1-sigma (horizontal, vertical) accuracy columns.

    NaN (PX4's "not set") where an accuracy is not finite or negative.
    """
    h, v = (numpy.asarray(a, dtype=numpy.float64) for a in accuracy)
    bad = ~(numpy.isfinite(h) & numpy.isfinite(v) & (h >= 0) & (v >= 0))
    half = numpy.where(bad, numpy.nan, h * h / 2.0)
    return [half, half.copy(), numpy.where(bad, numpy.nan, v * v)]


def _derived_odometry(local: Mapping[str, numpy.ndarray],
                      orientation: Orientation) -> dict[str, numpy.ndarray]:
    """A vehicle_odometry per vehicle_local_position sample, as log columns (see ``playback``)."""
    n = len(local['timestamp'])
    nan = numpy.full(n, numpy.nan)
    flag = validity_flags(local)
    invalid = {'position_variance': ~(flag['xy_valid'] & flag['z_valid']),
               'velocity_variance': ~(flag['v_xy_valid'] & flag['v_z_valid'])}
    out: dict[str, numpy.ndarray] = {'timestamp': local['timestamp'],
                                     'pose_frame': numpy.ones(n, dtype=numpy.uint8),
                                     'velocity_frame': numpy.ones(n, dtype=numpy.uint8)}
    if 'timestamp_sample' in local:
        out['timestamp_sample'] = local['timestamp_sample']
    for i, (p, v) in enumerate(zip('xyz', ('vx', 'vy', 'vz'), strict=True)):
        out[f'position[{i}]'] = column(local, p)
        out[f'velocity[{i}]'] = column(local, v)
    for name, accuracy in (('position_variance', ('eph', 'epv')),
                           ('velocity_variance', ('evh', 'evv'))):
        values = (_variance_columns([local[a] for a in accuracy]) if has(local, *accuracy)
                  else [nan] * 3)
        for i in range(3):
            # PX4's NaN ("unknown") where PX4 flags the block invalid: the bridge marks it so.
            out[f'{name}[{i}]'] = numpy.where(invalid[name], numpy.nan, values[i])
    tilt_heading = has(local, 'tilt_var', 'heading_var')
    q = numpy.full((n, 4), numpy.nan)
    rates = numpy.full((n, 3), numpy.nan)
    rotation = numpy.full((n, 3), numpy.nan)
    for row, stamp in enumerate(stamps_ns(local).tolist()):
        attitude = orientation.quaternion(stamp)
        if attitude is None:
            continue
        q[row], rates[row] = attitude[0], attitude[1]
        found = orientation.covariance(
            stamp, attitude[0], (float(local['tilt_var'][row]), float(local['heading_var'][row]))
            if tilt_heading else None)
        if not isinstance(found, str):
            # vehicle_odometry states its orientation variance about the body axes (PX4
            # getRotVarBody): the NED covariance rotated into FRD, its diagonal.
            body = px4.ned_covariance_to_body_diagonal(attitude[0], found[0])
            rotation[row] = body
    for i in range(4):
        out[f'q[{i}]'] = q[:, i]
    for i in range(3):
        out[f'angular_velocity[{i}]'] = rates[:, i]
        out[f'orientation_variance[{i}]'] = rotation[:, i]
    return out


def _topic_play(ulog: Any, topic: str, message_fields: Mapping[str, str],
                orientation: Orientation, derive_odometry: bool, name: str) -> TopicPlay | None:
    """One played topic from its log source, or derived (see ``playback``); None without."""
    source = next((s for s in LOG_SOURCES[topic] if dataset(ulog, s) is not None), None)
    data = dataset(ulog, source) if source is not None else None
    special: dict[str, list[numpy.ndarray]] = {}
    if data is None and topic == 'vehicle_odometry' and derive_odometry:
        local = dataset(ulog, 'vehicle_local_position')
        if local is not None and has(local, 'x', 'y', 'z', 'vx', 'vy', 'vz'):
            data, source = _derived_odometry(local, orientation), DERIVED_ODOMETRY
    elif (data is not None and topic == 'vehicle_odometry' and 'x' in data
          and 'position[0]' not in data):
        special = _old_odometry(data)
    if data is None or source is None:
        return None
    if 'timestamp' not in data:
        raise UlogReadError(f'{name}: {source} has no timestamp field')
    play = _topic_columns(topic, data, message_fields, special)
    play.source = source
    return play


def _played_topics(ulog: Any, message_fields: Mapping[str, Mapping[str, str]],
                   derive_odometry: bool, name: str
                   ) -> tuple[dict[str, TopicPlay], tuple[str, ...]]:
    """The played topics the log has (PLAYED_TOPICS order), and those it has not.

    ``UlogReadError`` when it has no position topic.
    """
    topics: dict[str, TopicPlay] = {}
    absent = []
    orientation = Orientation.of(ulog)
    for topic in PLAYED_TOPICS:
        play = _topic_play(ulog, topic, message_fields[topic], orientation, derive_odometry,
                           name)
        if play is None:
            absent.append(topic)
        else:
            topics[topic] = play
    if 'vehicle_odometry' not in topics and 'vehicle_local_position' not in topics:
        raise UlogReadError(f'{name}: neither vehicle_odometry nor vehicle_local_position is '
                            'logged: there is no position to play')
    return topics, tuple(absent)


def _log_order(topics: Mapping[str, TopicPlay], start_us: int,
               end_us: int | None) -> list[tuple[int, str, int]]:
    """(timestamp_us, topic, row) of every message in the window [start_us, end_us).

    Each topic in its own logged order; across topics by timestamp, then PLAYED_TOPICS
    order (a derived odometry before the local position it comes from).
    """
    ranks = {topic: rank for rank, topic in enumerate(PLAYED_TOPICS)}

    def rows(topic: str) -> list[tuple[int, int, str, int]]:
        times = topics[topic].timestamps_us.tolist()
        return [(t, ranks[topic], topic, row) for row, t in enumerate(times)
                if t >= start_us and (end_us is None or t < end_us)]

    return [(t, topic, row) for t, _, topic, row in heapq.merge(
        *(rows(topic) for topic in topics), key=lambda item: (item[0], item[1]))]


def playback(ulog: Any, message_fields: Mapping[str, Mapping[str, str]], *,
             start_s: float = 0.0, duration_s: float = 0.0,
             derive_odometry: bool = True,
             name: str = 'the log') -> Playback:
    """The messages the log player publishes, from a log read with PLAYER_LOADED_TOPICS.

    ``message_fields`` maps each played topic to its px4_msgs type's fields and rosidl types
    (``VehicleOdometry.get_fields_and_field_types()``...). Every message field the log has
    is copied (same name; fixed-size arrays from ``name[i]`` columns; older names and units
    by ``RENAMED_FIELDS``; a PX4 1.10-1.13 vehicle_odometry converted to the new layout);
    timestamps are the log's own (us since PX4 boot). The rest keep the message's defaults.

    ``derive_odometry``: a log without vehicle_odometry (PX4 before 1.14 rarely logs it; the
    importer's case) gets one per vehicle_local_position sample, with its timestamps, as EKF2
    fills it: NED position and velocity, variances diag(eph²/2, eph²/2, epv²) and
    diag(evh²/2, evh²/2, evv²) (NaN, PX4's "unknown", where the sample flags the block
    invalid), the attitude and body rates of the latest vehicle_attitude at most 100 ms before
    (NaN when there is none) and the orientation variances about the body axes (EKF2's
    getRotVarBody) of the importer's orientation source (NaN when none). So a px4_bridge fed
    the played log makes the beliefs ghost_import makes (the orientation block up to the
    cross terms PX4's body diagonal drops).

    The window: messages whose timestamp is at least ``start_s`` after the log's start and,
    with ``duration_s`` > 0, less than ``start_s + duration_s``. ``UlogReadError`` when the log
    has no position topic (neither vehicle_odometry nor vehicle_local_position) or the window
    holds no message; ``name`` names the log in that message.
    """
    topics, absent = _played_topics(ulog, message_fields, derive_odometry, name)
    log_start = int(ulog.start_timestamp)
    start_us = log_start + int(round(start_s * 1e6))
    end_us = start_us + int(round(duration_s * 1e6)) if duration_s > 0 else None
    order = _log_order(topics, start_us, end_us)
    last = int(ulog.last_timestamp)
    if not order:
        window = f'{start_s:g} .. {"end" if end_us is None else f"{start_s + duration_s:g}"} s'
        raise UlogReadError(f'{name}: no message of {", ".join(topics)} in the window {window} '
                            f'of the log (it spans {(last - log_start) / 1e6:.1f} s)')
    return Playback(topics, order, log_start, last, start_us,
                    end_us if end_us is not None else last, absent)


def ulog_duration_s(log: Path | str) -> float:
    """Seconds of log time the player plays of the whole log at ``log``.

    From the first to the last timestamp of the played topics' log sources (the wall time of
    a play at speed 1; a derived vehicle_odometry has the local positions' timestamps).
    ``UlogReadError`` when the file cannot be read as a ULog or has none of those topics.
    """
    ulog, _ = load_ulog(Path(log), PLAYER_LOADED_TOPICS)
    spans = []
    for topic in PLAYED_TOPICS:
        data = next((d for d in (dataset(ulog, s) for s in LOG_SOURCES[topic]) if d is not None),
                    None)
        if data is not None and 'timestamp' in data and len(data['timestamp']):
            spans.append((int(data['timestamp'].min()), int(data['timestamp'].max())))
    if not spans:
        raise UlogReadError(f'{log}: none of {", ".join(PLAYED_TOPICS)} is logged')
    return (max(last for _, last in spans) - min(first for first, _ in spans)) / 1e6


def describe_topic(play: TopicPlay) -> str:
    """One line: where a topic comes from and the message fields left at their defaults."""
    line = f'{play.topic} from {play.source}'
    if play.missing:
        line += f'; not in the log (left at defaults): {", ".join(play.missing)}'
    if play.refused:
        line += f'; not copied: {"; ".join(play.refused)}'
    return line

