"""px4_bridge: PX4's uXRCE-DDS messages in, Ghost's state/nav and observations out.

The pure rules (ghost_px4.live) are tested directly; the node over real DDS, fed by a
test publisher with px4_msgs types and PX4's QoS (px4_feed.py), against hand-computed
NED -> ENU cases.
"""

import json
import math
from pathlib import Path
import sys

import pytest

from ghost.bringup import closed_loop_graph, expected_subscribers, GraphOptions, Source
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.errors import Px4SampleRejected

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[1] / 'config'
BRIDGE = HERE.parents[1] / 'install' / 'ghost_px4' / 'lib' / 'ghost_px4' / 'px4_bridge'
GHOST_RUN = [sys.executable, '-c',
             'import sys; from ghost.run import main; sys.exit(main())']
FEED = HERE / 'px4_feed.py'
NAN = float('nan')
S45 = math.sqrt(0.5)
ORIGIN = px4.GeoOrigin(47.0, 8.0, 400.0)
UNKNOWN_HEIGHT = px4.height_reference({})
GNSS_HEIGHT = px4.height_reference({'EKF2_HGT_REF': 1.0})


def _diag(cov36, offset):
    return [cov36[(offset + i) * 6 + offset + i] for i in range(3)]


INF = math.inf
S45X4 = (S45, 0.0, 0.0, S45)  # PX4 q [w, x, y, z]: yaw +90 degrees, facing east


def _block(cov36, offset):
    return [[cov36[(offset + i) * 6 + offset + j] for j in range(3)] for i in range(3)]


def _odometry(**overrides):
    fields = dict(position=(1.0, 2.0, 3.0), q=(1.0, 0.0, 0.0, 0.0), velocity=(1.0, 0.0, 0.0),
                  angular_velocity=(0.1, 0.2, 0.3), position_variance=(0.1, 0.2, 0.3),
                  orientation_variance=(0.01, 0.02, 0.03),
                  velocity_variance=(0.04, 0.05, 0.06), pose_frame=1, velocity_frame=1)
    fields.update(overrides)
    return live.vehicle_odometry_sample(**fields)


def _assert_invalid_block(cov36, offset):
    """+inf on the block's diagonal and no cross terms: what the self-assessor judges UNKNOWN."""
    assert _block(cov36, offset) == [[INF, 0.0, 0.0], [0.0, INF, 0.0], [0.0, 0.0, INF]]
    other = 3 - offset
    assert all(cov36[(offset + i) * 6 + other + j] == 0.0 for i in range(3) for j in range(3))


# --- pure rules: vehicle_odometry ---

def test_ned_position_becomes_enu_and_north_facing_is_ros_yaw_90() -> None:
    belief = _odometry()
    ros = belief.odometry
    assert ros.position == pytest.approx((2.0, 1.0, -3.0))
    assert ros.orientation_xyzw == pytest.approx((0.0, 0.0, S45, S45))
    # Facing north, flying north at 1 m/s: forward in the body.
    assert ros.linear_velocity == pytest.approx((1.0, 0.0, 0.0), abs=1e-12)
    assert ros.angular_velocity == pytest.approx((0.1, -0.2, -0.3))
    assert _diag(ros.pose_covariance, 0) == pytest.approx([0.2, 0.1, 0.3])
    # Facing north the body FRD axes are NED's: roll (north) is ENU y, pitch (east) ENU x.
    assert _diag(ros.pose_covariance, 3) == pytest.approx([0.02, 0.01, 0.03])
    # North variance 0.04 is forward, east 0.05 is (minus) left.
    assert _diag(ros.twist_covariance, 0) == pytest.approx([0.04, 0.05, 0.06])
    assert belief.orientation_source == live.ORIENTATION_FROM_ODOMETRY
    assert belief.invalid == ()


def test_east_facing_is_ros_yaw_0_and_body_velocity_is_only_flipped() -> None:
    ros = _odometry(q=S45X4, velocity=(2.0, 1.0, 0.5), velocity_frame=3).odometry
    assert ros.orientation_xyzw == pytest.approx((0.0, 0.0, 0.0, 1.0), abs=1e-12)
    assert ros.linear_velocity == pytest.approx((2.0, -1.0, -0.5))


