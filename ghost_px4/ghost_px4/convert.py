"""Pure PX4 -> ROS conversions: frames, covariances, GNSS projection and the height reference.

PX4 states its world frame as NED (x north, y east, z down) and its body frame as FRD (x forward,
y right, z down); its quaternions are ``[w, x, y, z]`` and rotate body FRD into world NED. ROS
(REP 103/105) uses ENU (x east, y north, z up) and FLU (x forward, y left, z up), quaternions
``(x, y, z, w)``. Covariances follow geometry_msgs: 6x6 row-major in the order x, y, z, rotation
about X, rotation about Y, rotation about Z, about the axes of the frame the block is stated in.

Nothing here knows about ULog, rclpy or messages: inputs are plain floats and small frozen
dataclasses, so that the ULog importer and a live PX4 bridge share the same conventions. The
matrix algebra is ghost_core.geometry's (3x3 matrices are row-major tuples of 9 floats).

One cohesive job, hence one module: PX4's conventions stated in ROS's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import enum
import math

from ghost_core.geometry import (
    apply,
    block3,
    blocks6,
    congruence,
    diagonal,
    Matrix3,
    mul,
    normalise_quaternion,
    quaternion_product,
    rotation_matrix,
    solve3,
    transpose,
    Vector3,
    WxyzQuaternion,
    ZERO3,
)

__all__ = [
    'EARTH_RADIUS_M',
    'INVALID_VARIANCE',
    'UNMEASURED_VARIANCE_M2',
    'UNMEASURED_VARIANCE_RAD2',
    'GeoOrigin',
    'HeightReference',
    'HeightSource',
    'Px4Frame',
    'Px4Odometry',
    'Quaternion',
    'RosOdometry',
    'attitude_covariance_ned',
    'body_rotation_covariance_ned',
    'covariance_from_upper_triangle',
    'fix_covariance',
    'fix_problem',
    'frd_to_flu',
    'gnss_to_enu',
    'height_reference',
    'pose_covariance',
    'horizontal_vertical_covariance',
    'ned_covariance_to_body_diagonal',
    'ned_to_enu',
    'observation_pose_covariance',
    'odometry_to_ros',
    'project',
    'px4_quaternion_to_ros',
    'reproject',
    'rotation_error_covariance_ned',
    'tilt_heading_covariance_ned',
    'world_to_body',
]

#: The variance written for an axis a sensor does not measure (the usual ROS convention). Ghost's
#: outcome evaluator treats any observation axis above its bound (1e4 m²) as not measured.
UNMEASURED_VARIANCE_M2 = 1.0e6
#: The same convention for a rotation axis (a GNSS fix carries no orientation).
UNMEASURED_VARIANCE_RAD2 = 1.0e6
#: The variance written on every diagonal entry of a block PX4 flags invalid (``xy_valid`` or
#: ``z_valid`` false for the position, ``v_xy_valid``/``v_z_valid`` for the velocity): an
#: unbounded variance, which Ghost's self-assessor judges UNKNOWN with reason
#: ``estimator_position_invalid`` / ``estimator_velocity_invalid`` (docs/real-data.md).
INVALID_VARIANCE = math.inf
#: PX4's CONSTANTS_RADIUS_OF_EARTH (lib/geo): the sphere of its map projection.
EARTH_RADIUS_M = 6371000.0

#: ROS order (x, y, z, w).
Quaternion = tuple[float, float, float, float]

# NED -> ENU swaps x and y and negates z; FRD -> FLU negates y and z. Both are proper rotations
# (determinant +1), so the same matrices map rotation vectors and covariances.
_NED_TO_ENU: Matrix3 = (0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, -1.0)
_FRD_TO_FLU: Matrix3 = (1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, -1.0)
# The same two rotations as quaternions (w, x, y, z): pi about (1, 1, 0)/sqrt(2), pi about x.
_Q_NED_TO_ENU = (0.0, math.sqrt(0.5), math.sqrt(0.5), 0.0)
_Q_FLU_TO_FRD = (0.0, 1.0, 0.0, 0.0)
_INVALID_BLOCK: Matrix3 = diagonal((INVALID_VARIANCE,) * 3)


# --- frames ---

def ned_to_enu(v: Sequence[float]) -> Vector3:
    """A world vector (position, velocity) from NED to ENU: (y, x, -z)."""
    return (float(v[1]), float(v[0]), -float(v[2]))


def frd_to_flu(v: Sequence[float]) -> Vector3:
    """A body vector (velocity, angular rate) from FRD to FLU: (x, -y, -z)."""
    return (float(v[0]), -float(v[1]), -float(v[2]))


def px4_quaternion_to_ros(q_wxyz: Sequence[float]) -> Quaternion:
    """ROS (x, y, z, w) body FLU -> world ENU of a PX4 [w, x, y, z] body FRD -> world NED.

    q_ros = q(NED->ENU) * q_px4 * q(FLU->FRD), normalised, with w >= 0 (q and -q are the same
    rotation). PX4 yaw 0 (facing north) becomes ROS yaw +90 degrees (facing north in ENU).
    Raises ValueError for a non-finite or zero quaternion.
    """
    q = normalise_quaternion(q_wxyz)
    w, x, y, z = quaternion_product(quaternion_product(_Q_NED_TO_ENU, q), _Q_FLU_TO_FRD)
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    return (x, y, z, w)


def world_to_body(
    v_world: Sequence[float], q_xyzw: Sequence[float], cov_world: Matrix3 | None = None
) -> tuple[Vector3, Matrix3]:
    """A world (ENU) vector and its covariance in the body (FLU) frame: R^T v, R^T cov R.

    nav_msgs/Odometry states its twist in child_frame_id (REP 105), hence this rotation.
    """
    r_t = transpose(rotation_matrix(q_xyzw))
    cov = ZERO3 if cov_world is None else cov_world
    return apply(r_t, v_world), congruence(r_t, cov)


# --- covariances ---

def horizontal_vertical_covariance(horizontal: float, vertical: float) -> Matrix3:
    """diag(h²/2, h²/2, v²) from PX4's 1-sigma accuracies.

    PX4's eph (evh) is sqrt(sigma_north² + sigma_east²), so each horizontal axis gets half of
    eph²; epv (evv) is sigma_down. The matrix is the same in NED and in ENU.
    """
    h, v = float(horizontal), float(vertical)
    return diagonal((h * h / 2.0, h * h / 2.0, v * v))


def attitude_covariance_ned(
    q_wxyz: Sequence[float], quaternion_variances: Sequence[float]
) -> Matrix3 | None:
    """Rotation covariance (rad², diagonal, about the NED axes) from quaternion variances.

    `quaternion_variances` are the diagonal of the EKF covariance of its quaternion states
    (EKF2 up to PX4 1.12 logs them as estimator_status.covariances[0..3]); the cross terms are
    not logged. A world-frame rotation error dtheta gives dq = 1/2 (0, dtheta) * q, i.e.
    dq_k = 1/2 sum_i M_ik dtheta_i with M = [-v | w I + [v]x] (q = (w, v)). For a covariance
    diag(s_x, s_y, s_z) about the NED axes, var(q_k) = 1/4 sum_i M_ik² s_i: four equations in
    three unknowns, solved by non-negative least squares (a tiny ridge term splits evenly what
    the heading leaves undetermined, e.g. roll against pitch at 45 degree headings).

    Near the identity (level, facing north) this is the textbook var(theta_i) = 4 var(q_i),
    i = 1..3. Away from it, it is not: at a heading of 180 degrees the yaw error is in q0 and
    4 var(q3) would claim a yaw known to hundredths of a degree. The total is preserved
    (trace = 4 sum(var) for an exact fit), and on the real logs the diagonal model explains
    the four variances to 1 % (median).

    Returns None when every variance is 0 (no uncertainty information); raises ValueError for
    a non-finite or negative variance or a bad quaternion.
    """
    if len(quaternion_variances) != 4:
        raise ValueError(f'4 quaternion variances expected, got {len(quaternion_variances)}')
    var = tuple(float(value) for value in quaternion_variances)
    if not all(math.isfinite(value) and value >= 0.0 for value in var):
        raise ValueError(f'quaternion variances {var!r} are not all finite and >= 0')
    if not any(var):
        return None
    w, x, y, z = normalise_quaternion(q_wxyz)
    m = ((-x, w, -z, y), (-y, z, w, -x), (-z, -y, x, w))
    a = [[m[i][k] ** 2 / 4.0 for i in range(3)] for k in range(4)]  # var = a @ s
    scale = max(var)
    d = [value / scale for value in var]  # solve in units of the largest variance
    ridge = 1e-12
    best: tuple[float, Vector3] | None = None
    # Non-negative least squares by enumerating which of the 3 unknowns are free (the others
    # are 0): every subset is a small ridge-regularised normal-equation solve.
    for mask in range(1, 8):
        free = [i for i in range(3) if mask >> i & 1]
        normal = tuple(float(sum(a[k][i] * a[k][j] for k in range(4)) + (ridge if i == j else 0.0)
                             if i in free and j in free else float(i == j))
                       for i in range(3) for j in range(3))
        rhs = [sum(a[k][i] * d[k] for k in range(4)) if i in free else 0.0 for i in range(3)]
        sol = solve3(normal, rhs)
        if any(sol[i] < 0.0 for i in free):
            continue
        cost = (sum((sum(a[k][i] * sol[i] for i in range(3)) - d[k]) ** 2 for k in range(4))
                + ridge * sum(value * value for value in sol))
        if best is None or cost < best[0]:
            best = (cost, sol)
    assert best is not None  # a single free unknown always has a non-negative solution
    return diagonal(tuple(value * scale for value in best[1]))


def _variances(name: str, values: Sequence[float], size: int) -> tuple[float, ...] | None:
    """``values`` as floats, None when all are 0; ValueError when not finite or negative."""
    if len(values) != size:
        raise ValueError(f'{size} {name} expected, got {len(values)}')
    var = tuple(float(value) for value in values)
    if not all(math.isfinite(value) and value >= 0.0 for value in var):
        raise ValueError(f'{name} {var!r} are not all finite and >= 0')
    if not any(var):
        return None
    return var


def rotation_error_covariance_ned(variances_ned: Sequence[float]) -> Matrix3 | None:
    """Rotation covariance (rad², about the NED axes) of EKF2's rotation-error states.

    From PX4 1.15 EKF2 keeps a nominal quaternion and a 3-state rotation error stated about
    the NED axes (``Ekf::getRotVarNed`` returns its diagonal as stored):
    ``estimator_states.covariances[0..2]``. The cross terms are not logged: diag(var).
    None when all three are 0 (not initialised); ValueError when not finite or negative.
    """
    var = _variances('rotation-error variances', variances_ned, 3)
    return None if var is None else diagonal(var)


def tilt_heading_covariance_ned(tilt_var: float, heading_var: float) -> Matrix3 | None:
    """Rotation covariance (rad², NED axes) of ``vehicle_local_position.tilt_var/heading_var``.

    PX4 1.15+: ``tilt_var`` = var(rot N) + var(rot E), ``heading_var`` = var(rot D), both of
    the rotation error about the NED axes. The tilt is split evenly between north and east:
    diag(tilt/2, tilt/2, heading) keeps the total. None when both are 0; ValueError when not
    finite or negative.
    """
    var = _variances('tilt/heading variances', (tilt_var, heading_var), 2)
    return None if var is None else diagonal((var[0] / 2.0, var[0] / 2.0, var[1]))


def body_rotation_covariance_ned(
    q_wxyz: Sequence[float], variances_frd: Sequence[float]
) -> Matrix3 | None:
    """Rotation covariance (rad², NED axes) of variances stated about the body FRD axes.

    ``vehicle_odometry.orientation_variance`` (PX4 1.14+) is ``Ekf::getRotVarBody``: the
    diagonal of the rotation covariance about the body axes. About the world axes that is
    R diag(var) Rᵀ, R the body FRD -> NED rotation of ``q_wxyz``. A level vehicle facing
    east has its roll (body x) variance about NED east. None when all are 0; ValueError when
    not finite, negative or the quaternion is bad.
    """
    var = _variances('body rotation variances', variances_frd, 3)
    if var is None:
        return None
    w, x, y, z = normalise_quaternion(q_wxyz)
    r = rotation_matrix((x, y, z, w))
    return congruence(r, diagonal(var))


def ned_covariance_to_body_diagonal(q_wxyz: Sequence[float], cov_ned: Matrix3) -> Vector3:
    """The diagonal of a NED rotation covariance about the body FRD axes: diag(Rᵀ cov R).

    What EKF2 publishes as vehicle_odometry.orientation_variance (getRotVarBody); the log
    player composes it this way. The inverse of body_rotation_covariance_ned only up to the
    cross terms the diagonal drops (the trace is kept).
    """
    w, x, y, z = normalise_quaternion(q_wxyz)
    r = rotation_matrix((x, y, z, w))
    body = congruence(transpose(r), cov_ned)
    return (body[0], body[4], body[8])


def covariance_from_upper_triangle(values: Sequence[float]) -> tuple[float, ...]:
    """The full 6x6 (36, row-major) of PX4's 21-value upper-right-triangle covariance.

    vehicle_odometry before PX4 1.14: the first six values are the first row, the next five
    the second row from the diagonal, and so on (variances at 0, 6, 11, 15, 18, 20).
    """
    if len(values) != 21:
        raise ValueError(f'an upper-triangular 6x6 has 21 values, got {len(values)}')
    full = [0.0] * 36
    index = 0
    for i in range(6):
        for j in range(i, 6):
            full[i * 6 + j] = full[j * 6 + i] = float(values[index])
            index += 1
    return tuple(full)


# --- odometry ---

class Px4Frame(enum.Enum):
    """The frame a PX4 odometry position or velocity is stated in."""

    NED = 'NED'
    FRD_WORLD = 'FRD world (arbitrary heading)'
    BODY_FRD = 'body FRD'
    OTHER = 'other/unknown'


@dataclass(frozen=True, slots=True)
class Px4Odometry:
    """One PX4 estimator sample in PX4 conventions, whatever message it came from.

    `pose_covariance` is the full 6x6 (36 values, row-major; x, y, z, rotation about X, Y, Z)
    about the NED axes; an all-zero orientation block means "not known". `velocity_covariance`
    is the 3x3 of `velocity`, in `velocity_frame`. `angular_velocity_frd` is the body rate.
    `position_valid`/`velocity_valid` are PX4's flags: False marks the block invalid, whatever
    its variances say.
    """

    position_ned: Vector3
    q_wxyz: WxyzQuaternion
    velocity: Vector3
    velocity_frame: Px4Frame
    pose_covariance: tuple[float, ...]
    velocity_covariance: Matrix3
    angular_velocity_frd: Vector3 = (0.0, 0.0, 0.0)
    pose_frame: Px4Frame = Px4Frame.NED
    #: PX4's own validity flags (vehicle_local_position xy_valid and z_valid; v_xy_valid and
    #: v_z_valid). A block flagged invalid is published with INVALID_VARIANCE on its diagonal.
    position_valid: bool = True
    velocity_valid: bool = True

    def __post_init__(self) -> None:
        """Check the shapes (values may be non-finite: the caller judges those)."""
        if len(self.pose_covariance) != 36:
            raise ValueError(f'Px4Odometry.pose_covariance must be 36 values, '
                             f'got {len(self.pose_covariance)}')
        for name in ('position_ned', 'velocity', 'angular_velocity_frd', 'q_wxyz'):
            size = 4 if name == 'q_wxyz' else 3
            if len(getattr(self, name)) != size:
                raise ValueError(f'Px4Odometry.{name} must have {size} values, '
                                 f'got {getattr(self, name)!r}')


@dataclass(frozen=True, slots=True)
class RosOdometry:
    """The content of a nav_msgs/Odometry (REP 105): pose in the ENU world, twist in body FLU."""

    position: Vector3
    orientation_xyzw: Quaternion
    linear_velocity: Vector3
    angular_velocity: Vector3
    pose_covariance: tuple[float, ...]
    twist_covariance: tuple[float, ...]


def odometry_to_ros(sample: Px4Odometry) -> RosOdometry:
    """Convert a PX4 odometry sample to ROS conventions (pure).

    Pose: NED -> ENU, the quaternion by :func:`px4_quaternion_to_ros`, the 6x6 covariance by
    the block rotation T = diag(P, P) (T cov T^T). Twist: in the child (body FLU) frame; a NED
    velocity is rotated into it (R^T P v, R^T P cov P^T R), a body FRD one is only flipped.
    The angular-rate block of the twist covariance stays 0 (not stated). A block PX4 flags
    invalid gets INVALID_VARIANCE (+inf) on its diagonal and no cross terms, whatever PX4
    claimed for it (its variances are converted first, so nothing else changes). Raises
    ValueError for
    a frame that cannot be mapped to ENU/FLU (an FRD world frame of unknown heading, other)
    and for a bad quaternion.
    """
    if sample.pose_frame is not Px4Frame.NED:
        raise ValueError(f'pose frame {sample.pose_frame.value} cannot be mapped to ENU')
    orientation = px4_quaternion_to_ros(sample.q_wxyz)
    pose = sample.pose_covariance
    blocks = {(row, col): mul(mul(_NED_TO_ENU, block3(pose, row, col)), transpose(_NED_TO_ENU))
              for row in (0, 3) for col in (0, 3)}
    if sample.velocity_frame is Px4Frame.NED:
        velocity, velocity_cov = world_to_body(
            ned_to_enu(sample.velocity), orientation,
            congruence(_NED_TO_ENU, sample.velocity_covariance))
    elif sample.velocity_frame is Px4Frame.BODY_FRD:
        velocity = frd_to_flu(sample.velocity)
        velocity_cov = congruence(_FRD_TO_FLU, sample.velocity_covariance)
    else:
        raise ValueError(f'velocity frame {sample.velocity_frame.value} cannot be mapped to FLU')
    if not sample.position_valid:
        blocks[(0, 0)] = _INVALID_BLOCK
        blocks[(0, 3)] = blocks[(3, 0)] = ZERO3
    if not sample.velocity_valid:
        velocity_cov = _INVALID_BLOCK
    return RosOdometry(
        position=ned_to_enu(sample.position_ned),
        orientation_xyzw=orientation,
        linear_velocity=velocity,
        angular_velocity=frd_to_flu(sample.angular_velocity_frd),
        pose_covariance=blocks6(blocks),
        twist_covariance=blocks6({(0, 0): velocity_cov}),
    )


# --- GNSS ---

@dataclass(frozen=True, slots=True)
class GeoOrigin:
    """The EKF's local origin: latitude and longitude (degrees), altitude AMSL (m)."""

    lat_deg: float
    lon_deg: float
    alt_m: float

    def __post_init__(self) -> None:
        """Enforce a finite origin on the globe."""
        for name, bound in (('lat_deg', 90.0), ('lon_deg', 180.0), ('alt_m', math.inf)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and abs(value) <= bound):
                raise ValueError(f'GeoOrigin.{name} must be a finite number'
                                 + (f' in [-{bound:g}, {bound:g}]' if bound < math.inf else '')
                                 + f', got {value!r}')
            object.__setattr__(self, name, float(value))


