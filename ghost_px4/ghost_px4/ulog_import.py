"""ghost_import_ulog: turn a PX4 ULog flight log into a rosbag2 MCAP input bag for Ghost.

    ghost_import_ulog LOG.ulg --output BAG [--rate HZ] [--accuracy-profile NAME]
                      [--gps-delay-ms MS]

The bag holds /state/nav (nav_msgs/msg/Odometry, the EKF's belief) and /observations
(geometry_msgs/msg/PoseWithCovarianceStamped, the GNSS fixes projected into the EKF's local
frame). Conventions: docs/real-data.md. The frame and covariance conversions are in
ghost_px4.convert.

Exit codes: 0 the bag was written; 1 the bag could not be written (I/O error); 2 usage error
(bad option, the output already exists); 3 the log cannot be used (not a ULog, damaged before
any usable data, no position topic, no sample with a position). A log without usable GNSS
imports, with a warning.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
import math
from pathlib import Path
import shutil
import sys
from typing import Any, TextIO

import numpy

from ghost_core.profiles import accuracy_profile, ACCURACY_PROFILES, DEFAULT_PROFILE
from ghost_px4 import convert as px4
from ghost_px4 import ulog_topics
from ghost_px4.ulog_topics import (
    ATTITUDE_MAX_AGE_NS,
    column,
    Damage,
    dataset,
    ESTIMATOR_STATUS_MAX_AGE_NS,
    finite,
    has,
    load_ulog,
    log_times_ns,
    MAX_TIME_NS,
    ns,
    Orientation,
    stamps_ns,
    UlogReadError,
)

__all__ = [
    'ATTITUDE_MAX_AGE_NS',
    'BELIEF_TOPIC',
    'CHILD_FRAME_ID',
    'ESTIMATOR_STATUS_MAX_AGE_NS',
    'FRAME_ID',
    'OBSERVATION_TOPIC',
    'RATE_TOLERANCE',
    'main',
]

PROG = 'ghost_import_ulog'
BELIEF_TOPIC = '/state/nav'
OBSERVATION_TOPIC = '/observations'
ODOMETRY_TYPE = 'nav_msgs/msg/Odometry'
POSE_TYPE = 'geometry_msgs/msg/PoseWithCovarianceStamped'
#: REP 105: the EKF's local origin (ENU world) and the vehicle body (FLU).
FRAME_ID = 'odom'
CHILD_FRAME_ID = 'base_link'
#: --rate HZ keeps a belief when its stamp is >= the last kept one + RATE_TOLERANCE / HZ.
RATE_TOLERANCE = 0.9

_EXIT_OK, _EXIT_WRITE, _EXIT_USAGE, _EXIT_INPUT = 0, 1, 2, 3
_BELIEF_TOPICS = ('vehicle_odometry', 'vehicle_local_position')
# vehicle_gps_position is the (blended) receiver EKF2 fuses; sensor_gps is the per-receiver topic.
_GNSS_TOPICS = ('vehicle_gps_position', 'sensor_gps')
_LOADED_TOPICS = (*_BELIEF_TOPICS, *_GNSS_TOPICS, *ulog_topics.ORIENTATION_TOPICS)



class _UsageError(ValueError):
    """A usage error found after argument parsing (exit code 2)."""


# --- reading the log ---

def _load_ulog(path: Path) -> tuple[Any, Damage]:
    return load_ulog(path, _LOADED_TOPICS)


_OUT_OF_RANGE = 'timestamp out of range (corrupt)'
_OUT_OF_ORDER = 'timestamp not strictly increasing'


def _in_order(times: Sequence[int]) -> list[bool]:
    """Which samples to keep so that the kept times increase strictly.

    A sample not after the last kept one is dropped; so is one not before its successor when
    that successor is after the last kept one: a single corrupt time far ahead (a spike) then
    costs that sample only, instead of every sample after it.
    """
    keep = [False] * len(times)
    last: int | None = None
    for i, t in enumerate(times):
        if last is not None and t <= last:
            continue
        if i + 1 < len(times) and t >= times[i + 1] and (last is None or times[i + 1] > last):
            continue
        keep[i] = True
        last = t
    return keep


def _usable_indices(stream: _Stream, times: numpy.ndarray,
                    log_times: numpy.ndarray) -> Iterator[int]:
    """Count every sample in ``stream``; yield those whose times are in range and in order.

    The others are dropped (counted by reason): a time beyond what a stamp can hold, or one
    that does not increase (see _in_order).
    """
    ordered = _in_order(times.tolist())
    for i in range(len(times)):
        stream.samples += 1
        if max(times[i], log_times[i]) >= MAX_TIME_NS:
            stream.drop(_OUT_OF_RANGE)
        elif not ordered[i]:
            stream.drop(_OUT_OF_ORDER)
        else:
            yield i


# --- what the import produces ---

@dataclass(slots=True)
class _Stream:
    """One output topic: the messages kept, the drops per reason, the sample count."""

    source: str
    samples: int = 0
    messages: list[tuple[int, int, dict[str, object]]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    decimated: int = 0
    #: Written beliefs whose orientation covariance is all zeros, per reason.
    no_orientation_uncertainty: Counter[str] = field(default_factory=Counter)
    #: Written beliefs per source of their orientation uncertainty.
    orientation_sources: Counter[str] = field(default_factory=Counter)
    #: Samples with a block PX4 flags invalid (or states no accuracy for), per reason.
    invalid: Counter[str] = field(default_factory=Counter)
    #: Written beliefs whose position is marked invalid.
    position_invalid: int = 0

    def drop(self, reason: str) -> None:
        self.dropped[reason] += 1


def _time(stamp_ns: int) -> dict[str, int]:
    return {'sec': stamp_ns // 1_000_000_000, 'nanosec': stamp_ns % 1_000_000_000}


def _xyz(v: Sequence[float]) -> dict[str, float]:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


def _odometry_dict(stamp_ns: int, ros: px4.RosOdometry) -> dict[str, object]:
    q = ros.orientation_xyzw
    return {
        'header': {'stamp': _time(stamp_ns), 'frame_id': FRAME_ID},
        'child_frame_id': CHILD_FRAME_ID,
        'pose': {'pose': {'position': _xyz(ros.position),
                          'orientation': {'x': q[0], 'y': q[1], 'z': q[2], 'w': q[3]}},
                 'covariance': list(ros.pose_covariance)},
        'twist': {'twist': {'linear': _xyz(ros.linear_velocity),
                            'angular': _xyz(ros.angular_velocity)},
                  'covariance': list(ros.twist_covariance)},
    }


def _observation_dict(stamp_ns: int, position: px4.Vector3,
                      covariance: px4.Matrix3) -> dict[str, object]:
    return {
        'header': {'stamp': _time(stamp_ns), 'frame_id': FRAME_ID},
        'pose': {'pose': {'position': _xyz(position),
                          'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                 'covariance': list(px4.observation_pose_covariance(covariance))},
    }


def _nearest(times: numpy.ndarray, stamp: int) -> int | None:
    if len(times) == 0:
        return None
    index = int(numpy.searchsorted(times, stamp))
    candidates = [i for i in (index - 1, index) if 0 <= i < len(times)]
    return min(candidates, key=lambda i: abs(int(times[i]) - stamp))


# --- beliefs ---

@dataclass(slots=True)
class _Orientation(Orientation):
    """Attitude and its uncertainty, looked up per belief stamp; the variances written."""

    variances: list[tuple[float, float, float]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Belief:
    """One usable estimator sample: stamps, the sample, where its orientation σ came from.

    ``orientation`` is the source (ulog_topics.SOURCE_*) or, when no source states one, why
    (the orientation block is then left all zeros, which Ghost judges UNKNOWN).
    """

    stamp_ns: int
    log_time_ns: int
    sample: px4.Px4Odometry
    orientation_source: str | None
    no_orientation_why: str | None = None


_POSITION_INVALID = 'position flagged invalid by PX4 (xy_valid or z_valid false)'
_VELOCITY_INVALID = 'velocity flagged invalid by PX4 (v_xy_valid or v_z_valid false)'
_NAN_POSITION = 'position not finite (NaN: PX4 states no position)'
_NO_ATTITUDE = 'no vehicle_attitude within 100 ms before'


def _flag_columns(data: Mapping[str, numpy.ndarray], n: int) -> dict[str, numpy.ndarray]:
    return {name: (column(data, name) != 0 if name in data else numpy.ones(n, dtype=bool))
            for name in ('xy_valid', 'z_valid', 'v_xy_valid', 'v_z_valid')}


def _local_position_samples(
    data: Mapping[str, numpy.ndarray], orientation: _Orientation, stream: _Stream
) -> Iterator[_Belief]:
    """Every local-position sample that carries a belief, flagged as PX4 flags it.

    Dropped only when there is no belief at all: a position that is not finite, or no
    attitude. A block PX4 flags invalid is kept and marked invalid (px4_convert), and so
    is a block whose accuracy is not finite or negative (PX4 states no usable accuracy).
    """
    stamps = stamps_ns(data)
    log_times = log_times_ns(data)
    cols = {name: column(data, name) for name in
            ('x', 'y', 'z', 'vx', 'vy', 'vz', 'eph', 'epv', 'evh', 'evv')}
    flags = _flag_columns(data, len(stamps))
    tilt_heading = (column(data, 'tilt_var'), column(data, 'heading_var')) if has(
        data, 'tilt_var', 'heading_var') else None
    for i in _usable_indices(stream, stamps, log_times):
        v = {name: float(col[i]) for name, col in cols.items()}
        if not finite(v['x'], v['y'], v['z']):
            stream.drop(_NAN_POSITION)
            continue
        stamp = int(stamps[i])
        attitude = orientation.quaternion(stamp)
        if attitude is None:
            stream.drop(_NO_ATTITUDE)
            continue
        q, rates = attitude
        try:
            px4.px4_quaternion_to_ros(q)
        except ValueError:
            stream.drop('attitude quaternion not finite or zero')
            continue
        position_valid = bool(flags['xy_valid'][i] and flags['z_valid'][i])
        velocity_valid = bool(flags['v_xy_valid'][i] and flags['v_z_valid'][i])
        position_ok = finite(v['eph'], v['epv']) and min(v['eph'], v['epv']) >= 0.0
        velocity_ok = (finite(v['vx'], v['vy'], v['vz'], v['evh'], v['evv'])
                       and min(v['evh'], v['evv']) >= 0.0)
        if not position_valid:
            stream.invalid[_POSITION_INVALID] += 1
        elif not position_ok:
            stream.invalid['position accuracy (eph/epv) not finite or negative'] += 1
        if not velocity_valid:
            stream.invalid[_VELOCITY_INVALID] += 1
        elif not velocity_ok:
            stream.invalid['velocity or its accuracy (evh/evv) not finite or negative'] += 1
        found = orientation.covariance(stamp, q, None if tilt_heading is None else (
            float(tilt_heading[0][i]), float(tilt_heading[1][i])))
        rotation = None if isinstance(found, str) else found[0]
        sample = px4.Px4Odometry(
            position_ned=(v['x'], v['y'], v['z']), q_wxyz=(q[0], q[1], q[2], q[3]),
            velocity=((v['vx'], v['vy'], v['vz']) if velocity_ok else (0.0, 0.0, 0.0)),
            velocity_frame=px4.Px4Frame.NED,
            pose_covariance=px4.pose_covariance(
                px4.horizontal_vertical_covariance(v['eph'], v['epv']) if position_ok
                else _ZERO_COVARIANCE, rotation),
            velocity_covariance=(px4.horizontal_vertical_covariance(v['evh'], v['evv'])
                                 if velocity_ok else _ZERO_COVARIANCE),
            angular_velocity_frd=rates,
            position_valid=position_valid and position_ok,
            velocity_valid=velocity_valid and velocity_ok)
        if isinstance(found, str):
            yield _Belief(stamp, int(log_times[i]), sample, None, found)
        else:
            yield _Belief(stamp, int(log_times[i]), sample, found[1])


_ZERO_COVARIANCE: px4.Matrix3 = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))

# vehicle_odometry frame codes: up to PX4 1.13 (local_frame / velocity_frame) and from 1.14
# (pose_frame / velocity_frame).
_OLD_FRAMES = {0: px4.Px4Frame.NED, 1: px4.Px4Frame.FRD_WORLD, 3: px4.Px4Frame.BODY_FRD}
_NEW_FRAMES = {1: px4.Px4Frame.NED, 2: px4.Px4Frame.FRD_WORLD, 3: px4.Px4Frame.BODY_FRD}


def _diag3(values: Sequence[float]) -> px4.Matrix3:
    return ((values[0], 0.0, 0.0), (0.0, values[1], 0.0), (0.0, 0.0, values[2]))


def _top_left3(full: Sequence[float]) -> px4.Matrix3:
    return ((full[0], full[1], full[2]), (full[6], full[7], full[8]),
            (full[12], full[13], full[14]))


def _usable_variances(values: Sequence[float]) -> bool:
    return finite(*values) and min(values) >= 0.0


def _odometry_fields(data: Mapping[str, numpy.ndarray], i: int
                     ) -> tuple[px4.Px4Odometry, str | None]:
    """One vehicle_odometry sample, either layout, and its orientation source (None: unknown).

    ValueError when it carries no belief (position or attitude not finite). PX4's NaN
    ("invalid/unknown") on the position or velocity variances, or on the velocity, marks
    that block invalid; on the orientation variances it leaves the orientation unknown.
    """
    def get(name: str) -> float:
        return float(data[name][i])

    def frame(codes: Mapping[int, px4.Px4Frame], name: str) -> px4.Px4Frame:
        return codes.get(int(get(name)), px4.Px4Frame.OTHER)

    q = (get('q[0]'), get('q[1]'), get('q[2]'), get('q[3]'))
    source: str | None
    if 'position[0]' in data:  # PX4 1.14+
        position = (get('position[0]'), get('position[1]'), get('position[2]'))
        velocity = (get('velocity[0]'), get('velocity[1]'), get('velocity[2]'))
        rates = (get('angular_velocity[0]'), get('angular_velocity[1]'),
                 get('angular_velocity[2]'))
        pos_var = [get(f'position_variance[{k}]') for k in range(3)]
        rot_var = [get(f'orientation_variance[{k}]') for k in range(3)]
        vel_var = [get(f'velocity_variance[{k}]') for k in range(3)]
        pose_frame = frame(_NEW_FRAMES, 'pose_frame')
        velocity_frame = frame(_NEW_FRAMES, 'velocity_frame')
        if not finite(*position, *q):
            raise ValueError(_NAN_POSITION if not finite(*position)
                             else 'attitude quaternion not finite')
        rotation = None
        if _usable_variances(rot_var):
            try:
                rotation = px4.body_rotation_covariance_ned(q, rot_var)
            except ValueError:
                rotation = None
        source = ulog_topics.SOURCE_ODOMETRY_BODY if rotation is not None else None
        position_valid = _usable_variances(pos_var)
        velocity_valid = _usable_variances(vel_var) and finite(*velocity)
        pose = px4.pose_covariance(_diag3(pos_var) if position_valid else _ZERO_COVARIANCE,
                                   rotation)
        velocity_cov = _diag3(vel_var) if velocity_valid else _ZERO_COVARIANCE
    else:  # PX4 1.10-1.13: x, y, z; 21-value upper-triangular covariances
        position = (get('x'), get('y'), get('z'))
        velocity = (get('vx'), get('vy'), get('vz'))
        rates = (get('rollspeed'), get('pitchspeed'), get('yawspeed'))
        if not finite(*position, *q):
            raise ValueError(_NAN_POSITION if not finite(*position)
                             else 'attitude quaternion not finite')
        urt_pose = [get(f'pose_covariance[{k}]') for k in range(21)]
        urt_vel = [get(f'velocity_covariance[{k}]') for k in range(21)]
        source = ulog_topics.SOURCE_ODOMETRY_URT
        if not math.isfinite(urt_pose[15]):  # PX4: first orientation cell NaN = unknown
            for k in range(15, 21):
                urt_pose[k] = 0.0
            for k in (3, 4, 5, 8, 9, 10, 12, 13, 14):  # position-orientation cross terms
                urt_pose[k] = 0.0
            source = None
        position_valid = finite(*urt_pose)
        if not position_valid:
            urt_pose = [0.0] * 21
            source = None
        pose = px4.covariance_from_upper_triangle(urt_pose)
        full_vel = px4.covariance_from_upper_triangle(urt_vel)
        velocity_cov = _top_left3(full_vel)
        velocity_valid = finite(*velocity, *full_vel)
        if not velocity_valid:
            velocity_cov = _ZERO_COVARIANCE
        pose_frame = frame(_OLD_FRAMES, 'local_frame')
        velocity_frame = (frame(_OLD_FRAMES, 'velocity_frame') if 'velocity_frame' in data
                          else pose_frame)
    return px4.Px4Odometry(
        position_ned=position, q_wxyz=q,
        velocity=velocity if velocity_valid else (0.0, 0.0, 0.0),
        velocity_frame=velocity_frame, pose_covariance=pose, velocity_covariance=velocity_cov,
        angular_velocity_frd=rates if finite(*rates) else (0.0, 0.0, 0.0),
        pose_frame=pose_frame, position_valid=position_valid,
        velocity_valid=velocity_valid), source


@dataclass(frozen=True, slots=True)
class _Validity:
    """PX4's validity flags of the vehicle_local_position samples (for vehicle_odometry)."""

    times: numpy.ndarray
    position: numpy.ndarray
    velocity: numpy.ndarray

    @classmethod
    def of(cls, ulog: Any) -> _Validity | None:
        data = dataset(ulog, 'vehicle_local_position')
        if data is None or not has(data, 'timestamp', 'xy_valid'):
            return None
        flags = _flag_columns(data, len(data['timestamp']))
        return cls(stamps_ns(data), flags['xy_valid'] & flags['z_valid'],
                   flags['v_xy_valid'] & flags['v_z_valid'])

    def at(self, stamp_ns: int) -> tuple[bool, bool]:
        """The flags of the local-position sample nearest ``stamp_ns``, else (True, True).

        EKF2 publishes both topics in the same cycle; a sample more than 100 ms away is not
        that cycle's.
        """
        index = _nearest(self.times, stamp_ns)
        if index is None or abs(int(self.times[index]) - stamp_ns) > ATTITUDE_MAX_AGE_NS:
            return True, True
        return bool(self.position[index]), bool(self.velocity[index])


