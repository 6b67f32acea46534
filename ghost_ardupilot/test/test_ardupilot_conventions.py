"""ArduPilot's conventions (ghost_ardupilot.ekf, .events, .dataflash_read.scan) on hand cases."""

from __future__ import annotations

import math

import pytest

from ghost_ardupilot import ekf
from ghost_ardupilot.dataflash_read import scan
from ghost_ardupilot.events import ardupilot_limits, error_name
from ghost_px4 import convert as px4

#: XKF4.SS of a healthy GPS flight (the shared logs): attitude, velocities, positions (rel, abs,
#: vertical), predicted positions, using_gps, gps_quality_good, initalized.
HEALTHY = (1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 8 | 1 << 9 | 1 << 13
           | 1 << 15 | 1 << 16)


def test_the_healthy_solution_word_of_the_real_logs_decodes_as_valid() -> None:
    assert HEALTHY == 107327  # the value both shared logs carry
    # TS 48: airspeed and drag timeouts, which say nothing of a copter's position.
    assert ekf.invalid_blocks(HEALTHY, 48, 0) == ekf.InvalidBlocks()
    assert ekf.bit_names(48, ekf.TIMEOUT_BITS) == ('airspeed measurement', 'drag measurement')


@pytest.mark.parametrize(('solution', 'timeouts', 'faults', 'position', 'velocity'), [
    (HEALTHY | 1 << 14, 0, 0, 'GPS glitching', ''),
    (HEALTHY | 1 << 18, 0, 0, 'dead reckoning', ''),
    (HEALTHY & ~(1 << 3 | 1 << 4), 0, 0, 'position not usable', ''),
    (HEALTHY | 1 << 7, 0, 0, 'position not usable', ''),  # const_pos_mode
    (HEALTHY & ~(1 << 5), 0, 0, 'position not usable', ''),  # no vert_pos
    (HEALTHY, 1, 0, 'position or height measurement timeout', ''),
    (HEALTHY, 4, 0, 'position or height measurement timeout', ''),
    (HEALTHY, 2, 0, '', 'velocity measurement timeout'),
    (HEALTHY & ~(1 << 1), 0, 0, '', 'velocity not usable'),
    (HEALTHY, 0, 1, 'EKF fault: quaternions are NaN', 'EKF fault: quaternions are NaN'),
    (HEALTHY, 0, 1 << 2, '', ''),  # magnetometer conditioning: not about position
])
def test_xkf4_bits_are_the_estimators_invalid(solution: int, timeouts: int, faults: int,
                                              position: str, velocity: str) -> None:
    found = ekf.invalid_blocks(solution, timeouts, faults)
    assert found.position.startswith(position) and bool(found.position) == bool(position)
    assert found.velocity.startswith(velocity) and bool(found.velocity) == bool(velocity)


@pytest.mark.parametrize(('solution', 'faults', 'orientation'), [
    (HEALTHY, 0, ''),
    (HEALTHY & ~1, 0, 'attitude not usable'),  # SS attitude clear: ArduPilot's own test
    (HEALTHY, 1, 'EKF fault: quaternions are NaN'),
    (HEALTHY, 1 << 1, ''),  # velocities NaN: the attitude stays usable
    (HEALTHY | 1 << 14, 0, ''),  # GPS glitching says nothing of the attitude
])
def test_the_attitude_is_invalid_only_where_ardupilot_says_so(solution: int, faults: int,
                                                              orientation: str) -> None:
    found = ekf.invalid_blocks(solution, 0, faults).orientation
    assert found.startswith(orientation) and bool(found) == bool(orientation)


def _variances(q: tuple[float, float, float, float], position: tuple[float, ...] = (1, 2, 3),
               velocity: tuple[float, ...] = (0.1, 0.2, 0.3)) -> list[float]:
    return [*q, *velocity, *position, 0.0, 0.0]


def test_state_variances_facing_north_are_four_times_the_quaternion_variances() -> None:
    found = ekf.state_covariances(_variances((0.0, 1e-4, 4e-4, 9e-4)), (1.0, 0.0, 0.0, 0.0))
    assert found.position == (1, 0, 0, 0, 2, 0, 0, 0, 3)
    assert found.velocity == (0.1, 0, 0, 0, 0.2, 0, 0, 0, 0.3)
    assert found.rotation is not None
    assert [found.rotation[k] for k in (0, 4, 8)] == pytest.approx([4e-4, 16e-4, 36e-4],
                                                                    rel=1e-6)


