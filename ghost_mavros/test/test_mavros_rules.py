"""mavros_bridge's rules: MAVROS messages in, Ghost's inputs and the samples they name out.

Pure: the rules (ghost_mavros.rules) and the bridge's state (ghost_mavros.bridge) on messages
built here with MAVROS's field names, against hand-computed cases.
"""

from pathlib import Path
import re
from types import SimpleNamespace as NS

import pytest

from ghost_core.levels import FlightStatus, MissionStatus
from ghost_core.vehicle import MAVROS_MODES
from ghost_mavros import bridge, rules
from ghost_px4 import convert as px4
from ghost_px4.bridge import Dropped

ORIGIN = px4.GeoOrigin(47.0, 8.0, 400.0)
STATE_MSG = Path(__file__).resolve().parents[3] / 'shared' / 'vendor' / 'mavros_msgs' / 'msg' \
    / 'State.msg'
NAN = float('nan')
ZERO36 = [0.0] * 36


def _header(ns):
    return NS(stamp=NS(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000), frame_id='map')


def _diag(cov36):
    return [cov36[i * 7] for i in range(6)]


def odom(ns, position=(1.0, 2.0, 3.0), pose_cov=ZERO36, twist_cov=ZERO36):
    v3 = lambda x, y, z: NS(x=x, y=y, z=z)  # noqa: E731
    return NS(header=_header(ns), child_frame_id='base_link',
              pose=NS(pose=NS(position=v3(*position), orientation=NS(x=0.0, y=0.0, z=0.6,
                                                                      w=0.8)),
                      covariance=list(pose_cov)),
              twist=NS(twist=NS(linear=v3(1.0, 0.0, 0.5), angular=v3(0.0, 0.0, 0.1)),
                       covariance=list(twist_cov)))


def navsat(ns, north=10.0, east=20.0, alt=405.0, status=0, cov_type=2,
           cov=(2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 9.0)):
    lat, lon = px4.reproject(ORIGIN, north, east)
    return NS(header=_header(ns), status=NS(status=status), latitude=lat, longitude=lon,
              altitude=alt, position_covariance=list(cov), position_covariance_type=cov_type)


def gpsraw(ns, north=10.0, east=20.0, alt_mm=405_000, fix_type=3, h_acc=2000, v_acc=3000,
           eph=65535, epv=65535):
    lat, lon = px4.reproject(ORIGIN, north, east)
    return NS(header=_header(ns), fix_type=fix_type, lat=round(lat * 1e7), lon=round(lon * 1e7),
              alt=alt_mm, h_acc=h_acc, v_acc=v_acc, eph=eph, epv=epv)


def config(fix_source='navsat', origin='47.0,8.0,400.0', gnss_height=False, autopilot='auto',
           uere=1.0, delay_ms=0.0):
    return bridge.MavrosConfig.from_parameters({
        'fix_source': fix_source, 'autopilot': autopilot, 'origin': origin,
        'gnss_height': gnss_height, 'gps_uere_m': uere, 'gps_delay_ms': delay_ms})


# --- beliefs ---

def test_odometry_is_kept_as_mavros_states_it_enu_flu_relabelled() -> None:
    cov = [0.0] * 36
    cov[0], cov[7], cov[14] = 0.5, 0.6, 0.7
    message = rules.belief_of(odom(1_500_000_000, pose_cov=cov))
    assert message['header'] == {'stamp': {'sec': 1, 'nanosec': 500_000_000},
                                 'frame_id': 'odom'}
    assert message['child_frame_id'] == 'base_link'
    assert message['pose']['pose']['position'] == {'x': 1.0, 'y': 2.0, 'z': 3.0}
    assert message['pose']['pose']['orientation'] == {'x': 0.0, 'y': 0.0, 'z': 0.6, 'w': 0.8}
    assert message['twist']['twist']['linear'] == {'x': 1.0, 'y': 0.0, 'z': 0.5}
    assert message['pose']['covariance'] == cov
    assert message['twist']['covariance'] == ZERO36


def test_odometry_without_a_position_is_rejected() -> None:
    with pytest.raises(rules.Rejected, match='position not finite'):
        rules.belief_of(odom(1, position=(NAN, 0.0, 0.0)))


def test_all_zero_covariance_reason_names_mavros_and_the_autopilot() -> None:
    reason = rules.covariance_reason(ZERO36, ZERO36, rules.ARDUPILOT)
    assert reason is not None
    assert 'MAVROS /mavros/local_position/odom from ArduPilot has an all-zero covariance' in reason
    assert 'ArduPilot never sends MAVLink LOCAL_POSITION_NED_COV' in reason
    assert 'judged UNKNOWN' in reason
    px4_reason = rules.covariance_reason(ZERO36, ZERO36, rules.PX4)
    assert px4_reason is not None and 'from PX4' in px4_reason and 'stream is on' in px4_reason
    unnamed = rules.covariance_reason(ZERO36, ZERO36, None)
    assert unnamed is not None and 'not named by /mavros/state yet' in unnamed


