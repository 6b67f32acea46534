"""ghost_import and px4_convert: PX4 conventions, the real flight logs, bad input."""

from __future__ import annotations

from collections.abc import Sequence
import contextlib
import io
import math
import os
from pathlib import Path
import random
import struct
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import pytest

from ghost_bag.layout import resolve_bag
from ghost_core.geometry import Matrix3, rotation_matrix
from ghost_core.hashing import hash_form
from ghost_px4 import convert as px4
from ghost_px4.ulog_import import main

REPO = Path(__file__).resolve().parents[2]
REALDATA = REPO.parent / 'shared' / 'realdata'
ESC_LOG = REALDATA / 'esc_status_log.ulg'
SITL_LOG = REALDATA / '14_19_29.ulg'
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(),
                                    reason=f'{REALDATA} (the shared real logs) is missing')
DEG = math.pi / 180.0


# --- helpers ---

def px4_q_from_euler(roll: float, pitch: float, yaw: float) -> tuple[float, ...]:
    """PX4 [w, x, y, z] (body FRD -> NED) of ZYX Euler angles."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy)


def ros_euler(q: Sequence[float]) -> tuple[float, float, float]:
    """Roll, pitch, yaw (ZYX) of a ROS (x, y, z, w)."""
    x, y, z, w = q
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return roll, pitch, yaw


def wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


def matrix_of_wxyz(q: Sequence[float]) -> list[list[float]]:
    w, x, y, z = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def approx3(a: Sequence[float], b: Sequence[float], tol: float = 1e-9) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def diag(values: Sequence[float]) -> Matrix3:
    return (values[0], 0.0, 0.0, 0.0, values[1], 0.0, 0.0, 0.0, values[2])


def pose36(position: Sequence[float], rotation: Sequence[float]) -> tuple[float, ...]:
    full = [0.0] * 36
    for i, value in enumerate((*position, *rotation)):
        full[i * 7] = value
    return tuple(full)


# --- frames ---

def test_ned_to_enu_and_frd_to_flu_on_known_vectors() -> None:
    """North 1, east 2, down 3 is east 2, north 1, up -3; forward/right/down flip y and z."""
    assert px4.ned_to_enu((1.0, 2.0, 3.0)) == (2.0, 1.0, -3.0)
    assert px4.frd_to_flu((1.0, 2.0, 3.0)) == (1.0, -2.0, -3.0)


@pytest.mark.parametrize(('px4_yaw_deg', 'ros_yaw_deg'), [(0, 90), (90, 0), (180, -90),
                                                          (-90, 180), (45, 45)])
def test_px4_yaw_becomes_ros_yaw(px4_yaw_deg: float, ros_yaw_deg: float) -> None:
    """PX4 yaw 0 (facing north) is ROS yaw +90 (north in ENU); facing east is ROS yaw 0."""
    q = px4.px4_quaternion_to_ros(px4_q_from_euler(0.0, 0.0, px4_yaw_deg * DEG))
    roll, pitch, yaw = ros_euler(q)
    assert abs(roll) < 1e-9 and abs(pitch) < 1e-9
    assert abs(wrap(yaw - ros_yaw_deg * DEG)) < 1e-9
    assert q[3] >= 0.0


def test_roll_keeps_its_sign_and_pitch_flips() -> None:
    """Right wing down is +roll in FRD and FLU; nose up is +pitch in FRD, -pitch in FLU."""
    roll, pitch, yaw = ros_euler(px4.px4_quaternion_to_ros(
        px4_q_from_euler(20 * DEG, 10 * DEG, 30 * DEG)))
    assert abs(roll - 20 * DEG) < 1e-9
    assert abs(pitch + 10 * DEG) < 1e-9
    assert abs(wrap(yaw - 60 * DEG)) < 1e-9


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=4, max_size=4).filter(
    lambda q: sum(v * v for v in q) > 1e-3))
def test_quaternion_conversion_is_p_r_f(q: list[float]) -> None:
    """For any attitude, R_ros = P R_px4 F (P: NED->ENU, F: FLU->FRD)."""
    n = math.sqrt(sum(v * v for v in q))
    r_px4 = matrix_of_wxyz([v / n for v in q])
    p = [[0, 1, 0], [1, 0, 0], [0, 0, -1]]
    f = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]
    expected = [[sum(p[i][k] * r_px4[k][m] * f[m][j] for k in range(3) for m in range(3))
                 for j in range(3)] for i in range(3)]
    got = rotation_matrix(px4.px4_quaternion_to_ros(q))
    for i in range(3):
        assert approx3(got[3 * i:3 * i + 3], expected[i], 1e-9)


def test_bad_quaternion_is_refused() -> None:
    with pytest.raises(ValueError, match='not finite or has'):
        px4.px4_quaternion_to_ros((0.0, 0.0, 0.0, 0.0))
    with pytest.raises(ValueError):
        px4.px4_quaternion_to_ros((math.nan, 0.0, 0.0, 1.0))


def test_twist_is_in_the_child_frame() -> None:
    """Facing east and flying east at 5 m/s is body velocity (5, 0, 0)."""
    q = px4.px4_quaternion_to_ros(px4_q_from_euler(0.0, 0.0, 90 * DEG))
    v_body, _ = px4.world_to_body(px4.ned_to_enu((0.0, 5.0, 0.0)), q)
    assert approx3(v_body, (5.0, 0.0, 0.0))
    # Facing north, flying east: the vehicle slides to its right (-y in FLU).
    q_north = px4.px4_quaternion_to_ros(px4_q_from_euler(0.0, 0.0, 0.0))
    v_body, cov = px4.world_to_body((5.0, 0.0, 0.0), q_north, diag((1.0, 4.0, 9.0)))
    assert approx3(v_body, (0.0, -5.0, 0.0))
    # The body x axis points north (ENU y): the covariance follows, R^T cov R.
    assert approx3([cov[0], cov[4], cov[8]], (4.0, 1.0, 9.0))


# --- covariances ---

def test_eph_epv_become_per_axis_variances() -> None:
    """PX4's eph = sqrt(sn² + se²) splits in half per horizontal axis; epv is sigma down."""
    cov = px4.horizontal_vertical_covariance(0.5, 0.3)
    assert approx3([cov[0], cov[4], cov[8]], (0.125, 0.125, 0.09))
    assert cov[1] == cov[2] == cov[5] == 0.0
    measured = px4.fix_covariance(0.5, 0.3, vertical_measured=True)
    unmeasured = px4.fix_covariance(0.5, 0.3, vertical_measured=False)
    assert measured[8] == pytest.approx(0.09)
    assert unmeasured[8] == px4.UNMEASURED_VARIANCE_M2 == 1e6
    assert unmeasured[0] == pytest.approx(0.125)
    obs = px4.observation_pose_covariance(unmeasured)
    assert [obs[k] for k in (0, 7, 14, 21, 28, 35)] == pytest.approx(
        [0.125, 0.125, 1e6, 1e6, 1e6, 1e6])


