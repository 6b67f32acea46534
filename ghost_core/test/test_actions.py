"""Reference action emission contract (ADR-0023): table, zero velocity, rationale hash."""

from __future__ import annotations

from ghost_core_test import examples as ex
import pytest

from ghost_core.actions import (
    ActionEmissionContract,
    EMISSION_TABLE,
    emit_reference_action,
    REFERENCE_EMISSION_CONTRACT_ID,
    ReferenceActionEmissionContract,
)
from ghost_core.levels import ActuatorCommandKind, DecisionKind
from ghost_core.wire import message_address

EXPECTED = {
    DecisionKind.PROCEED: ActuatorCommandKind.CONTINUE_MISSION,
    DecisionKind.HOLD: ActuatorCommandKind.HOLD_POSITION,
    DecisionKind.ABSTAIN_UNCERTAIN: ActuatorCommandKind.NONE,
    DecisionKind.YIELD_TO_PILOT: ActuatorCommandKind.NONE,
    DecisionKind.ENGAGE_RTL: ActuatorCommandKind.RETURN_TO_LAUNCH,
    DecisionKind.ENGAGE_LAND: ActuatorCommandKind.LAND,
    DecisionKind.ENGAGE_KILL: ActuatorCommandKind.KILL,
}


def test_emission_table_covers_every_decision_kind() -> None:
    """The table is total over the closed catalogue and matches SPEC section 5."""
    assert dict(EMISSION_TABLE) == EXPECTED


@pytest.mark.parametrize('kind', list(DecisionKind))
def test_emission_executes_the_decision(kind: DecisionKind) -> None:
    """Command kind from the table, zero velocity, decision inline, H(rationale) linked."""
    rationale = ex.rationale(kind)
    emission = emit_reference_action(rationale)
    assert emission.command.kind is EXPECTED[kind]
    assert emission.command.linear_velocity == emission.command.angular_velocity == (
        0.0, 0.0, 0.0)
    assert emission.decision == rationale.decision
    assert emission.rationale_sha256 == message_address(rationale)
    assert emission.contract_id == REFERENCE_EMISSION_CONTRACT_ID == \
        'reference_action_emission_v1'
    assert (emission.stamp_ns, emission.frame_id) == (rationale.stamp_ns, rationale.frame_id)


def test_only_proceed_is_non_conservative() -> None:
    """Among the reference emissions, only PROCEED moves the vehicle on its mission."""
    moving = {kind for kind, command in EMISSION_TABLE.items()
              if command in (ActuatorCommandKind.CONTINUE_MISSION,
                             ActuatorCommandKind.VELOCITY_SETPOINT)}
    assert moving == {DecisionKind.PROCEED}


def test_reference_contract_object() -> None:
    """The contract object satisfies the protocol and emits like the function."""
    contract = ReferenceActionEmissionContract()
    assert isinstance(contract, ActionEmissionContract)
    assert contract.contract_id == REFERENCE_EMISSION_CONTRACT_ID
    assert contract.emit(ex.rationale()) == emit_reference_action(ex.rationale())