def test_stated_position_without_orientation_covariance_says_so() -> None:
    cov = [0.0] * 36
    cov[0] = cov[7] = cov[14] = 0.2
    reason = rules.covariance_reason(cov, ZERO36, rules.PX4)
    assert reason is not None and 'no orientation covariance' in reason
    cov[21] = cov[28] = cov[35] = 0.01
    assert rules.covariance_reason(cov, ZERO36, rules.PX4) is None


@pytest.mark.parametrize(('mode', 'autopilot'), [
    ('AUTO.LOITER', rules.PX4), ('POSCTL', rules.PX4), ('OFFBOARD', rules.PX4),
    ('LOITER', rules.ARDUPILOT), ('GUIDED', rules.ARDUPILOT), ('ALT_HOLD', rules.ARDUPILOT),
    ('AUTO', rules.ARDUPILOT), ('MANUAL', None), ('ACRO', None), ('SOME_NEW_MODE', None)])
def test_the_mode_names_the_autopilot(mode, autopilot) -> None:
    assert rules.autopilot_of_mode(mode) == autopilot


def test_every_mode_mavros_names_is_in_the_catalogue() -> None:
    """Every MODE_* constant of mavros_msgs/State (2.12.0) but INITIALISING has a status."""
    if not STATE_MSG.is_file():
        pytest.skip(f'no vendored mavros_msgs at {STATE_MSG.parent} (CI has it)')
    modes = set(re.findall(r'^string MODE_\w+ = (\S+)$', STATE_MSG.read_text(), re.MULTILINE))
    assert len(modes) > 40  # the file was read (46 distinct names in 2.12.0)
    assert sorted(modes - set(MAVROS_MODES)) == ['INITIALISING']
    assert {rules.autopilot_of_mode(mode) for mode in modes} == {rules.PX4, rules.ARDUPILOT,
                                                                 None}


# --- fixes ---

def test_navsat_fix_is_projected_about_the_origin_with_mavros_covariance() -> None:
    frame = config().frame
    fix = rules.navsat_fix(frame, navsat(2_000_000_000))
    message = rules.fix_message(frame, fix, None)
    position = message['pose']['pose']['position']
    assert [position['x'], position['y'], position['z']] == pytest.approx([20.0, 10.0, 5.0],
                                                                          abs=1e-6)
    assert _diag(message['pose']['covariance']) == [2.0, 2.0, px4.UNMEASURED_VARIANCE_M2,
                                                    px4.UNMEASURED_VARIANCE_RAD2,
                                                    px4.UNMEASURED_VARIANCE_RAD2,
                                                    px4.UNMEASURED_VARIANCE_RAD2]
    measured = config(gnss_height=True).frame
    assert _diag(rules.fix_message(measured, rules.navsat_fix(measured, navsat(1)), None)[
        'pose']['covariance'])[:3] == [2.0, 2.0, 9.0]


def test_fix_is_stamped_at_its_header_stamp_minus_the_delay() -> None:
    frame = config(delay_ms=120.0).frame
    assert rules.navsat_fix(frame, navsat(2_000_000_000)).stamp_ns == 1_880_000_000


@pytest.mark.parametrize(('overrides', 'reason'), [
    ({'status': -1}, 'no fix'), ({'cov_type': 0}, 'covariance unknown'),
    ({'cov': (NAN,) * 9}, 'covariance not finite'), ({'alt': NAN}, 'latitude/longitude')])
def test_unusable_navsat_fix_is_rejected(overrides, reason) -> None:
    with pytest.raises(rules.Rejected, match=reason):
        rules.navsat_fix(config().frame, navsat(1, **overrides))


def test_gpsraw_reads_h_acc_v_acc_as_px4_eph_epv_and_alt_msl() -> None:
    frame = config(fix_source='gpsraw', gnss_height=True).frame
    fix = rules.gpsraw_fix(frame, gpsraw(1))
    assert fix.covariance == pytest.approx((2.0, 0, 0, 0, 2.0, 0, 0, 0, 9.0))
    assert fix.alt_m == 405.0
    position = rules.fix_message(frame, fix, None)['pose']['pose']['position']
    assert [position['x'], position['y'], position['z']] == pytest.approx([20.0, 10.0, 5.0],
                                                                          abs=0.02)


def test_gpsraw_without_accuracy_scales_its_dops_by_the_uere() -> None:
    frame = config(fix_source='gpsraw', gnss_height=True, uere=2.0).frame
    fix = rules.gpsraw_fix(frame, gpsraw(1, h_acc=0, v_acc=0, eph=150, epv=200))
    assert fix.covariance == pytest.approx((4.5, 0, 0, 0, 4.5, 0, 0, 0, 16.0))
    with pytest.raises(rules.Rejected, match='no accuracy'):
        rules.gpsraw_fix(frame, gpsraw(1, h_acc=0, v_acc=0))
    with pytest.raises(rules.Rejected, match='no 3-D fix'):
        rules.gpsraw_fix(frame, gpsraw(1, fix_type=2))