def test_orientation_variance_is_about_the_body_axes_facing_east() -> None:
    """Body-axis variances (EKF2's getRotVarBody) facing east keep their diagonal in ENU.

    Facing east, body x (forward) is ENU x, body y (right) is south (ENU -y), body z (down)
    ENU -z.
    """
    ros = _odometry(q=S45X4, orientation_variance=(1e-4, 2e-4, 3e-4)).odometry
    assert _block(ros.pose_covariance, 3) == [
        pytest.approx(row, abs=1e-15) for row in ([1e-4, 0, 0], [0, 2e-4, 0], [0, 0, 3e-4])]


def test_orientation_variance_about_the_body_axes_facing_north_east() -> None:
    """Facing north-east, body-axis variances have a cross term in ENU; the trace is kept.

    Roll is about forward f (north-east, ENU (s, s)), pitch about right r (south-east, ENU
    (s, -s)): 1e-4 f fᵀ + 3e-4 r rᵀ.
    """
    yaw = math.radians(45.0)
    q = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    block = _block(_odometry(q=q, orientation_variance=(1e-4, 3e-4, 0.0)).odometry
                   .pose_covariance, 3)
    assert block == [pytest.approx(row, abs=1e-15) for row in (
        [2e-4, -1e-4, 0.0], [-1e-4, 2e-4, 0.0], [0.0, 0.0, 0.0])]


@pytest.mark.parametrize('variance', [(NAN, NAN, NAN), (0.01, -0.02, 0.03), (0.0, 0.0, 0.0)],
                         ids=['nan', 'negative', 'zeros'])
def test_unstated_orientation_variance_leaves_an_unknown_zero_block(variance) -> None:
    belief = _odometry(orientation_variance=variance)
    assert belief.orientation_source is None
    assert _block(belief.odometry.pose_covariance, 3) == [[0.0] * 3] * 3
    assert _diag(belief.odometry.pose_covariance, 0) == pytest.approx([0.2, 0.1, 0.3])
    assert belief.invalid == ()


@pytest.mark.parametrize('variance', [(NAN, 0.1, 0.1), (-1.0, 0.1, 0.1)],
                         ids=['nan', 'negative'])
def test_unstated_position_variance_marks_the_position_invalid(variance) -> None:
    """SPEC §5: kept (the position itself is PX4's), judged UNKNOWN, never dropped."""
    belief = _odometry(position_variance=variance)
    ros = belief.odometry
    assert ros.position == pytest.approx((2.0, 1.0, -3.0))
    _assert_invalid_block(ros.pose_covariance, 0)
    assert _diag(ros.pose_covariance, 3) == pytest.approx([0.02, 0.01, 0.03])
    assert _diag(ros.twist_covariance, 0) == pytest.approx([0.04, 0.05, 0.06])
    assert belief.invalid == ('position variance not finite (PX4: unknown)',)


@pytest.mark.parametrize('overrides', [
    {'velocity_variance': (NAN, 0.05, 0.06)}, {'velocity_variance': (0.04, -0.05, 0.06)},
    {'velocity': (NAN, 0.0, 0.0)}], ids=['nan variance', 'negative variance', 'nan velocity'])
def test_unstated_velocity_marks_the_velocity_invalid(overrides) -> None:
    belief = _odometry(**overrides)
    ros = belief.odometry
    assert ros.linear_velocity == (0.0, 0.0, 0.0)  # the importer's: no velocity is stated
    assert _diag(ros.twist_covariance, 0) == [INF] * 3
    assert _diag(ros.pose_covariance, 0) == pytest.approx([0.2, 0.1, 0.3])
    assert belief.invalid == ('velocity or its variance not finite (PX4: unknown)',)


