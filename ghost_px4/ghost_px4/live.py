"""Pure per-message rules of the live PX4 bridge (px4_bridge): one PX4 sample in, ROS content out.

The conventions themselves (NED/ENU, FRD/FLU, the quaternion, covariance rotations, PX4's map
projection, eph/epv, the height reference) are ``ghost_px4.convert``'s, shared with the
ULog importer; this module only applies the importer's per-sample rules to the fields of one
live message (px4_msgs release/1.17 layouts: ``VehicleOdometry``, ``VehicleLocalPosition``,
``SensorGps``), given as plain numbers.

SPEC §5: a belief its estimator flags invalid is published, its block marked invalid (+inf
variances, judged UNKNOWN), never dropped; only a sample that carries no belief at all (no
position, no attitude, an unmappable frame), or a fix that cannot be one, raises
:class:`~ghost_px4.errors.Px4SampleRejected` with a stable reason (the node counts them).

Nothing here imports rclpy or px4_msgs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

from ghost_px4 import convert as px4
from ghost_px4.errors import Px4SampleRejected

__all__ = [
    'Attitude',
    'Belief',
    'CHILD_FRAME_ID',
    'FRAME_ID',
    'Fix',
    'NAN_POSITION',
    'ORIENTATION_FROM_ODOMETRY',
    'ORIENTATION_FROM_TILT_HEADING',
    'POSE_FRAMES',
    'POSITION_FLAGGED_INVALID',
    'VELOCITY_FLAGGED_INVALID',
    'VELOCITY_FRAMES',
    'Validity',
    'belief_time_ns',
    'fix_observation',
    'fix_sample_time_ns',
    'local_position_odometry',
    'origin_of',
    'vehicle_odometry_sample',
]

#: The frames the bridge publishes in, the importer's (REP 105: ENU world, FLU body).
FRAME_ID = 'odom'
CHILD_FRAME_ID = 'base_link'

#: VehicleOdometry.pose_frame codes (POSE_FRAME_*); 0 is unknown.
POSE_FRAMES = {1: px4.Px4Frame.NED, 2: px4.Px4Frame.FRD_WORLD}
#: VehicleOdometry.velocity_frame codes (VELOCITY_FRAME_*); 0 is unknown.
VELOCITY_FRAMES = {1: px4.Px4Frame.NED, 2: px4.Px4Frame.FRD_WORLD, 3: px4.Px4Frame.BODY_FRD}

# The reasons below are the importer's (ghost_px4.ulog_import), word for word, so that a
# bridge's log and an import summary of the same flight count the same things.
#: The one reason a sample with an attitude carries no belief: PX4 states no position.
NAN_POSITION = 'position not finite (NaN: PX4 states no position)'
#: Why a published belief has its position / velocity block marked invalid (+inf variances).
POSITION_FLAGGED_INVALID = 'position flagged invalid by PX4 (xy_valid or z_valid false)'
VELOCITY_FLAGGED_INVALID = 'velocity flagged invalid by PX4 (v_xy_valid or v_z_valid false)'
_POSITION_VARIANCE_UNKNOWN = 'position variance not finite (PX4: unknown)'
_VELOCITY_VARIANCE_UNKNOWN = 'velocity or its variance not finite (PX4: unknown)'
_POSITION_ACCURACY_UNKNOWN = 'position accuracy (eph/epv) not finite or negative'
_VELOCITY_ACCURACY_UNKNOWN = 'velocity or its accuracy (evh/evv) not finite or negative'

#: Where a belief's orientation uncertainty came from (Belief.orientation_source).
ORIENTATION_FROM_ODOMETRY = 'vehicle_odometry.orientation_variance (body axes)'
ORIENTATION_FROM_TILT_HEADING = 'vehicle_local_position.tilt_var/heading_var'

_ZERO3: px4.Matrix3 = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def _finite(*values: float) -> bool:
    return all(math.isfinite(value) for value in values)


def _usable_variances(values: Sequence[float]) -> bool:
    """Finite and non-negative: anything else is PX4's "invalid/unknown"."""
    return _finite(*values) and min(values) >= 0.0


def _us_to_ns(value_us: int) -> int:
    return int(value_us) * 1000


def belief_time_ns(timestamp_us: int, timestamp_sample_us: int) -> int:
    """The stamp of an estimate: ``timestamp_sample`` when set (> 0), else ``timestamp``.

    PX4 time: microseconds since PX4 boot, returned as integer nanoseconds since PX4 boot (the
    importer's rule; no wall clock is involved).
    """
    return _us_to_ns(timestamp_sample_us if timestamp_sample_us > 0 else timestamp_us)


