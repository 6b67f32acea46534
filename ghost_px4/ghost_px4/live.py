"""Pure per-sample rules of PX4 estimator and GNSS samples: one PX4 sample in, ROS content out.

One home for the rules the live bridge (px4_bridge) and the ULog importer (ghost_px4.ulog_import)
both apply to one PX4 sample, so that a bridge's log and an import summary of the same flight
count the same things: what makes a sample a belief or a fix, PX4's validity flags (a block
marked invalid: +inf variances), and the rejection reasons. The bridge gives the fields of one
live message (px4_msgs release/1.17 layouts: ``VehicleOdometry``, ``VehicleLocalPosition``,
``SensorGps``) as plain numbers; the importer those of one logged sample. The conventions
themselves (NED/ENU, FRD/FLU, the quaternion, covariance rotations, PX4's map projection,
eph/epv, the height reference) are ``ghost_px4.convert``'s.

SPEC §5: a belief its estimator flags invalid is published, its block marked invalid (+inf
variances, judged UNKNOWN), never dropped; only a sample that carries no belief at all (no
position, no attitude, an unmappable frame), or a fix that cannot be one, raises
:class:`~ghost_px4.errors.Px4SampleRejected` with a stable reason (the node counts them).

Nothing here imports rclpy, px4_msgs or numpy. One cohesive job, hence one module: the rules
of one sample, in one home for both callers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ghost_core.geometry import diagonal, finite, Matrix3, Vector3, WxyzQuaternion, ZERO3
from ghost_px4 import convert as px4
from ghost_px4.errors import Px4SampleRejected

__all__ = [
    'Attitude',
    'BEFORE_BOOT',
    'Belief',
    'CHILD_FRAME_ID',
    'FRAME_ID',
    'Fix',
    'NAN_ATTITUDE',
    'NAN_POSITION',
    'NO_ORIGIN',
    'ORIENTATION_FROM_ODOMETRY',
    'ORIENTATION_FROM_TILT_HEADING',
    'POSE_FRAMES',
    'POSITION_ACCURACY_UNKNOWN',
    'POSITION_FLAGGED_INVALID',
    'POSITION_VARIANCE_UNKNOWN',
    'Px4Sample',
    'VELOCITY_ACCURACY_UNKNOWN',
    'VELOCITY_FLAGGED_INVALID',
    'VELOCITY_FRAMES',
    'VELOCITY_VARIANCE_UNKNOWN',
    'Validity',
    'belief_time_ns',
    'body_orientation',
    'carried_rates',
    'fix_observation',
    'fix_sample_time_ns',
    'invalid_reasons',
    'local_position_odometry',
    'local_position_sample',
    'odometry_sample',
    'origin_of',
    'require_belief',
    'ros_odometry',
    'usable_variances',
    'vehicle_odometry_sample',
]

#: The frames beliefs and fixes are stated in (REP 105: ENU world, FLU body).
FRAME_ID = 'odom'
CHILD_FRAME_ID = 'base_link'

#: VehicleOdometry.pose_frame codes (POSE_FRAME_*); 0 is unknown.
POSE_FRAMES = {1: px4.Px4Frame.NED, 2: px4.Px4Frame.FRD_WORLD}
#: VehicleOdometry.velocity_frame codes (VELOCITY_FRAME_*); 0 is unknown.
VELOCITY_FRAMES = {1: px4.Px4Frame.NED, 2: px4.Px4Frame.FRD_WORLD, 3: px4.Px4Frame.BODY_FRD}

# The reasons, stable strings counted per reason by the bridge and the importer alike.
#: Why a sample carries no belief: PX4 states no position, or no attitude.
NAN_POSITION = 'position not finite (NaN: PX4 states no position)'
NAN_ATTITUDE = 'attitude quaternion not finite'
#: Why a published belief has its position / velocity block marked invalid (+inf variances):
#: PX4 flags it so, else (vehicle_odometry) its variances or (vehicle_local_position) its
#: accuracies are not usable.
POSITION_FLAGGED_INVALID = 'position flagged invalid by PX4 (xy_valid or z_valid false)'
VELOCITY_FLAGGED_INVALID = 'velocity flagged invalid by PX4 (v_xy_valid or v_z_valid false)'
POSITION_VARIANCE_UNKNOWN = 'position variance not finite (PX4: unknown)'
VELOCITY_VARIANCE_UNKNOWN = 'velocity or its variance not finite (PX4: unknown)'
POSITION_ACCURACY_UNKNOWN = 'position accuracy (eph/epv) not finite or negative'
VELOCITY_ACCURACY_UNKNOWN = 'velocity or its accuracy (evh/evv) not finite or negative'
#: Why a GNSS fix is not an observation, besides convert.fix_problem's reasons.
BEFORE_BOOT = 'measurement time before boot (timestamp < GNSS delay)'
NO_ORIGIN = ('no EKF origin (vehicle_local_position.xy_global false, invalid ref, '
             'or none received)')

#: Where a belief's orientation uncertainty came from (Belief.orientation_source).
ORIENTATION_FROM_ODOMETRY = 'vehicle_odometry.orientation_variance (body axes)'
ORIENTATION_FROM_TILT_HEADING = 'vehicle_local_position.tilt_var/heading_var'


def usable_variances(values: Sequence[float]) -> bool:
    """Finite and non-negative: anything else is PX4's "invalid/unknown"."""
    return finite(*values) and min(values) >= 0.0