def test_px4_flags_of_the_same_cycle_mark_the_blocks_invalid() -> None:
    """PX4's flags of the same cycle, passed by the bridge, win over finite variances.

    They are vehicle_local_position's xy_valid/z_valid and v_xy_valid/v_z_valid.
    """
    belief = _odometry(position_valid=False)
    _assert_invalid_block(belief.odometry.pose_covariance, 0)
    assert _diag(belief.odometry.twist_covariance, 0) == pytest.approx([0.04, 0.05, 0.06])
    assert belief.invalid == (live.POSITION_FLAGGED_INVALID,)
    belief = _odometry(velocity_valid=False, position_variance=(NAN, 0.1, 0.1))
    assert _diag(belief.odometry.twist_covariance, 0) == [INF] * 3
    assert belief.odometry.linear_velocity == pytest.approx((1.0, 0.0, 0.0), abs=1e-12)
    assert belief.invalid == ('position variance not finite (PX4: unknown)',
                              live.VELOCITY_FLAGGED_INVALID)
    assert belief.orientation_source == live.ORIENTATION_FROM_ODOMETRY


@pytest.mark.parametrize('overrides, reason', [
    ({'position': (NAN, 0.0, 0.0)}, 'position not finite (NaN: PX4 states no position)'),
    ({'q': (NAN, 0.0, 0.0, 0.0)}, 'attitude quaternion not finite'),
    ({'q': (0.0, 0.0, 0.0, 0.0)}, 'frame not convertible'),
    ({'pose_frame': 2}, 'frame not convertible'),
    ({'velocity_frame': 0}, 'frame not convertible'),
])
def test_odometry_without_a_belief_is_rejected(overrides, reason) -> None:
    with pytest.raises(Px4SampleRejected) as caught:
        _odometry(**overrides)
    assert str(caught.value).startswith(reason)


def test_validity_flags_apply_within_the_age_either_side() -> None:
    flags = live.Validity(1_000_000_000, False, True)
    assert flags.at(1_000_000_000, 100_000_000) == (False, True)
    assert flags.at(900_000_000, 100_000_000) == (False, True)   # the odometry came first
    assert flags.at(1_100_000_000, 100_000_000) == (False, True)
    assert flags.at(1_100_000_001, 100_000_000) == (True, True)  # another cycle's
    assert flags.at(899_999_999, 100_000_000) == (True, True)


# --- pure rules: vehicle_local_position ---

def _local(**overrides):
    fields = dict(x=1.0, y=2.0, z=3.0, vx=0.0, vy=2.0, vz=0.0, eph=1.0, epv=0.5, evh=0.2,
                  evv=0.1, xy_valid=True, z_valid=True, v_xy_valid=True, v_z_valid=True,
                  stamp_ns=1_000_000_000,
                  attitude=live.Attitude(950_000_000, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0),
                                             (0.01, 0.01, 0.04)),
                  max_attitude_age_ns=100_000_000)
    fields.update(overrides)
    return live.local_position_odometry(**fields)


def test_local_position_uses_eph_epv_and_the_odometry_attitude() -> None:
    belief = _local()
    ros = belief.odometry
    assert ros.position == pytest.approx((2.0, 1.0, -3.0))
    # Facing north, flying east at 2 m/s: to the right, i.e. -y in FLU.
    assert ros.linear_velocity == pytest.approx((0.0, -2.0, 0.0), abs=1e-12)
    assert _diag(ros.pose_covariance, 0) == pytest.approx([0.5, 0.5, 0.25])
    assert _diag(ros.twist_covariance, 0) == pytest.approx([0.02, 0.02, 0.01])
    assert _diag(ros.pose_covariance, 3) == pytest.approx([0.01, 0.01, 0.04])
    assert belief.orientation_source == live.ORIENTATION_FROM_ODOMETRY
    assert belief.invalid == ()


def test_local_position_orientation_from_tilt_and_heading_first() -> None:
    """PX4 1.15+: tilt_var = var(rot N) + var(rot E), split evenly; heading_var about D."""
    belief = _local(tilt_var=0.02, heading_var=0.05)
    assert _block(belief.odometry.pose_covariance, 3) == [
        pytest.approx(row) for row in ([0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.05])]
    assert belief.orientation_source == live.ORIENTATION_FROM_TILT_HEADING


@pytest.mark.parametrize('tilt, heading', [(0.0, 0.0), (NAN, 0.05), (-0.02, 0.05),
                                           (None, None)],
                         ids=['zeros', 'nan', 'negative', 'not in px4_msgs'])