def fix_sample_time_ns(timestamp_us: int, timestamp_sample_us: int) -> int:
    """EKF2's GNSS sample time (ns since PX4 boot), the importer's rule.

    ``timestamp_sample`` when set and different from ``timestamp``, else ``timestamp``.
    """
    if 0 < timestamp_sample_us != timestamp_us:
        return _us_to_ns(timestamp_sample_us)
    return _us_to_ns(timestamp_us)


def _diag(values: Sequence[float]) -> px4.Matrix3:
    return ((float(values[0]), 0.0, 0.0), (0.0, float(values[1]), 0.0),
            (0.0, 0.0, float(values[2])))


def _body_orientation(q_wxyz: Sequence[float],
                      variance: Sequence[float] | None) -> px4.Matrix3 | None:
    """The NED rotation covariance of vehicle_odometry's body-axis variances, or None.

    None (the block stays all zeros: UNKNOWN) when PX4 does not state them: NaN ("unknown"),
    negative (not a variance) or all zeros.
    """
    if variance is None or not _usable_variances(variance):
        return None
    try:
        return px4.body_rotation_covariance_ned(q_wxyz, variance)
    except ValueError:
        return None


def _tilt_heading(tilt_var: float | None, heading_var: float | None) -> px4.Matrix3 | None:
    """The NED rotation covariance of tilt_var/heading_var, or None when not stated."""
    if tilt_var is None or heading_var is None:
        return None
    try:
        return px4.tilt_heading_covariance_ned(float(tilt_var), float(heading_var))
    except ValueError:  # NaN or negative: not stated
        return None


@dataclass(frozen=True, slots=True)
class Belief:
    """One belief as ROS odometry content, and what the bridge counts about it.

    ``orientation_source`` says where the orientation uncertainty came from
    (ORIENTATION_FROM_*), None when no source states one: its block is then all zeros, which
    Ghost judges UNKNOWN. ``invalid`` lists why a block is marked invalid (+inf on its
    diagonal, judged UNKNOWN with reason estimator_position_invalid /
    estimator_velocity_invalid): at most one reason per block, position first.
    """

    odometry: px4.RosOdometry
    orientation_source: str | None
    invalid: tuple[str, ...] = ()


def _belief(sample: px4.Px4Odometry, orientation_source: str | None,
            invalid: Sequence[str | None]) -> Belief:
    try:
        odometry = px4.odometry_to_ros(sample)
    except ValueError as err:
        raise Px4SampleRejected(f'frame not convertible ({err})') from err
    return Belief(odometry, orientation_source,
                  tuple(reason for reason in invalid if reason is not None))


def _why_invalid(flagged_valid: bool, flagged_reason: str, usable: bool,
                 unusable_reason: str) -> str | None:
    """PX4's own flag first, then what PX4 left unstated (the importer's order)."""
    if not flagged_valid:
        return flagged_reason
    return None if usable else unusable_reason


@dataclass(frozen=True, slots=True)
class Validity:
    """PX4's validity flags of one vehicle_local_position sample and its stamp (ns).

    ``position``: xy_valid and z_valid; ``velocity``: v_xy_valid and v_z_valid.
    """

    stamp_ns: int
    position: bool
    velocity: bool

    def at(self, stamp_ns: int, max_age_ns: int) -> tuple[bool, bool]:
        """The (position, velocity) flags for an odometry sample stamped ``stamp_ns``.

        EKF2 publishes vehicle_local_position and vehicle_odometry in the same cycle, in
        either arrival order: flags at most ``max_age_ns`` away (before or after) are that
        cycle's; farther away they say nothing, (True, True) (the importer's rule).
        """
        if abs(stamp_ns - self.stamp_ns) > max_age_ns:
            return True, True
        return self.position, self.velocity


