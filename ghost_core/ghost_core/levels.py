"""The closed catalogues: assessment levels, decision and command kinds, vehicle statuses."""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    'NON_CONSERVATIVE_COMMAND_KINDS',
    'ActuatorCommandKind',
    'DecisionKind',
    'FlightStatus',
    'MissionStatus',
    'SelfAssessmentLevel',
    'worst_level',
]


class SelfAssessmentLevel(IntEnum):
    """How much the agent claims to know (constants of BeliefSelfAssessment).

    The numeric order is the order of worsening: a larger value is a weaker claim.
    """

    KNOWN = 0
    UNCERTAIN = 1
    UNKNOWN = 2


class DecisionKind(IntEnum):
    """The closed catalogue of decisions (ADR-0021; constants of Decision)."""

    PROCEED = 0
    HOLD = 1
    YIELD_TO_PILOT = 2
    ENGAGE_RTL = 3
    ENGAGE_LAND = 4
    ENGAGE_KILL = 5
    ABSTAIN_UNCERTAIN = 6


class ActuatorCommandKind(IntEnum):
    """What an actuation sends to the vehicle (constants of ActuatorCommand)."""

    NONE = 0
    HOLD_POSITION = 1
    CONTINUE_MISSION = 2
    VELOCITY_SETPOINT = 3
    LAND = 4
    RETURN_TO_LAUNCH = 5
    KILL = 6


class FlightStatus(IntEnum):
    """Whether the vehicle is armed and airborne, as its autopilot reports it (ADR-0021 §2).

    Constants FLIGHT_* of VehicleStatus and DecisionRationale. A status claims only what its
    source reports: UNKNOWN when the source says nothing, ARMED when it reports arming but
    not whether the vehicle is airborne (MAVROS's /mavros/state).
    """

    UNKNOWN = 0
    #: Disarmed: the motors cannot spin (on the ground in any normal operation).
    DISARMED = 1
    #: Armed, and the land detector says landed (before take-off, after touch-down).
    ARMED_ON_GROUND = 2
    #: Armed, and the land detector says airborne.
    IN_AIR = 3
    #: Armed; whether airborne is not reported.
    ARMED = 4


class MissionStatus(IntEnum):
    """What the autopilot's mode has the vehicle do (ADR-0021 §2).

    Constants MISSION_* of VehicleStatus and DecisionRationale. UNKNOWN when the source
    reports no mode, or one this catalogue does not know.
    """

    UNKNOWN = 0
    #: No autonomous task: a manual or assisted mode (the pilot flies), or flight termination.
    NO_MISSION = 1
    #: Flying a mission plan (PX4 AUTO_MISSION, ArduPilot AUTO).
    ON_MISSION = 2
    #: An offboard controller (a companion computer) commands the vehicle.
    OFFBOARD = 3
    #: Autonomous take-off.
    TAKING_OFF = 4
    #: Autonomous hold (loiter) in place.
    HOLDING = 5
    #: Returning to launch.
    RETURNING = 6
    #: Autonomous landing or descent.
    LANDING = 7
    #: Another autonomous mode (follow target, orbit, an external mode).
    OTHER_AUTONOMOUS = 8


#: The command kinds that move the vehicle on its mission (SPEC section 3); all others are
#: conservative.
NON_CONSERVATIVE_COMMAND_KINDS: frozenset[ActuatorCommandKind] = frozenset(
    {ActuatorCommandKind.CONTINUE_MISSION, ActuatorCommandKind.VELOCITY_SETPOINT}
)


def worst_level(*levels: SelfAssessmentLevel) -> SelfAssessmentLevel:
    """Return the weakest claim among `levels` (UNKNOWN beats UNCERTAIN beats KNOWN)."""
    return SelfAssessmentLevel(max(levels))
