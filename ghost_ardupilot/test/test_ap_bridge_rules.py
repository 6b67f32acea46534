"""ap_bridge's rules on hand-made AP_DDS messages: frames, the EKF origin, what is UNKNOWN."""

from __future__ import annotations

import math
from types import SimpleNamespace as M

import pytest

from ghost_ardupilot import bridge
from ghost_ardupilot.ekf import LATLON_TO_M
from ghost_core.levels import FlightStatus, MissionStatus
from ghost_px4.bridge import Dropped

CONFIG = bridge.BridgeConfig('auto', gps_delay_ns=120_000_000, gnss_height=True,
                             max_twist_age_ns=100_000_000)
S45 = math.sqrt(0.5)


def _header(ns: int) -> M:
    return M(stamp=M(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000), frame_id='base_link')


def _origin(ns: int = 1_000_000_000) -> M:
    return M(header=_header(ns), position=M(latitude=51.0, longitude=-2.0, altitude=100.0))


def _navsat(ns: int, lat: float = 51.00001, hacc: float = 0.3, vacc: float = 0.5,
            status: int = 0, kind: int = 2) -> M:
    return M(header=_header(ns), status=M(status=status, service=1), latitude=lat,
             longitude=-2.0, altitude=103.0, position_covariance_type=kind,
             position_covariance=[hacc * hacc, 0, 0, 0, hacc * hacc, 0, 0, 0, vacc * vacc])


def _pose(ns: int, q: tuple[float, float, float, float] = (0.0, 0.0, S45, S45)) -> M:
    return M(header=_header(ns), pose=M(position=M(x=1.0, y=2.0, z=3.0),
                                        orientation=M(x=q[0], y=q[1], z=q[2], w=q[3])))


def _twist(ns: int, linear: tuple[float, float, float] = (1.0, 0.0, 0.0)) -> M:
    return M(header=_header(ns), twist=M(linear=M(x=linear[0], y=linear[1], z=linear[2]),
                                         angular=M(x=0.0, y=0.0, z=0.1)))


def _odometry(ns: int) -> M:
    cov = [0.0] * 36
    for index, value in zip((0, 7, 14, 21, 28, 35), (0.04, 0.04, 0.09, 1e-4, 1e-4, 4e-4),
                            strict=True):
        cov[index] = value
    return M(header=_header(ns), child_frame_id='base_link',
             pose=M(pose=_pose(ns).pose, covariance=cov),
             twist=M(twist=_twist(ns).twist, covariance=[0.01 if i in (0, 7, 14) else 0.0
                                                         for i in range(36)]))


def test_a_fix_is_placed_about_the_ekf_origin_with_its_accuracy_and_lag() -> None:
    """1e-5 deg north of the origin is 1.1132 m north (ArduPilot's LATLON_TO_M), up 3 m."""
    fix = bridge.fix_of(CONFIG, _navsat(5_000_000_000), _origin())
    assert not isinstance(fix, Dropped)
    assert fix.stamp_ns == 5_000_000_000 - 120_000_000
    east, north, up = fix.position
    assert north == pytest.approx(100 * LATLON_TO_M, abs=1e-6) and east == pytest.approx(0.0)
    assert up == pytest.approx(3.0)
    # diag(HAcc²/2, HAcc²/2, VAcc²): the importer's rule for GPA's accuracies.
    assert fix.covariance[0] == pytest.approx(0.045) and fix.covariance[14] == pytest.approx(0.25)


def test_without_an_origin_or_an_accuracy_there_is_no_fix() -> None:
    """The fix is never placed about HOME or a guessed origin; no stated accuracy, no fix."""
    assert bridge.fix_of(CONFIG, _navsat(5_000_000_000), None) == Dropped(
        'fix', 'no EKF origin (no /ap/gps_global_origin/filtered received)')
    assert isinstance(bridge.fix_of(CONFIG, _navsat(5_000_000_000, kind=0), _origin()), Dropped)
    assert isinstance(bridge.fix_of(CONFIG, _navsat(5_000_000_000, status=-1), _origin()),
                      Dropped)


def test_the_vertical_axis_is_unmeasured_unless_the_ekf_height_follows_gnss() -> None:
    """gnss_height false: the fix's vertical variance is 1e6 m²."""
    baro = bridge.BridgeConfig('auto', 0, False, 0)
    fix = bridge.fix_of(baro, _navsat(5_000_000_000), _origin())
    assert not isinstance(fix, Dropped) and fix.covariance[14] == 1e6


