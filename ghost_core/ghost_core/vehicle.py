"""The vehicle status a decision's context records (ADR-0021 §2): the one in force; MAVROS's.

- ``VehicleStatusTracker``: the status in force at a cycle is the latest received whose stamp
  is at or before the cycle stamp (None when there is none: the context is then UNKNOWN). The
  decision policy node and the pipeline (hence ``ghost_replay`` and the verifier's
  re-derivation) use this one object, fed in arrival order, so both pick the same status. The
  one assumption: a status reaches the decision policy before the calibrated assessment of a
  cycle it applies to (its source publishes it before that cycle's belief; the calibrated
  assessment is three hops and an outcome later).
- ``mavros_status``: the flight and mission status of MAVROS's ``/mavros/state``
  (``mavros_msgs/State``: ``connected``, ``armed``, ``mode``), refined by
  ``/mavros/extended_state``'s ``landed_state`` when given. The PX4 rules are ghost_px4's.
- ``mission_in_progress``: a mission mode's status refined by what the autopilot says of its
  plan (PX4's ``mission_result``): flying a plan only while the plan is valid, not finished and
  not failed; otherwise the autopilot holds in its mission mode.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ghost_core.contracts import VehicleStatus
from ghost_core.levels import FlightStatus, MissionStatus

__all__ = ['MAVROS_LANDED_STATES', 'MAVROS_MODES', 'MissionPlan', 'VehicleStatusTracker',
           'mavros_status', 'mission_in_progress']

#: MAVROS mode strings (PX4 custom modes as MAVROS names them, and ArduPilot Copter's, Plane's
#: and Rover's: every MODE_* of mavros_msgs/State but INITIALISING, which says nothing) -> status.
MAVROS_MODES: Mapping[str, MissionStatus] = MappingProxyType({
    **dict.fromkeys(('MANUAL', 'ACRO', 'ALTCTL', 'POSCTL', 'STABILIZED', 'RATTITUDE',
                     'STABILIZE', 'ALT_HOLD', 'POSHOLD', 'SPORT', 'DRIFT', 'FLOWHOLD',
                     'GUIDED_NOGPS', 'FLIP', 'POSITION', 'TURTLE', 'TRAINING', 'FBWA', 'FBWB',
                     'CRUISE', 'QSTABILIZE', 'QHOVER', 'QACRO', 'LEARNING', 'STEERING'),
                    MissionStatus.NO_MISSION),
    **dict.fromkeys(('AUTO.MISSION', 'AUTO'), MissionStatus.ON_MISSION),
    **dict.fromkeys(('OFFBOARD', 'GUIDED'), MissionStatus.OFFBOARD),
    **dict.fromkeys(('AUTO.TAKEOFF', 'AUTO.VTOL_TAKEOFF', 'TAKEOFF'), MissionStatus.TAKING_OFF),
    **dict.fromkeys(('AUTO.LOITER', 'AUTO.READY', 'LOITER', 'BRAKE', 'OF_LOITER', 'QLOITER',
                     'HOLD'), MissionStatus.HOLDING),
    **dict.fromkeys(('AUTO.RTL', 'AUTO.RTGS', 'RTL', 'SMART_RTL', 'AUTO_RTL', 'QRTL'),
                    MissionStatus.RETURNING),
    **dict.fromkeys(('AUTO.LAND', 'AUTO.PRECLAND', 'LAND', 'QLAND'), MissionStatus.LANDING),
    **dict.fromkeys(('AUTO.FOLLOW_TARGET', 'FOLLOW', 'CIRCLE', 'ZIGZAG', 'AUTOTUNE', 'THROW',
                     'AVOID_ADSB', 'SYSTEMID', 'AUTOROTATE'), MissionStatus.OTHER_AUTONOMOUS),
})
#: mavros_msgs/ExtendedState.landed_state codes (LANDED_STATE_*) -> airborne (None: undefined).
MAVROS_LANDED_STATES: Mapping[int, bool | None] = MappingProxyType(
    {0: None, 1: False, 2: True, 3: True, 4: True})


def mavros_status(connected: bool, armed: bool, mode: str,
                  landed_state: int | None = None) -> tuple[FlightStatus, MissionStatus]:
    """The flight and mission status of a ``/mavros/state`` (and ``landed_state``, if any).

    Not connected to the FCU: UNKNOWN, UNKNOWN (the fields are MAVROS's defaults). Disarmed:
    DISARMED. Armed: ARMED, unless ``landed_state`` (``/mavros/extended_state``) says on the
    ground (ARMED_ON_GROUND) or airborne, taking off or landing (IN_AIR). A mode this catalogue
    does not know is UNKNOWN.
    """
    if not connected:
        return FlightStatus.UNKNOWN, MissionStatus.UNKNOWN
    mission = MAVROS_MODES.get(mode.strip().upper(), MissionStatus.UNKNOWN)
    if not armed:
        return FlightStatus.DISARMED, mission
    airborne = MAVROS_LANDED_STATES.get(landed_state) if landed_state is not None else None
    if airborne is None:
        return FlightStatus.ARMED, mission
    return (FlightStatus.IN_AIR if airborne else FlightStatus.ARMED_ON_GROUND), mission


@dataclass(frozen=True, slots=True)
class MissionPlan:
    """What the autopilot says of its mission plan (PX4: ``mission_result``).

    ``valid``: the plan can be flown; ``finished``: its last item is done; ``failure``: it
    cannot continue (PX4: an item it cannot reach, a heading it cannot take in time).
    """

    valid: bool
    finished: bool
    failure: bool


def mission_in_progress(mission: MissionStatus, plan: MissionPlan | None) -> MissionStatus:
    """``mission`` (a mode's status), told apart from the rest by the autopilot's ``plan``.

    Only ON_MISSION is refined: with a plan that is finished, not valid or failed, the vehicle
    is not flying a plan but holding in the mission mode (PX4 keeps AUTO_MISSION and loiters at
    the end of a mission, and flies no invalid or failed plan): HOLDING. Without a plan report
    (None) the mode alone says it, as before. Whether it holds in the air or on the ground
    (a plan ending in a landing) is the flight status's to say.
    """
    if mission is not MissionStatus.ON_MISSION or plan is None:
        return mission
    if plan.finished or not plan.valid or plan.failure:
        return MissionStatus.HOLDING
    return mission


class VehicleStatusTracker:
    """The vehicle status in force at a cycle: the latest received stamped at or before it.

    ``on_status`` takes each status as it arrives (any stamp order; of two with one stamp,
    the later received counts). ``at(stamp_ns)`` is the status in force at a cycle, None
    when none is stamped at or before it. ``forget_before(stamp_ns)`` keeps only what a
    cycle stamped at or after ``stamp_ns`` can still need (call it once a cycle is decided,
    as cycles are decided in stamp order).
    """

    __slots__ = ('_stamps', '_statuses')

    def __init__(self) -> None:
        self._stamps: list[int] = []
        self._statuses: list[VehicleStatus] = []

    def __len__(self) -> int:
        """How many statuses are kept."""
        return len(self._stamps)

    def on_status(self, status: VehicleStatus) -> None:
        """Take one status as received."""
        index = bisect_right(self._stamps, status.stamp_ns)
        if index and self._stamps[index - 1] == status.stamp_ns:
            self._statuses[index - 1] = status
            return
        self._stamps.insert(index, status.stamp_ns)
        self._statuses.insert(index, status)

    def at(self, stamp_ns: int) -> VehicleStatus | None:
        """The status in force at the cycle stamped ``stamp_ns`` (None: none received)."""
        index = bisect_right(self._stamps, stamp_ns) - 1
        return self._statuses[index] if index >= 0 else None

    def forget_before(self, stamp_ns: int) -> None:
        """Drop the statuses no cycle stamped at or after ``stamp_ns`` is in force under."""
        index = bisect_right(self._stamps, stamp_ns) - 1
        if index > 0:
            del self._stamps[:index]
            del self._statuses[:index]