def _odometry_samples(
    data: Mapping[str, numpy.ndarray], validity: _Validity | None, stream: _Stream
) -> Iterator[_Belief]:
    stamps = stamps_ns(data)
    log_times = log_times_ns(data)
    for i in _usable_indices(stream, stamps, log_times):
        try:
            sample, source = _odometry_fields(data, i)
        except ValueError as err:
            stream.drop(str(err))
            continue
        except KeyError as err:
            raise UlogReadError(f'vehicle_odometry has no field {err}: unknown layout') from err
        stamp = int(stamps[i])
        position_valid, velocity_valid = (True, True) if validity is None else validity.at(stamp)
        if not position_valid or not velocity_valid:
            sample = replace(sample, position_valid=sample.position_valid and position_valid,
                             velocity_valid=sample.velocity_valid and velocity_valid)
        if not sample.position_valid:
            stream.invalid[_POSITION_INVALID if not position_valid
                           else 'position variance not finite (PX4: unknown)'] += 1
        if not sample.velocity_valid:
            stream.invalid[_VELOCITY_INVALID if not velocity_valid
                           else 'velocity or its variance not finite (PX4: unknown)'] += 1
        yield _Belief(stamp, int(log_times[i]), sample, source,
                      None if source else 'vehicle_odometry orientation variance unknown (NaN)')


