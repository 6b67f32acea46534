"""Every PX4 generation: where orientation uncertainty lives, invalid beliefs, the real logs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from test_ulog_import import (
    ATTITUDE_FIELDS,
    DEG,
    gps,
    GPS_FIELDS,
    local_position,
    LOCAL_POSITION_FIELDS,
    px4_q_from_euler,
    read_bag,
    REALDATA,
    run,
    write,
)

from ghost.replay import main as replay_main
from ghost_core.assessment import assess_belief_sample
from ghost_core.geometry import Matrix3
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.samples import BeliefSample
from ghost_px4 import convert as px4

KNOWN, UNKNOWN = SelfAssessmentLevel.KNOWN, SelfAssessmentLevel.UNKNOWN
#: NED -> ENU of a diagonal: x and y swap.
EAST = px4_q_from_euler(0.0, 0.0, 90 * DEG)


def _diagonal(m: Matrix3) -> list[float]:
    return [m[0], m[4], m[8]]


# --- the conversions, against hand-computed cases ---

def test_rotation_error_states_are_ned_variances() -> None:
    """PX4 1.15+: covariances[0..2] are variances about N, E, D: the diagonal as it is."""
    cov = px4.rotation_error_covariance_ned((1e-4, 2e-4, 3e-4))
    assert cov == (1e-4, 0.0, 0.0, 0.0, 2e-4, 0.0, 0.0, 0.0, 3e-4)
    assert px4.rotation_error_covariance_ned((0.0, 0.0, 0.0)) is None
    with pytest.raises(ValueError):
        px4.rotation_error_covariance_ned((1e-4, math.nan, 0.0))
    with pytest.raises(ValueError):
        px4.rotation_error_covariance_ned((1e-4, -1e-6, 0.0))


def test_tilt_and_heading_variance_split_the_tilt_evenly() -> None:
    """tilt_var = var N + var E, heading_var = var D: diag(tilt/2, tilt/2, heading)."""
    assert _diagonal(px4.tilt_heading_covariance_ned(4e-4, 1e-2)) == pytest.approx(  # type: ignore[arg-type]
        [2e-4, 2e-4, 1e-2])
    assert px4.tilt_heading_covariance_ned(0.0, 0.0) is None
    with pytest.raises(ValueError):
        px4.tilt_heading_covariance_ned(math.inf, 1e-2)


@pytest.mark.parametrize(('euler', 'ned'), [
    ((0.0, 0.0, 0.0), [1e-4, 2e-4, 3e-4]),      # facing north: body x, y, z = N, E, D
    ((0.0, 0.0, 90.0), [2e-4, 1e-4, 3e-4]),     # facing east: body x = E, body y = S
    ((90.0, 0.0, 0.0), [1e-4, 3e-4, 2e-4]),     # rolled right 90: body y = D, body z = W
    ((0.0, 0.0, 180.0), [1e-4, 2e-4, 3e-4]),    # facing south: N and E keep their variances
])
def test_body_axis_variances_about_the_world(euler: tuple[float, float, float],
                                             ned: list[float]) -> None:
    """vehicle_odometry.orientation_variance (body FRD) rotated into NED: R diag Rᵀ."""
    q = px4_q_from_euler(*(angle * DEG for angle in euler))
    cov = px4.body_rotation_covariance_ned(q, (1e-4, 2e-4, 3e-4))
    assert cov is not None
    assert _diagonal(cov) == pytest.approx(ned, abs=1e-12)
    assert sum(_diagonal(cov)) == pytest.approx(6e-4)  # a rotation keeps the trace
    back = px4.ned_covariance_to_body_diagonal(q, cov)
    assert list(back) == pytest.approx([1e-4, 2e-4, 3e-4], abs=1e-12)


def test_a_block_px4_flags_invalid_is_unbounded_and_nothing_else_changes() -> None:
    sample = px4.Px4Odometry(
        position_ned=(1.0, 2.0, -3.0), q_wxyz=EAST, velocity=(0.0, 5.0, 0.0),
        velocity_frame=px4.Px4Frame.NED,
        pose_covariance=px4.pose_covariance(px4.horizontal_vertical_covariance(0.4, 0.2),
                                            px4.rotation_error_covariance_ned((1e-4,) * 3)),
        velocity_covariance=px4.horizontal_vertical_covariance(0.2, 0.1))
    valid = px4.odometry_to_ros(sample)
    no_position = px4.odometry_to_ros(
        px4.Px4Odometry(**{**_fields(sample), 'position_valid': False}))
    no_velocity = px4.odometry_to_ros(
        px4.Px4Odometry(**{**_fields(sample), 'velocity_valid': False}))
    pose = no_position.pose_covariance
    assert [pose[k] for k in (0, 7, 14)] == [math.inf] * 3
    assert all(pose[6 * r + c] == 0.0 for r in range(3) for c in range(3) if r != c)
    assert pose[21:] == valid.pose_covariance[21:]
    assert no_position.position == valid.position
    assert no_position.twist_covariance == valid.twist_covariance
    twist = no_velocity.twist_covariance
    assert [twist[k] for k in (0, 7, 14)] == [math.inf] * 3
    assert no_velocity.pose_covariance == valid.pose_covariance


def _fields(sample: px4.Px4Odometry) -> dict[str, object]:
    return {name: getattr(sample, name) for name in sample.__slots__}  # type: ignore[attr-defined]


def test_an_invalid_belief_is_judged_unknown_with_px4s_reason() -> None:
    """The self-assessor reads +inf on a diagonal as the estimator's own 'invalid'."""
    sample = px4.Px4Odometry(
        position_ned=(1.0, 2.0, -3.0), q_wxyz=EAST, velocity=(0.0, 5.0, 0.0),
        velocity_frame=px4.Px4Frame.NED,
        pose_covariance=px4.pose_covariance(px4.horizontal_vertical_covariance(0.01, 0.01),
                                            px4.rotation_error_covariance_ned((1e-6,) * 3)),
        velocity_covariance=px4.horizontal_vertical_covariance(0.01, 0.01),
        position_valid=False, velocity_valid=False)
    ros = px4.odometry_to_ros(sample)
    belief = BeliefSample(1, 'odom', ros.position, (0.0, 0.0, 0.0), ros.pose_covariance,
                          ros.twist_covariance, ros.orientation_xyzw)
    raw = assess_belief_sample(belief)
    assert raw.overall_level == UNKNOWN
    assert raw.position.reason == 'estimator_position_invalid'
    assert raw.velocity.reason == 'estimator_velocity_invalid'
    assert raw.orientation.level == KNOWN  # the attitude stays judged on its own