def test_a_yaw_error_facing_south_lives_in_q0_not_q3() -> None:
    # q = (0, 0, 0, 1): yaw 180 deg. A yaw error dθ gives dq0 = -dθ/2: var(q0) = var(θ)/4.
    found = ekf.state_covariances(_variances((0.01, 0.0, 0.0, 0.0)), (0.0, 0.0, 0.0, 1.0))
    assert found.rotation is not None
    assert found.rotation[8] == pytest.approx(0.04, rel=1e-6)
    assert found.rotation[0] == pytest.approx(0.0, abs=1e-9)
    assert found.rotation[4] == pytest.approx(0.0, abs=1e-9)


def test_the_belief_in_ros_frames_swaps_north_east_and_keeps_the_variances() -> None:
    covariance = ekf.state_covariances(_variances((0.0, 0.0, 0.0, 0.01)), (1, 0, 0, 0))
    assert covariance.rotation is not None
    sample = px4.Px4Odometry(
        position_ned=(10.0, 20.0, -5.0), q_wxyz=(1.0, 0.0, 0.0, 0.0), velocity=(1.0, 0, 0),
        velocity_frame=px4.Px4Frame.NED,
        pose_covariance=px4.pose_covariance(covariance.position, covariance.rotation),
        velocity_covariance=covariance.velocity)
    ros = px4.odometry_to_ros(sample)
    assert ros.position == (20.0, 10.0, 5.0)  # ENU
    pose = ros.pose_covariance
    assert (pose[0], pose[7], pose[14]) == (2, 1, 3)  # var north 1 -> y, east 2 -> x
    assert pose[35] == pytest.approx(0.04)  # yaw about down = about up, same variance


def test_ardupilots_flat_earth_projection() -> None:
    north, east = ekf.distance_ne(52.807, -4.1222, 52.8071, -4.1222)
    assert north == pytest.approx(1000 * ekf.LATLON_TO_M) and east == 0.0
    north, east = ekf.distance_ne(0.0, 10.0, 0.0, 10.0001)
    assert east == pytest.approx(1000 * ekf.LATLON_TO_M) and north == 0.0
    _, east = ekf.distance_ne(59.9999, 0.0, 60.0001, 0.0001)  # mean latitude 60 deg
    assert east == pytest.approx(500 * ekf.LATLON_TO_M, rel=1e-6)
    _, east = ekf.distance_ne(0.0, 179.9999, 0.0, -179.9999)  # across the antimeridian
    assert east == pytest.approx(2000 * ekf.LATLON_TO_M, rel=1e-6)
    assert ekf.LATLON_TO_M == pytest.approx(6378100 * math.pi / 180 * 1e-7)


@pytest.mark.parametrize(('parameters', 'generation', 'source_set', 'expected'), [
    ({'EK3_SRC1_POSZ': 3}, 3, 0, ekf.HeightSource.GNSS),
    ({'EK3_SRC1_POSZ': 1}, 3, 0, ekf.HeightSource.BARO),
    ({'EK3_SRC1_POSZ': 1, 'EK3_SRC2_POSZ': 3}, 3, 1, ekf.HeightSource.GNSS),
    ({'EK3_ALT_SOURCE': 2}, 3, 0, ekf.HeightSource.GNSS),  # EKF3 before the source sets
    ({'EK2_ALT_SOURCE': 2}, 2, 0, ekf.HeightSource.GNSS),
    ({'EK2_ALT_SOURCE': 0}, 2, 0, ekf.HeightSource.BARO),
    ({'EK3_SRC1_POSZ': 9}, 3, 0, ekf.HeightSource.UNKNOWN),
    ({}, 3, 0, ekf.HeightSource.UNKNOWN),
])
def test_the_height_source_decides_the_vertical_axis(
        parameters: dict[str, float], generation: int, source_set: int,
        expected: ekf.HeightSource) -> None:
    assert ekf.height_source(parameters, generation, source_set)[2] is expected


