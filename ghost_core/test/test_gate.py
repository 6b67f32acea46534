"""The command gate's rule (ghost_core.gate): one verdict per decision, timeout and start."""

import pytest

from ghost_core.gate import (
    gate_verdict,
    GateAction,
    GateReason,
    GateVerdict,
    LatestActuation,
    may_pass,
    VEHICLE_CMD_NAV_LAND,
    VEHICLE_CMD_NAV_RETURN_TO_LAUNCH,
)
from ghost_core.levels import ActuatorCommandKind as C
from ghost_core.levels import DecisionKind as D

TIMEOUT = 500_000_000


def _verdict(decision: D, command: C, age_ns: int = 0):
    return gate_verdict(LatestActuation(decision, command, 1_000_000_000),
                        1_000_000_000 + age_ns, TIMEOUT)


def test_only_proceed_with_continue_mission_passes() -> None:
    passing = [(d, c) for d in D for c in C if may_pass(d, c)]
    assert passing == [(D.PROCEED, C.CONTINUE_MISSION)]
    assert _verdict(D.PROCEED, C.CONTINUE_MISSION) == GateVerdict(GateAction.PASSED,
                                                                  GateReason.PROCEED)


@pytest.mark.parametrize('decision,command', [
    (D.HOLD, C.HOLD_POSITION), (D.ABSTAIN_UNCERTAIN, C.HOLD_POSITION),
    (D.YIELD_TO_PILOT, C.NONE), (D.ENGAGE_KILL, C.KILL), (D.PROCEED, C.VELOCITY_SETPOINT),
    (D.HOLD, C.CONTINUE_MISSION)])
def test_everything_else_holds(decision: D, command: C) -> None:
    verdict = _verdict(decision, command)
    assert (verdict.action, verdict.reason) == (GateAction.HELD, GateReason.DECISION_NOT_PROCEED)


def test_land_and_rtl_are_vehicle_commands() -> None:
    assert _verdict(D.ENGAGE_LAND, C.LAND) == GateVerdict(
        GateAction.VEHICLE_COMMAND, GateReason.LAND, VEHICLE_CMD_NAV_LAND)
    assert _verdict(D.ENGAGE_RTL, C.RETURN_TO_LAUNCH) == GateVerdict(
        GateAction.VEHICLE_COMMAND, GateReason.RETURN_TO_LAUNCH, VEHICLE_CMD_NAV_RETURN_TO_LAUNCH)


def test_fail_closed_before_the_first_actuation_and_after_the_timeout() -> None:
    assert gate_verdict(None, 0, TIMEOUT).reason is GateReason.NO_ACTUATION
    assert _verdict(D.PROCEED, C.CONTINUE_MISSION, TIMEOUT).action is GateAction.PASSED
    stale = _verdict(D.PROCEED, C.CONTINUE_MISSION, TIMEOUT + 1)
    assert (stale.action, stale.reason) == (GateAction.HELD, GateReason.ACTUATION_STALE)


def test_a_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match='gate timeout must be positive'):
        gate_verdict(None, 0, 0)
