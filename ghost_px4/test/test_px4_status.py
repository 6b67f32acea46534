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