def _import_beliefs(ulog: Any, source: str, rate_hz: float | None,
                    orientation: _Orientation) -> _Stream:
    data = dataset(ulog, source)
    assert data is not None
    stream = _Stream(source)
    samples = (_odometry_samples(data, _Validity.of(ulog), stream)
               if source == 'vehicle_odometry'
               else _local_position_samples(data, orientation, stream))
    last_kept: int | None = None
    min_step = None if rate_hz is None else int(round(RATE_TOLERANCE * 1e9 / rate_hz))
    for belief in samples:
        stamp = belief.stamp_ns
        try:
            ros = px4.odometry_to_ros(belief.sample)
        except ValueError as err:
            stream.drop(f'frame not convertible ({err})')
            continue
        if min_step is not None and last_kept is not None and stamp < last_kept + min_step:
            stream.decimated += 1
            continue
        last_kept = stamp
        rot = ros.pose_covariance
        if belief.orientation_source is not None:
            orientation.variances.append((rot[21], rot[28], rot[35]))
            stream.orientation_sources[belief.orientation_source] += 1
        else:
            stream.no_orientation_uncertainty[belief.no_orientation_why or 'unknown'] += 1
        if not belief.sample.position_valid:
            stream.position_invalid += 1
        stream.messages.append((stamp, belief.log_time_ns, _odometry_dict(stamp, ros)))
    return stream


