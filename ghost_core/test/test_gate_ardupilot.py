"""The ArduPilot gate's rule and GATE-v1 on its records: the mode a decision names, no other."""

from __future__ import annotations

from dataclasses import replace

from ghost_core_test.strategies import GateRecordView
import pytest

from ghost_core.contracts import GateEmission
from ghost_core.gate import (
    ardupilot_mode_for,
    ardupilot_verdict,
    COPTER_BRAKE,
    COPTER_LAND,
    COPTER_LOITER,
    COPTER_RTL,
    GateAction,
    GateReason,
    LatestActuation,
)
from ghost_core.gate_property import CitedActuationView, judge_gate
from ghost_core.gate_property import GateViolationKind as K
from ghost_core.levels import ActuatorCommandKind as C
from ghost_core.levels import DecisionKind as D

SHA = 'a' * 64
CYCLE = 2_000_000_000
SENT = CYCLE + 150_000_000
TIMEOUT = 500_000_000


@pytest.mark.parametrize(('decision', 'command', 'hold', 'expected'), [
    (D.HOLD, C.HOLD_POSITION, COPTER_BRAKE, COPTER_BRAKE),
    (D.HOLD, C.HOLD_POSITION, COPTER_LOITER, COPTER_LOITER),
    (D.ABSTAIN_UNCERTAIN, C.NONE, COPTER_BRAKE, COPTER_BRAKE),
    (D.ENGAGE_LAND, C.LAND, COPTER_LOITER, COPTER_LAND),
    (D.ENGAGE_RTL, C.RETURN_TO_LAUNCH, COPTER_BRAKE, COPTER_RTL),
    (D.ENGAGE_KILL, C.KILL, COPTER_BRAKE, COPTER_BRAKE),
])
def test_a_decision_that_does_not_proceed_names_a_copter_mode(decision: int, command: int,
                                                              hold: int, expected: int) -> None:
    """HOLD and ABSTAIN ask for the hold mode, LAND for LAND, RTL for RTL; never a kill."""
    verdict = ardupilot_verdict(LatestActuation(decision, command, CYCLE), SENT, TIMEOUT, hold)
    assert verdict.action is GateAction.VEHICLE_COMMAND
    assert verdict.vehicle_command == expected == ardupilot_mode_for(command, hold)


def test_proceed_passes_and_silence_names_no_mode() -> None:
    """PROCEED passes; no actuation or a stale one is a plain hold (Copter stops by itself)."""
    proceed = LatestActuation(D.PROCEED, C.CONTINUE_MISSION, CYCLE)
    assert ardupilot_verdict(proceed, SENT, TIMEOUT, COPTER_BRAKE).action is GateAction.PASSED
    assert ardupilot_verdict(None, SENT, TIMEOUT, COPTER_BRAKE).reason is GateReason.NO_ACTUATION
    stale = ardupilot_verdict(proceed, CYCLE + TIMEOUT + 1, TIMEOUT, COPTER_BRAKE)
    assert (stale.action, stale.reason) == (GateAction.HELD, GateReason.ACTUATION_STALE)
    hold = LatestActuation(D.HOLD, C.HOLD_POSITION, CYCLE)
    assert ardupilot_verdict(hold, CYCLE + TIMEOUT + 1, TIMEOUT, COPTER_BRAKE).action \
        is GateAction.HELD


def test_a_hold_mode_other_than_brake_or_loiter_is_refused() -> None:
    """LAND is not a hold mode: the gate's configuration is checked where it is used."""
    with pytest.raises(ValueError, match='BRAKE'):
        ardupilot_mode_for(C.HOLD_POSITION, COPTER_LAND)


ASKED = GateRecordView(
    gate='/ghost/gate', stamp_ns=SENT, action=GateAction.VEHICLE_COMMAND,
    reason=GateReason.DECISION_NOT_PROCEED, output_topic='/ap/mode_switch', has_actuation=True,
    actuation_stamp_ns=CYCLE, rationale_sha256=SHA, decision_kind=D.HOLD,
    command_kind=C.HOLD_POSITION, actuation_received_ns=CYCLE, timeout_s=0.5,
    velocity=(0.0, 0.0, 0.0), mode='ardupilot', vehicle_command=COPTER_BRAKE)
HOLD = CitedActuationView(D.HOLD, C.HOLD_POSITION, SHA)
LAND = CitedActuationView(D.ENGAGE_LAND, C.LAND, SHA)


@pytest.mark.parametrize(('record', 'cited', 'kinds'), [
    (ASKED, HOLD, []),
    (replace(ASKED, vehicle_command=COPTER_LOITER), HOLD, []),
    (replace(ASKED, vehicle_command=COPTER_LAND, decision_kind=D.ENGAGE_LAND,
             command_kind=C.LAND, reason=GateReason.LAND), LAND, []),
    (replace(ASKED, vehicle_command=COPTER_RTL), HOLD, [K.VEHICLE_COMMAND_MISMATCH]),
    (replace(ASKED, vehicle_command=COPTER_BRAKE, decision_kind=D.ENGAGE_LAND,
             command_kind=C.LAND, reason=GateReason.LAND), LAND, [K.VEHICLE_COMMAND_MISMATCH]),
    (replace(ASKED, vehicle_command=4), HOLD, [K.INVALID_VEHICLE_COMMAND]),  # GUIDED
    (replace(ASKED, vehicle_command=21), HOLD, [K.INVALID_VEHICLE_COMMAND]),  # PX4's land
])
def test_gate_v1_judges_the_mode_asked_against_the_actuation(
        record: GateRecordView, cited: CitedActuationView, kinds: list[K]) -> None:
    """G6 in ardupilot mode: BRAKE/LOITER for a hold, LAND, RTL; any other mode is a fault."""
    assert [v.kind for v in judge_gate(record, (cited,))] == kinds


def _emission(**fields: object) -> GateEmission:
    base: dict[str, object] = dict(
        stamp_ns=SENT, frame_id='', action=GateAction.VEHICLE_COMMAND,
        reason=GateReason.DECISION_NOT_PROCEED, mode='ardupilot', output_topic='/ap/mode_switch',
        timeout_s=0.5, has_actuation=True, actuation_stamp_ns=CYCLE, rationale_sha256=SHA,
        decision_kind=D.HOLD, command_kind=C.HOLD_POSITION, actuation_received_ns=CYCLE,
        vehicle_command=COPTER_BRAKE, mode_asked=COPTER_BRAKE, mode_answer=1,
        vehicle_mode=COPTER_BRAKE)
    base.update(fields)
    return GateEmission(**base)  # type: ignore[arg-type]


def test_the_record_carries_the_vehicles_answer_only_in_ardupilot_mode() -> None:
    """An answer needs a mode asked; the other modes carry none; PX4's ids are not modes."""
    assert _emission().mode_answer == 1
    with pytest.raises(ValueError, match='mode_answer'):
        _emission(mode_asked=0)
    with pytest.raises(ValueError, match='mode_answer'):
        _emission(mode_answer=7)
    with pytest.raises(ValueError, match='mode_asked'):
        _emission(mode_asked=4)
    with pytest.raises(ValueError, match='vehicle_command'):
        _emission(vehicle_command=21)
    with pytest.raises(ValueError, match='0 in twist mode'):
        _emission(mode='twist', action=GateAction.HELD, vehicle_command=0)