def test_a_pose_belief_has_no_covariance_and_its_earth_velocity_turned_into_body() -> None:
    """Facing north (yaw 90 deg ENU), 1 m/s east is 1 m/s to the right: body FLU (0, -1, 0)."""
    belief = bridge.belief_of_pose(_pose(2_000_000_000), _twist(2_010_000_000), 100_000_000)
    assert not isinstance(belief, Dropped)
    ros = belief.odometry
    assert ros.linear_velocity == pytest.approx((0.0, -1.0, 0.0), abs=1e-12)
    assert set(ros.pose_covariance) == {0.0} and set(ros.twist_covariance) == {0.0}
    assert belief.orientation_source is None
    assert bridge.belief_of_pose(_pose(2_000_000_000), _twist(2_200_000_000), 100_000_000) == \
        Dropped('belief', 'no /ap/twist/filtered within 100 ms')


def test_auto_takes_pose_beliefs_until_odometry_arrives_then_only_odometry() -> None:
    """Each belief names its samples; after the first odometry a pose gives nothing."""
    ap = bridge.ApBridge(CONFIG)
    assert ap.twist(_twist(1_000_000_000)) == ()
    first = ap.pose(_pose(1_000_000_000))
    assert [o.topic for o in first] == ['vehicle_status', 'state/nav']
    assert first[1].sources == (('pose', 1_000_000_000), ('twist', 1_000_000_000))
    odometry = ap.odometry(_odometry(1_100_000_000))
    assert [o.topic for o in odometry] == ['state/nav']
    assert odometry[0].sources == (('odometry', 1_100_000_000),)
    assert odometry[0].message['pose']['covariance'][0] == 0.04
    assert ap.pose(_pose(1_200_000_000)) == ()
    assert ap.odometry(_odometry(1_100_000_000)) == (
        Dropped('belief', 'timestamp not strictly increasing'),)


def test_a_fix_names_its_navsat_and_the_origin_it_was_placed_about() -> None:
    """SourceSamples of a fix: /ap/navsat and /ap/gps_global_origin/filtered by header.stamp."""
    ap = bridge.ApBridge(CONFIG)
    ap.origin(_origin(900_000_000))
    out = ap.navsat(_navsat(5_000_000_000))
    assert out[0].sources == (('navsat', 5_000_000_000), ('origin', 900_000_000))
    message = bridge.source_samples_message(out[0], '/observations', {
        'navsat': '/ap/navsat', 'origin': '/ap/gps_global_origin/filtered'})
    assert message['stamp_fields'] == ['header.stamp', 'header.stamp']
    assert message['stamps'] == [5_000_000_000, 900_000_000]


@pytest.mark.parametrize(('armed', 'flying', 'mode', 'vehicle', 'flight', 'mission'), [
    (False, False, 5, 2, FlightStatus.DISARMED, MissionStatus.NO_MISSION),
    (True, False, 4, 2, FlightStatus.ARMED_ON_GROUND, MissionStatus.OFFBOARD),
    (True, True, 6, 2, FlightStatus.IN_AIR, MissionStatus.RETURNING),
    (True, True, 3, 2, FlightStatus.IN_AIR, MissionStatus.ON_MISSION),
    (True, True, 3, 3, FlightStatus.IN_AIR, MissionStatus.UNKNOWN),  # a Plane's AUTO: not guessed
])
def test_status_is_armed_and_flying_and_a_copter_mode(
        armed: bool, flying: bool, mode: int, vehicle: int, flight: FlightStatus,
        mission: MissionStatus) -> None:
    """/ap/status: flight status from armed/flying, mission status from an ArduCopter mode."""
    status = bridge.status_of(7, M(armed=armed, flying=flying, mode=mode, vehicle_type=vehicle))
    assert (status.flight_status, status.mission_status) == (flight, mission)
    assert status.source == 'ardupilot_dds'


def test_the_configuration_round_trips_and_names_what_is_wrong() -> None:
    """to_dict / from_dict exactly; a bad value is one line naming the key."""
    assert bridge.BridgeConfig.from_dict(CONFIG.to_dict()) == CONFIG
    with pytest.raises(ValueError, match='gnss_height'):
        bridge.BridgeConfig.from_dict({**CONFIG.to_dict(), 'gnss_height': 1})
    with pytest.raises(ValueError, match='source'):
        bridge.BridgeConfig('home', 0, False, 0)