def vehicle_odometry_sample(
    *, position: Sequence[float], q: Sequence[float], velocity: Sequence[float],
    angular_velocity: Sequence[float], position_variance: Sequence[float],
    orientation_variance: Sequence[float], velocity_variance: Sequence[float],
    pose_frame: int, velocity_frame: int, position_valid: bool = True,
    velocity_valid: bool = True,
) -> Belief:
    """A VehicleOdometry's fields as a belief, marked as PX4 marks it (the importer's rules).

    Rejected (Px4SampleRejected) only when it carries no belief: a position that is not
    finite (NaN: PX4 states no position) or an attitude that is not, and when a frame cannot
    be mapped (an FRD world frame of arbitrary heading, an unknown frame). Otherwise kept:
    a NaN or negative position variance marks the position invalid; a NaN velocity or a NaN
    or negative velocity variance marks the velocity invalid (published as 0, 0, 0);
    ``position_valid``/``velocity_valid`` (PX4's flags of the same cycle's
    vehicle_local_position) mark them too. The orientation variance is about the body FRD
    axes (EKF2's getRotVarBody) and rotated into the world by the attitude; NaN, negative or
    all zeros leave the orientation block all zeros (Ghost judges it UNKNOWN, never KNOWN).
    A NaN body rate becomes 0 (not judged).
    """
    q_wxyz = (float(q[0]), float(q[1]), float(q[2]), float(q[3]))
    if not _finite(*position):
        raise Px4SampleRejected(NAN_POSITION)
    if not _finite(*q_wxyz):
        raise Px4SampleRejected('attitude quaternion not finite')
    rotation = _body_orientation(q_wxyz, orientation_variance)
    position_ok = _usable_variances(position_variance)
    velocity_ok = _usable_variances(velocity_variance) and _finite(*velocity)
    rates = tuple(float(v) for v in angular_velocity)
    sample = px4.Px4Odometry(
        position_ned=(float(position[0]), float(position[1]), float(position[2])),
        q_wxyz=q_wxyz,
        velocity=((float(velocity[0]), float(velocity[1]), float(velocity[2])) if velocity_ok
                  else (0.0, 0.0, 0.0)),
        velocity_frame=VELOCITY_FRAMES.get(int(velocity_frame), px4.Px4Frame.OTHER),
        pose_covariance=px4.pose_covariance(
            _diag(position_variance) if position_ok else _ZERO3, rotation),
        velocity_covariance=_diag(velocity_variance) if velocity_ok else _ZERO3,
        angular_velocity_frd=((rates[0], rates[1], rates[2]) if _finite(*rates)
                              else (0.0, 0.0, 0.0)),
        pose_frame=POSE_FRAMES.get(int(pose_frame), px4.Px4Frame.OTHER),
        position_valid=position_valid and position_ok,
        velocity_valid=velocity_valid and velocity_ok)
    return _belief(sample, None if rotation is None else ORIENTATION_FROM_ODOMETRY, (
        _why_invalid(position_valid, POSITION_FLAGGED_INVALID, position_ok,
                     _POSITION_VARIANCE_UNKNOWN),
        _why_invalid(velocity_valid, VELOCITY_FLAGGED_INVALID, velocity_ok,
                     _VELOCITY_VARIANCE_UNKNOWN)))


@dataclass(frozen=True, slots=True)
class Attitude:
    """The EKF attitude a vehicle_local_position belief takes (from vehicle_odometry).

    ``orientation_variance`` is vehicle_odometry's, about the body FRD axes; None (or NaN)
    when PX4 did not state it.
    """

    stamp_ns: int
    q_wxyz: tuple[float, float, float, float]
    angular_velocity_frd: px4.Vector3
    orientation_variance: px4.Vector3 | None