def carried_rates(values: Sequence[float]) -> Vector3:
    """Body rates as PX4 states them; (0, 0, 0) when one is not finite (rates are not judged)."""
    rates = (float(values[0]), float(values[1]), float(values[2]))
    return rates if finite(*rates) else (0.0, 0.0, 0.0)


def require_belief(position: Sequence[float], q_wxyz: Sequence[float] = ()) -> None:
    """Raise Px4SampleRejected when a sample carries no belief: no finite position, attitude."""
    if not finite(*position):
        raise Px4SampleRejected(NAN_POSITION)
    if not finite(*q_wxyz):
        raise Px4SampleRejected(NAN_ATTITUDE)


def invalid_reasons(position_valid: bool, position_usable: bool, velocity_valid: bool,
                    velocity_usable: bool, *, position_unusable: str,
                    velocity_unusable: str) -> tuple[str, ...]:
    """Why each block is marked invalid: at most one reason per block, position first.

    PX4's own flag first (``*_valid`` false: POSITION_/VELOCITY_FLAGGED_INVALID), then what
    PX4 left unstated (``*_usable`` false: the ``*_unusable`` reason).
    """
    reasons = []
    for valid, usable, flagged, unusable in (
            (position_valid, position_usable, POSITION_FLAGGED_INVALID, position_unusable),
            (velocity_valid, velocity_usable, VELOCITY_FLAGGED_INVALID, velocity_unusable)):
        if not valid:
            reasons.append(flagged)
        elif not usable:
            reasons.append(unusable)
    return tuple(reasons)


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


def body_orientation(q_wxyz: Sequence[float],
                     variance: Sequence[float] | None) -> Matrix3 | None:
    """The NED rotation covariance of vehicle_odometry's body-axis variances, or None.

    None (the block stays all zeros: UNKNOWN) when PX4 does not state them: NaN ("unknown"),
    negative (not a variance) or all zeros.
    """
    if variance is None or not usable_variances(variance):
        return None
    try:
        return px4.body_rotation_covariance_ned(q_wxyz, variance)
    except ValueError:
        return None


def _tilt_heading(tilt_var: float | None, heading_var: float | None) -> Matrix3 | None:
    """The NED rotation covariance of tilt_var/heading_var, or None when not stated."""
    if tilt_var is None or heading_var is None:
        return None
    try:
        return px4.tilt_heading_covariance_ned(float(tilt_var), float(heading_var))
    except ValueError:  # NaN or negative: not stated
        return None