# --- the generations, as synthetic logs ---

STATES24 = [('uint64_t', 'timestamp'), ('uint64_t', 'timestamp_sample'), ('float[24]', 'states'),
            ('uint8_t', 'n_states'), ('float[24]', 'covariances')]
STATES25 = [('uint64_t', 'timestamp'), ('uint64_t', 'timestamp_sample'), ('float[25]', 'states'),
            ('uint8_t', 'n_states'), ('float[24]', 'covariances')]
SELECTOR = [('uint64_t', 'timestamp'), ('uint8_t', 'primary_instance')]
LOCAL_TILT = [*LOCAL_POSITION_FIELDS, ('float', 'tilt_var'), ('float', 'heading_var')]


def _log(extra: dict[str, tuple[list[tuple[str, str]], list[dict[str, object]]]],
         version: tuple[int, int, int] | None, local_fields: list[tuple[str, str]] | None = None,
         **local: object) -> bytes:
    """Two seconds facing east: local position 10 Hz, attitude 50 Hz, GPS 5 Hz, and ``extra``."""
    from test_ulog_import import ulog_bytes

    t0 = 2_000_000
    return ulog_bytes({
        'vehicle_local_position': (local_fields or LOCAL_POSITION_FIELDS, [
            local_position(t0 + k * 100_000, **local) for k in range(20)]),
        'vehicle_attitude': (ATTITUDE_FIELDS, [
            dict(timestamp=t0 - 10_000 + k * 20_000, q=EAST) for k in range(100)]),
        'vehicle_gps_position': (GPS_FIELDS, [gps(t0 + 50_000 + k * 200_000)
                                              for k in range(10)]),
        **extra}, {'EKF2_HGT_MODE': 0, 'EKF2_GPS_DELAY': 110.0}, version=version)