def project(origin: GeoOrigin, lat_deg: float, lon_deg: float) -> tuple[float, float]:
    """(north, east) in metres of a point from `origin`: PX4's map_projection_project.

    The azimuthal-equidistant projection on a sphere of radius EARTH_RADIUS_M (PX4 lib/geo,
    which EKF2 uses for its local frame): distances and bearings from the origin are exact.
    """
    ref_lat, ref_lon = math.radians(origin.lat_deg), math.radians(origin.lon_deg)
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    sin_lat, cos_lat = math.sin(lat), math.cos(lat)
    cos_d_lon = math.cos(lon - ref_lon)
    arg = min(1.0, max(-1.0, math.sin(ref_lat) * sin_lat
                       + math.cos(ref_lat) * cos_lat * cos_d_lon))
    c = math.acos(arg)
    k = 1.0 if abs(c) < 2.220446049250313e-16 else c / math.sin(c)
    north = k * (math.cos(ref_lat) * sin_lat - math.sin(ref_lat) * cos_lat * cos_d_lon)
    east = k * cos_lat * math.sin(lon - ref_lon)
    return north * EARTH_RADIUS_M, east * EARTH_RADIUS_M


def reproject(origin: GeoOrigin, north_m: float, east_m: float) -> tuple[float, float]:
    """(lat, lon) in degrees of a local (north, east) point: PX4's map_projection_reproject."""
    ref_lat, ref_lon = math.radians(origin.lat_deg), math.radians(origin.lon_deg)
    x, y = north_m / EARTH_RADIUS_M, east_m / EARTH_RADIUS_M
    c = math.hypot(x, y)
    if abs(c) < 2.220446049250313e-16:
        return origin.lat_deg, origin.lon_deg
    sin_c, cos_c = math.sin(c), math.cos(c)
    lat = math.asin(cos_c * math.sin(ref_lat) + x * sin_c * math.cos(ref_lat) / c)
    lon = ref_lon + math.atan2(y * sin_c, c * math.cos(ref_lat) * cos_c
                               - x * math.sin(ref_lat) * sin_c)
    return math.degrees(lat), math.degrees(lon)