# --- fixes ---

@dataclass(frozen=True, slots=True)
class _Origins:
    """The EKF origin of every vehicle_local_position sample (it can be reset in flight)."""

    times: numpy.ndarray
    lat: numpy.ndarray
    lon: numpy.ndarray
    alt: numpy.ndarray
    xy_global: numpy.ndarray
    z_global: numpy.ndarray

    @classmethod
    def of(cls, ulog: Any) -> _Origins | None:
        data = dataset(ulog, 'vehicle_local_position')
        if data is None or not has(data, 'ref_lat', 'ref_lon', 'ref_alt'):
            return None
        n = len(data['timestamp'])
        ones = numpy.ones(n)
        return cls(stamps_ns(data), column(data, 'ref_lat'), column(data, 'ref_lon'),
                   column(data, 'ref_alt'),
                   column(data, 'xy_global') if 'xy_global' in data else ones,
                   column(data, 'z_global') if 'z_global' in data else ones)

    def at(self, stamp_ns: int) -> tuple[px4.GeoOrigin, bool] | None:
        """The origin of the local-position sample nearest in time, with z_global; or None."""
        index = _nearest(self.times, stamp_ns)
        if index is None or not self.xy_global[index]:
            return None
        try:
            origin = px4.GeoOrigin(float(self.lat[index]), float(self.lon[index]),
                                   float(self.alt[index]))
        except ValueError:
            return None
        return origin, bool(self.z_global[index])