@dataclass(frozen=True, slots=True)
class Px4Sample:
    """One belief in PX4 conventions, before the frame conversion, and what is counted about it.

    ``orientation_stated``: a source states the orientation uncertainty (else its block is
    all zeros, which Ghost judges UNKNOWN). ``invalid`` lists why a block is marked invalid:
    at most one reason per block, position first.
    """

    sample: px4.Px4Odometry
    orientation_stated: bool
    invalid: tuple[str, ...]


#: One block of a belief: (PX4's flag, whether PX4 states a usable covariance, the reason when
#: it does not).
_Block = tuple[bool, bool, str]


def _flagged(*, position_ned: Vector3, q_wxyz: WxyzQuaternion, velocity: Vector3,
             velocity_frame: px4.Px4Frame, position_cov: Matrix3, velocity_cov: Matrix3,
             rotation: Matrix3 | None, angular_velocity_frd: Vector3,
             pose_frame: px4.Px4Frame = px4.Px4Frame.NED, position_block: _Block,
             velocity_block: _Block) -> Px4Sample:
    """A belief as PX4 states it, its blocks marked as PX4 marks them.

    A block is valid when PX4 flags it so and states a usable covariance
    (convert.odometry_to_ros publishes an invalid one with +inf variances); an unusable one
    keeps a zero covariance, and an unusable velocity is published as 0, 0, 0. ``rotation``:
    the orientation covariance, None when no source states one.
    """
    position_valid, position_ok, position_unusable = position_block
    velocity_valid, velocity_ok, velocity_unusable = velocity_block
    sample = px4.Px4Odometry(
        position_ned=position_ned, q_wxyz=q_wxyz,
        velocity=velocity if velocity_ok else (0.0, 0.0, 0.0), velocity_frame=velocity_frame,
        pose_covariance=px4.pose_covariance(position_cov if position_ok else ZERO3, rotation),
        velocity_covariance=velocity_cov if velocity_ok else ZERO3,
        angular_velocity_frd=angular_velocity_frd, pose_frame=pose_frame,
        position_valid=position_valid and position_ok,
        velocity_valid=velocity_valid and velocity_ok)
    return Px4Sample(sample, rotation is not None, invalid_reasons(
        position_valid, position_ok, velocity_valid, velocity_ok,
        position_unusable=position_unusable, velocity_unusable=velocity_unusable))


def odometry_sample(
    *, position: Sequence[float], q: Sequence[float], velocity: Sequence[float],
    angular_velocity: Sequence[float], position_variance: Sequence[float],
    orientation_variance: Sequence[float], velocity_variance: Sequence[float],
    pose_frame: px4.Px4Frame, velocity_frame: px4.Px4Frame, position_valid: bool = True,
    velocity_valid: bool = True,
) -> Px4Sample:
    """A vehicle_odometry (PX4 1.14+ layout) as a belief, marked as PX4 marks it.

    Rejected (Px4SampleRejected) only when it carries no belief (require_belief): a position
    or an attitude that is not finite. Otherwise kept: a NaN or negative position variance
    marks the position invalid; a NaN velocity or a NaN or negative velocity variance marks
    the velocity invalid (published as 0, 0, 0); ``position_valid``/``velocity_valid`` (PX4's
    flags of the same cycle's vehicle_local_position) mark them too. The orientation variance
    is about the body FRD axes (body_orientation). A NaN body rate becomes 0 (not judged).
    """
    q_wxyz = (float(q[0]), float(q[1]), float(q[2]), float(q[3]))
    require_belief(position, q_wxyz)
    rotation = body_orientation(q_wxyz, orientation_variance)
    position_ok = usable_variances(position_variance)
    velocity_ok = usable_variances(velocity_variance) and finite(*velocity)
    return _flagged(
        position_ned=(float(position[0]), float(position[1]), float(position[2])),
        q_wxyz=q_wxyz, velocity=(float(velocity[0]), float(velocity[1]), float(velocity[2])),
        velocity_frame=velocity_frame, pose_frame=pose_frame,
        position_cov=diagonal(position_variance), velocity_cov=diagonal(velocity_variance),
        rotation=rotation, angular_velocity_frd=carried_rates(angular_velocity),
        position_block=(position_valid, position_ok, POSITION_VARIANCE_UNKNOWN),
        velocity_block=(velocity_valid, velocity_ok, VELOCITY_VARIANCE_UNKNOWN))