def local_position_odometry(
    *, x: float, y: float, z: float, vx: float, vy: float, vz: float, eph: float, epv: float,
    evh: float, evv: float, xy_valid: bool, z_valid: bool, v_xy_valid: bool, v_z_valid: bool,
    stamp_ns: int, attitude: Attitude | None, max_attitude_age_ns: int,
    tilt_var: float | None = None, heading_var: float | None = None,
) -> Belief:
    """A VehicleLocalPosition with the latest attitude as a belief (the importer's rules).

    Rejected (Px4SampleRejected) only when it carries no belief: a position that is not
    finite, or no attitude at or before ``stamp_ns`` and at most ``max_attitude_age_ns``
    older. Otherwise kept, and a block marked invalid where PX4 flags it (xy_valid/z_valid,
    v_xy_valid/v_z_valid false) or states no usable accuracy (eph/epv, or the velocity or
    evh/evv, not finite or negative; an invalid velocity is published as 0, 0, 0).
    Position covariance diag(eph²/2, eph²/2, epv²), velocity diag(evh²/2, evh²/2, evv²)
    (``px4_convert.horizontal_vertical_covariance``). The orientation uncertainty is the
    sample's own ``tilt_var``/``heading_var`` when given and stated (PX4 1.15+; not both 0,
    finite, non-negative), else the attitude's vehicle_odometry orientation variance (body
    axes), else none (block all zeros: UNKNOWN).
    """
    if not _finite(x, y, z):
        raise Px4SampleRejected(NAN_POSITION)
    if attitude is None or not 0 <= stamp_ns - attitude.stamp_ns <= max_attitude_age_ns:
        raise Px4SampleRejected(
            f'no vehicle_odometry attitude within {max_attitude_age_ns / 1e6:g} ms before')
    position_valid = bool(xy_valid and z_valid)
    velocity_valid = bool(v_xy_valid and v_z_valid)
    position_ok = _usable_variances((eph, epv))
    velocity_ok = _finite(vx, vy, vz) and _usable_variances((evh, evv))
    rotation = _tilt_heading(tilt_var, heading_var)
    source = ORIENTATION_FROM_TILT_HEADING
    if rotation is None:
        rotation = _body_orientation(attitude.q_wxyz, attitude.orientation_variance)
        source = ORIENTATION_FROM_ODOMETRY
    sample = px4.Px4Odometry(
        position_ned=(float(x), float(y), float(z)), q_wxyz=attitude.q_wxyz,
        velocity=(float(vx), float(vy), float(vz)) if velocity_ok else (0.0, 0.0, 0.0),
        velocity_frame=px4.Px4Frame.NED,
        pose_covariance=px4.pose_covariance(
            px4.horizontal_vertical_covariance(eph, epv) if position_ok else _ZERO3, rotation),
        velocity_covariance=(px4.horizontal_vertical_covariance(evh, evv) if velocity_ok
                             else _ZERO3),
        angular_velocity_frd=attitude.angular_velocity_frd,
        position_valid=position_valid and position_ok,
        velocity_valid=velocity_valid and velocity_ok)
    return _belief(sample, None if rotation is None else source, (
        _why_invalid(position_valid, POSITION_FLAGGED_INVALID, position_ok,
                     _POSITION_ACCURACY_UNKNOWN),
        _why_invalid(velocity_valid, VELOCITY_FLAGGED_INVALID, velocity_ok,
                     _VELOCITY_ACCURACY_UNKNOWN)))


def origin_of(xy_global: bool, z_global: bool, ref_lat: float, ref_lon: float,
              ref_alt: float) -> tuple[px4.GeoOrigin, bool] | None:
    """The EKF origin of a vehicle_local_position and its ``z_global``, or None without one.

    None when ``xy_global`` is false (the EKF has no origin yet) or the reference is not a
    finite point on the globe (PX4 leaves it NaN/0 until set).
    """
    if not xy_global:
        return None
    try:
        return px4.GeoOrigin(float(ref_lat), float(ref_lon), float(ref_alt)), bool(z_global)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Fix:
    """A GNSS fix as an observation: stamp (ns since PX4 boot), ENU position, 6x6 covariance."""

    stamp_ns: int
    position: px4.Vector3
    covariance: tuple[float, ...]


def fix_observation(
    *, fix_type: int, lat_deg: float, lon_deg: float, alt_m: float, eph: float, epv: float,
    sample_ns: int, delay_ns: int, origin: tuple[px4.GeoOrigin, bool] | None,
    height: px4.HeightReference,
) -> Fix:
    """A SensorGps fix in the EKF's local ENU frame (the importer's rules).

    Rejected without a 3-D fix, with non-finite or non-positive eph/epv, a position off the
    globe (``px4_convert.fix_problem``), a measurement time (sample time − ``delay_ns``) before
    boot, or no EKF origin. The vertical axis is marked unmeasured (1e6 m²) unless the EKF's
    height follows GNSS and the origin has ``z_global``.
    """
    problem = px4.fix_problem(int(fix_type), float(lat_deg), float(lon_deg), float(alt_m),
                              float(eph), float(epv))
    if problem is not None:
        raise Px4SampleRejected(problem)
    stamp = sample_ns - delay_ns
    if stamp < 0:
        raise Px4SampleRejected('measurement time before boot (timestamp < GNSS delay)')
    if origin is None:
        raise Px4SampleRejected('no EKF origin (vehicle_local_position.xy_global false, '
                                'invalid ref, or none received)')
    geo, z_global = origin
    position = px4.gnss_to_enu(geo, float(lat_deg), float(lon_deg), float(alt_m))
    covariance = px4.fix_covariance(float(eph), float(epv),
                                    height.gnss_vertical_measured and z_global)
    return Fix(stamp, position, px4.observation_pose_covariance(covariance))
