"""Action emission (ADR-0023): the contract that turns a decision into an actuation."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from ghost_core.contracts import ActionEmission, ActuatorCommand, DecisionRationale
from ghost_core.levels import ActuatorCommandKind, DecisionKind
from ghost_core.wire import message_address

__all__ = [
    'EMISSION_TABLE',
    'REFERENCE_EMISSION_CONTRACT_ID',
    'ActionEmissionContract',
    'ReferenceActionEmissionContract',
    'emit_reference_action',
]

#: contract_id of the reference emission contract.
REFERENCE_EMISSION_CONTRACT_ID = 'reference_action_emission_v1'

#: The reference emission table: every DecisionKind to the command kind that executes it.
EMISSION_TABLE: Mapping[DecisionKind, ActuatorCommandKind] = MappingProxyType({
    DecisionKind.PROCEED: ActuatorCommandKind.CONTINUE_MISSION,
    DecisionKind.HOLD: ActuatorCommandKind.HOLD_POSITION,
    DecisionKind.YIELD_TO_PILOT: ActuatorCommandKind.NONE,
    DecisionKind.ENGAGE_RTL: ActuatorCommandKind.RETURN_TO_LAUNCH,
    DecisionKind.ENGAGE_LAND: ActuatorCommandKind.LAND,
    DecisionKind.ENGAGE_KILL: ActuatorCommandKind.KILL,
    DecisionKind.ABSTAIN_UNCERTAIN: ActuatorCommandKind.NONE,
})


@runtime_checkable
class ActionEmissionContract(Protocol):
    """Turns the rationale of a decision into the actuation that executes it (pure)."""

    @property
    def contract_id(self) -> str:
        """Taxonomy string identifying the emission contract."""
        ...

    def emit(self, rationale: DecisionRationale) -> ActionEmission:
        """Return the actuation executing rationale.decision, hash-linked to `rationale`."""
        ...


def emit_reference_action(rationale: DecisionRationale,
                          rationale_sha256: str | None = None) -> ActionEmission:
    """Return the reference actuation of `rationale` (pure).

    The command kind comes from EMISSION_TABLE, the velocity is zero, the decision is carried
    inline and rationale_sha256 = H(rationale) (given when the caller has it already, hashed
    from the message it received); the stamp and frame are the rationale's.
    """
    return ActionEmission(
        stamp_ns=rationale.stamp_ns,
        frame_id=rationale.frame_id,
        decision=rationale.decision,
        rationale_sha256=(message_address(rationale) if rationale_sha256 is None
                          else rationale_sha256),
        command=ActuatorCommand(EMISSION_TABLE[rationale.decision.kind]),
        contract_id=REFERENCE_EMISSION_CONTRACT_ID,
    )


class ReferenceActionEmissionContract:
    """The reference emission contract, reference_action_emission_v1, as an object."""

    __slots__ = ()

    @property
    def contract_id(self) -> str:
        """The reference contract's id, reference_action_emission_v1."""
        return REFERENCE_EMISSION_CONTRACT_ID

    def emit(self, rationale: DecisionRationale) -> ActionEmission:
        """Return emit_reference_action(rationale)."""
        return emit_reference_action(rationale)