def test_upper_triangle_covariance_fills_the_symmetric_6x6() -> None:
    urt = list(range(1, 22))
    full = px4.covariance_from_upper_triangle(urt)
    assert [full[k] for k in (0, 7, 14, 21, 28, 35)] == [1, 7, 12, 16, 19, 21]
    assert all(full[i * 6 + j] == full[j * 6 + i] for i in range(6) for j in range(6))
    assert full[1] == 2 and full[5] == 6 and full[6 + 5] == 11


def test_attitude_variances_near_identity_are_four_times_the_vector_part() -> None:
    """Level, facing north: var(theta_i) = 4 var(q_i) (the EKF2 small-angle relation)."""
    cov = px4.attitude_covariance_ned((1.0, 0.0, 0.0, 0.0), (0.0, 1e-5, 2e-5, 5e-5))
    assert cov is not None
    assert [cov[0], cov[4], cov[8]] == pytest.approx([4e-5, 8e-5, 2e-4], rel=1e-9)
    assert cov[1] == cov[2] == cov[5] == 0.0


def quaternion_variances(q_wxyz: Sequence[float], sigma2: Sequence[float]) -> list[float]:
    """Forward model: var(q_k) of a diagonal NED rotation covariance (dq = 1/2 (0, dth) q)."""
    w, x, y, z = q_wxyz
    m = ((-x, w, -z, y), (-y, z, w, -x), (-z, -y, x, w))
    return [sum(m[i][k] ** 2 * sigma2[i] for i in range(3)) / 4 for k in range(4)]


@settings(max_examples=200, deadline=None)
@given(st.floats(-0.6, 0.6), st.floats(-0.6, 0.6), st.floats(-math.pi, math.pi),
       st.lists(st.floats(1e-6, 1e-2), min_size=3, max_size=3))
def test_attitude_variances_recover_a_diagonal_covariance(
        roll: float, pitch: float, yaw: float, sigma2: list[float]) -> None:
    """Whatever the attitude: non-negative, total preserved, the truth where identifiable."""
    q = px4_q_from_euler(roll, pitch, yaw)
    variances = quaternion_variances(q, sigma2)
    cov = px4.attitude_covariance_ned(q, variances)
    assert cov is not None
    got = [cov[0], cov[4], cov[8]]
    assert min(got) >= 0.0
    assert sum(got) == pytest.approx(sum(sigma2), rel=1e-6)
    # Yaw is always identifiable; roll and pitch swap places with the heading.
    assert got[2] == pytest.approx(sigma2[2], rel=1e-4, abs=1e-9)


def test_attitude_variances_at_an_undetermined_heading_split_evenly() -> None:
    """Level, facing east: only roll + pitch is determined; it is shared, not given to one."""
    q = px4_q_from_euler(0.0, 0.0, 90 * DEG)
    cov = px4.attitude_covariance_ned(q, quaternion_variances(q, (1e-4, 3e-4, 5e-4)))
    assert cov is not None
    assert [cov[0], cov[4], cov[8]] == pytest.approx([2e-4, 2e-4, 5e-4], rel=1e-6)


@pytest.mark.parametrize('yaw_deg', [0.0, 37.0, 90.0, 180.0, -135.0])
def test_a_yaw_error_stays_on_the_yaw_axis_at_any_heading(yaw_deg: float) -> None:
    """At yaw 180 a yaw error lives in q0, not q3: it must still come out as yaw variance."""
    sigma2 = 1e-3
    half = yaw_deg * DEG / 2
    # dq = d(psi)/2 * (-sin(psi/2), 0, 0, cos(psi/2)): its per-component variances.
    variances = (math.sin(half) ** 2 * sigma2 / 4, 0.0, 0.0, math.cos(half) ** 2 * sigma2 / 4)
    cov = px4.attitude_covariance_ned(px4_q_from_euler(0.0, 0.0, yaw_deg * DEG), variances)
    assert cov is not None
    assert cov[8] == pytest.approx(sigma2, rel=1e-9)
    assert cov[0] == pytest.approx(0.0, abs=1e-15)
    assert cov[4] == pytest.approx(0.0, abs=1e-15)


def test_attitude_variances_without_information() -> None:
    assert px4.attitude_covariance_ned((1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)) is None
    with pytest.raises(ValueError, match='finite'):
        px4.attitude_covariance_ned((1.0, 0.0, 0.0, 0.0), (0.0, -1e-5, 0.0, 0.0))
    with pytest.raises(ValueError, match='finite'):
        px4.attitude_covariance_ned((1.0, 0.0, 0.0, 0.0), (0.0, math.nan, 0.0, 0.0))


def test_odometry_conversion_old_layout_values() -> None:
    """Hand-made vehicle_odometry: facing east, flying east; NED covariances move to ENU."""
    sample = px4.Px4Odometry(
        position_ned=(10.0, 20.0, -5.0), q_wxyz=px4_q_from_euler(0.0, 0.0, 90 * DEG),
        velocity=(0.0, 5.0, 0.0), velocity_frame=px4.Px4Frame.NED,
        pose_covariance=px4.covariance_from_upper_triangle(
            [1.0, 0, 0, 0, 0, 0, 2.0, 0, 0, 0, 0, 3.0, 0, 0, 0, 0.1, 0, 0, 0.2, 0, 0.3]),
        velocity_covariance=diag((1.0, 4.0, 9.0)), angular_velocity_frd=(0.1, 0.2, 0.3))
    ros = px4.odometry_to_ros(sample)
    assert ros.position == (20.0, 10.0, 5.0)
    assert abs(ros_euler(ros.orientation_xyzw)[2]) < 1e-9  # facing east = ROS yaw 0
    assert approx3(ros.linear_velocity, (5.0, 0.0, 0.0))
    assert ros.angular_velocity == (0.1, -0.2, -0.3)
    pose = ros.pose_covariance
    assert approx3([pose[k] for k in (0, 7, 14, 21, 28, 35)], (2.0, 1.0, 3.0, 0.2, 0.1, 0.3))
    twist = ros.twist_covariance
    # ENU velocity covariance diag(4, 1, 9); the body x axis is east: unchanged in the body.
    assert approx3([twist[k] for k in (0, 7, 14)], (4.0, 1.0, 9.0))
    assert all(twist[k] == 0.0 for k in (21, 28, 35))  # angular block: not stated