def test_unstated_tilt_and_heading_fall_back_to_the_odometry_variance(tilt, heading) -> None:
    belief = _local(tilt_var=tilt, heading_var=heading)
    assert _diag(belief.odometry.pose_covariance, 3) == pytest.approx([0.01, 0.01, 0.04])
    assert belief.orientation_source == live.ORIENTATION_FROM_ODOMETRY


def test_local_position_odometry_variance_is_about_the_body_axes() -> None:
    attitude = live.Attitude(950_000_000, S45X4, (0.0, 0.0, 0.0), (1e-4, 2e-4, 3e-4))
    block = _block(_local(attitude=attitude).odometry.pose_covariance, 3)
    assert block == [pytest.approx(row, abs=1e-15)
                     for row in ([1e-4, 0, 0], [0, 2e-4, 0], [0, 0, 3e-4])]


@pytest.mark.parametrize('variance', [None, (NAN, NAN, NAN)], ids=['none', 'nan'])
def test_local_position_without_any_orientation_uncertainty_is_unknown(variance) -> None:
    attitude = live.Attitude(950_000_000, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), variance)
    belief = _local(attitude=attitude, tilt_var=0.0, heading_var=0.0)
    assert belief.orientation_source is None
    assert _block(belief.odometry.pose_covariance, 3) == [[0.0] * 3] * 3


@pytest.mark.parametrize('overrides, reason', [
    ({'xy_valid': False}, live.POSITION_FLAGGED_INVALID),
    ({'z_valid': False}, live.POSITION_FLAGGED_INVALID),
    ({'eph': NAN}, 'position accuracy (eph/epv) not finite or negative'),
    ({'epv': -0.5}, 'position accuracy (eph/epv) not finite or negative'),
    ({'xy_valid': False, 'eph': NAN}, live.POSITION_FLAGGED_INVALID),  # PX4's flag first
])
def test_local_position_flagged_or_without_accuracy_is_kept_marked_invalid(overrides,
                                                                          reason) -> None:
    """SPEC §5: a belief PX4 flags invalid is published and judged UNKNOWN, never dropped."""
    belief = _local(**overrides)
    ros = belief.odometry
    assert ros.position == pytest.approx((2.0, 1.0, -3.0))
    _assert_invalid_block(ros.pose_covariance, 0)
    assert _diag(ros.twist_covariance, 0) == pytest.approx([0.02, 0.02, 0.01])
    assert _diag(ros.pose_covariance, 3) == pytest.approx([0.01, 0.01, 0.04])
    assert belief.invalid == (reason,)


@pytest.mark.parametrize('overrides, velocity, reason', [
    ({'v_xy_valid': False}, (0.0, -2.0, 0.0), live.VELOCITY_FLAGGED_INVALID),
    ({'v_z_valid': False}, (0.0, -2.0, 0.0), live.VELOCITY_FLAGGED_INVALID),
    ({'vx': NAN}, (0.0, 0.0, 0.0), 'velocity or its accuracy (evh/evv) not finite or negative'),
    ({'evh': -0.2}, (0.0, 0.0, 0.0),
     'velocity or its accuracy (evh/evv) not finite or negative'),
])
def test_local_position_velocity_flagged_or_not_stated_is_marked_invalid(overrides, velocity,
                                                                         reason) -> None:
    belief = _local(**overrides)
    assert belief.odometry.linear_velocity == pytest.approx(velocity, abs=1e-12)
    assert _diag(belief.odometry.twist_covariance, 0) == [INF] * 3
    assert _diag(belief.odometry.pose_covariance, 0) == pytest.approx([0.5, 0.5, 0.25])
    assert belief.invalid == (reason,)


@pytest.mark.parametrize('overrides, reason', [
    ({'x': NAN}, 'position not finite (NaN: PX4 states no position)'),
    ({'attitude': None}, 'no vehicle_odometry attitude within 100 ms before'),
    ({'stamp_ns': 1_100_000_000}, 'no vehicle_odometry attitude'),  # 150 ms old
    ({'stamp_ns': 900_000_000}, 'no vehicle_odometry attitude'),    # after the sample
])
def test_local_position_without_a_belief_is_rejected(overrides, reason) -> None:
    with pytest.raises(Px4SampleRejected) as caught:
        _local(**overrides)
    assert str(caught.value).startswith(reason)