def _states(fields: list[tuple[str, str]], n_states: int, covariances: list[float],
            instance_scale: float = 1.0) -> list[dict[str, object]]:
    size = 25 if fields is STATES25 else 24
    return [dict(timestamp=1_900_000 + k * 1_000_000, timestamp_sample=1_900_000 + k * 1_000_000,
                 states=[0.0] * size, n_states=n_states,
                 covariances=[c * instance_scale for c in covariances] + [0.0] * (
                     24 - len(covariances))) for k in range(3)]


def _imported(tmp_path: Path, data: bytes) -> tuple[str, list[float]]:
    bag = tmp_path / 'bag'
    code, out, err = run([str(write(tmp_path, data)), '--output', str(bag)])
    assert code == 0, err
    belief = read_bag(bag)['/state/nav'][5][1]
    cov = belief['pose']['covariance']
    return out, [cov[21], cov[28], cov[35]]


def test_v1_15_rotation_error_states(tmp_path: Path) -> None:
    """PX4 1.15+: estimator_states.covariances[0..2] about NED, swapped into ENU."""
    data = _log({'estimator_states': (STATES24, _states(STATES24, 24, [1e-4, 2e-4, 3e-4, 0.5]))},
                (1, 15, 0))
    out, enu = _imported(tmp_path, data)
    assert 'orientation uncertainty from estimator_states.covariances[0..2] (rotation error' in out
    assert enu == pytest.approx([2e-4, 1e-4, 3e-4], rel=1e-5)


def test_no_version_and_25_states_is_the_rotation_error_layout(tmp_path: Path) -> None:
    data = _log({'estimator_states': (STATES25, _states(STATES25, 25, [1e-4, 2e-4, 3e-4, 0.5]))},
                None)
    out, enu = _imported(tmp_path, data)
    assert 'rotation error, PX4 1.15+' in out
    assert enu == pytest.approx([2e-4, 1e-4, 3e-4], rel=1e-5)


def test_v1_14_quaternion_states(tmp_path: Path) -> None:
    """PX4 1.12-1.14: covariances[0..3] are quaternion variances (attitude_covariance_ned)."""
    variances = [1e-6, 1e-6, 1e-6, 1e-6]
    data = _log({'estimator_states': (STATES24, _states(STATES24, 24, variances))}, (1, 14, 0))
    out, enu = _imported(tmp_path, data)
    assert 'estimator_states.covariances[0..3] (quaternion' in out
    expected = px4.attitude_covariance_ned(EAST, variances)
    assert expected is not None
    assert enu == pytest.approx([expected[4], expected[0], expected[8]], rel=1e-4)


def test_the_primary_ekf_instance_is_used(tmp_path: Path) -> None:
    """Three EKF2 instances; estimator_selector_status says instance 1 is primary."""
    covariances = [1e-4, 2e-4, 3e-4]
    data = _log({
        'estimator_states': (STATES24, _states(STATES24, 24, covariances, 1.0)),
        'estimator_states#1': (STATES24, _states(STATES24, 24, covariances, 10.0)),
        'estimator_states#2': (STATES24, _states(STATES24, 24, covariances, 100.0)),
        'estimator_selector_status': (SELECTOR, [dict(timestamp=1_500_000, primary_instance=1)]),
    }, (1, 16, 0))
    _, enu = _imported(tmp_path, data)
    assert enu == pytest.approx([2e-3, 1e-3, 3e-3], rel=1e-5)


def test_tilt_and_heading_variance_win(tmp_path: Path) -> None:
    """PX4 1.15+ logs tilt_var/heading_var with each local-position sample: used first."""
    data = _log({'estimator_states': (STATES24, _states(STATES24, 24, [1.0, 1.0, 1.0]))},
                (1, 16, 0), LOCAL_TILT, tilt_var=4e-4, heading_var=1e-2)
    out, enu = _imported(tmp_path, data)
    assert 'orientation uncertainty from vehicle_local_position.tilt_var/heading_var: 20' in out
    assert enu == pytest.approx([2e-4, 2e-4, 1e-2], rel=1e-5)


