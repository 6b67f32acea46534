"""Reading PX4 ULog flight logs: what the importer (ghost_import_ulog) and the log player share.

Pure (no rclpy, no px4_msgs): the log is read with pyulog, and a message type is known only by
its field names and rosidl types (``Msg.get_fields_and_field_types()``), given by the caller.

- ``load_ulog``: read a log, refusing what is not one, and say how it is damaged;
- ``dataset``, ``stamps_ns``, ``Orientation``...: the importer's lookups (timestamps, the
  attitude and its uncertainty at a stamp);
- ``bridge_parameters``: the px4_bridge parameters a log's vehicle parameters set;
- ``playback``: the messages the ``px4_log_player`` node publishes, as px4_msgs field values,
  in log order; ``ulog_duration_s``: how much log time that is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import contextlib
from dataclasses import dataclass
import heapq
import io
import math
from pathlib import Path
import re
import struct
from typing import Any, Self

import numpy

from ghost_px4 import convert as px4

__all__ = [
    'ATTITUDE_MAX_AGE_NS',
    'DERIVED_ODOMETRY',
    'Damage',
    'ESTIMATOR_STATUS_MAX_AGE_NS',
    'FieldValue',
    'LOG_SOURCES',
    'ORIENTATION_TOPICS',
    'MAX_TIME_NS',
    'MAX_TIME_US',
    'Orientation',
    'PLAYED_TOPICS',
    'PLAYER_LOADED_TOPICS',
    'Playback',
    'RENAMED_FIELDS',
    'SOURCE_ODOMETRY_BODY',
    'SOURCE_ODOMETRY_URT',
    'SOURCE_STATES_QUATERNION',
    'SOURCE_STATES_ROTATION',
    'SOURCE_STATUS_QUATERNION',
    'SOURCE_TILT_HEADING',
    'TopicPlay',
    'UlogReadError',
    'bridge_parameters',
    'bridge_parameters_of',
    'column',
    'dataset',
    'describe_topic',
    'finite',
    'has',
    'latest_at_or_before',
    'load_ulog',
    'log_times_ns',
    'log_times_us',
    'nearest_within',
    'ns',
    'playback',
    'px4_version',
    'px4_version_label',
    'stamps_ns',
    'ulog_duration_s',
]

_ULOG_MAGIC = b'ULog\x01\x12\x35'
# ULog message types of the definitions section, and those that start the data section.
_DEFINITION_TYPES = frozenset(b'BFIMPQ')
_DATA_START_TYPES = frozenset(b'ALC')

#: The attitude used for a belief is the latest vehicle_attitude at or before its stamp, at most
#: this old (vehicle_attitude is logged at 25-100 Hz).
ATTITUDE_MAX_AGE_NS = 100_000_000
#: The attitude uncertainty is the estimator_status / estimator_states sample nearest the stamp,
#: at most this far from it (``nearest_within``): they are logged at 1-5 Hz, the FMUv3 log has
#: logger gaps of up to 1.4 s, and the variances change over seconds, so a sample 2 s away is
#: still the EKF's claim.
ESTIMATOR_STATUS_MAX_AGE_NS = 2_000_000_000


class UlogReadError(ValueError):
    """The log cannot be used; the message names the file and the problem."""


# --- reading the log ---

@dataclass(frozen=True, slots=True)
class Damage:
    """What is wrong with a log that pyulog still read."""

    truncated_at_byte: int | None
    file_size: int
    corrupt: bool
    pyulog_said: str


def _incomplete_tail(data: bytes) -> int | None:
    """Byte offset of a last message cut short by the end of the file, or None.

    pyulog stops silently at a message longer than what is left of the file; it does not flag
    it. Walking the message framing (16-byte file header, then uint16 size + uint8 type +
    payload per message) finds it. A log cut exactly between two messages cannot be told from
    a log that ended there.
    """
    offset = 16
    size = len(data)
    while offset < size:
        if offset + 3 > size:
            return offset
        msg_size, = struct.unpack_from('<H', data, offset)
        if offset + 3 + msg_size > size:
            return offset
        offset += 3 + msg_size
    return None


def _definitions_problem(data: bytes) -> str | None:
    """Where the definitions section is corrupt in a way pyulog 1.3 cannot survive, or None.

    pyulog's definitions reader steps back over a message it judges corrupt (unknown type with
    type 0, size 0 or size > 10000) to resynchronise byte by byte; near the end of the file
    that step goes backwards and never ends (random bytes after a valid header hang it).
    Such a message before the data section means the definitions cannot be trusted anyway.
    """
    offset = 16
    while offset + 3 <= len(data):
        size, kind = struct.unpack_from('<HB', data, offset)
        if kind in _DATA_START_TYPES:
            return None
        if kind not in _DEFINITION_TYPES and (kind == 0 or size == 0 or size > 10000):
            return f'byte {offset}: unknown message type {kind} of {size} bytes'
        offset += 3 + size
    return None


def load_ulog(path: Path, topics: Iterable[str]) -> tuple[Any, Damage]:
    """Read the log at ``path``, with the data of ``topics`` only (none: parameters only).

    ``UlogReadError`` (naming the file) for what cannot be read: missing, a directory, empty, not
    a ULog, corrupt definitions, or a parse failure.
    """
    try:
        if path.is_dir():
            raise UlogReadError(f'{path}: is a directory, not a ULog file')
        data = path.read_bytes()
    except FileNotFoundError as err:
        raise UlogReadError(f'{path}: no such file') from err
    except OSError as err:
        raise UlogReadError(f'{path}: cannot be read: {err.strerror or err}') from err
    if not data:
        raise UlogReadError(f'{path}: empty file, not a ULog log')
    if len(data) < 16 or not data.startswith(_ULOG_MAGIC):
        raise UlogReadError(f'{path}: not a ULog file (no ULog header: the file starts '
                        f'with {data[:8]!r})')
    problem = _definitions_problem(data)
    if problem is not None:
        raise UlogReadError(f'{path}: corrupt ULog definitions section ({problem}): the log '
                        'cannot be read')
    from pyulog import ULog  # type: ignore[import-untyped]
    from pyulog.exceptions import ULogException  # type: ignore[import-untyped]

    chatter = io.StringIO()
    try:
        # pyulog prints its findings on stdout; they are kept and reported as one warning.
        with contextlib.redirect_stdout(chatter):
            ulog = ULog(io.BytesIO(data), list(topics))
    except ULogException as err:
        raise UlogReadError(f'{path}: not a readable ULog file: {err}') from err
    except (struct.error, ValueError, IndexError, KeyError, OverflowError, UnicodeError,
            TypeError, MemoryError) as err:
        raise UlogReadError(f'{path}: the ULog file cannot be parsed (corrupt): '
                        f'{type(err).__name__}: {err}') from err
    truncated = None if ulog.has_data_appended else _incomplete_tail(data)
    said = ' '.join(chatter.getvalue().split())
    return ulog, Damage(truncated, len(data), bool(ulog.file_corruption), said)


def dataset(ulog: Any, name: str) -> dict[str, numpy.ndarray] | None:
    """The columns of topic ``name`` (its first instance), or None when it is not logged."""
    for item in ulog.data_list:
        if item.name == name and item.multi_id == 0:
            return dict(item.data)
    return None


# builtin_interfaces/Time has an int32 sec: a later PX4 time (us) can only be a corrupt one.
MAX_TIME_US = (2**31 - 1) * 10**6
MAX_TIME_NS = MAX_TIME_US * 1000


def ns(values: numpy.ndarray) -> numpy.ndarray:
    """PX4 microseconds (uint64) as int64 nanoseconds, capped at MAX_TIME_NS."""
    micros = numpy.minimum(numpy.asarray(values, dtype=numpy.uint64), numpy.uint64(MAX_TIME_US))
    return micros.astype(numpy.int64) * 1000


def log_times_ns(data: Mapping[str, numpy.ndarray]) -> numpy.ndarray:
    """When PX4 logged each sample (its timestamp), in nanoseconds."""
    return ns(data['timestamp'])


def stamps_ns(data: Mapping[str, numpy.ndarray]) -> numpy.ndarray:
    """timestamp_sample when logged (the time the estimate refers to), else timestamp (ns)."""
    sample = data.get('timestamp_sample')
    if sample is not None and numpy.all(sample > 0):
        return ns(sample)
    return log_times_ns(data)


def column(data: Mapping[str, numpy.ndarray], name: str) -> numpy.ndarray:
    """A column as float64."""
    return numpy.asarray(data[name], dtype=numpy.float64)


def has(data: Mapping[str, numpy.ndarray], *names: str) -> bool:
    """Whether every one of ``names`` is a column of ``data``."""
    return all(name in data for name in names)


def finite(*values: float) -> bool:
    """Whether every value is finite."""
    return all(math.isfinite(value) for value in values)


def latest_at_or_before(times: numpy.ndarray, stamp: int, max_age: int) -> int | None:
    """Index of the latest of the sorted ``times`` at or before ``stamp``, or None.

    None also when that one is more than ``max_age`` older than ``stamp``.
    """
    index = int(numpy.searchsorted(times, stamp, side='right')) - 1
    if index < 0 or stamp - int(times[index]) > max_age:
        return None
    return index


#: The log topics the orientation uncertainty may come from (and the primary EKF instance).
ORIENTATION_TOPICS = ('vehicle_attitude', 'estimator_status', 'estimator_states',
                      'estimator_selector_status')
#: Where a belief's orientation uncertainty was read (the importer's summary counts them).
SOURCE_TILT_HEADING = 'vehicle_local_position.tilt_var/heading_var'
SOURCE_STATES_ROTATION = 'estimator_states.covariances[0..2] (rotation error, PX4 1.15+)'
SOURCE_STATES_QUATERNION = 'estimator_states.covariances[0..3] (quaternion, PX4 1.12-1.14)'
SOURCE_STATUS_QUATERNION = 'estimator_status.covariances[0..3] (quaternion, PX4 up to 1.11)'
SOURCE_ODOMETRY_BODY = 'vehicle_odometry.orientation_variance (body axes, PX4 1.14+)'
SOURCE_ODOMETRY_URT = 'vehicle_odometry.pose_covariance (PX4 1.10-1.13)'


def px4_version(ulog: Any) -> tuple[int, int, int] | None:
    """(major, minor, patch) of the log's PX4 (``ver_sw_release``), or None when not stated.

    ``ver_sw_release`` is 0xMMmmppTT (TT: 0 dev, 64 alpha, 128 beta, 192 rc, 255 release);
    0 (or absent) means a build that does not say.
    """
    value = ulog.msg_info_dict.get('ver_sw_release')
    if not isinstance(value, int) or value <= 0:
        return None
    major, minor, patch = value >> 24 & 0xFF, value >> 16 & 0xFF, value >> 8 & 0xFF
    if major == 0 and minor == 0:
        return None
    return major, minor, patch


_RELEASE_TYPES = {0: '-dev', 64: '-alpha', 128: '-beta', 192: '-rc', 255: ''}


def px4_version_label(ulog: Any) -> str:
    """'v1.14.0', 'v1.16.1-rc' (the type byte of ``ver_sw_release``), or 'version not stated'."""
    version = px4_version(ulog)
    if version is None:
        return 'version not stated'
    kind = int(ulog.msg_info_dict['ver_sw_release']) & 0xFF
    return 'v{}.{}.{}'.format(*version) + _RELEASE_TYPES.get(kind, f'-type{kind}')


def _instances(ulog: Any, name: str) -> dict[int, dict[str, numpy.ndarray]]:
    return {item.multi_id: dict(item.data) for item in ulog.data_list if item.name == name}


def nearest_within(times: numpy.ndarray, stamp: int, max_age: int) -> int | None:
    """Index of the one of the sorted ``times`` nearest ``stamp``, if within ``max_age``.

    For the estimator's variances: the logger samples estimator_status/estimator_states at
    1-5 Hz (a logging profile, not the EKF's rate), and the variances they carry change over
    seconds, so the nearest logged sample is the best estimate of the EKF's own at ``stamp``,
    before or after it (the first beliefs of a log otherwise precede every sample).
    """
    index = int(numpy.searchsorted(times, stamp))
    candidates = [i for i in (index - 1, index) if 0 <= i < len(times)]
    if not candidates:
        return None
    best = min(candidates, key=lambda i: abs(int(times[i]) - stamp))
    return best if abs(int(times[best]) - stamp) <= max_age else None


@dataclass(slots=True)
class _Instances:
    """A multi-instance estimator topic (one dataset per EKF2 instance) and its stamps."""

    data: dict[int, dict[str, numpy.ndarray]]
    times: dict[int, numpy.ndarray]

    @classmethod
    def of(cls, ulog: Any, name: str, *columns: str) -> _Instances | None:
        data = {k: v for k, v in _instances(ulog, name).items() if has(v, 'timestamp', *columns)}
        if not data:
            return None
        return cls(data, {k: stamps_ns(v) for k, v in data.items()})


@dataclass(slots=True)
class Orientation:
    """Attitude and its uncertainty, looked up per belief stamp, from every PX4 generation.

    The uncertainty comes from the first of these that states it at the stamp (docs/real-data.md):
    the local-position sample's own ``tilt_var``/``heading_var`` (PX4 1.15+; given by the
    caller), ``estimator_states.covariances`` of the primary EKF2 instance (rotation-error
    states from PX4 1.15, quaternion states before, chosen by the log's version, else by
    ``n_states``), ``estimator_status.covariances`` (quaternion states, PX4 up to 1.11).
    Every result is a rotation covariance about the NED axes.
    """

    attitude: dict[str, numpy.ndarray] | None
    attitude_times: numpy.ndarray
    status: _Instances | None
    states: _Instances | None
    states_rotation_error: bool
    primary_times: numpy.ndarray
    primary: numpy.ndarray

    @classmethod
    def of(cls, ulog: Any) -> Self:
        """The log's attitude and uncertainty topics (read with ORIENTATION_TOPICS loaded)."""
        attitude = dataset(ulog, 'vehicle_attitude')
        status = _Instances.of(ulog, 'estimator_status', *(f'covariances[{i}]' for i in range(4)))
        states = _Instances.of(ulog, 'estimator_states', *(f'covariances[{i}]' for i in range(4)))
        version = px4_version(ulog)
        if version is not None:
            rotation_error = version >= (1, 15, 0)
        else:  # no version: PX4 1.16+ logs 25 states (nominal quaternion + 21 + terrain)
            rotation_error = states is not None and any(
                int(numpy.max(d['n_states'])) >= 25 for d in states.data.values()
                if 'n_states' in d and len(d['n_states']))
        selector = dataset(ulog, 'estimator_selector_status')
        empty = numpy.zeros(0, dtype=numpy.int64)
        if selector is not None and has(selector, 'timestamp', 'primary_instance'):
            primary_times = log_times_ns(selector)
            primary = numpy.asarray(selector['primary_instance'], dtype=numpy.int64)
        else:
            primary_times, primary = empty, empty
        return cls(attitude, stamps_ns(attitude) if attitude else empty, status, states,
                   rotation_error, primary_times, primary)

    def primary_instance(self, stamp_ns: int) -> int:
        """The EKF2 instance PX4 had selected at ``stamp_ns`` (estimator_selector_status).

        The latest selection at or before the stamp, else the first one logged; 0 without the
        topic (a single EKF).
        """
        if len(self.primary) == 0:
            return 0
        index = int(numpy.searchsorted(self.primary_times, stamp_ns, side='right')) - 1
        return int(self.primary[max(index, 0)])

    def quaternion(self, stamp_ns: int) -> tuple[tuple[float, ...], px4.Vector3] | None:
        """PX4 q [w, x, y, z] and body rates (FRD) of the latest attitude, or None."""
        if self.attitude is None:
            return None
        index = latest_at_or_before(self.attitude_times, stamp_ns, ATTITUDE_MAX_AGE_NS)
        if index is None:
            return None
        a = self.attitude
        q = tuple(float(a[f'q[{i}]'][index]) for i in range(4))
        rates: px4.Vector3 = (0.0, 0.0, 0.0)
        if has(a, 'rollspeed', 'pitchspeed', 'yawspeed'):
            logged = (float(a['rollspeed'][index]), float(a['pitchspeed'][index]),
                      float(a['yawspeed'][index]))
            if finite(*logged):  # the rates are not judged: a NaN one is simply not carried
                rates = logged
        return q, rates

    def covariance(self, stamp_ns: int, q_wxyz: Sequence[float],
                   tilt_heading: tuple[float, float] | None = None
                   ) -> tuple[px4.Matrix3, str] | str:
        """(rotation covariance about NED, its source), or why no source states one.

        ``tilt_heading``: the belief sample's own ``tilt_var``/``heading_var`` when its topic
        logs them (tried first).
        """
        why: list[str] = []
        if tilt_heading is not None:
            try:
                cov = px4.tilt_heading_covariance_ned(*tilt_heading)
            except ValueError:
                cov, reason = None, 'tilt_var/heading_var not finite or negative'
            else:
                reason = 'tilt_var/heading_var both 0 (EKF not initialised)'
            if cov is not None:
                return cov, SOURCE_TILT_HEADING
            why.append(reason)
        for found in (self._from_states(stamp_ns, q_wxyz), self._from_status(stamp_ns, q_wxyz)):
            if isinstance(found, tuple):
                return found
            if found:
                why.append(found)
        if not why:
            return 'no orientation uncertainty is logged (estimator_status.covariances, '\
                   'estimator_states, tilt_var/heading_var)'
        return '; '.join(why)

    def _lookup(self, topic: _Instances | None, stamp_ns: int
                ) -> tuple[dict[str, numpy.ndarray], int] | str:
        assert topic is not None
        instance = self.primary_instance(stamp_ns)
        data = topic.data.get(instance)
        if data is None:
            return f'primary EKF2 instance {instance} not logged'
        index = nearest_within(topic.times[instance], stamp_ns, ESTIMATOR_STATUS_MAX_AGE_NS)
        if index is None:
            return f'none within {ESTIMATOR_STATUS_MAX_AGE_NS // 10**9} s'
        return data, index

    def _from_states(self, stamp_ns: int, q_wxyz: Sequence[float]
                     ) -> tuple[px4.Matrix3, str] | str:
        if self.states is None:
            return ''
        found = self._lookup(self.states, stamp_ns)
        if isinstance(found, str):
            return f'estimator_states: {found}'
        data, index = found
        try:
            if self.states_rotation_error:
                cov = px4.rotation_error_covariance_ned(
                    [float(data[f'covariances[{i}]'][index]) for i in range(3)])
                source = SOURCE_STATES_ROTATION
            else:
                cov = px4.attitude_covariance_ned(
                    q_wxyz, [float(data[f'covariances[{i}]'][index]) for i in range(4)])
                source = SOURCE_STATES_QUATERNION
        except ValueError:
            return 'estimator_states: variances not finite or negative'
        if cov is None:
            return 'estimator_states: variances all zero (EKF not initialised)'
        return cov, source

    def _from_status(self, stamp_ns: int, q_wxyz: Sequence[float]
                     ) -> tuple[px4.Matrix3, str] | str:
        if self.status is None:
            return ''
        found = self._lookup(self.status, stamp_ns)
        if isinstance(found, str):
            return f'estimator_status: {found}'
        data, index = found
        try:
            cov = px4.attitude_covariance_ned(
                q_wxyz, [float(data[f'covariances[{i}]'][index]) for i in range(4)])
        except ValueError:
            return 'estimator_status: quaternion variances not finite or negative'
        if cov is None:
            return 'estimator_status: quaternion variances all zero (EKF not initialised)'
        return cov, SOURCE_STATUS_QUATERNION


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
                 'vehicle_status')