def test_stamps_are_px4_boot_time_in_ns() -> None:
    assert live.belief_time_ns(2_000_000, 1_999_000) == 1_999_000_000
    assert live.belief_time_ns(2_000_000, 0) == 2_000_000_000
    assert live.fix_sample_time_ns(2_000_000, 1_900_000) == 1_900_000_000
    assert live.fix_sample_time_ns(2_000_000, 0) == 2_000_000_000


def _fix(**overrides):
    lat, lon = px4.reproject(ORIGIN, 10.0, 20.0)
    fields = dict(fix_type=3, lat_deg=lat, lon_deg=lon, alt_m=405.0, eph=2.0, epv=3.0,
                  sample_ns=1_500_000_000, delay_ns=110_000_000, origin=(ORIGIN, True),
                  height=UNKNOWN_HEIGHT)
    fields.update(overrides)
    return live.fix_observation(**fields)


def test_fix_is_projected_into_the_ekf_frame_and_stamped_at_measurement_time() -> None:
    fix = _fix()
    assert fix.stamp_ns == 1_390_000_000
    assert fix.position == pytest.approx((20.0, 10.0, 5.0), abs=1e-6)
    assert _diag(fix.covariance, 0) == pytest.approx([2.0, 2.0, px4.UNMEASURED_VARIANCE_M2])
    assert _diag(fix.covariance, 3) == [px4.UNMEASURED_VARIANCE_RAD2] * 3


def test_fix_vertical_is_measured_only_with_gnss_height_and_z_global() -> None:
    assert _diag(_fix(height=GNSS_HEIGHT).covariance, 0)[2] == pytest.approx(9.0)
    no_z = _fix(height=GNSS_HEIGHT, origin=(ORIGIN, False))
    assert _diag(no_z.covariance, 0)[2] == px4.UNMEASURED_VARIANCE_M2


@pytest.mark.parametrize('overrides, reason', [
    ({'fix_type': 2}, 'no 3-D fix'),
    ({'eph': NAN}, 'eph/epv'),
    ({'lat_deg': NAN}, 'latitude'),
    ({'origin': None}, 'no EKF origin'),
    ({'sample_ns': 100_000_000}, 'before boot'),
])
def test_unusable_fix_is_rejected(overrides, reason) -> None:
    with pytest.raises(Px4SampleRejected, match=reason):
        _fix(**overrides)


def test_origin_needs_xy_global_and_a_finite_reference() -> None:
    assert live.origin_of(False, True, 47.0, 8.0, 400.0) is None
    assert live.origin_of(True, True, NAN, 8.0, 400.0) is None
    assert live.origin_of(True, False, 47.0, 8.0, 400.0) == (ORIGIN, False)


# --- the node over real DDS ---

def _us(seconds):
    return int(round(seconds * 1e6))


def _odom_msg(t, **overrides):
    fields = {'timestamp': _us(t) + 500, 'timestamp_sample': _us(t), 'pose_frame': 1,
              'velocity_frame': 1, 'position': [1.0, 2.0, 3.0], 'q': [1.0, 0.0, 0.0, 0.0],
              'velocity': [1.0, 0.0, 0.0], 'angular_velocity': [0.0, 0.0, 0.0],
              'position_variance': [0.1, 0.2, 0.3], 'orientation_variance': [0.01, 0.02, 0.03],
              'velocity_variance': [0.04, 0.05, 0.06]}
    fields.update(overrides)
    return {'topic': 'vehicle_odometry', 'fields': fields}


def _local_msg(t, xy_global=True, **overrides):
    fields = {'timestamp': _us(t), 'timestamp_sample': _us(t), 'xy_valid': True,
              'z_valid': True, 'v_xy_valid': True, 'v_z_valid': True, 'x': 1.0, 'y': 2.0,
              'z': 3.0, 'vx': 0.0, 'vy': 2.0, 'vz': 0.0, 'eph': 1.0, 'epv': 0.5, 'evh': 0.2,
              'evv': 0.1, 'xy_global': xy_global, 'z_global': True,
              'ref_lat': ORIGIN.lat_deg, 'ref_lon': ORIGIN.lon_deg, 'ref_alt': ORIGIN.alt_m}
    fields.update(overrides)
    return {'topic': 'vehicle_local_position', 'fields': fields}