def local_position_sample(
    *, x: float, y: float, z: float, vx: float, vy: float, vz: float, eph: float, epv: float,
    evh: float, evv: float, xy_valid: bool, z_valid: bool, v_xy_valid: bool, v_z_valid: bool,
    q_wxyz: WxyzQuaternion, angular_velocity_frd: Vector3, rotation: Matrix3 | None,
) -> Px4Sample:
    """A vehicle_local_position with its attitude as a belief, marked as PX4 marks it.

    The caller has checked the position (require_belief) and found the attitude (``q_wxyz``,
    body rates) and the orientation covariance (``rotation``, None: not stated). A block is
    marked invalid where PX4 flags it (xy_valid/z_valid, v_xy_valid/v_z_valid false) or
    states no usable accuracy (eph/epv, or the velocity or evh/evv, not finite or negative;
    an invalid velocity is published as 0, 0, 0). Position covariance diag(eph²/2, eph²/2,
    epv²), velocity diag(evh²/2, evh²/2, evv²) (convert.horizontal_vertical_covariance).
    """
    position_ok = usable_variances((eph, epv))
    velocity_ok = finite(vx, vy, vz) and usable_variances((evh, evv))
    return _flagged(
        position_ned=(float(x), float(y), float(z)), q_wxyz=q_wxyz,
        velocity=(float(vx), float(vy), float(vz)), velocity_frame=px4.Px4Frame.NED,
        position_cov=px4.horizontal_vertical_covariance(eph, epv),
        velocity_cov=px4.horizontal_vertical_covariance(evh, evv), rotation=rotation,
        angular_velocity_frd=angular_velocity_frd,
        position_block=(bool(xy_valid and z_valid), position_ok, POSITION_ACCURACY_UNKNOWN),
        velocity_block=(bool(v_xy_valid and v_z_valid), velocity_ok, VELOCITY_ACCURACY_UNKNOWN))


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


def ros_odometry(sample: px4.Px4Odometry) -> px4.RosOdometry:
    """The ROS content of a PX4 sample (convert.odometry_to_ros).

    Px4SampleRejected ('frame not convertible (...)') for a frame that cannot be mapped to
    ENU/FLU or a bad quaternion.
    """
    try:
        return px4.odometry_to_ros(sample)
    except ValueError as err:
        raise Px4SampleRejected(f'frame not convertible ({err})') from err


def _belief(found: Px4Sample, orientation_source: str) -> Belief:
    return Belief(ros_odometry(found.sample),
                  orientation_source if found.orientation_stated else None, found.invalid)


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
        cycle's; farther away they say nothing, (True, True).
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
    """A VehicleOdometry's fields as a belief, marked as PX4 marks it (odometry_sample).

    Rejected (Px4SampleRejected) when it carries no belief, and when a frame cannot be mapped
    (an FRD world frame of arbitrary heading, an unknown frame: POSE_FRAMES, VELOCITY_FRAMES).
    NaN, negative or all-zero orientation variances leave the orientation block all zeros
    (Ghost judges it UNKNOWN, never KNOWN).
    """
    found = odometry_sample(
        position=position, q=q, velocity=velocity, angular_velocity=angular_velocity,
        position_variance=position_variance, orientation_variance=orientation_variance,
        velocity_variance=velocity_variance,
        pose_frame=POSE_FRAMES.get(int(pose_frame), px4.Px4Frame.OTHER),
        velocity_frame=VELOCITY_FRAMES.get(int(velocity_frame), px4.Px4Frame.OTHER),
        position_valid=position_valid, velocity_valid=velocity_valid)
    return _belief(found, ORIENTATION_FROM_ODOMETRY)