def gnss_to_enu(origin: GeoOrigin, lat_deg: float, lon_deg: float, alt_m: float) -> Vector3:
    """ENU position of a GNSS fix in the EKF's local frame: (east, north, alt - origin alt)."""
    north, east = project(origin, lat_deg, lon_deg)
    return (east, north, float(alt_m) - origin.alt_m)


def fix_problem(fix_type: int, lat_deg: float, lon_deg: float, alt_m: float, eph: float,
                epv: float) -> str | None:
    """Why a GNSS fix cannot be used as an observation, or None when it can.

    Needs a 3-D fix (fix_type >= 3), finite positive eph/epv (m, 1 sigma) and a finite position
    on the globe. The returned reasons are stable strings (they are counted per reason).
    """
    if fix_type < 3:
        return 'no 3-D fix (fix_type < 3)'
    if not (math.isfinite(eph) and math.isfinite(epv) and eph > 0.0 and epv > 0.0):
        return 'eph/epv not finite or not positive'
    if not (math.isfinite(lat_deg) and math.isfinite(lon_deg) and math.isfinite(alt_m)
            and abs(lat_deg) <= 90.0 and abs(lon_deg) <= 180.0):
        return 'latitude/longitude/altitude not finite or out of range'
    return None


def fix_covariance(eph: float, epv: float, vertical_measured: bool) -> Matrix3:
    """ENU position covariance of a fix: (eph²/2, eph²/2, epv²).

    The vertical variance is UNMEASURED_VARIANCE_M2 (1e6 m²) instead when the fix's vertical
    axis is not comparable with the estimate (the EKF's height does not follow GNSS).
    """
    cov = horizontal_vertical_covariance(eph, epv)
    if vertical_measured:
        return cov
    return (*cov[:8], UNMEASURED_VARIANCE_M2)