def _gnss_columns(data: Mapping[str, numpy.ndarray]) -> tuple[numpy.ndarray, ...]:
    """Latitude, longitude (degrees) and altitude AMSL (m) columns of either GNSS layout."""
    if has(data, 'latitude_deg', 'longitude_deg', 'altitude_msl_m'):  # sensor_gps, PX4 1.14+
        return (column(data, 'latitude_deg'), column(data, 'longitude_deg'),
                column(data, 'altitude_msl_m'))
    if has(data, 'lat', 'lon', 'alt'):  # int 1e-7 degrees, int millimetres
        return (column(data, 'lat') * 1e-7, column(data, 'lon') * 1e-7,
                column(data, 'alt') * 1e-3)
    raise UlogReadError('the GNSS topic has neither lat/lon/alt nor '
                          'latitude_deg/longitude_deg/altitude_msl_m')


def _gnss_sample_times(data: Mapping[str, numpy.ndarray]) -> numpy.ndarray:
    """EKF2's rule: timestamp_sample when set and different from timestamp, else timestamp."""
    timestamp = log_times_ns(data)
    sample = data.get('timestamp_sample')
    if sample is None:
        return timestamp
    sample = ns(sample)
    return numpy.where((sample > 0) & (sample != timestamp), sample, timestamp)


