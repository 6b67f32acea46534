"""The vehicle status of PX4's vehicle_status, land detector and mission result (ADR-0021 §2).

One home for the rules the live bridge (px4_bridge, over uXRCE-DDS) and the ULog importer
(``ghost_import``) both apply, on plain numbers:

- flight status from ``vehicle_status.arming_state`` and ``vehicle_land_detected.landed``:
  disarmed is DISARMED; armed is ARMED_ON_GROUND when landed, IN_AIR when not, ARMED when no
  land detector sample was received; an arming state PX4 does not define is UNKNOWN. The
  codes are the same in every generation read here (v1.9 to v1.17: 2 is ARMED; 0 INIT, 1
  STANDBY/DISARMED, 3 STANDBY_ERROR and 4 SHUTDOWN are disarmed; v1.9's 5 IN_AIR_RESTORE is
  UNKNOWN). ``maybe_landed`` is PX4's stage before ``landed`` and does not count.
- mission status from ``vehicle_status.nav_state``. The codes 6-9, 11 and 16 meant different
  modes in different PX4 generations (v1.9 AUTO_RCRECOVER, AUTO_RTGS, AUTO_LANDENGFAIL...;
  v1.17 POSITION_SLOW, ALTITUDE_CRUISE, free slots) and are UNKNOWN: never guessed.
  In AUTO_MISSION, ``mission_result`` tells the mission from the rest
  (``ghost_core.vehicle.mission_in_progress``): a finished, invalid or failed plan is HOLDING
  (PX4 loiters in mission mode), a valid plan in progress ON_MISSION; without a mission_result
  sample the mode alone says it (ON_MISSION).
- ``StatusReporter``: when a status is worth publishing, before a belief (on a change, the
  first time, and at least once per ``HEARTBEAT_NS`` of belief time, so that a decision policy
  that starts late still gets one).

No rclpy, px4_msgs or pyulog here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ghost_core.contracts import VehicleStatus
from ghost_core.levels import FlightStatus, MissionStatus
from ghost_core.vehicle import mission_in_progress, MissionPlan

__all__ = ['ARMED', 'DISARMED_STATES', 'HEARTBEAT_NS', 'NAV_STATES', 'PX4_SOURCE',
           'Px4Status', 'StatusReporter', 'flight_status', 'mission_status']

#: VehicleStatus.source of a status read from PX4.
PX4_SOURCE = 'px4_vehicle_status'
#: vehicle_status.arming_state: ARMING_STATE_ARMED in every generation.
ARMED = 2
#: Arming states in which the motors are off: INIT, STANDBY (DISARMED since 1.15),
#: STANDBY_ERROR, SHUTDOWN.
DISARMED_STATES = frozenset({0, 1, 3, 4})
#: A status is published at least this often (belief time) even when it does not change.
HEARTBEAT_NS = 1_000_000_000

_NO = MissionStatus.NO_MISSION
#: vehicle_status.nav_state -> mission status, for the codes every generation agrees on.
NAV_STATES: Mapping[int, MissionStatus] = MappingProxyType({
    0: _NO,  # MANUAL
    1: _NO,  # ALTCTL
    2: _NO,  # POSCTL
    3: MissionStatus.ON_MISSION,  # AUTO_MISSION
    4: MissionStatus.HOLDING,  # AUTO_LOITER
    5: MissionStatus.RETURNING,  # AUTO_RTL
    10: _NO,  # ACRO
    12: MissionStatus.LANDING,  # DESCEND
    13: _NO,  # TERMINATION
    14: MissionStatus.OFFBOARD,  # OFFBOARD
    15: _NO,  # STAB
    17: MissionStatus.TAKING_OFF,  # AUTO_TAKEOFF
    18: MissionStatus.LANDING,  # AUTO_LAND
    19: MissionStatus.OTHER_AUTONOMOUS,  # AUTO_FOLLOW_TARGET
    20: MissionStatus.LANDING,  # AUTO_PRECLAND
    21: MissionStatus.OTHER_AUTONOMOUS,  # ORBIT
    22: MissionStatus.TAKING_OFF,  # AUTO_VTOL_TAKEOFF
    **dict.fromkeys(range(23, 31), MissionStatus.OTHER_AUTONOMOUS),  # EXTERNAL1..8
})


def flight_status(arming_state: int | None, landed: bool | None) -> FlightStatus:
    """The flight status of PX4's arming state and land detector (None: no sample yet)."""
    if arming_state is None:
        return FlightStatus.UNKNOWN
    if arming_state in DISARMED_STATES:
        return FlightStatus.DISARMED
    if arming_state != ARMED:
        return FlightStatus.UNKNOWN
    if landed is None:
        return FlightStatus.ARMED
    return FlightStatus.ARMED_ON_GROUND if landed else FlightStatus.IN_AIR


def mission_status(nav_state: int | None, plan: MissionPlan | None = None) -> MissionStatus:
    """The mission status of PX4's nav_state (None, or a code not in NAV_STATES: UNKNOWN).

    ``plan``: the latest mission_result's (valid, finished, failure), None when none was
    received; it refines AUTO_MISSION only (``ghost_core.vehicle.mission_in_progress``).
    """
    if nav_state is None:
        return MissionStatus.UNKNOWN
    return mission_in_progress(NAV_STATES.get(nav_state, MissionStatus.UNKNOWN), plan)


@dataclass
class Px4Status:
    """The latest vehicle_status, vehicle_land_detected and mission_result values (None: none)."""

    arming_state: int | None = None
    nav_state: int | None = None
    landed: bool | None = None
    plan: MissionPlan | None = None

    def at(self, stamp_ns: int, frame_id: str) -> VehicleStatus:
        """The status these values give, stamped ``stamp_ns`` (a belief's stamp)."""
        return VehicleStatus(stamp_ns, frame_id, flight_status(self.arming_state, self.landed),
                             mission_status(self.nav_state, self.plan), PX4_SOURCE)


class StatusReporter:
    """Whether to publish a status before a belief: the first, a change, or a heartbeat."""

    __slots__ = ('_last', '_last_ns')

    def __init__(self) -> None:
        self._last: tuple[FlightStatus, MissionStatus, str | None] | None = None
        self._last_ns: int | None = None

    def due(self, status: VehicleStatus) -> bool:
        """True when ``status`` should be published (and is then taken as published)."""
        key = (status.flight_status, status.mission_status, status.perception_mode)
        if (key == self._last and self._last_ns is not None
                and status.stamp_ns - self._last_ns < HEARTBEAT_NS):
            return False
        self._last, self._last_ns = key, status.stamp_ns
        return True