def _gps_msg(t, fix_type=3, eph=2.0):
    lat, lon = px4.reproject(ORIGIN, 10.0, 20.0)
    return {'topic': 'vehicle_gps_position', 'fields': {
        'timestamp': _us(t), 'timestamp_sample': _us(t), 'latitude_deg': lat,
        'longitude_deg': lon, 'altitude_msl_m': 405.0, 'fix_type': fix_type, 'eph': eph,
        'epv': 3.0}}


def _run(tmp_path, processes, env, steps, *params):
    (tmp_path / 'steps.json').write_text(json.dumps(steps))
    argv = [str(BRIDGE), '--ros-args', *(a for p in params for a in ('-p', p)),
            '-p', 'graph_status:=true']  # the feed waits for the bridge's report
    bridge = processes.start(argv, env)
    feed = processes.start([sys.executable, str(FEED), str(tmp_path / 'steps.json')], env)
    out, err = feed.communicate(timeout=60)
    assert feed.returncode == 0, err
    assert bridge.poll() is None, bridge.stderr.read() if bridge.stderr else ''
    return json.loads(out.strip().splitlines()[-1])


def _by_stamp(messages):
    return {m['stamp_ns']: m for m in messages}


def test_bridge_converts_vehicle_odometry_and_gnss_over_dds(tmp_path, processes,
                                                            px4_env) -> None:
    steps = [
        _gps_msg(0.8),                               # no origin yet: dropped
        _local_msg(0.85, xy_global=False),           # EKF has no origin
        _gps_msg(0.9),                               # still none: dropped
        _local_msg(0.95),                            # origin set
        _odom_msg(1.0),                              # north-facing, NED case
        _odom_msg(1.1, q=[S45, 0.0, 0.0, S45], velocity=[2.0, 1.0, 0.5], velocity_frame=3),
        _odom_msg(1.2, position_variance=[NAN, 0.2, 0.3]),   # position invalid: kept
        _odom_msg(1.3, orientation_variance=[NAN, NAN, NAN]),  # orientation UNKNOWN
        _odom_msg(1.35, q=[NAN, 0.0, 0.0, 0.0]),     # "invalid" attitude: no belief, dropped
        _odom_msg(1.36, position=[NAN, NAN, NAN]),   # no position: dropped
        {'topic': 'vehicle_status', 'fields': {'timestamp': _us(1.4), 'arming_state': 2,
                                               'nav_state': 14}},
        _local_msg(1.41, xy_valid=False, v_z_valid=False),  # PX4 flags this cycle invalid
        _odom_msg(1.42),                             # the same cycle: marked invalid
        _gps_msg(1.5),                               # good fix
        _odom_msg(1.55),                             # 140 ms later: another cycle, valid
        _gps_msg(1.6, fix_type=2),                   # 2-D: dropped
        _gps_msg(1.7, eph=NAN),                      # dropped
    ]
    seen = _run(tmp_path, processes, px4_env, steps)
    nav = _by_stamp(seen['nav'])
    assert sorted(nav) == [1_000_000_000, 1_100_000_000, 1_200_000_000, 1_300_000_000,
                           1_420_000_000, 1_550_000_000]
    first = nav[1_000_000_000]
    assert (first['frame_id'], first['child_frame_id']) == ('odom', 'base_link')
    assert first['position'] == pytest.approx([2.0, 1.0, -3.0])
    assert first['orientation'] == pytest.approx([0.0, 0.0, S45, S45])
    assert first['linear'] == pytest.approx([1.0, 0.0, 0.0], abs=1e-6)
    assert _diag(first['pose_covariance'], 0) == pytest.approx([0.2, 0.1, 0.3])
    assert _diag(first['pose_covariance'], 3) == pytest.approx([0.02, 0.01, 0.03])
    assert _diag(first['twist_covariance'], 0) == pytest.approx([0.04, 0.05, 0.06])
    east = nav[1_100_000_000]
    assert east['orientation'] == pytest.approx([0.0, 0.0, 0.0, 1.0], abs=1e-6)
    assert east['linear'] == pytest.approx([2.0, -1.0, -0.5])
    # Body-axis variances facing east: roll about ENU x, pitch about -y (south), yaw about -z.
    assert _block(east['pose_covariance'], 3) == [
        pytest.approx(row, abs=1e-9) for row in ([0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.03])]
    invalid = nav[1_200_000_000]
    assert invalid['position'] == pytest.approx([2.0, 1.0, -3.0])
    assert _diag(invalid['pose_covariance'], 0) == [INF] * 3
    assert _diag(invalid['twist_covariance'], 0) == pytest.approx([0.04, 0.05, 0.06])
    unknown = nav[1_300_000_000]
    assert _diag(unknown['pose_covariance'], 3) == [0.0, 0.0, 0.0]
    assert _diag(unknown['pose_covariance'], 0) == pytest.approx([0.2, 0.1, 0.3])
    flagged = nav[1_420_000_000]
    assert _diag(flagged['pose_covariance'], 0) == [INF] * 3
    assert _diag(flagged['twist_covariance'], 0) == [INF] * 3
    assert flagged['position'] == pytest.approx([2.0, 1.0, -3.0])
    assert _diag(flagged['pose_covariance'], 3) == pytest.approx([0.02, 0.01, 0.03])
    later = nav[1_550_000_000]
    assert _diag(later['pose_covariance'], 0) == pytest.approx([0.2, 0.1, 0.3])
    assert _diag(later['twist_covariance'], 0) == pytest.approx([0.04, 0.05, 0.06])
    assert len(seen['obs']) == 1
    fix = seen['obs'][0]
    assert fix['stamp_ns'] == 1_500_000_000 - 110_000_000
    assert fix['frame_id'] == 'odom'
    assert fix['position'] == pytest.approx([20.0, 10.0, 5.0], abs=1e-3)
    assert _diag(fix['covariance'], 0) == pytest.approx([2.0, 2.0, px4.UNMEASURED_VARIANCE_M2])