@dataclass(frozen=True, slots=True)
class Attitude:
    """The EKF attitude a vehicle_local_position belief takes (from vehicle_odometry).

    ``orientation_variance`` is vehicle_odometry's, about the body FRD axes; None (or NaN)
    when PX4 did not state it.
    """

    stamp_ns: int
    q_wxyz: WxyzQuaternion
    angular_velocity_frd: Vector3
    orientation_variance: Vector3 | None


def local_position_odometry(
    *, x: float, y: float, z: float, vx: float, vy: float, vz: float, eph: float, epv: float,
    evh: float, evv: float, xy_valid: bool, z_valid: bool, v_xy_valid: bool, v_z_valid: bool,
    stamp_ns: int, attitude: Attitude | None, max_attitude_age_ns: int,
    tilt_var: float | None = None, heading_var: float | None = None,
) -> Belief:
    """A VehicleLocalPosition with the latest attitude as a belief (local_position_sample).

    Rejected (Px4SampleRejected) only when it carries no belief: a position that is not
    finite, or no attitude at or before ``stamp_ns`` and at most ``max_attitude_age_ns``
    older. Otherwise kept, its blocks marked as local_position_sample marks them. The
    orientation uncertainty is the sample's own ``tilt_var``/``heading_var`` when given and
    stated (PX4 1.15+; not both 0, finite, non-negative), else the attitude's vehicle_odometry
    orientation variance (body axes), else none (block all zeros: UNKNOWN).
    """
    require_belief((x, y, z))
    if attitude is None or not 0 <= stamp_ns - attitude.stamp_ns <= max_attitude_age_ns:
        raise Px4SampleRejected(
            f'no vehicle_odometry attitude within {max_attitude_age_ns / 1e6:g} ms before')
    rotation = _tilt_heading(tilt_var, heading_var)
    source = ORIENTATION_FROM_TILT_HEADING
    if rotation is None:
        rotation = body_orientation(attitude.q_wxyz, attitude.orientation_variance)
        source = ORIENTATION_FROM_ODOMETRY
    found = local_position_sample(
        x=x, y=y, z=z, vx=vx, vy=vy, vz=vz, eph=eph, epv=epv, evh=evh, evv=evv,
        xy_valid=xy_valid, z_valid=z_valid, v_xy_valid=v_xy_valid, v_z_valid=v_z_valid,
        q_wxyz=attitude.q_wxyz, angular_velocity_frd=attitude.angular_velocity_frd,
        rotation=rotation)
    return _belief(found, source)


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
    position: Vector3
    covariance: tuple[float, ...]


def fix_observation(
    *, fix_type: int, lat_deg: float, lon_deg: float, alt_m: float, eph: float, epv: float,
    sample_ns: int, delay_ns: int, origin: tuple[px4.GeoOrigin, bool] | None,
    height: px4.HeightReference, no_origin: str = NO_ORIGIN,
) -> Fix:
    """A GNSS fix (SensorGps, or a logged GNSS sample) in the EKF's local ENU frame.

    Rejected, in this order, without a 3-D fix, with non-finite or non-positive eph/epv, a
    position off the globe (``convert.fix_problem``), a measurement time (sample time −
    ``delay_ns``) before boot (BEFORE_BOOT), or no EKF origin (``no_origin``: the reason, which
    says where the origin comes from). The vertical axis is marked unmeasured (1e6 m²)
    unless the EKF's height follows GNSS and the origin has ``z_global``.
    """
    problem = px4.fix_problem(int(fix_type), float(lat_deg), float(lon_deg), float(alt_m),
                              float(eph), float(epv))
    if problem is not None:
        raise Px4SampleRejected(problem)
    stamp = sample_ns - delay_ns
    if stamp < 0:
        raise Px4SampleRejected(BEFORE_BOOT)
    if origin is None:
        raise Px4SampleRejected(no_origin)
    geo, z_global = origin
    position = px4.gnss_to_enu(geo, float(lat_deg), float(lon_deg), float(alt_m))
    covariance = px4.fix_covariance(float(eph), float(epv),
                                    height.gnss_vertical_measured and z_global)
    return Fix(stamp, position, px4.observation_pose_covariance(covariance))