def test_odometry_conversion_body_velocity_and_unsupported_frames() -> None:
    base = dict(position_ned=(0.0, 0.0, 0.0), q_wxyz=(1.0, 0.0, 0.0, 0.0),
                pose_covariance=pose36((1, 1, 1), (0, 0, 0)),
                velocity_covariance=diag((1.0, 2.0, 3.0)))
    body = px4.odometry_to_ros(px4.Px4Odometry(
        velocity=(5.0, 1.0, 2.0), velocity_frame=px4.Px4Frame.BODY_FRD, **base))
    assert body.linear_velocity == (5.0, -1.0, -2.0)
    assert approx3([body.twist_covariance[k] for k in (0, 7, 14)], (1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match='velocity frame'):
        px4.odometry_to_ros(px4.Px4Odometry(
            velocity=(0.0, 0.0, 0.0), velocity_frame=px4.Px4Frame.FRD_WORLD, **base))
    with pytest.raises(ValueError, match='pose frame'):
        px4.odometry_to_ros(px4.Px4Odometry(
            velocity=(0.0, 0.0, 0.0), velocity_frame=px4.Px4Frame.NED,
            pose_frame=px4.Px4Frame.FRD_WORLD, **base))


# --- GNSS projection ---

def test_projection_distances_from_the_origin() -> None:
    """0.001 degree north of the origin is 111.19 m north (PX4 sphere, R = 6371 km)."""
    origin = px4.GeoOrigin(47.3565835, 8.5189385, 419.9)
    north, east = px4.project(origin, origin.lat_deg + 0.001, origin.lon_deg)
    assert north == pytest.approx(6371000.0 * 0.001 * DEG, rel=1e-6)
    assert north == pytest.approx(111.19, abs=0.01)
    assert east == pytest.approx(0.0, abs=1e-6)
    north, east = px4.project(origin, origin.lat_deg, origin.lon_deg + 0.001)
    assert east == pytest.approx(111.19 * math.cos(origin.lat_deg * DEG), rel=1e-4)
    assert px4.project(origin, origin.lat_deg, origin.lon_deg) == (0.0, 0.0)
    assert px4.gnss_to_enu(origin, origin.lat_deg + 0.001, origin.lon_deg, 425.4) == (
        pytest.approx(0.0, abs=1e-6), pytest.approx(111.19, abs=0.01), pytest.approx(5.5))


@settings(max_examples=200, deadline=None)
@given(st.floats(-80.0, 80.0), st.floats(-179.0, 179.0), st.floats(-5000.0, 5000.0),
       st.floats(-5000.0, 5000.0))
def test_projection_round_trip(lat: float, lon: float, north: float, east: float) -> None:
    """reproject(project(p)) = p, to well under a millimetre within 5 km."""
    origin = px4.GeoOrigin(lat, lon, 0.0)
    back_lat, back_lon = px4.reproject(origin, north, east)
    n2, e2 = px4.project(origin, back_lat, back_lon)
    assert n2 == pytest.approx(north, abs=1e-4)
    assert e2 == pytest.approx(east, abs=1e-4)


def test_fix_problems() -> None:
    assert px4.fix_problem(3, 47.0, 8.0, 400.0, 0.5, 0.8) is None
    assert px4.fix_problem(2, 47.0, 8.0, 400.0, 0.5, 0.8) == 'no 3-D fix (fix_type < 3)'
    assert 'eph/epv' in str(px4.fix_problem(3, 47.0, 8.0, 400.0, math.nan, 0.8))
    assert 'eph/epv' in str(px4.fix_problem(4, 47.0, 8.0, 400.0, 0.5, 0.0))
    assert 'out of range' in str(px4.fix_problem(3, 91.0, 8.0, 400.0, 0.5, 0.8))
    with pytest.raises(ValueError, match='lat_deg'):
        px4.GeoOrigin(95.0, 0.0, 0.0)


# --- height reference ---

def test_height_reference_from_both_parameter_names() -> None:
    """EKF2_HGT_MODE (<= 1.13) and EKF2_HGT_REF (1.14+, wins): only GNSS is comparable."""
    baro = px4.height_reference({'EKF2_HGT_MODE': 0, 'EKF2_GPS_DELAY': 110.0})
    assert baro.source is px4.HeightSource.BARO and not baro.gnss_vertical_measured
    assert baro.describe() == ("EKF2_HGT_MODE=0 (barometric): the fix's vertical axis is "
                               'marked not measured (variance 1e6 m²)')
    assert px4.height_reference({'EKF2_HGT_MODE': 1}).gnss_vertical_measured
    assert px4.height_reference({'EKF2_HGT_MODE': 2}).source is px4.HeightSource.RANGE
    assert px4.height_reference({'EKF2_HGT_REF': 3}).source is px4.HeightSource.VISION
    newer = px4.height_reference({'EKF2_HGT_REF': 1, 'EKF2_HGT_MODE': 0})
    assert newer.parameter == 'EKF2_HGT_REF' and newer.gnss_vertical_measured
    assert 'is compared' in newer.describe()
    unknown = px4.height_reference({})
    assert unknown.source is px4.HeightSource.UNKNOWN and not unknown.gnss_vertical_measured
    assert 'neither EKF2_HGT_REF nor EKF2_HGT_MODE' in unknown.describe()
    assert px4.height_reference({'EKF2_HGT_MODE': 7}).source is px4.HeightSource.UNKNOWN


def test_px4_convert_is_pure() -> None:
    """The conversions load without rclpy, pyulog, numpy or ghost_verify (a live bridge)."""
    code = ('import sys, ghost_px4.convert; '
            "print(sorted(m for m in ('rclpy', 'pyulog', 'numpy', 'ghost_verify', 'mcap') "
            'if m in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == '[]'


# --- a minimal ULog writer (docs.px4.io, "ULog File Format") ---

_PACK = {'uint64_t': 'Q', 'int64_t': 'q', 'float': 'f', 'double': 'd', 'int32_t': 'i',
         'uint32_t': 'I', 'uint16_t': 'H', 'int16_t': 'h', 'uint8_t': 'B', 'int8_t': 'b',
         'bool': '?'}


def _message(kind: str, payload: bytes) -> bytes:
    return struct.pack('<HB', len(payload), ord(kind)) + payload


def _field_list(fields: Sequence[tuple[str, str]]) -> list[tuple[str, str, int]]:
    """(type, name, count) of 'float[3]'-style declarations."""
    out = []
    for type_name, name in fields:
        base, _, rest = type_name.partition('[')
        out.append((base, name, int(rest[:-1]) if rest else 1))
    return out


def ulog_bytes(topics: dict[str, tuple[Sequence[tuple[str, str]], Sequence[dict[str, object]]]],
               params: dict[str, float | int], start_us: int = 1_000_000,
               version: tuple[int, int, int] | None = None) -> bytes:
    """A ULog file: header, info, parameters, formats, subscriptions, data in time order.

    Data messages are written in the order of each sample's '_at' (default: its timestamp),
    so that a sample can carry a corrupt timestamp where a correct one was logged. A topic
    named 'name#N' is instance N of 'name' (one format, several subscriptions); ``version``
    writes ver_sw_release as a PX4 release of that (major, minor, patch).
    """
    out = bytearray(b'ULog\x01\x12\x35\x01' + struct.pack('<Q', start_us))
    key = b'char[8] sys_name'
    out += _message('I', bytes([len(key)]) + key + b'TestLog\x00')
    if version is not None:
        key = b'uint32_t ver_sw_release'
        release = version[0] << 24 | version[1] << 16 | version[2] << 8 | 0xFF
        out += _message('I', bytes([len(key)]) + key + struct.pack('<I', release))
    for name, value in params.items():
        is_int = isinstance(value, int)
        key = f'{"int32_t" if is_int else "float"} {name}'.encode()
        out += _message('P', bytes([len(key)]) + key
                        + struct.pack('<i' if is_int else '<f', value))
    layouts = {}
    for topic, (fields, _) in topics.items():
        name = topic.split('#')[0]
        if name in layouts:
            continue
        declared = ';'.join(f'{t} {n}' for t, n in fields) + ';'
        out += _message('F', f'{name}:{declared}'.encode())
        layouts[name] = _field_list(fields)
    layouts.update({topic: layouts[topic.split('#')[0]] for topic in topics})
    rows = []
    for msg_id, (topic, (_, samples)) in enumerate(topics.items()):
        name, _, instance = topic.partition('#')
        out += _message('A', struct.pack('<BH', int(instance or 0), msg_id) + name.encode())
        for sample in samples:
            at = sample.get('_at', sample['timestamp'])
            rows.append((int(at), msg_id, topic, sample))  # type: ignore[call-overload]
    for _, msg_id, topic, sample in sorted(rows, key=lambda row: row[:2]):
        payload = bytearray(struct.pack('<H', msg_id))
        for base, name, count in layouts[topic]:
            value = sample.get(name, [0] * count if count > 1 else 0)
            values = value if count > 1 else [value]
            payload += struct.pack('<' + _PACK[base] * count, *values)  # type: ignore[misc]
        out += _message('D', bytes(payload))
    return bytes(out)


LOCAL_POSITION_FIELDS = [
    ('uint64_t', 'timestamp'), ('double', 'ref_lat'), ('double', 'ref_lon'),
    ('float', 'ref_alt'), ('float', 'x'), ('float', 'y'), ('float', 'z'), ('float', 'vx'),
    ('float', 'vy'), ('float', 'vz'), ('float', 'eph'), ('float', 'epv'), ('float', 'evh'),
    ('float', 'evv'), ('bool', 'xy_valid'), ('bool', 'z_valid'), ('bool', 'v_xy_valid'),
    ('bool', 'v_z_valid'), ('bool', 'xy_global'), ('bool', 'z_global')]
GPS_FIELDS = [('uint64_t', 'timestamp'), ('int32_t', 'lat'), ('int32_t', 'lon'),
              ('int32_t', 'alt'), ('float', 'eph'), ('float', 'epv'), ('uint8_t', 'fix_type')]
ATTITUDE_FIELDS = [('uint64_t', 'timestamp'), ('float', 'rollspeed'), ('float', 'pitchspeed'),
                   ('float', 'yawspeed'), ('float[4]', 'q')]
STATUS_FIELDS = [('uint64_t', 'timestamp'), ('float[24]', 'covariances')]
ORIGIN = (47.0, 8.0, 400.0)


def local_position(t_us: int, **changes: object) -> dict[str, object]:
    sample: dict[str, object] = dict(
        timestamp=t_us, ref_lat=ORIGIN[0], ref_lon=ORIGIN[1], ref_alt=ORIGIN[2], x=1.0, y=2.0,
        z=-3.0, vx=0.0, vy=5.0, vz=0.0, eph=0.4, epv=0.2, evh=0.2, evv=0.1, xy_valid=True,
        z_valid=True, v_xy_valid=True, v_z_valid=True, xy_global=True, z_global=True)
    sample.update(changes)
    return sample


def gps(t_us: int, **changes: object) -> dict[str, object]:
    sample: dict[str, object] = dict(timestamp=t_us, lat=int((ORIGIN[0] + 0.001) * 1e7),
                                     lon=int(ORIGIN[1] * 1e7), alt=int(403.5e3), eph=0.5,
                                     epv=0.8, fix_type=3)
    sample.update(changes)
    return sample


def flight(params: dict[str, float | int] | None = None, lp_changes: dict | None = None,
           gps_changes: dict | None = None, seconds: int = 2) -> bytes:
    """A synthetic 10 Hz flight facing east at 5 m/s (NED vy), GNSS at 5 Hz, attitude 50 Hz."""
    t0 = 2_000_000
    lp = [local_position(t0 + k * 100_000, **(lp_changes or {}).get(k, {}))
          for k in range(10 * seconds)]
    fixes = [gps(t0 + 50_000 + k * 200_000, **(gps_changes or {}).get(k, {}))
             for k in range(5 * seconds)]
    attitude = [dict(timestamp=t0 - 20_000 + k * 20_000, q=px4_q_from_euler(0.0, 0.0, 90 * DEG))
                for k in range(50 * seconds + 5)]
    status = [dict(timestamp=t0 - 10_000 + k * 200_000,
                   # roll/pitch 4e-5 rad², yaw 2e-4 rad² at heading east (yaw in q0 and q3)
                   covariances=[2.5e-5, 1e-5, 1e-5, 2.5e-5] + [0.0] * 20)
              for k in range(5 * seconds + 1)]
    return ulog_bytes({'vehicle_local_position': (LOCAL_POSITION_FIELDS, lp),
                       'vehicle_gps_position': (GPS_FIELDS, fixes),
                       'vehicle_attitude': (ATTITUDE_FIELDS, attitude),
                       'estimator_status': (STATUS_FIELDS, status)},
                      {'EKF2_HGT_MODE': 0, 'EKF2_GPS_DELAY': 110.0} if params is None
                      else params)


def run(argv: list[str]) -> tuple[int, str, str]:
    """main() in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def read_bag(bag: Path) -> dict[str, list[tuple[int, dict]]]:
    """(log time, message dict) per topic, in file order, through the verifier's bag layout."""
    layout = resolve_bag(bag)
    assert layout.metadata is not None and not layout.missing
    topics: dict[str, list[tuple[int, dict]]] = {}
    for path in layout.files:
        with path.open('rb') as handle:
            reader = make_reader(handle, decoder_factories=[DecoderFactory()])
            for schema, channel, message, decoded in reader.iter_decoded_messages():
                assert schema is not None
                topics.setdefault(channel.topic, []).append(
                    (message.log_time, hash_form(decoded)))
    return topics


def stamp_ns(msg: dict) -> int:
    stamp = msg['header']['stamp']
    return stamp['sec'] * 10**9 + stamp['nanosec']


def write(tmp_path: Path, data: bytes, name: str = 'log.ulg') -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def assert_one_error_line(err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith('ghost_import: error: '), err
    assert 'Traceback' not in err
    for word in words:
        assert word in lines[0], err


# --- synthetic logs ---

def test_synthetic_flight_conventions_and_drop_reasons(tmp_path: Path) -> None:
    """A sample without a belief or an unusable fix is dropped and counted; the rest is kept.

    Sample 3 has no position (NaN): dropped. Sample 5 is flagged invalid by PX4 (xy_valid
    false): kept, its position block unbounded (judged UNKNOWN), never dropped.
    """
    data = flight(
        lp_changes={3: {'x': math.nan}, 5: {'xy_valid': False},
                    7: {'timestamp': 2_600_000},  # repeats sample 6's time
                    9: {'timestamp': 9_000_000, '_at': 2_900_000}},  # a spike, one sample
        gps_changes={1: {'fix_type': 2}, 2: {'eph': math.nan}, 3: {'lat': 1_000_000_000}})
    bag = tmp_path / 'bag'
    code, out, err = run([str(write(tmp_path, data)), '--output', str(bag)])
    assert code == 0, err
    assert 'vehicle_local_position: 20 samples, 17 written, 3 dropped' in out
    assert 'dropped 2: timestamp not strictly increasing' in out
    assert 'dropped 1: position not finite (NaN: PX4 states no position)' in out
    assert '1: position flagged invalid by PX4 (xy_valid or z_valid false)' in out
    assert '1 of the 17 beliefs written have a position PX4 flags invalid' in err
    assert 'vehicle_gps_position: 10 samples, 7 written, 3 dropped' in out
    assert 'dropped 1: no 3-D fix (fix_type < 3)' in out
    assert "EKF2_HGT_MODE=0 (barometric): the fix's vertical axis is marked not measured" in out
    assert 'GNSS delay: 110 ms (EKF2_GPS_DELAY)' in out
    # Issue 34: the fixes are the GNSS EKF2 fuses, said once, with what an independent one adds.
    assert out.count('fixes: vehicle_gps_position (the receiver EKF2 uses) is the GNSS EKF2 '
                     'fuses') == 1 and 'an independent source (RTK, motion capture' in out
    topics = read_bag(bag)
    beliefs, fixes = topics['/state/nav'], topics['/observations']
    assert len(beliefs) == 17 and len(fixes) == 7
    invalid = [m for _, m in beliefs if stamp_ns(m) == 2_500_000_000]
    assert [invalid[0]['pose']['covariance'][k] for k in (0, 7, 14)] == [math.inf] * 3
    assert [invalid[0]['pose']['covariance'][k] for k in (21, 28, 35)] == pytest.approx(
        [4e-5, 4e-5, 2e-4], rel=1e-4)  # the rest of the belief is unchanged
    odom = beliefs[0][1]
    assert odom['header']['frame_id'] == 'odom' and odom['child_frame_id'] == 'base_link'
    assert odom['pose']['pose']['position'] == pytest.approx({'x': 2.0, 'y': 1.0, 'z': 3.0})
    assert odom['twist']['twist']['linear'] == pytest.approx({'x': 5.0, 'y': 0.0, 'z': 0.0},
                                                             abs=1e-6)
    pose_cov = odom['pose']['covariance']
    assert [pose_cov[k] for k in (0, 7, 14)] == pytest.approx([0.08, 0.08, 0.04])
    assert [pose_cov[k] for k in (21, 28, 35)] == pytest.approx([4e-5, 4e-5, 2e-4], rel=1e-4)
    assert [odom['twist']['covariance'][k] for k in (0, 7, 14)] == pytest.approx(
        [0.02, 0.02, 0.01], abs=1e-6)
    fix = fixes[0][1]
    assert fix['header']['frame_id'] == 'odom'
    assert fix['pose']['pose']['position'] == pytest.approx(
        {'x': 0.0, 'y': 111.19, 'z': 3.5}, abs=0.01)
    assert fix['pose']['covariance'][14] == 1e6
    assert fix['pose']['covariance'][0] == pytest.approx(0.125)
    for log_time, msg in fixes:
        assert stamp_ns(msg) == log_time - 110_000_000
    log_times = [t for t, _ in beliefs] + [t for t, _ in fixes]
    assert all(len({stamp_ns(m) for _, m in items}) == len(items) for items in topics.values())
    assert sorted(stamp_ns(m) for _, m in beliefs) == [stamp_ns(m) for _, m in beliefs]
    assert len(log_times) == 24


def test_messages_are_in_log_time_order_fix_first(tmp_path: Path) -> None:
    """A fix and a belief logged at the same time: the fix is written first."""
    data = flight(gps_changes={k: {'timestamp': 2_000_000 + k * 200_000} for k in range(10)})
    bag = tmp_path / 'bag'
    code, _, err = run([str(write(tmp_path, data)), '--output', str(bag)])
    assert code == 0, err
    layout = resolve_bag(bag)
    order = []
    with layout.files[0].open('rb') as handle:
        for _, channel, message in make_reader(handle).iter_messages():
            order.append((message.log_time, channel.topic))
    assert order == sorted(order, key=lambda item: item[0])
    first = [topic for t, topic in order if t == 2_000_000_000]
    assert first == ['/observations', '/state/nav']


def test_gnss_height_reference_delay_override_and_rate(tmp_path: Path) -> None:
    """EKF2_HGT_MODE=1: the vertical is compared; no EKF2_GPS_DELAY: 0 unless overridden."""
    path = write(tmp_path, flight(params={'EKF2_HGT_MODE': 1}))
    code, out, err = run([str(path), '--output', str(tmp_path / 'a')])
    assert code == 0, err
    assert 'EKF2_GPS_DELAY is not in the log' in err
    assert "EKF2_HGT_MODE=1 (GNSS): the fix's vertical axis is compared" in out
    fixes = read_bag(tmp_path / 'a')['/observations']
    assert all(stamp_ns(m) == t for t, m in fixes)
    assert fixes[0][1]['pose']['covariance'][14] == pytest.approx(0.64)
    code, out, err = run([str(path), '--output', str(tmp_path / 'b'), '--gps-delay-ms', '50',
                          '--rate', '5'])
    assert code == 0, err
    assert 'GNSS delay: 50 ms (--gps-delay-ms)' in out
    topics = read_bag(tmp_path / 'b')
    assert all(stamp_ns(m) == t - 50_000_000 for t, m in topics['/observations'])
    stamps = [stamp_ns(m) for _, m in topics['/state/nav']]
    assert len(stamps) == 10 and '10 skipped by --rate' in out
    assert all(b - a == 200_000_000 for a, b in zip(stamps, stamps[1:], strict=False))
    assert len(topics['/observations']) == 10  # fixes are never decimated


def test_fix_without_ekf_origin_is_dropped(tmp_path: Path) -> None:
    changes = {k: {'xy_global': False, 'ref_lat': 0.0, 'ref_lon': 0.0} for k in range(8)}
    code, out, err = run([str(write(tmp_path, flight(lp_changes=changes))), '--output',
                          str(tmp_path / 'bag')])
    assert code == 0, err
    assert 'no EKF origin' in out
    fixes = read_bag(tmp_path / 'bag')['/observations']
    assert 0 < len(fixes) < 10
    assert all(fix['pose']['pose']['position']['y'] == pytest.approx(111.19, abs=0.01)
               for _, fix in fixes)


def test_missing_attitude_uncertainty_is_left_zero_with_a_warning(tmp_path: Path) -> None:
    data = ulog_bytes({'vehicle_local_position': (LOCAL_POSITION_FIELDS, [
        local_position(2_000_000 + k * 100_000) for k in range(5)]),
        'vehicle_gps_position': (GPS_FIELDS, [gps(2_050_000)]),
        'vehicle_attitude': (ATTITUDE_FIELDS, [dict(timestamp=1_990_000 + k * 20_000,
                                                    q=(1.0, 0.0, 0.0, 0.0)) for k in range(30)])},
        {'EKF2_HGT_MODE': 0, 'EKF2_GPS_DELAY': 110.0})
    code, out, err = run([str(write(tmp_path, data)), '--output', str(tmp_path / 'bag')])
    assert code == 0, err
    assert 'Ghost judges UNKNOWN (no uncertainty information is not certainty)' in err
    beliefs = read_bag(tmp_path / 'bag')['/state/nav']
    assert all(not any(m['pose']['covariance'][k] for k in range(21, 36)) for _, m in beliefs)


ODOMETRY_NEW = [('uint64_t', 'timestamp'), ('uint64_t', 'timestamp_sample'),
                ('uint8_t', 'pose_frame'), ('float[3]', 'position'), ('float[4]', 'q'),
                ('uint8_t', 'velocity_frame'), ('float[3]', 'velocity'),
                ('float[3]', 'angular_velocity'), ('float[3]', 'position_variance'),
                ('float[3]', 'orientation_variance'), ('float[3]', 'velocity_variance')]
ODOMETRY_OLD = [('uint64_t', 'timestamp'), ('float', 'x'), ('float', 'y'), ('float', 'z'),
                ('float[4]', 'q'), ('float[21]', 'pose_covariance'), ('float', 'vx'),
                ('float', 'vy'), ('float', 'vz'), ('float', 'rollspeed'),
                ('float', 'pitchspeed'), ('float', 'yawspeed'),
                ('float[21]', 'velocity_covariance'), ('uint8_t', 'local_frame'),
                ('uint8_t', 'velocity_frame')]
SENSOR_GPS = [('uint64_t', 'timestamp'), ('double', 'latitude_deg'),
              ('double', 'longitude_deg'), ('double', 'altitude_msl_m'), ('float', 'eph'),
              ('float', 'epv'), ('uint8_t', 'fix_type')]


def _urt(diagonal: Sequence[float]) -> list[float]:
    values = [0.0] * 21
    for value, index in zip(diagonal, (0, 6, 11, 15, 18, 20), strict=True):
        values[index] = value
    return values


@pytest.mark.parametrize('layout', ['v1.14', 'v1.13'])
def test_vehicle_odometry_is_preferred_in_both_layouts(tmp_path: Path, layout: str) -> None:
    """vehicle_odometry + sensor_gps (newer names): same conventions as local position."""
    q = px4_q_from_euler(0.0, 0.0, 90 * DEG)
    if layout == 'v1.14':
        samples = [dict(timestamp=2_000_000 + k * 100_000 + 3_000,
                        timestamp_sample=2_000_000 + k * 100_000, pose_frame=1,
                        position=[1.0, 2.0, -3.0], q=q, velocity_frame=1,
                        velocity=[0.0, 5.0, 0.0], angular_velocity=[0.1, 0.2, 0.3],
                        position_variance=[0.1, 0.2, 0.3], orientation_variance=[1e-4, 2e-4,
                                                                                 3e-4],
                        velocity_variance=[0.01, 0.04, 0.09]) for k in range(10)]
        odometry = (ODOMETRY_NEW, samples)
    else:
        samples = [dict(timestamp=2_000_000 + k * 100_000, x=1.0, y=2.0, z=-3.0, q=q,
                        pose_covariance=_urt([0.1, 0.2, 0.3, 1e-4, 2e-4, 3e-4]), vx=0.0,
                        vy=5.0, vz=0.0, rollspeed=0.1, pitchspeed=0.2, yawspeed=0.3,
                        velocity_covariance=_urt([0.01, 0.04, 0.09, 0, 0, 0]), local_frame=0,
                        velocity_frame=0) for k in range(10)]
        odometry = (ODOMETRY_OLD, samples)
    fixes = [dict(timestamp=2_050_000 + k * 200_000, latitude_deg=ORIGIN[0],
                  longitude_deg=ORIGIN[1] + 0.001, altitude_msl_m=401.0, eph=0.5, epv=0.8,
                  fix_type=3) for k in range(5)]
    data = ulog_bytes({'vehicle_odometry': odometry, 'sensor_gps': (SENSOR_GPS, fixes),
                       'vehicle_local_position': (LOCAL_POSITION_FIELDS, [
                           local_position(2_000_000 + k * 100_000) for k in range(10)])},
                      {'EKF2_HGT_REF': 1, 'EKF2_GPS_DELAY': 110.0})
    code, out, err = run([str(write(tmp_path, data)), '--output', str(tmp_path / 'bag')])
    assert code == 0, err
    assert 'from vehicle_odometry: 10 samples, 10 written' in out
    assert 'from sensor_gps: 5 samples, 5 written' in out
    topics = read_bag(tmp_path / 'bag')
    t, odom = topics['/state/nav'][0]
    assert stamp_ns(odom) == 2_000_000_000
    assert t == (2_003_000_000 if layout == 'v1.14' else 2_000_000_000)
    assert odom['pose']['pose']['position'] == pytest.approx({'x': 2.0, 'y': 1.0, 'z': 3.0})
    assert odom['twist']['twist']['linear'] == pytest.approx({'x': 5.0, 'y': 0.0, 'z': 0.0},
                                                             abs=1e-6)
    assert odom['twist']['twist']['angular'] == pytest.approx({'x': 0.1, 'y': -0.2, 'z': -0.3})
    cov = odom['pose']['covariance']
    # Position variances are about NED (y = east first in ENU). PX4 1.14+ states the
    # orientation variance about the body axes: facing east, body x (roll) is ENU x and body
    # y (right) is south, so ENU (1e-4, 2e-4, 3e-4); 1.10-1.13 states it about NED.
    rotation = [1e-4, 2e-4, 3e-4] if layout == 'v1.14' else [2e-4, 1e-4, 3e-4]
    assert [cov[k] for k in (0, 7, 14, 21, 28, 35)] == pytest.approx(
        [0.2, 0.1, 0.3, *rotation], rel=1e-5)
    assert [odom['twist']['covariance'][k] for k in (0, 7, 14)] == pytest.approx(
        [0.04, 0.01, 0.09], abs=1e-7)
    fix = topics['/observations'][0][1]
    assert fix['pose']['pose']['position']['x'] == pytest.approx(
        111.19 * math.cos(ORIGIN[0] * DEG), rel=1e-4)
    assert fix['pose']['covariance'][14] == pytest.approx(0.64)  # EKF2_HGT_REF=1: compared


# --- bad input ---

def test_random_bytes_empty_directory_missing(tmp_path: Path) -> None:
    """Each bad input is one error line naming the file, exit 3, no bag left behind."""
    rng = random.Random(3)
    cases = {
        'random': (write(tmp_path, rng.randbytes(5000), 'random.ulg'), 'not a ULog file'),
        'empty': (write(tmp_path, b'', 'empty.ulg'), 'empty file'),
        'directory': (tmp_path, 'is a directory'),
        'missing': (tmp_path / 'nope.ulg', 'no such file'),
    }
    for name, (path, words) in cases.items():
        code, out, err = run([str(path), '--output', str(tmp_path / f'out_{name}')])
        assert code == 3, (name, err)
        assert_one_error_line(err, str(path), words)
        assert not (tmp_path / f'out_{name}').exists()


def test_log_without_position_or_gnss(tmp_path: Path) -> None:
    only_attitude = ulog_bytes({'vehicle_attitude': (ATTITUDE_FIELDS, [
        dict(timestamp=1_000_000 + k * 20_000, q=(1.0, 0.0, 0.0, 0.0)) for k in range(10)])},
        {'EKF2_HGT_MODE': 0})
    path = write(tmp_path, only_attitude)
    code, _, err = run([str(path), '--output', str(tmp_path / 'bag')])
    assert code == 3
    assert_one_error_line(err, str(path), 'neither vehicle_odometry nor vehicle_local_position')
    # No GNSS at all (an indoor flight): the beliefs are imported, and the warning says
    # nothing will confirm them.
    no_gnss = ulog_bytes({'vehicle_local_position': (LOCAL_POSITION_FIELDS, [
        local_position(1_000_000)]), 'vehicle_attitude': (ATTITUDE_FIELDS, [
            dict(timestamp=990_000, q=(1.0, 0.0, 0.0, 0.0))])}, {})
    path = write(tmp_path, no_gnss, 'no_gnss.ulg')
    code, out, err = run([str(path), '--output', str(tmp_path / 'bag')])
    assert code == 0, err
    assert 'no usable GNSS fix is logged (neither vehicle_gps_position nor sensor_gps)' in err
    topics = read_bag(tmp_path / 'bag')
    assert len(topics['/state/nav']) == 1 and not topics.get('/observations')


def test_no_usable_sample(tmp_path: Path) -> None:
    """No position at all (NaN) in any sample: nothing to judge, exit 3, no bag."""
    data = flight(lp_changes={k: {'x': math.nan} for k in range(20)})
    code, _, err = run([str(write(tmp_path, data)), '--output', str(tmp_path / 'bag')])
    assert code == 3
    assert_one_error_line(err, 'no usable belief', '20 position not finite')
    assert not (tmp_path / 'bag').exists()


def test_a_flight_with_no_valid_position_imports(tmp_path: Path) -> None:
    """Every sample flagged invalid and no 3-D fix: imported, every belief unbounded."""
    data = flight(lp_changes={k: {'xy_valid': False} for k in range(20)},
                  gps_changes={k: {'fix_type': 0} for k in range(10)})
    code, out, err = run([str(write(tmp_path, data)), '--output', str(tmp_path / 'bag')])
    assert code == 0, err
    assert '20: position flagged invalid by PX4 (xy_valid or z_valid false)' in out
    assert 'no usable GNSS fix in vehicle_gps_position (10 samples: 10 no 3-D fix' in err
    beliefs = read_bag(tmp_path / 'bag')['/state/nav']
    assert len(beliefs) == 20
    assert all(m['pose']['covariance'][0] == math.inf for _, m in beliefs)


def test_truncated_log_imports_the_complete_part_with_a_warning(tmp_path: Path) -> None:
    """A log cut mid-message (power loss) is imported up to the cut, and says so."""
    data = flight(seconds=4)
    path = write(tmp_path, data[:len(data) * 6 // 10 + 5])
    code, out, err = run([str(path), '--output', str(tmp_path / 'bag')])
    assert code == 0, err
    assert 'warning:' in err and 'the log is truncated' in err and 'data ends at t = ' in err
    assert 'TRUNCATED' in out
    full_code, full_out, _ = run([str(write(tmp_path, data, 'full.ulg')), '--output',
                                  str(tmp_path / 'full')])
    assert full_code == 0 and 'TRUNCATED' not in full_out
    assert 0 < len(read_bag(tmp_path / 'bag')['/state/nav']) < len(
        read_bag(tmp_path / 'full')['/state/nav'])
    # Cut inside the definitions: nothing to import.
    path = write(tmp_path, data[:300], 'head.ulg')
    code, _, err = run([str(path), '--output', str(tmp_path / 'head')])
    assert code == 3
    assert_one_error_line(err, 'truncated', 'before any topic data')


def test_output_problems_are_usage_errors(tmp_path: Path) -> None:
    path = write(tmp_path, flight())
    (tmp_path / 'exists').mkdir()
    code, _, err = run([str(path), '--output', str(tmp_path / 'exists')])
    assert code == 2
    assert_one_error_line(err, 'already exists')
    # Missing parent folders are created (as ros2 bag record -o does); a parent that is a
    # file cannot be.
    code, _, err = run([str(path), '--output', str(tmp_path / 'new' / 'parent' / 'bag')])
    assert code == 0, err
    assert (tmp_path / 'new' / 'parent' / 'bag' / 'metadata.yaml').is_file()
    (tmp_path / 'afile').write_text('x')
    code, _, err = run([str(path), '--output', str(tmp_path / 'afile' / 'bag')])
    assert code == 2
    assert_one_error_line(err, 'cannot be created')
    for bad in (['--rate', '0'], ['--rate', 'nan'], ['--gps-delay-ms', '-1']):
        code, _, err = run([str(path), '--output', str(tmp_path / 'x'), *bad])
        assert code == 2 and 'Traceback' not in err


def test_an_interrupted_import_leaves_nothing_and_the_rerun_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the bag is written: exit 130, nothing at --output, no staging left."""
    from ghost_bag.write import GhostBagWriter

    path = write(tmp_path, flight())
    written = GhostBagWriter.write

    def interrupted(self: GhostBagWriter, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(GhostBagWriter, 'write', interrupted)
    code, _, err = run([str(path), '--output', str(tmp_path / 'bag')])
    assert code == 130 and err.splitlines()[-1] == 'ghost_import: error: interrupted'
    assert sorted(item.name for item in tmp_path.iterdir()) == [path.name]
    monkeypatch.setattr(GhostBagWriter, 'write', written)
    code, _, err = run([str(path), '--output', str(tmp_path / 'bag')])
    assert code == 0, err


def _installed_command() -> list[str]:
    """The console script in the colcon install space (what `ros2 run` starts)."""
    try:
        from ament_index_python.packages import get_package_prefix

        prefix = Path(get_package_prefix('ghost_px4'))
    except (ImportError, LookupError, ValueError):
        pytest.skip('ghost_px4 is not installed (build the workspace)')
    exe = prefix / 'lib' / 'ghost_px4' / 'ghost_import'
    assert exe.is_file() and os.access(exe, os.X_OK), f'{exe}: missing (rebuild ghost_px4)'
    return [str(exe)]


def test_installed_command_on_a_hanging_input(tmp_path: Path) -> None:
    """Valid header + random bytes makes pyulog 1.3 loop forever; the importer refuses it."""
    path = write(tmp_path, b'ULog\x01\x12\x35\x01' + struct.pack('<Q', 0)
                 + random.Random(5).randbytes(4000))
    proc = subprocess.run([*_installed_command(), str(path), '--output', str(tmp_path / 'b')],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3
    assert_one_error_line(proc.stderr, 'corrupt ULog definitions section')


# --- the real flight logs ---

@pytest.fixture(scope='module')
def real_bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, str]]:
    if not REALDATA.is_dir():
        pytest.skip(f'{REALDATA} (the shared real logs) is missing')
    out = {}
    for log in (ESC_LOG, SITL_LOG):
        bag = tmp_path_factory.mktemp('real') / log.stem
        code, stdout, stderr = run([str(log), '--output', str(bag)])
        assert code == 0, stderr
        out[log.stem] = (bag, stdout, stderr)
    return out


@needs_realdata
def test_real_logs_counts(real_bags: dict[str, tuple[Path, str, str]]) -> None:
    """The counts follow from the logs (see docs/real-data.md for why each sample is dropped).

    FMUv3: 315 local-position samples; 3 fall in logger gaps of vehicle_attitude (> 100 ms
    without an attitude), 312 are written; all 179 GPS fixes (fix type 4) are written. SITL:
    the 158 samples before the EKF's position is valid (t < 17.49 s) are written, flagged
    invalid; of 578 fixes, 73 have no 3-D fix yet and 103 come before the EKF has an origin.
    """
    bag, out, err = real_bags['esc_status_log']
    assert 'vehicle_local_position: 315 samples, 312 written, 3 dropped' in out
    assert 'dropped 3: no vehicle_attitude within 100 ms before' in out
    assert 'vehicle_gps_position: 179 samples, 179 written, 0 dropped' in out
    assert "EKF2_HGT_MODE=0 (barometric): the fix's vertical axis is marked not measured" in out
    assert 'GNSS delay: 110 ms (EKF2_GPS_DELAY)' in out
    assert err == ''  # every belief has an estimator_status within 2 s
    topics = read_bag(bag)
    assert (len(topics['/state/nav']), len(topics['/observations'])) == (312, 179)
    bag, out, err = real_bags['14_19_29']
    assert 'vehicle_local_position: 555 samples, 555 written, 0 dropped' in out
    assert '158: position flagged invalid by PX4 (xy_valid or z_valid false)' in out
    assert 'vehicle_gps_position: 578 samples, 402 written, 176 dropped' in out
    assert 'dropped 73: no 3-D fix (fix_type < 3)' in out
    assert 'dropped 103: no EKF origin' in out
    assert '158 of the 555 beliefs written have a position PX4 flags invalid' in err
    topics = read_bag(bag)
    assert (len(topics['/state/nav']), len(topics['/observations'])) == (555, 402)


@needs_realdata
@pytest.mark.parametrize('name', ['esc_status_log', '14_19_29'])
def test_real_logs_conventions(real_bags: dict[str, tuple[Path, str, str]], name: str) -> None:
    """Frames, stamps, the unmeasured vertical, order, and agreement with the EKF's own numbers."""
    from pyulog import ULog

    bag, _, _ = real_bags[name]
    topics = read_bag(bag)
    beliefs, fixes = topics['/state/nav'], topics['/observations']
    everything = [t for items in topics.values() for t in items]
    statuses = topics.get('/vehicle_status', [])
    assert len(everything) == len(beliefs) + len(fixes) + len(statuses)
    for items in (beliefs, fixes):
        stamps = [stamp_ns(m) for _, m in items]
        assert all(b > a for a, b in zip(stamps, stamps[1:], strict=False))
    assert all(m['header']['frame_id'] == 'odom' for _, m in beliefs + fixes)
    assert all(m['child_frame_id'] == 'base_link' for _, m in beliefs)
    assert all(m['pose']['covariance'][14] == 1e6 for _, m in fixes)
    assert all(stamp_ns(m) == t - 110_000_000 for t, m in fixes)
    assert all(stamp_ns(m) == t for t, m in beliefs)
    # The EKF's own yaw (NED) agrees with the converted quaternion: ROS yaw = 90 deg - yaw.
    lp = ULog(str(REALDATA / f'{name}.ulg'), ['vehicle_local_position']).get_dataset(
        'vehicle_local_position').data
    yaw_by_stamp = {int(t) * 1000: float(y) for t, y in zip(lp['timestamp'], lp['yaw'],
                                                            strict=True)}
    errors = [abs(wrap(ros_euler([m['pose']['pose']['orientation'][k] for k in 'xyzw'])[2]
                       - (math.pi / 2 - yaw_by_stamp[stamp_ns(m)]))) for _, m in beliefs]
    assert max(errors) < 3 * DEG
    # The fixes agree with the EKF horizontally (mean residual well under a metre): a swapped
    # east/north or a wrong origin would put them metres to tens of metres off.
    positions = {stamp_ns(m): m['pose']['pose']['position'] for _, m in beliefs}
    ordered = sorted(positions)
    residuals = []
    for _, fix in fixes:
        later = [s for s in ordered if s >= stamp_ns(fix)]
        if later and later[0] - stamp_ns(fix) < 150_000_000:
            p, f = positions[later[0]], fix['pose']['pose']['position']
            residuals.append((f['x'] - p['x'], f['y'] - p['y']))
    assert len(residuals) > 0.8 * len(fixes)
    for axis in (0, 1):
        assert abs(sum(r[axis] for r in residuals) / len(residuals)) < 0.5
    # The first belief is at the EKF's origin horizontally (the FMUv3 log starts in flight,
    # about 2 m from where the origin was set and 12 m above it).
    first = beliefs[0][1]['pose']['pose']['position']
    assert math.hypot(first['x'], first['y']) < (3.0 if name == 'esc_status_log' else 0.1)
    # Orientation variances (rad²) are those of a converged EKF2 (0.1-1 degree).
    variances = [m['pose']['covariance'][k] for _, m in beliefs for k in (21, 28, 35)
                 if m['pose']['covariance'][k]]
    assert variances and 1e-6 < min(variances) and max(variances) < 1e-2


@needs_realdata
def test_real_log_truncated_at_several_fractions(tmp_path: Path) -> None:
    """The FMUv3 log cut at 30/60/90 %: imported up to the cut with a warning; at 2 %: exit 3."""
    data = ESC_LOG.read_bytes()
    counts = []
    for fraction in (0.3, 0.6, 0.9):
        path = write(tmp_path, data[:int(len(data) * fraction)], f'cut{fraction}.ulg')
        code, out, err = run([str(path), '--output', str(tmp_path / f'bag{fraction}')])
        assert code == 0, err
        assert 'the log is truncated' in err and 'TRUNCATED' in out
        counts.append(len(read_bag(tmp_path / f'bag{fraction}')['/state/nav']))
    assert counts == sorted(counts) and counts[-1] < 312
    path = write(tmp_path, data[:int(len(data) * 0.02)], 'cut0.02.ulg')
    code, _, err = run([str(path), '--output', str(tmp_path / 'bag0.02')])
    assert code == 3
    assert_one_error_line(err, 'truncated')