def _import_fixes(ulog: Any, source: str, origins: _Origins | None, delay_ns: int,
                  height: px4.HeightReference) -> _Stream:
    data = dataset(ulog, source)
    assert data is not None
    stream = _Stream(source)
    if not has(data, 'fix_type', 'eph', 'epv'):
        raise UlogReadError(f'{source} has no fix_type/eph/epv fields')
    lat, lon, alt = _gnss_columns(data)
    fix_type = numpy.asarray(data['fix_type'], dtype=numpy.int64)
    eph, epv = column(data, 'eph'), column(data, 'epv')
    log_times = log_times_ns(data)
    sample_times = _gnss_sample_times(data)
    for i in _usable_indices(stream, sample_times, log_times):
        problem = px4.fix_problem(int(fix_type[i]), float(lat[i]), float(lon[i]),
                                  float(alt[i]), float(eph[i]), float(epv[i]))
        if problem is not None:
            stream.drop(problem)
            continue
        stamp = int(sample_times[i]) - delay_ns
        if stamp < 0:
            stream.drop('measurement time before boot (timestamp < GNSS delay)')
            continue
        origin = origins.at(stamp) if origins is not None else None
        if origin is None:
            stream.drop('no EKF origin (vehicle_local_position.xy_global false or not logged)')
            continue
        geo, z_global = origin
        position = px4.gnss_to_enu(geo, float(lat[i]), float(lon[i]), float(alt[i]))
        covariance = px4.fix_covariance(float(eph[i]), float(epv[i]),
                                        height.gnss_vertical_measured and z_global)
        stream.messages.append((stamp, int(log_times[i]),
                                _observation_dict(stamp, position, covariance)))
    return stream


# --- command line ---

def _finite_float(minimum: float, inclusive: bool) -> Callable[[str], float]:
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


_positive_float = _finite_float(0.0, inclusive=False)
_non_negative_float = _finite_float(0.0, inclusive=True)


def _parser() -> argparse.ArgumentParser:
    doc = __doc__ or ''
    parser = argparse.ArgumentParser(
        prog=PROG,
        description='Write a rosbag2 MCAP input bag (/state/nav, /observations) from a PX4 '
                    'ULog: the EKF belief and the GNSS fixes in its local ENU frame.',
        epilog=doc[doc.index('Exit codes'):].replace('\n', ' ') + ' See docs/real-data.md.')
    parser.add_argument('log', type=Path, metavar='LOG.ulg', help='the PX4 ULog file')
    parser.add_argument('--output', '-o', type=Path, required=True, metavar='BAG',
                        help='the bag directory to create (must not exist)')
    parser.add_argument('--rate', type=_positive_float, default=None, metavar='HZ',
                        help='keep at most HZ beliefs per second (a belief is kept when its '
                             'stamp is >= the last kept + 0.9/HZ s); default: every sample. '
                             'Fixes are never decimated.')
    parser.add_argument('--accuracy-profile', default=DEFAULT_PROFILE,
                        choices=tuple(ACCURACY_PROFILES), metavar='NAME',
                        help="the Ghost accuracy profile the summary compares the log's own "
                             f'PX4 limits with ({", ".join(ACCURACY_PROFILES)}; '
                             f'docs/parameters.md); default: {DEFAULT_PROFILE}. It does not '
                             'change the bag.')
    parser.add_argument('--gps-delay-ms', type=_non_negative_float, default=None, metavar='MS',
                        help='GNSS measurement delay (default: the log parameter '
                             'EKF2_GPS_DELAY, 0 when it is missing)')
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


