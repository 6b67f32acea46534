"""The command gate's rule: what may leave for the vehicle, given the latest actuation.

One pure function, ``gate_verdict``, used by the ``command_gate`` node (which applies it to
every mission output and on its keep-alive timer) and by the GATE-v1 judge
(``ghost_core.gate_property``), which checks a recorded gate output against it. Times are
nanoseconds on the gate's clock.

The rule (docs/properties.md, GATE-v1; docs/integration.md):

- no actuation yet, or the latest one older than the timeout: hold (fail closed; this also
  covers Ghost's processes being gone, which stops the actuations);
- decision PROCEED with command CONTINUE_MISSION: pass the mission's output unchanged;
- command LAND or RETURN_TO_LAUNCH: the matching vehicle command (sent once by the node),
  and hold otherwise;
- anything else (HOLD_POSITION, NONE, VELOCITY_SETPOINT, KILL; any decision other than
  PROCEED): hold. The gate never sends a kill: flight termination stays with the pilot.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum

from ghost_core.levels import ActuatorCommandKind, DecisionKind

__all__ = [
    'DEFAULT_TIMEOUT_S',
    'GateAction',
    'GateReason',
    'GateVerdict',
    'LatestActuation',
    'MAX_TIMEOUT_S',
    'VEHICLE_CMD_NAV_LAND',
    'VEHICLE_CMD_NAV_RETURN_TO_LAUNCH',
    'gate_verdict',
    'is_fresh',
    'may_pass',
    'vehicle_command_for',
]

#: The command_gate's ``timeout_s`` unless configured (its declaration in
#: ghost_nodes.node_parameters uses this value; GATE-v1 judges with it when the run's
#: configuration record does not hold the gate's).
DEFAULT_TIMEOUT_S = 0.5
#: The declared bound of ``timeout_s`` (SPEC 5 v1.3): a gate that passes the mission on an
#: actuation older than this is not gating any more (Copter itself stops about 3 s after its
#: last cmd_vel), so a recorded timeout beyond it is a violation.
MAX_TIMEOUT_S = 5.0

#: MAVLink / px4_msgs VehicleCommand command ids.
VEHICLE_CMD_NAV_RETURN_TO_LAUNCH = 20
VEHICLE_CMD_NAV_LAND = 21


class GateAction(IntEnum):
    """What the gate sends (constants of GateEmission)."""

    PASSED = 0
    HELD = 1
    VEHICLE_COMMAND = 2


class GateReason(StrEnum):
    """Why (GateEmission.reason, closed catalogue)."""

    PROCEED = 'proceed'
    DECISION_NOT_PROCEED = 'decision_not_proceed'
    ACTUATION_STALE = 'actuation_stale'
    NO_ACTUATION = 'no_actuation'
    LAND = 'land'
    RETURN_TO_LAUNCH = 'return_to_launch'
    #: The node's own hold, never a ``gate_verdict``: the actuations' last publisher has gone
    #: (Ghost stopped), so the gate holds at once, before the timeout would.
    ACTUATION_SOURCE_GONE = 'actuation_source_gone'
    #: The node's own hold: the mission's output could not be recorded truthfully (a non-finite
    #: setpoint or twist), so it is held rather than sent unrecorded.
    INVALID_MISSION_OUTPUT = 'invalid_mission_output'


@dataclass(frozen=True, slots=True)
class LatestActuation:
    """The latest actuation the gate received: its decision, command and receive time."""

    decision_kind: int
    command_kind: int
    received_ns: int


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """The gate's answer for one output."""

    action: GateAction
    reason: GateReason
    vehicle_command: int = 0


def may_pass(decision_kind: int, command_kind: int) -> bool:
    """True when an actuation lets the mission's output through: PROCEED, CONTINUE_MISSION."""
    return (decision_kind == DecisionKind.PROCEED
            and command_kind == ActuatorCommandKind.CONTINUE_MISSION)


def is_fresh(received_ns: int, now_ns: int, timeout_ns: int) -> bool:
    """True when an actuation received at ``received_ns`` is not older than the timeout."""
    return now_ns - received_ns <= timeout_ns


def vehicle_command_for(command_kind: int) -> int:
    """The VehicleCommand id for a LAND / RETURN_TO_LAUNCH command kind, else 0."""
    if command_kind == ActuatorCommandKind.LAND:
        return VEHICLE_CMD_NAV_LAND
    if command_kind == ActuatorCommandKind.RETURN_TO_LAUNCH:
        return VEHICLE_CMD_NAV_RETURN_TO_LAUNCH
    return 0


def gate_verdict(latest: LatestActuation | None, now_ns: int, timeout_ns: int) -> GateVerdict:
    """What the gate sends at ``now_ns`` given the latest actuation (None before the first)."""
    if timeout_ns <= 0:
        raise ValueError(f'gate timeout must be positive, got {timeout_ns} ns')
    if latest is None:
        return GateVerdict(GateAction.HELD, GateReason.NO_ACTUATION)
    if not is_fresh(latest.received_ns, now_ns, timeout_ns):
        return GateVerdict(GateAction.HELD, GateReason.ACTUATION_STALE)
    if may_pass(latest.decision_kind, latest.command_kind):
        return GateVerdict(GateAction.PASSED, GateReason.PROCEED)
    command = vehicle_command_for(latest.command_kind)
    if command == VEHICLE_CMD_NAV_LAND:
        return GateVerdict(GateAction.VEHICLE_COMMAND, GateReason.LAND, command)
    if command == VEHICLE_CMD_NAV_RETURN_TO_LAUNCH:
        return GateVerdict(GateAction.VEHICLE_COMMAND, GateReason.RETURN_TO_LAUNCH, command)
    return GateVerdict(GateAction.HELD, GateReason.DECISION_NOT_PROCEED)