def pose_covariance(position: Matrix3, orientation: Matrix3 | None) -> tuple[float, ...]:
    """The 6x6 of a belief's pose: `position` and `orientation` blocks, no cross terms.

    ``orientation`` None leaves its block all zeros, which Ghost judges UNKNOWN.
    """
    blocks = {(0, 0): position}
    if orientation is not None:
        blocks[(3, 3)] = orientation
    return blocks6(blocks)


def observation_pose_covariance(position: Matrix3) -> tuple[float, ...]:
    """The 6x6 of a position-only fix: `position`, rotations not measured (1e6 rad²)."""
    return blocks6({(0, 0): position, (3, 3): diagonal((UNMEASURED_VARIANCE_RAD2,) * 3)})


# --- height reference ---

class HeightSource(enum.Enum):
    """What the EKF's height (z) follows."""

    BARO = 'barometric'
    GNSS = 'GNSS'
    RANGE = 'range finder'
    VISION = 'vision'
    UNKNOWN = 'unknown'


def _short(value: float) -> str:
    """1e6 rather than 1e+06."""
    mantissa, exponent = f'{value:e}'.split('e')
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


_HEIGHT_CODES = {0: HeightSource.BARO, 1: HeightSource.GNSS, 2: HeightSource.RANGE,
                 3: HeightSource.VISION}