def _check_output(output: Path) -> None:
    if output.exists() or output.is_symlink():
        raise _UsageError(f'{output}: already exists (the output bag directory must not exist)')
    # Like `ros2 bag record -o`, missing parent folders are created.
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _UsageError(f'{output}: its parent directory {output.parent} cannot be created: '
                          f'{err.strerror}') from err


def _write_bag(output: Path, beliefs: _Stream, fixes: _Stream) -> int:
    from ghost_bag.errors import BagWriteError
    from ghost_bag.write import GhostBagWriter

    events = sorted(
        [(log_time, 0, index, OBSERVATION_TOPIC, POSE_TYPE, msg)
         for index, (_, log_time, msg) in enumerate(fixes.messages)]
        + [(log_time, 1, index, BELIEF_TOPIC, ODOMETRY_TYPE, msg)
           for index, (_, log_time, msg) in enumerate(beliefs.messages)],
        key=lambda event: event[:3])
    try:
        with GhostBagWriter(output, _msg_dir()) as writer:
            writer.add_topic(BELIEF_TOPIC, ODOMETRY_TYPE)
            writer.add_topic(OBSERVATION_TOPIC, POSE_TYPE)
            for log_time, _, _, topic, type_name, msg in events:
                writer.write(topic, type_name, msg, log_time)
    except (BagWriteError, OSError) as err:
        if output.is_dir():
            shutil.rmtree(output, ignore_errors=True)
        raise OSError(f'{output}: the bag cannot be written: {err}') from err
    return len(events)


def _seconds(stamp_ns: int) -> str:
    return f'{stamp_ns / 1e9:.3f}'


def _span(stream: _Stream) -> str:
    if not stream.messages:
        return 'none'
    first, last = stream.messages[0][0], stream.messages[-1][0]
    return f'{_seconds(first)} .. {_seconds(last)} s since boot ({(last - first) / 1e9:.1f} s)'


def _gaps(stream: _Stream) -> str:
    stamps = numpy.array([stamp for stamp, _, _ in stream.messages], dtype=numpy.int64)
    if len(stamps) < 3:
        return ''
    steps = numpy.diff(stamps)
    median = float(numpy.median(steps))
    long = int(numpy.sum(steps > 2.0 * median))
    return (f'; period median {median / 1e6:.0f} ms, max {float(steps.max()) / 1e6:.0f} ms, '
            f'{long} gap{"s" if long != 1 else ""} > 2x median')


def _counts(stream: _Stream, topic: str) -> list[str]:
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


def _accuracies(beliefs: _Stream, fixes: _Stream) -> list[str]:
    def diag(stream: _Stream, part: str, k: int) -> list[float]:
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


def _orientation_lines(orientation: _Orientation) -> list[str]:
    lines = []
    if orientation.variances:
        med = [float(numpy.median([v[k] for v in orientation.variances])) for k in range(3)]
        lines.append('  orientation variance (rad², ENU axes x/y/z, median): '
                     + ', '.join(f'{value:.2e}' for value in med)
                     + ' (1-sigma ' + ', '.join(f'{math.degrees(math.sqrt(v)):.2f}' for v in med)
                     + ' deg)')
    return lines


def _orientation_source_lines(beliefs: _Stream) -> list[str]:
    return [f'  orientation uncertainty from {source}: {count} beliefs'
            for source, count in beliefs.orientation_sources.most_common()]


def _invalid_lines(beliefs: _Stream) -> list[str]:
    lines = [f'  beliefs with a block PX4 flags invalid: {sum(beliefs.invalid.values())} '
             '(kept, judged UNKNOWN)']
    lines += [f'    {count}: {reason}' for reason, count in sorted(beliefs.invalid.items())]
    return lines


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