#: Where each played topic is read in the log, in order of preference: vehicle_gps_position is
#: the (blended) receiver EKF2 fuses; sensor_gps the per-receiver topic of PX4 1.14+.
LOG_SOURCES: Mapping[str, tuple[str, ...]] = {
    'vehicle_odometry': ('vehicle_odometry',),
    'vehicle_local_position': ('vehicle_local_position',),
    'vehicle_gps_position': ('vehicle_gps_position', 'sensor_gps'),
    'vehicle_status': ('vehicle_status',),
}
#: The log topics the player loads (the played ones, and what a derived odometry needs).
PLAYER_LOADED_TOPICS = ('vehicle_odometry', 'vehicle_local_position', 'vehicle_gps_position',
                        'sensor_gps', 'vehicle_status', *ORIENTATION_TOPICS)
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


def log_times_us(data: Mapping[str, numpy.ndarray]) -> numpy.ndarray:
    """The ``timestamp`` column (us since PX4 boot) as uint64."""
    return numpy.asarray(data['timestamp'], dtype=numpy.uint64)


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
    ones = numpy.ones(n, dtype=bool)
    flag = {name: (local[name] != 0) if name in local else ones
            for name in ('xy_valid', 'z_valid', 'v_xy_valid', 'v_z_valid')}
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
    the played log makes the beliefs ghost_import_ulog makes (the orientation block up to the
    cross terms PX4's body diagonal drops).

    The window: messages whose timestamp is at least ``start_s`` after the log's start and,
    with ``duration_s`` > 0, less than ``start_s + duration_s``. ``UlogReadError`` when the log
    has no position topic (neither vehicle_odometry nor vehicle_local_position) or the window
    holds no message; ``name`` names the log in that message.
    """
    topics: dict[str, TopicPlay] = {}
    absent = []
    orientation = Orientation.of(ulog)
    for topic in PLAYED_TOPICS:
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
            absent.append(topic)
            continue
        if 'timestamp' not in data:
            raise UlogReadError(f'{name}: {source} has no timestamp field')
        play = _topic_columns(topic, data, message_fields[topic], special)
        play.source = source
        topics[topic] = play
    if 'vehicle_odometry' not in topics and 'vehicle_local_position' not in topics:
        raise UlogReadError(f'{name}: neither vehicle_odometry nor vehicle_local_position is '
                        'logged: there is no position to play')
    log_start = int(ulog.start_timestamp)
    start_us = log_start + int(round(start_s * 1e6))
    end_us = start_us + int(round(duration_s * 1e6)) if duration_s > 0 else None

    # Each topic in its own logged order; across topics by timestamp, then PLAYED_TOPICS
    # order (a derived odometry before the local position it comes from).
    ranks = {topic: rank for rank, topic in enumerate(PLAYED_TOPICS)}

    def rows(topic: str) -> list[tuple[int, int, str, int]]:
        times = topics[topic].timestamps_us.tolist()
        return [(t, ranks[topic], topic, row) for row, t in enumerate(times)
                if t >= start_us and (end_us is None or t < end_us)]

    order = [(t, topic, row) for t, _, topic, row in heapq.merge(
        *(rows(topic) for topic in topics), key=lambda item: (item[0], item[1]))]
    last = int(ulog.last_timestamp)
    if not order:
        window = f'{start_s:g} .. {"end" if end_us is None else f"{start_s + duration_s:g}"} s'
        raise UlogReadError(f'{name}: no message of {", ".join(topics)} in the window {window} '
                        f'of the log (it spans {(last - log_start) / 1e6:.1f} s)')
    return Playback(topics, order, log_start, last, start_us,
                    end_us if end_us is not None else last, tuple(absent))


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