def test_no_source_leaves_the_block_unknown_and_says_why(tmp_path: Path) -> None:
    data = _log({}, (1, 14, 0))
    bag = tmp_path / 'bag'
    code, out, err = run([str(write(tmp_path, data)), '--output', str(bag)])
    assert code == 0
    assert '20 of the 20 beliefs written have no orientation uncertainty' in err
    assert 'no orientation uncertainty is logged' in err
    cov = read_bag(bag)['/state/nav'][0][1]['pose']['covariance']
    assert [cov[21], cov[28], cov[35]] == [0.0, 0.0, 0.0]


# --- the real logs of every generation ---

needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(),
                                    reason=f'{REALDATA} (the shared real logs) is missing')


@needs_realdata
@pytest.mark.parametrize(('log', 'source', 'version'), [
    ('14_19_29', 'estimator_status.covariances[0..3]', 'v1.7.3'),
    ('esc_status_log', 'estimator_status.covariances[0..3]', 'v1.9.0'),
    ('log_123_2024-3-1-14-47-02', 'estimator_states.covariances[0..3] (quaternion', 'v1.14.0'),
    ('quadrotor_local', 'vehicle_local_position.tilt_var/heading_var', 'v1.16.1-rc'),
])
def test_every_real_log_imports_with_its_own_orientation_source(
        tmp_path: Path, log: str, source: str, version: str) -> None:
    bag = tmp_path / 'bag'
    code, out, err = run([str(REALDATA / f'{log}.ulg'), '--output', str(bag)])
    assert code == 0, err
    assert f'PX4 {version}' in out.splitlines()[0]
    assert f'orientation uncertainty from {source}' in out
    assert 'beliefs without orientation uncertainty (orientation block all zeros): 0' in out
    assert 'COM_POS_FS_EPH' in out and "Ghost accuracy profile 'gnss'" in out


def _judgement(tmp_path: Path, log: str) -> str:
    import contextlib
    import io

    bag, ghost = tmp_path / 'in', tmp_path / 'ghost'
    code, _, err = run([str(REALDATA / f'{log}.ulg'), '--output', str(bag)])
    assert code == 0, err
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert replay_main([str(bag), '--output', str(ghost)]) == 0
    return out.getvalue()


@needs_realdata
def test_the_flight_without_a_valid_position_imports_and_never_proceeds(tmp_path: Path) -> None:
    """quadrotor_local (PX4 1.16, no GNSS fix): every belief judged, ABSTAIN on every cycle."""
    out = _judgement(tmp_path, 'quadrotor_local')
    assert 'judgement: 925 cycles over 92.4 s: ABSTAIN_UNCERTAIN 100.0 %' in out


@needs_realdata
@pytest.mark.parametrize('log', ['esc_status_log', 'log_123_2024-3-1-14-47-02'])
def test_healthy_real_flights_proceed(tmp_path: Path, log: str) -> None:
    """The FMUv3 (v1.9) and CubeOrange (v1.14) flights: >= 95 % PROCEED, no chatter."""
    out = _judgement(tmp_path, log)
    line = next(x for x in out.splitlines() if x.startswith('judgement:') and 'PROCEED' in x)
    proceed = float(line.split('PROCEED ')[1].split(' %')[0])
    assert proceed >= 95.0, line
    # At most 2 decision changes a minute (the summary prints a rate only from a minute on).
    seconds = float(line.split(' cycles over ')[1].split(' s:')[0])
    changes = next(x for x in out.splitlines() if 'level changes' in x)
    decision_changes = int(changes.split('decision ')[1].split(' ')[0])
    assert decision_changes * 60.0 / seconds <= 2.0, changes


def test_a_corrupt_px4_limit_is_one_line_not_a_failure(tmp_path: Path) -> None:
    """A log stating COM_POS_FS_EPH as NaN imports; the summary says that limit is unreadable."""
    from test_ulog_import import flight

    data = flight(params={'EKF2_HGT_MODE': 0, 'EKF2_GPS_DELAY': 110.0,
                          'COM_POS_FS_EPH': math.nan})
    code, out, err = run([str(write(tmp_path, data)), '--output', str(tmp_path / 'bag')])
    assert code == 0, err
    assert 'not shown: parameter COM_POS_FS_EPH: nan is not a finite number' in out
    assert 'Traceback' not in err
