"""Pure per-message rules of the live PX4 bridge (px4_bridge): one PX4 sample in, ROS content out.

The conventions themselves (NED/ENU, FRD/FLU, the quaternion, covariance rotations, PX4's map
projection, eph/epv, the height reference) are ``ghost_nodes.px4_convert``'s, shared with the
ULog importer; this module only applies the importer's per-sample rules to the fields of one
live message (px4_msgs release/1.17 layouts: ``VehicleOdometry``, ``VehicleLocalPosition``,
``SensorGps``), given as plain numbers. A sample that cannot become a belief or a fix raises
:class:`~ghost_nodes.errors.Px4SampleRejected` with a stable reason (the node counts them).

Nothing here imports rclpy or px4_msgs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

from ghost_nodes import px4_convert as px4
from ghost_nodes.errors import Px4SampleRejected

__all__ = [
    'Attitude',
    'CHILD_FRAME_ID',
    'FRAME_ID',
    'Fix',
    'POSE_FRAMES',
    'VELOCITY_FRAMES',
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

_NOT_FINITE = 'position, velocity, attitude or covariance not finite'


def _finite(*values: float) -> bool:
    return all(math.isfinite(value) for value in values)


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


def _orientation_block(variance: Sequence[float]) -> px4.Matrix3 | None:
    """A diagonal orientation block, or None (all-zero: UNKNOWN) when PX4 does not state it.

    PX4 sets NaN for "unknown"; all zeros means the same to Ghost. Negative is not a variance.
    """
    if not _finite(*variance) or min(variance) < 0.0 or not any(variance):
        return None
    return _diag(variance)


def vehicle_odometry_sample(
    *, position: Sequence[float], q: Sequence[float], velocity: Sequence[float],
    angular_velocity: Sequence[float], position_variance: Sequence[float],
    orientation_variance: Sequence[float], velocity_variance: Sequence[float],
    pose_frame: int, velocity_frame: int,
) -> tuple[px4.RosOdometry, bool]:
    """A VehicleOdometry's fields as ROS odometry content, and whether orientation is known.

    The flag is whether the orientation uncertainty is stated (else its block is all zeros).
    As the importer: position, attitude, velocity and the position/velocity variances must be
    finite (PX4's NaN means "invalid/unknown") and the variances non-negative, else the sample
    is rejected; a NaN, negative or all-zero orientation variance leaves the orientation block
    all zeros (Ghost judges it UNKNOWN, never KNOWN); a NaN body rate becomes 0 (not judged).
    Frames: an FRD world frame of arbitrary heading or an unknown frame is rejected.
    """
    if not _finite(*position, *velocity, *q, *position_variance, *velocity_variance):
        raise Px4SampleRejected(_NOT_FINITE)
    if min(*position_variance, *velocity_variance) < 0.0:
        raise Px4SampleRejected('negative position or velocity variance')
    orientation = _orientation_block(orientation_variance)
    rates = tuple(float(v) for v in angular_velocity)
    sample = px4.Px4Odometry(
        position_ned=(float(position[0]), float(position[1]), float(position[2])),
        q_wxyz=(float(q[0]), float(q[1]), float(q[2]), float(q[3])),
        velocity=(float(velocity[0]), float(velocity[1]), float(velocity[2])),
        velocity_frame=VELOCITY_FRAMES.get(int(velocity_frame), px4.Px4Frame.OTHER),
        pose_covariance=px4.pose_covariance(_diag(position_variance), orientation),
        velocity_covariance=_diag(velocity_variance),
        angular_velocity_frd=((rates[0], rates[1], rates[2]) if _finite(*rates)
                              else (0.0, 0.0, 0.0)),
        pose_frame=POSE_FRAMES.get(int(pose_frame), px4.Px4Frame.OTHER))
    return _to_ros(sample), orientation is not None


def _to_ros(sample: px4.Px4Odometry) -> px4.RosOdometry:
    try:
        return px4.odometry_to_ros(sample)
    except ValueError as err:
        raise Px4SampleRejected(f'frame not convertible ({err})') from err


@dataclass(frozen=True, slots=True)
class Attitude:
    """The EKF attitude a vehicle_local_position belief takes (from vehicle_odometry).

    ``orientation_variance`` is None when PX4 did not state it (the block stays all zeros).
    """

    stamp_ns: int
    q_wxyz: tuple[float, float, float, float]
    angular_velocity_frd: px4.Vector3
    orientation_variance: px4.Vector3 | None


def local_position_odometry(
    *, x: float, y: float, z: float, vx: float, vy: float, vz: float, eph: float, epv: float,
    evh: float, evv: float, xy_valid: bool, z_valid: bool, v_xy_valid: bool, v_z_valid: bool,
    stamp_ns: int, attitude: Attitude | None, max_attitude_age_ns: int,
) -> tuple[px4.RosOdometry, bool]:
    """A VehicleLocalPosition with the latest attitude as ROS odometry content, and a flag.

    The flag is whether the orientation uncertainty is stated (else its block is all zeros).
    The importer's rules, in its order: the EKF's validity flags, finite values and
    non-negative accuracies, an attitude at or before ``stamp_ns`` and at most
    ``max_attitude_age_ns`` older. Position covariance diag(eph²/2, eph²/2, epv²), velocity
    diag(evh²/2, evh²/2, evv²) (``px4_convert.horizontal_vertical_covariance``).
    """
    if not (xy_valid and z_valid):
        raise Px4SampleRejected('position not valid (xy_valid or z_valid false)')
    if not (v_xy_valid and v_z_valid):
        raise Px4SampleRejected('velocity not valid (v_xy_valid or v_z_valid false)')
    if not _finite(x, y, z, vx, vy, vz, eph, epv, evh, evv) or min(eph, epv, evh, evv) < 0.0:
        raise Px4SampleRejected('position, velocity or accuracy not finite (or negative accuracy)')
    if attitude is None or not 0 <= stamp_ns - attitude.stamp_ns <= max_attitude_age_ns:
        raise Px4SampleRejected(
            f'no vehicle_odometry attitude within {max_attitude_age_ns / 1e6:g} ms before')
    orientation = (None if attitude.orientation_variance is None
                   else _orientation_block(attitude.orientation_variance))
    sample = px4.Px4Odometry(
        position_ned=(x, y, z), q_wxyz=attitude.q_wxyz, velocity=(vx, vy, vz),
        velocity_frame=px4.Px4Frame.NED,
        pose_covariance=px4.pose_covariance(px4.horizontal_vertical_covariance(eph, epv),
                                         orientation),
        velocity_covariance=px4.horizontal_vertical_covariance(evh, evv),
        angular_velocity_frd=attitude.angular_velocity_frd)
    return _to_ros(sample), orientation is not None


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