@dataclass(frozen=True, slots=True)
class HeightReference:
    """The EKF's height reference and whether a GNSS fix's vertical axis is comparable."""

    parameter: str | None
    value: float | None
    source: HeightSource

    @property
    def gnss_vertical_measured(self) -> bool:
        """Only an EKF whose height follows GNSS can be compared with the fix's altitude."""
        return self.source is HeightSource.GNSS

    def describe(self) -> str:
        """One line: the parameter, what it means, and what it does to the fix."""
        if self.parameter is None:
            what = ('neither EKF2_HGT_REF nor EKF2_HGT_MODE is in the log parameters '
                    '(height reference unknown)')
        else:
            value = self.value
            shown = f'{int(value)}' if value is not None and float(value).is_integer() else (
                f'{value!r}')
            what = f'{self.parameter}={shown} ({self.source.value})'
        if self.gnss_vertical_measured:
            return f"{what}: the fix's vertical axis is compared (variance epv²)"
        return (f"{what}: the fix's vertical axis is marked not measured "
                f'(variance {_short(UNMEASURED_VARIANCE_M2)} m²)')


def height_reference(parameters: Mapping[str, float]) -> HeightReference:
    """The EKF2 height reference from its parameters.

    EKF2_HGT_REF (PX4 1.14+) wins over EKF2_HGT_MODE (PX4 up to 1.13); both code 0 baro,
    1 GNSS, 2 range finder, 3 vision. Missing or unknown codes give UNKNOWN, for which the
    fix's vertical axis is not compared (an unknown reference is not a GNSS one).
    """
    for name in ('EKF2_HGT_REF', 'EKF2_HGT_MODE'):
        if name in parameters:
            value = parameters[name]
            source = HeightSource.UNKNOWN
            if isinstance(value, (int, float)) and float(value).is_integer():
                source = _HEIGHT_CODES.get(int(value), HeightSource.UNKNOWN)
            return HeightReference(name, value, source)
    return HeightReference(None, None, HeightSource.UNKNOWN)
