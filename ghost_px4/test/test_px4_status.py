"""PX4's vehicle_status / vehicle_land_detected -> the decisions' flight and mission status."""

from __future__ import annotations

from pathlib import Path

import numpy
import pytest

from ghost_bag.recorded_inputs import read_inputs
from ghost_core.contracts import VehicleStatus
from ghost_core.levels import FlightStatus, MissionStatus
from ghost_px4.status import flight_status, HEARTBEAT_NS, mission_status, Px4Status, StatusReporter
from ghost_px4.ulog_import import main as import_ulog

REALDATA = Path(__file__).resolve().parents[2].parent / 'shared' / 'realdata'
LOGS = sorted(REALDATA.glob('*.ulg')) if REALDATA.is_dir() else []


@pytest.mark.parametrize(('arming', 'landed', 'expected'), [
    (None, None, FlightStatus.UNKNOWN),
    (1, None, FlightStatus.DISARMED),
    (1, False, FlightStatus.DISARMED),  # disarmed wins over a land detector's "airborne"
    (0, True, FlightStatus.DISARMED),
    (2, None, FlightStatus.ARMED),
    (2, True, FlightStatus.ARMED_ON_GROUND),
    (2, False, FlightStatus.IN_AIR),
    (5, False, FlightStatus.UNKNOWN),  # v1.9 IN_AIR_RESTORE: not guessed
])
def test_flight_status(arming: int | None, landed: bool | None, expected: FlightStatus) -> None:
    assert flight_status(arming, landed) is expected


@pytest.mark.parametrize(('nav', 'expected'), [
    (None, MissionStatus.UNKNOWN), (2, MissionStatus.NO_MISSION),
    (3, MissionStatus.ON_MISSION), (4, MissionStatus.HOLDING), (5, MissionStatus.RETURNING),
    (14, MissionStatus.OFFBOARD), (17, MissionStatus.TAKING_OFF),
    (18, MissionStatus.LANDING), (21, MissionStatus.OTHER_AUTONOMOUS),
    (8, MissionStatus.UNKNOWN),  # LANDENGFAIL in v1.9, ALTITUDE_CRUISE in v1.17
    (99, MissionStatus.UNKNOWN),
])
def test_mission_status(nav: int | None, expected: MissionStatus) -> None:
    assert mission_status(nav) is expected


def test_a_status_is_reported_first_on_change_and_as_a_heartbeat() -> None:
    reporter = StatusReporter()
    state = Px4Status(arming_state=2, nav_state=3, landed=True)
    assert reporter.due(state.at(0, 'odom'))
    assert not reporter.due(state.at(HEARTBEAT_NS - 1, 'odom'))
    state.landed = False
    assert reporter.due(state.at(HEARTBEAT_NS, 'odom'))
    assert not reporter.due(state.at(HEARTBEAT_NS + 1, 'odom'))
    assert reporter.due(state.at(2 * HEARTBEAT_NS, 'odom'))


def _log_columns(log: Path) -> dict[str, dict[str, numpy.ndarray]]:
    from pyulog import ULog

    ulog = ULog(str(log), ['vehicle_status', 'vehicle_land_detected'])
    return {item.name: item.data for item in ulog.data_list if item.multi_id == 0}


@pytest.mark.skipif(not LOGS, reason=f'{REALDATA} (the shared real logs) is missing')
@pytest.mark.parametrize('log', LOGS, ids=[log.stem for log in LOGS])
def test_real_logs_give_statuses_on_the_ground_and_in_the_air(tmp_path: Path, log: Path) -> None:
    """A real log's statuses: on the ground before take-off, in the air in flight.

    Each imported status agrees with the log's own samples in force at its stamp: IN_AIR
    exactly when PX4 is armed and its land detector says not landed, never before the first
    take-off the log records; and every flight that leaves the ground is seen in the air.
    """
    bag = tmp_path / 'bag'
    assert import_ulog([str(log), '--output', str(bag)]) == 0
    statuses = [m.sample for m in read_inputs(bag) if isinstance(m.sample, VehicleStatus)]
    assert statuses, 'no /vehicle_status in the imported bag'
    data = _log_columns(log)
    status, land = data['vehicle_status'], data['vehicle_land_detected']
    status_ns = status['timestamp'].astype(numpy.int64) * 1000
    land_ns = land['timestamp'].astype(numpy.int64) * 1000
    airborne_ns = land_ns[land['landed'] == 0]
    for item in statuses:
        i = numpy.searchsorted(status_ns, item.stamp_ns, side='right') - 1
        j = numpy.searchsorted(land_ns, item.stamp_ns, side='right') - 1
        armed = i >= 0 and status['arming_state'][i] == 2
        flying = armed and j >= 0 and land['landed'][j] == 0
        assert (item.flight_status is FlightStatus.IN_AIR) == flying, item
        if not airborne_ns.size or item.stamp_ns < airborne_ns[0]:
            assert item.flight_status is not FlightStatus.IN_AIR
        if i >= 0 and status['arming_state'][i] != 2:
            assert item.flight_status is FlightStatus.DISARMED
    if airborne_ns.size:
        assert any(s.flight_status is FlightStatus.IN_AIR for s in statuses)
    # Stamped on the beliefs' clock, in order; a status at least once a second of beliefs.
    stamps = [s.stamp_ns for s in statuses]
    assert stamps == sorted(stamps)
    assert all(b - a <= HEARTBEAT_NS + 10**9 for a, b in zip(stamps, stamps[1:], strict=False))