@pytest.mark.parametrize(('subsystem', 'code', 'names', 'safety'), [
    (17, 1, ('FAILSAFE_EKFINAV', 'FAILSAFE_OCCURRED'), True),
    (17, 0, ('FAILSAFE_EKFINAV', 'FAILSAFE_RESOLVED'), False),
    (16, 2, ('EKFCHECK', 'EKFCHECK_BAD_VARIANCE'), True),
    (16, 0, ('EKFCHECK', 'EKFCHECK_VARIANCE_CLEARED'), False),
    (11, 2, ('GPS', 'GPS_GLITCH'), True),
    (6, 1, ('FAILSAFE_BATT', 'FAILSAFE_OCCURRED'), False),  # listed, not credited
    (12, 1, ('CRASH_CHECK', 'CRASH_CHECK_CRASH'), False),
    (3, 4, ('COMPASS', 'UNHEALTHY'), False),
    (24, 2, ('EKF_PRIMARY', 'core 2'), False),
    (31, 1, ('FAILSAFE_DEADRECKON', 'FAILSAFE_OCCURRED'), True),
])
def test_err_is_decoded_by_ardupilots_own_enums(subsystem: int, code: int,
                                                names: tuple[str, str], safety: bool) -> None:
    sub, name, is_safety = error_name(subsystem, code)
    assert (sub, name) == names and is_safety is safety


def test_the_limits_are_the_logs_else_ardupilots_defaults() -> None:
    limits = ardupilot_limits({'FS_EKF_THRESH': 0.6})
    assert limits.values['FS_EKF_THRESH'] == 0.6 and limits.values['FS_EKF_ACTION'] == 1.0
    lines = limits.lines()
    assert lines[0].startswith('FS_EKF_THRESH 0.6 (log)')
    assert lines[1].startswith('FS_EKF_ACTION 1 (not in this log: ArduPilot default)')
    with pytest.raises(ValueError, match='FS_EKF_THRESH'):
        ardupilot_limits({'FS_EKF_THRESH': math.nan})


# --- the framing walk ---

def fmt_message(kind: int, length: int, name: bytes, fmt: bytes, columns: bytes) -> bytes:
    """One DataFlash FMT message (89 bytes)."""
    return (b'\xa3\x95\x80' + bytes([kind, length]) + name.ljust(4, b'\x00')
            + fmt.ljust(16, b'\x00') + columns.ljust(64, b'\x00'))


FMT_OF_FMT = fmt_message(0x80, 89, b'FMT', b'BBnNZ', b'Type,Length,Name,Format,Columns')
TEST_FMT = fmt_message(0x81, 7, b'TST', b'I', b'V')


def _test_message(value: int) -> bytes:
    return b'\xa3\x95\x81' + value.to_bytes(4, 'little')


def test_an_intact_log_has_no_damage() -> None:
    data = FMT_OF_FMT + TEST_FMT + b''.join(_test_message(i) for i in range(5))
    good, damage = scan(data)
    assert good == [(0, len(data))] and not damage.damaged and damage.describe(None) == ''


@pytest.mark.parametrize(('tail', 'kind'), [
    (b'\xff' * 600, 'padding (0xff)'),
    (b'\x00' * 40, 'padding (0x00)'),
    (b'\xa3\x95\x81\x01', 'a message cut short'),
    (b'\x13\x37' * 50 + b'\xa3\x95\x81', 'bytes that are not DataFlash messages'),
])
def test_a_damaged_tail_is_cut_off_and_said_in_one_line(tail: bytes, kind: str) -> None:
    head = FMT_OF_FMT + TEST_FMT + b''.join(_test_message(i) for i in range(5))
    good, damage = scan(head + tail)
    assert good == [(0, len(head))]
    assert damage.tail and damage.bad == ((len(head), len(tail)),) and damage.tail_kind == kind
    line = damage.describe(1_500_000)
    assert line == (f'the log ends in {kind} from byte {len(head)} of {len(head) + len(tail)} '
                    f'({len(tail)} bytes); imported up to t = 1.500 s since boot')


def test_damage_inside_the_log_is_skipped_to_the_next_two_intact_messages() -> None:
    head = FMT_OF_FMT + TEST_FMT + _test_message(1)
    # Garbage holding a lone header (not followed by a second message): not a resync point.
    garbage = b'\x00\x01\xa3\x95\x81\x00\x00\x00\x00\x07\x07'
    rest = _test_message(2) + _test_message(3)
    good, damage = scan(head + garbage + rest)
    assert damage.bad == ((len(head), len(garbage)),) and not damage.tail
    assert good == [(0, len(head)), (len(head) + len(garbage), len(rest))]
    assert damage.describe(None).startswith('1 damaged region (11 bytes, the first at byte ')
