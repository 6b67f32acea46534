"""The beliefs and GNSS fixes of a PX4 ULog as bag messages, each drop counted by its reason.

What ghost_import (ghost_px4.ulog_import) writes: /state/nav from vehicle_odometry or
vehicle_local_position, /observations from vehicle_gps_position or sensor_gps. Each sample is
judged by the bridge's per-sample rules (ghost_px4.live); the log's columns are read with
ghost_px4.ulog_read, the attitude and its uncertainty with ghost_px4.ulog_orientation.
One cohesive job, hence one module: a log's samples in, the import's messages and counts out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
import math
from typing import Any

import numpy

from ghost_core.geometry import block3, finite, Vector3, WxyzQuaternion, ZERO3
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.errors import Px4SampleRejected
from ghost_px4.live import CHILD_FRAME_ID, FRAME_ID
from ghost_px4.ulog_orientation import (
    ATTITUDE_MAX_AGE_NS,
    Orientation,
    SOURCE_ODOMETRY_BODY,
    SOURCE_ODOMETRY_URT,
)
from ghost_px4.ulog_read import (
    column,
    dataset,
    has,
    log_times_ns,
    MAX_TIME_NS,
    ns,
    stamps_ns,
    UlogReadError,
    validity_flags,
)

__all__ = ['ImportOrientation', 'RATE_TOLERANCE', 'Stream', 'import_beliefs', 'import_fixes',
           'observation_dict', 'odometry_dict']

#: --rate HZ keeps a belief when its stamp is >= the last kept one + RATE_TOLERANCE / HZ.
RATE_TOLERANCE = 0.9

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


def _usable_indices(stream: Stream, times: numpy.ndarray,
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
class Stream:
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
        """Count one sample dropped for ``reason``."""
        self.dropped[reason] += 1


def _time(stamp_ns: int) -> dict[str, int]:
    return {'sec': stamp_ns // 1_000_000_000, 'nanosec': stamp_ns % 1_000_000_000}


def _xyz(v: Sequence[float]) -> dict[str, float]:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


def odometry_dict(stamp_ns: int, ros: px4.RosOdometry) -> dict[str, object]:
    """A nav_msgs/Odometry message dict of a belief stamped ``stamp_ns`` (odom, base_link)."""
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


def observation_dict(fix: live.Fix) -> dict[str, object]:
    """A geometry_msgs/PoseWithCovarianceStamped message dict of a fix (frame odom)."""
    return {
        'header': {'stamp': _time(fix.stamp_ns), 'frame_id': FRAME_ID},
        'pose': {'pose': {'position': _xyz(fix.position),
                          'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                 'covariance': list(fix.covariance)},
    }


def _nearest(times: numpy.ndarray, stamp: int) -> int | None:
    if len(times) == 0:
        return None
    index = int(numpy.searchsorted(times, stamp))
    candidates = [i for i in (index - 1, index) if 0 <= i < len(times)]
    return min(candidates, key=lambda i: abs(int(times[i]) - stamp))


# --- beliefs ---

@dataclass(slots=True)
class ImportOrientation(Orientation):
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


_NO_ATTITUDE = 'no vehicle_attitude within 100 ms before'
_BAD_ATTITUDE = 'attitude quaternion not finite or zero'
_NO_ODOMETRY_ORIENTATION = 'vehicle_odometry orientation variance unknown (NaN)'
_LOCAL_COLUMNS = ('x', 'y', 'z', 'vx', 'vy', 'vz', 'eph', 'epv', 'evh', 'evv')


def _attitude(orientation: ImportOrientation, stamp_ns: int) -> tuple[WxyzQuaternion, Vector3]:
    """PX4 q [w, x, y, z] and body rates of the attitude at ``stamp_ns``; else rejected."""
    attitude = orientation.quaternion(stamp_ns)
    if attitude is None:
        raise Px4SampleRejected(_NO_ATTITUDE)
    q, rates = attitude
    try:
        px4.px4_quaternion_to_ros(q)
    except ValueError as err:
        raise Px4SampleRejected(_BAD_ATTITUDE) from err
    return (q[0], q[1], q[2], q[3]), rates


def _local_position_samples(
    data: Mapping[str, numpy.ndarray], orientation: ImportOrientation, stream: Stream
) -> Iterator[_Belief]:
    """Every local-position sample that carries a belief, flagged as PX4 flags it.

    Dropped only when there is no belief at all: a position that is not finite, or no
    attitude. Otherwise kept, its blocks marked as live.local_position_sample marks them.
    """
    stamps = stamps_ns(data)
    log_times = log_times_ns(data)
    cols = {name: column(data, name) for name in _LOCAL_COLUMNS}
    flags = validity_flags(data)
    tilt_heading = (column(data, 'tilt_var'), column(data, 'heading_var')) if has(
        data, 'tilt_var', 'heading_var') else None
    for i in _usable_indices(stream, stamps, log_times):
        v = {name: float(col[i]) for name, col in cols.items()}
        stamp = int(stamps[i])
        try:
            live.require_belief((v['x'], v['y'], v['z']))
            q, rates = _attitude(orientation, stamp)
        except Px4SampleRejected as err:
            stream.drop(str(err))
            continue
        found = orientation.covariance(stamp, q, None if tilt_heading is None else (
            float(tilt_heading[0][i]), float(tilt_heading[1][i])))
        belief = live.local_position_sample(
            x=v['x'], y=v['y'], z=v['z'], vx=v['vx'], vy=v['vy'], vz=v['vz'], eph=v['eph'],
            epv=v['epv'], evh=v['evh'], evv=v['evv'], xy_valid=flags['xy_valid'][i],
            z_valid=flags['z_valid'][i], v_xy_valid=flags['v_xy_valid'][i],
            v_z_valid=flags['v_z_valid'][i], q_wxyz=q, angular_velocity_frd=rates,
            rotation=None if isinstance(found, str) else found[0])
        stream.invalid.update(belief.invalid)
        if isinstance(found, str):
            yield _Belief(stamp, int(log_times[i]), belief.sample, None, found)
        else:
            yield _Belief(stamp, int(log_times[i]), belief.sample, found[1])


# vehicle_odometry frame codes: up to PX4 1.13 (local_frame / velocity_frame) and from 1.14
# (pose_frame / velocity_frame).
_OLD_FRAMES = {0: px4.Px4Frame.NED, 1: px4.Px4Frame.FRD_WORLD, 3: px4.Px4Frame.BODY_FRD}
_NEW_FRAMES = {1: px4.Px4Frame.NED, 2: px4.Px4Frame.FRD_WORLD, 3: px4.Px4Frame.BODY_FRD}
# In PX4 1.10-1.13's 21-value upper-triangular pose covariance: the orientation block, and
# the position-orientation cross terms.
_URT_ORIENTATION = range(15, 21)
_URT_CROSS = (3, 4, 5, 8, 9, 10, 12, 13, 14)


def _reader(data: Mapping[str, numpy.ndarray], i: int) -> Callable[[str], float]:
    def get(name: str) -> float:
        return float(data[name][i])
    return get


def _frame(codes: Mapping[int, px4.Px4Frame], code: float) -> px4.Px4Frame:
    return codes.get(int(code), px4.Px4Frame.OTHER)


def _new_odometry(data: Mapping[str, numpy.ndarray], i: int, position_valid: bool,
                  velocity_valid: bool) -> tuple[live.Px4Sample, str | None]:
    """A PX4 1.14+ vehicle_odometry sample (the bridge's rules: live.odometry_sample)."""
    get = _reader(data, i)

    def values(name: str, size: int = 3) -> list[float]:
        return [get(f'{name}[{k}]') for k in range(size)]

    found = live.odometry_sample(
        q=values('q', 4), position=values('position'), velocity=values('velocity'),
        angular_velocity=values('angular_velocity'),
        position_variance=values('position_variance'),
        orientation_variance=values('orientation_variance'),
        velocity_variance=values('velocity_variance'),
        pose_frame=_frame(_NEW_FRAMES, get('pose_frame')),
        velocity_frame=_frame(_NEW_FRAMES, get('velocity_frame')),
        position_valid=position_valid, velocity_valid=velocity_valid)
    return found, SOURCE_ODOMETRY_BODY if found.orientation_stated else None


def _old_pose_covariance(urt_pose: list[float]) -> tuple[tuple[float, ...], bool, bool]:
    """The 6x6 of a PX4 1.10-1.13 pose covariance; whether its orientation, position are known.

    PX4's NaN on the first orientation cell means "orientation unknown": that block and the
    cross terms become 0. Any other NaN makes the whole pose unknown (all zeros).
    """
    orientation_known = math.isfinite(urt_pose[15])
    if not orientation_known:
        for k in (*_URT_ORIENTATION, *_URT_CROSS):
            urt_pose[k] = 0.0
    position_known = finite(*urt_pose)
    if not position_known:
        urt_pose = [0.0] * 21
    return (px4.covariance_from_upper_triangle(urt_pose), orientation_known and position_known,
            position_known)


def _old_odometry(data: Mapping[str, numpy.ndarray], i: int, position_valid: bool,
                  velocity_valid: bool) -> tuple[live.Px4Sample, str | None]:
    """A PX4 1.10-1.13 vehicle_odometry sample: x, y, z; 21-value upper-triangular covariances.

    Rejected when it carries no belief (live.require_belief). NaN on the pose covariance
    (_old_pose_covariance), the velocity or its covariance marks that block invalid.
    """
    get = _reader(data, i)
    q = (get('q[0]'), get('q[1]'), get('q[2]'), get('q[3]'))
    position = (get('x'), get('y'), get('z'))
    velocity = (get('vx'), get('vy'), get('vz'))
    rates = (get('rollspeed'), get('pitchspeed'), get('yawspeed'))
    live.require_belief(position, q)
    pose, oriented, position_ok = _old_pose_covariance(
        [get(f'pose_covariance[{k}]') for k in range(21)])
    full_vel = px4.covariance_from_upper_triangle(
        [get(f'velocity_covariance[{k}]') for k in range(21)])
    velocity_ok = finite(*velocity, *full_vel)
    pose_frame = _frame(_OLD_FRAMES, get('local_frame'))
    velocity_frame = (_frame(_OLD_FRAMES, get('velocity_frame')) if 'velocity_frame' in data
                      else pose_frame)
    sample = px4.Px4Odometry(
        position_ned=position, q_wxyz=q,
        velocity=velocity if velocity_ok else (0.0, 0.0, 0.0),
        velocity_frame=velocity_frame, pose_covariance=pose,
        velocity_covariance=block3(full_vel, 0, 0) if velocity_ok else ZERO3,
        angular_velocity_frd=live.carried_rates(rates), pose_frame=pose_frame,
        position_valid=position_valid and position_ok,
        velocity_valid=velocity_valid and velocity_ok)
    invalid = live.invalid_reasons(
        position_valid, position_ok, velocity_valid, velocity_ok,
        position_unusable=live.POSITION_VARIANCE_UNKNOWN,
        velocity_unusable=live.VELOCITY_VARIANCE_UNKNOWN)
    return (live.Px4Sample(sample, oriented, invalid),
            SOURCE_ODOMETRY_URT if oriented else None)


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
        flags = validity_flags(data)
        return cls(stamps_ns(data), flags['xy_valid'] & flags['z_valid'],
                   flags['v_xy_valid'] & flags['v_z_valid'])

    def at(self, stamp_ns: int) -> tuple[bool, bool]:
        """The flags of the local-position sample nearest ``stamp_ns`` (live.Validity.at).

        EKF2 publishes both topics in the same cycle; a sample more than 100 ms away is not
        that cycle's: (True, True).
        """
        index = _nearest(self.times, stamp_ns)
        if index is None:
            return True, True
        nearest = live.Validity(int(self.times[index]), bool(self.position[index]),
                                bool(self.velocity[index]))
        return nearest.at(stamp_ns, ATTITUDE_MAX_AGE_NS)


def _odometry_samples(
    data: Mapping[str, numpy.ndarray], validity: _Validity | None, stream: Stream
) -> Iterator[_Belief]:
    """Every vehicle_odometry sample (either layout) that carries a belief, flagged by PX4.

    The flags are those of the same cycle's vehicle_local_position (_Validity).
    """
    stamps = stamps_ns(data)
    log_times = log_times_ns(data)
    odometry = _new_odometry if 'position[0]' in data else _old_odometry
    for i in _usable_indices(stream, stamps, log_times):
        stamp = int(stamps[i])
        flags = (True, True) if validity is None else validity.at(stamp)
        try:
            found, source = odometry(data, i, *flags)
        except ValueError as err:
            stream.drop(str(err))
            continue
        except KeyError as err:
            raise UlogReadError(f'vehicle_odometry has no field {err}: unknown layout') from err
        stream.invalid.update(found.invalid)
        yield _Belief(stamp, int(log_times[i]), found.sample, source,
                      None if source else _NO_ODOMETRY_ORIENTATION)


def import_beliefs(ulog: Any, source: str, rate_hz: float | None,
                   orientation: ImportOrientation) -> Stream:
    """Every sample of ``source`` that carries a belief, decimated to ``rate_hz`` if given."""
    data = dataset(ulog, source)
    assert data is not None
    stream = Stream(source)
    samples = (_odometry_samples(data, _Validity.of(ulog), stream)
               if source == 'vehicle_odometry'
               else _local_position_samples(data, orientation, stream))
    last_kept: int | None = None
    min_step = None if rate_hz is None else int(round(RATE_TOLERANCE * 1e9 / rate_hz))
    for belief in samples:
        stamp = belief.stamp_ns
        try:
            ros = live.ros_odometry(belief.sample)
        except Px4SampleRejected as err:
            stream.drop(str(err))
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
        stream.messages.append((stamp, belief.log_time_ns, odometry_dict(stamp, ros)))
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


_NO_ORIGIN = 'no EKF origin (vehicle_local_position.xy_global false or not logged)'


def import_fixes(ulog: Any, source: str, delay_ns: int, height: px4.HeightReference) -> Stream:
    """Every GNSS sample of ``source`` that is a fix, in the EKF's local frame (ENU)."""
    origins = _Origins.of(ulog)
    data = dataset(ulog, source)
    assert data is not None
    stream = Stream(source)
    if not has(data, 'fix_type', 'eph', 'epv'):
        raise UlogReadError(f'{source} has no fix_type/eph/epv fields')
    lat, lon, alt = _gnss_columns(data)
    fix_type = numpy.asarray(data['fix_type'], dtype=numpy.int64)
    eph, epv = column(data, 'eph'), column(data, 'epv')
    log_times = log_times_ns(data)
    sample_times = _gnss_sample_times(data)
    for i in _usable_indices(stream, sample_times, log_times):
        sample_ns = int(sample_times[i])
        try:
            fix = live.fix_observation(
                fix_type=int(fix_type[i]), lat_deg=float(lat[i]), lon_deg=float(lon[i]),
                alt_m=float(alt[i]), eph=float(eph[i]), epv=float(epv[i]), sample_ns=sample_ns,
                delay_ns=delay_ns, height=height, no_origin=_NO_ORIGIN,
                origin=origins.at(sample_ns - delay_ns) if origins is not None else None)
        except Px4SampleRejected as err:
            stream.drop(str(err))
            continue
        stream.messages.append((fix.stamp_ns, int(log_times[i]), observation_dict(fix)))
    return stream