@pytest.mark.parametrize(('plan', 'expected'), [
    (None, MissionStatus.ON_MISSION),  # no mission_result: the mode alone says it
    ((True, False, False), MissionStatus.ON_MISSION),
    ((True, True, False), MissionStatus.HOLDING),  # finished: PX4 loiters in mission mode
    ((False, False, False), MissionStatus.HOLDING),  # no valid plan to fly
    ((True, False, True), MissionStatus.HOLDING),  # the plan cannot continue
])
def test_mission_result_tells_the_mission_from_the_rest(
        plan: tuple[bool, bool, bool] | None, expected: MissionStatus) -> None:
    from ghost_core.vehicle import MissionPlan

    found = None if plan is None else MissionPlan(*plan)
    assert mission_status(3, found) is expected
    # only AUTO_MISSION is refined
    assert mission_status(5, found) is MissionStatus.RETURNING
    assert mission_status(2, found) is MissionStatus.NO_MISSION


def test_the_bridge_status_names_the_samples_it_was_made_of() -> None:
    """status_of over the samples held, and the sources a status and a belief name."""
    from types import SimpleNamespace

    from ghost_px4 import bridge

    config = bridge.BridgeConfig('vehicle_local_position', 0, -1, 100_000_000)
    px4 = bridge.Px4Bridge(config)
    odometry = SimpleNamespace(timestamp=990, timestamp_sample=990, q=[1.0, 0.0, 0.0, 0.0],
                               angular_velocity=[0.0] * 3,
                               orientation_variance=[1e-4] * 3)
    local = SimpleNamespace(
        timestamp=1000, timestamp_sample=1000, x=1.0, y=2.0, z=-3.0, vx=0.0, vy=0.0, vz=0.0,
        eph=0.5, epv=0.8, evh=0.1, evv=0.1, xy_valid=True, z_valid=True, v_xy_valid=True,
        v_z_valid=True, xy_global=True, z_global=True, ref_lat=47.0, ref_lon=8.0, ref_alt=400.0)
    assert px4.odometry(odometry) == ()
    assert px4.status(SimpleNamespace(timestamp=500, arming_state=2, nav_state=3)) == ()
    assert px4.land_detected(SimpleNamespace(timestamp=600, landed=False)) == ()
    assert px4.mission_result(SimpleNamespace(timestamp=700, valid=True, finished=True,
                                              failure=False, seq_current=3, seq_total=4)) == ()
    status, belief = px4.local_position(local)
    assert isinstance(status, bridge.Output) and isinstance(belief, bridge.Output)
    assert status.status is not None
    assert (status.status.flight_status, status.status.mission_status) == (
        FlightStatus.IN_AIR, MissionStatus.HOLDING)
    assert status.sources == (('local_position', 1000), ('status', 500),
                              ('land_detected', 600), ('mission_result', 700))
    assert belief.sources == (('local_position', 1000), ('odometry', 990))
    topics = {method: f'/uav1/{topic}' for method, topic in bridge.IN_TOPICS.items()}
    record = bridge.source_samples_message(belief, '/uav1/state/nav', topics)
    assert record == {
        'header': {'stamp': {'sec': 0, 'nanosec': 1_000_000}, 'frame_id': 'odom'},
        'output_topic': '/uav1/state/nav',
        'source_topics': ['/uav1/fmu/out/vehicle_local_position',
                          '/uav1/fmu/out/vehicle_odometry'],
        'stamp_fields': ['timestamp', 'timestamp'], 'stamps': [1000, 990], 'schema_version': 1}
    # the pure rule gives what the bridge published, from exactly those samples
    again = bridge.belief_of(config, local, odometry)
    assert not isinstance(again, bridge.Dropped)
    assert bridge.odometry_message(1_000_000, again) == belief.message
    assert isinstance(bridge.belief_of(config, local, None), bridge.Dropped)