def test_origin_parameter_is_three_numbers_or_empty() -> None:
    assert rules.origin_of('') is None
    assert rules.origin_of(' 47.0, 8.0, 400 ') == ORIGIN
    for bad in ('47.0,8.0', '95.0,8.0,400.0', 'north'):
        with pytest.raises(ValueError, match="mavros_bridge origin .* is not 'LAT,LON,ALT'"):
            rules.origin_of(bad)


# --- the bridge's state and the samples each output names ---

def test_anchored_fixes_start_at_the_belief_held_and_name_the_anchor() -> None:
    state = bridge.MavrosBridge(config(origin=''))
    first = state.fix('navsat', navsat(900_000_000))
    assert first == (Dropped('fix', 'no anchor: no belief received before the first fix'),)
    state.odometry(odom(1_000_000_000, position=(5.0, 6.0, 7.0)))
    (anchor_out,) = state.fix('navsat', navsat(1_100_000_000))
    assert anchor_out.message['pose']['pose']['position'] == pytest.approx(
        {'x': 5.0, 'y': 6.0, 'z': 7.0})
    (later,) = state.fix('navsat', navsat(1_200_000_000, north=20.0, alt=402.0))
    position = later.message['pose']['pose']['position']
    assert [position['x'], position['y'], position['z']] == pytest.approx([5.0, 16.0, 4.0],
                                                                          abs=1e-3)
    assert later.sources == (('navsat', 1_200_000_000), ('navsat', 1_100_000_000),
                             ('odometry', 1_000_000_000))


def test_status_is_published_before_a_belief_on_a_change_naming_its_samples() -> None:
    state = bridge.MavrosBridge(config())
    state.state(NS(header=_header(10), connected=True, armed=True, guided=True, mode='LOITER'))
    state.extended_state(NS(header=_header(20), landed_state=2, vtol_state=0))
    status, belief = state.odometry(odom(1_000_000_000))
    assert status.topic == 'vehicle_status' and belief.topic == 'state/nav'
    assert (status.status.flight_status, status.status.mission_status) == (
        FlightStatus.IN_AIR, MissionStatus.HOLDING)
    assert status.status.source == 'mavros_state'
    assert status.sources == (('odometry', 1_000_000_000), ('state', 10),
                              ('extended_state', 20))
    assert belief.sources == (('odometry', 1_000_000_000),)
    assert state.autopilot == rules.ARDUPILOT
    # The same status within a second: not again; a new mode: at once.
    assert [o.topic for o in state.odometry(odom(1_100_000_000))] == ['state/nav']
    state.state(NS(header=_header(30), connected=True, armed=True, guided=True, mode='RTL'))
    (status, _) = state.odometry(odom(1_200_000_000))
    assert status.status.mission_status == MissionStatus.RETURNING
    assert state.odometry(odom(1_200_000_000)) == (
        Dropped('belief', 'header.stamp not strictly increasing'),)


def test_without_state_the_status_is_unknown() -> None:
    (status, _) = bridge.MavrosBridge(config()).odometry(odom(1))
    assert (status.status.flight_status, status.status.mission_status) == (
        FlightStatus.UNKNOWN, MissionStatus.UNKNOWN)
    assert status.sources == (('odometry', 1),)


@pytest.mark.parametrize('origin', ['', '47.0,8.0,400.0'])
def test_every_output_is_rederived_from_exactly_the_samples_it_names(origin) -> None:
    cfg = config(origin=origin)
    state = bridge.MavrosBridge(cfg)
    samples = {}

    def feed(method, msg):
        samples[(method, rules.stamp_ns(msg.header))] = msg
        call = {'odometry': state.odometry, 'navsat': lambda m: state.fix('navsat', m),
                'state': state.state, 'extended_state': state.extended_state}[method]
        return call(msg)

    outputs = []
    feed('state', NS(header=_header(5), connected=True, armed=False, guided=False,
                     mode='AUTO.LOITER'))
    for k in range(10):
        outputs += feed('odometry', odom(1_000_000_000 + k * 100_000_000,
                                         position=(k * 1.0, 2.0, 3.0)))
        outputs += feed('navsat', navsat(1_050_000_000 + k * 100_000_000, north=10.0 + k))
    outputs = [o for o in outputs if not isinstance(o, Dropped)]
    assert {o.topic for o in outputs} == {'vehicle_status', 'state/nav', 'observations'}
    for out in outputs:
        named = [(method, samples[(method, stamp)]) for method, stamp in out.sources]
        assert bridge.rederive(cfg, out.topic, named) == out.message
    assert 'not made of' in bridge.rederive(cfg, 'state/nav', [])