def test_bridge_from_vehicle_local_position_over_dds(tmp_path, processes, px4_env) -> None:
    steps = [
        _odom_msg(0.98),                             # the attitude: facing north
        _local_msg(1.0),                             # tilt_var/heading_var 0: odometry's
        _local_msg(1.02, tilt_var=0.02, heading_var=0.05),
        _local_msg(1.05, xy_valid=False),            # position invalid: kept, marked
        _local_msg(1.06, x=NAN),                     # no position: dropped
        _local_msg(1.3),                             # attitude 320 ms old: dropped
        _gps_msg(1.5),
    ]
    seen = _run(tmp_path, processes, px4_env, steps, 'source:=vehicle_local_position',
                'gps_delay_ms:=50.0', 'ekf2_hgt_ref:=1')
    nav = _by_stamp(seen['nav'])
    assert sorted(nav) == [1_000_000_000, 1_020_000_000, 1_050_000_000]
    belief = nav[1_000_000_000]
    assert belief['position'] == pytest.approx([2.0, 1.0, -3.0])
    assert belief['linear'] == pytest.approx([0.0, -2.0, 0.0], abs=1e-6)
    assert _diag(belief['pose_covariance'], 0) == pytest.approx([0.5, 0.5, 0.25])
    assert _diag(belief['pose_covariance'], 3) == pytest.approx([0.02, 0.01, 0.03])
    tilt_heading = nav[1_020_000_000]
    assert _diag(tilt_heading['pose_covariance'], 3) == pytest.approx([0.01, 0.01, 0.05])
    invalid = nav[1_050_000_000]
    assert invalid['position'] == pytest.approx([2.0, 1.0, -3.0])
    assert _diag(invalid['pose_covariance'], 0) == [INF] * 3
    assert _diag(invalid['twist_covariance'], 0) == pytest.approx([0.02, 0.02, 0.01])
    assert [o['stamp_ns'] for o in seen['obs']] == [1_450_000_000]
    # EKF2_HGT_REF=1 (GNSS) and z_global: the vertical axis is compared (epv²).
    assert _diag(seen['obs'][0]['covariance'], 0) == pytest.approx([2.0, 2.0, 9.0])