def _run(args: argparse.Namespace, out: TextIO, warn: Callable[[str], None]) -> int:
    path: Path = args.log
    output: Path = args.output
    _check_output(output)
    ulog, damage = _load_ulog(path)
    at = (f't = {ulog.last_timestamp / 1e6:.3f} s since boot, '
          f'{(ulog.last_timestamp - ulog.start_timestamp) / 1e6:.1f} s into the log')
    truncated = ''
    if damage.truncated_at_byte is not None:
        truncated = (f'the log is truncated: its last message (byte {damage.truncated_at_byte} '
                     f'of {damage.file_size}) is incomplete; '
                     + (f'the data ends at {at}' if ulog.data_list
                        else 'it ends before any topic data'))
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

    parameters: dict[str, float] = dict(ulog.initial_parameters)
    watched = ('EKF2_HGT_MODE', 'EKF2_HGT_REF', 'EKF2_GPS_DELAY')
    for stamp_us, name, value in ulog.changed_parameters:
        if name in watched and value != parameters.get(name):
            warn(f'{path}: {name} changes to {value} at t = {stamp_us / 1e6:.3f} s; the '
                 f'initial value {parameters.get(name)} is used for the whole log')
    height = px4.height_reference(parameters)
    delay_ns, delay_text = _delay(args, parameters)
    if delay_ns == 0 and args.gps_delay_ms is None:
        warn(f'{path}: EKF2_GPS_DELAY is not in the log: GNSS fixes are stamped at their '
             'logged time (give --gps-delay-ms to set the delay)')

    orientation = _Orientation.of(ulog)
    try:
        beliefs = _import_beliefs(ulog, belief_source, args.rate, orientation)
        fixes = (_import_fixes(ulog, gnss_source, _Origins.of(ulog), delay_ns, height)
                 if gnss_source is not None else _Stream('no GNSS topic'))
    except KeyError as err:
        raise UlogReadError(f'{path}: a field the importer needs is not logged: {err} '
                              f'(topics {belief_source}, {gnss_source})') from err
    if not beliefs.messages:
        reasons = '; '.join(f'{count} {reason}' for reason, count
                            in beliefs.dropped.most_common(3)) or 'no samples'
        extra = f'; {truncated}' if truncated else ''
        raise UlogReadError(f'{path}: no usable belief in {beliefs.source} '
                              f'({beliefs.samples} samples: {reasons}){extra}')
    if not fixes.messages:
        reasons = ('; '.join(f'{count} {reason}' for reason, count
                             in fixes.dropped.most_common(3)) or 'no samples')
        where = (f'in {fixes.source} ({fixes.samples} samples: {reasons})'
                 if gnss_source is not None else
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

    limits = _limit_lines(parameters, args.accuracy_profile)
    written = _write_bag(output, beliefs, fixes)
    version = ulog.msg_info_dict.get('ver_sw', '')
    hardware = str(ulog.msg_info_dict.get('ver_hw', '') or 'hardware not stated')
    lines = [
        f'{PROG}: {path} ({damage.file_size} bytes, PX4 '
        f'{ulog_topics.px4_version_label(ulog)} {str(version)[:8] or "unknown"}, {hardware}'
        + (', TRUNCATED' if truncated else '') + ')',
        *_counts(beliefs, f'beliefs {BELIEF_TOPIC}'),
        *_counts(fixes, f'fixes {OBSERVATION_TOPIC}'),
        *_accuracies(beliefs, fixes),
        *_orientation_lines(orientation),
        *_orientation_source_lines(beliefs),
        f'  beliefs without orientation uncertainty (orientation block all zeros): {unknown}',
        *_invalid_lines(beliefs),
        f'unmeasured axes: {height.describe()}',
        f'GNSS delay: {delay_text}; fix stamp = sample time - delay, written at its log time',
        f'time span: beliefs {_span(beliefs)}{_gaps(beliefs)}',
        f'           fixes {_span(fixes)}{_gaps(fixes)}',
        *limits,
        f'output: {output} ({written} messages: {len(beliefs.messages)} on {BELIEF_TOPIC}, '
        f'{len(fixes.messages)} on {OBSERVATION_TOPIC}; frame {FRAME_ID}, child '
        f'{CHILD_FRAME_ID})',
    ]
    print('\n'.join(lines), file=out)
    return _EXIT_OK


def _one_line(text: str) -> str:
    return ' '.join(str(text).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run ghost_import_ulog; return the exit code (0, 1, 2 or 3, see the module docstring)."""
    args = _parser().parse_args(argv)

    def warn(message: str) -> None:
        print(f'{PROG}: warning: {_one_line(message)}', file=sys.stderr)

    def error(message: str, code: int) -> int:
        print(f'{PROG}: error: {_one_line(message)}', file=sys.stderr)
        return code

    try:
        return _run(args, sys.stdout, warn)
    except _UsageError as err:
        return error(str(err), _EXIT_USAGE)
    except UlogReadError as err:
        message = str(err)
        if not message.startswith(str(args.log)):
            message = f'{args.log}: {message}'
        return error(message, _EXIT_INPUT)
    except OSError as err:
        return error(str(err), _EXIT_WRITE)
    except KeyboardInterrupt:
        return error('interrupted', 130)


if __name__ == '__main__':
    sys.exit(main())

