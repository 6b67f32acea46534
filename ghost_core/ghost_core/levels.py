"""The closed catalogues: self-assessment levels, decision kinds and actuator command kinds."""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    'NON_CONSERVATIVE_COMMAND_KINDS',
    'ActuatorCommandKind',
    'DecisionKind',
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


#: The command kinds that move the vehicle on its mission (SPEC section 3); all others are
#: conservative.
NON_CONSERVATIVE_COMMAND_KINDS: frozenset[ActuatorCommandKind] = frozenset(
    {ActuatorCommandKind.CONTINUE_MISSION, ActuatorCommandKind.VELOCITY_SETPOINT}
)


def worst_level(*levels: SelfAssessmentLevel) -> SelfAssessmentLevel:
    """Return the weakest claim among `levels` (UNKNOWN beats UNCERTAIN beats KNOWN)."""
    return SelfAssessmentLevel(max(levels))