def test_ghost_run_px4_records_and_verifies_a_px4_stream(tmp_path, processes, px4_env) -> None:
    """``ghost_run --px4``: px4_bridge in place of the scenario, until --timeout; it verifies.

    Every recorded output is re-derived exactly from the PX4 samples its source_samples names,
    and the statuses tell the ground, the air and the end of the mission apart.
    """
    steps = [_local_msg(0.95),
             {'topic': 'vehicle_status', 'fields': {'timestamp': _us(0.96), 'arming_state': 2,
                                                    'nav_state': 3}},
             {'topic': 'vehicle_land_detected', 'fields': {'timestamp': _us(0.97),
                                                           'landed': True}}]
    for i in range(30):
        t = 1.0 + 0.1 * i
        steps.append(_odom_msg(t))
        if i % 2 == 0:
            steps.append(_gps_msg(t + 0.05))
        if i == 5:
            steps.append({'topic': 'vehicle_land_detected',
                          'fields': {'timestamp': _us(t + 0.06), 'landed': False}})
        if i == 20:
            steps.append({'topic': 'mission_result', 'fields': {
                'timestamp': _us(t + 0.06), 'valid': True, 'finished': True, 'seq_total': 3}})
    (tmp_path / 'steps.json').write_text(json.dumps(steps))
    run_dir = tmp_path / 'run'
    run = processes.start([*GHOST_RUN, '--px4', '--timeout', '25', '--run-dir', str(run_dir)],
                          px4_env)
    # A live vehicle does not wait for Ghost; the test's feed does, for the whole graph (and
    # ghost_run's own /actuations reader), so every belief it publishes makes a cycle.
    counts = expected_subscribers(closed_loop_graph(CONFIG, GraphOptions(record=True,
        source=Source.PX4)))
    counts['/actuations'] += 1
    # The mission is the user's, outside the graph: the graph has no edge of it to wait for.
    assert '/ghost/mission/trajectory_setpoint' not in counts
    feed = processes.start([sys.executable, str(FEED), str(tmp_path / 'steps.json'), '--expect',
                            *[f'{topic.lstrip("/")}={n}' for topic, n in sorted(counts.items())]],
                           px4_env)
    feed_out, feed_err = feed.communicate(timeout=60)
    assert feed.returncode == 0, feed_err
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, f'{out}\n{err}'
    document = json.loads((run_dir / 'reports.json').read_text())
    assert document['baud']['holds'] and document['erur']['holds'], document
    # Every belief the bridge published was judged, decided and actuated.
    published = len(json.loads(feed_out.strip().splitlines()[-1])['nav'])
    assert published == 30
    assert f'ghost: {published}/{published} cycles actuated' in out
    from ghost_verify.verify import verify_all

    report = verify_all(run_dir / 'bag').replay.bridge  # type: ignore[union-attr]
    assert report is not None and report.holds and report.unmatched == 0, report.summary()
    counts = {stream.stream: stream.exact for stream in report.streams}
    assert counts['state/nav'] == 30 and counts['observations'] == 15, report.summary()
    assert report.summary().startswith(f'px4_bridge: {sum(counts.values())}/'
                                       f'{sum(counts.values())} outputs re-derived exactly')
    statuses = [(item['flight_status'], item['mission_status'])
                for item in _recorded(run_dir / 'bag', '/vehicle_status')]
    changes = [s for k, s in enumerate(statuses) if k == 0 or statuses[k - 1] != s]
    assert changes == [(2, 2), (3, 2), (3, 5)], statuses  # on the ground, in the air, holding


def _recorded(bag, topic):
    """The messages of `topic` in a recorded bag, as dicts of their fields."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    out = []
    for path in sorted(bag.glob('*.mcap')):
        with path.open('rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            for _, _, _, msg in reader.iter_decoded_messages(topics=[topic]):
                out.append({'flight_status': msg.flight_status,
                            'mission_status': msg.mission_status})
    return out
