"""Decision contracts in use (ADR-0021): policies, the rationale, and decision sinks."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from ghost_core.contracts import Decision, DecisionContext, DecisionRationale
from ghost_core.errors import ContractError
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.wire import message_address

__all__ = [
    'DECISION_TABLE',
    'REASON_NO_SELF_ASSESSMENT',
    'REFERENCE_POLICY_ID',
    'Policy',
    'UncertaintyAwareReferencePolicy',
    'decide_with_rationale',
]

#: policy_id of the reference decision policy.
REFERENCE_POLICY_ID = 'uncertainty_aware_reference_v1'

#: The reference decision table (ADR-0021/0027), on the level acted on.
DECISION_TABLE: Mapping[SelfAssessmentLevel, DecisionKind] = MappingProxyType({
    SelfAssessmentLevel.KNOWN: DecisionKind.PROCEED,
    SelfAssessmentLevel.UNCERTAIN: DecisionKind.HOLD,
    SelfAssessmentLevel.UNKNOWN: DecisionKind.ABSTAIN_UNCERTAIN,
})

#: Reason of the reference policy when the context holds no assessment at all.
REASON_NO_SELF_ASSESSMENT = 'no_self_assessment'


@runtime_checkable
class Policy(Protocol):
    """A decision policy: a pure function from a DecisionContext to a Decision."""

    @property
    def policy_id(self) -> str:
        """Taxonomy string identifying the policy."""
        ...

    def decide(self, context: DecisionContext) -> Decision:
        """Return the decision for `context`, stamped with context.stamp_ns."""
        ...


class UncertaintyAwareReferencePolicy:
    """Reference policy: KNOWN->PROCEED, UNCERTAIN->HOLD, UNKNOWN->ABSTAIN_UNCERTAIN.

    Decides on the adjusted (calibrated) level when the context has one, else on the raw
    level; the reason says which (adjusted_level_known, raw_level_uncertain, ...). Without
    any assessment it abstains (no_self_assessment). Ignores the flight status, mission
    status and perception mode (ADR-0021): they are recorded in the rationale, not acted on.
    Never uses YIELD_TO_PILOT or ENGAGE_*: those stay available to other policies.
    """

    __slots__ = ()

    @property
    def policy_id(self) -> str:
        """The reference policy's id, uncertainty_aware_reference_v1."""
        return REFERENCE_POLICY_ID

    def decide(self, context: DecisionContext) -> Decision:
        """Return the reference decision for `context` (pure)."""
        if context.calibrated_assessment is not None:
            level = context.calibrated_assessment.adjusted_overall_level
            source = 'adjusted'
        elif context.self_assessment is not None:
            level = context.self_assessment.overall_level
            source = 'raw'
        else:
            return Decision(DecisionKind.ABSTAIN_UNCERTAIN, context.stamp_ns,
                            REASON_NO_SELF_ASSESSMENT)
        return Decision(DECISION_TABLE[level], context.stamp_ns,
                        f'{source}_level_{level.name.lower()}')

    def __eq__(self, other: object) -> bool:
        """Return True for any other instance: the policy has no state."""
        return isinstance(other, UncertaintyAwareReferencePolicy)

    def __hash__(self) -> int:
        """Return a hash consistent with __eq__."""
        return hash(REFERENCE_POLICY_ID)

    def __repr__(self) -> str:
        """Return the constructor call."""
        return 'UncertaintyAwareReferencePolicy()'


def decide_with_rationale(policy: Policy, context: DecisionContext,
                          addresses: tuple[str, str] | None = None) -> DecisionRationale:
    """Run `policy` on `context` and return the decision with its rationale (pure).

    self_assessment_sha256 = H(raw assessment) and calibrated_assessment_sha256 =
    H(calibrated assessment), each None when the context has none; the flight status,
    mission status and perception mode are the context's (ADR-0021 §2). `addresses` gives both
    when the caller has them already (a node hashes the message it received); it requires a
    calibrated assessment in the context.
    """
    decision = policy.decide(context)
    raw, calibrated = context.self_assessment, context.calibrated_assessment
    raw_sha: str | None
    calibrated_sha: str | None
    if addresses is not None:
        if calibrated is None:
            raise ContractError('decide_with_rationale: addresses given for a context without a '
                                'calibrated assessment')
        raw_sha, calibrated_sha = addresses
    else:
        raw_sha = None if raw is None else message_address(raw)
        calibrated_sha = None if calibrated is None else message_address(calibrated)
    return DecisionRationale(
        stamp_ns=context.stamp_ns,
        frame_id=context.frame_id,
        decision=decision,
        self_assessment_sha256=raw_sha,
        calibrated_assessment_sha256=calibrated_sha,
        policy_id=policy.policy_id,
        flight_status=context.flight_status,
        mission_status=context.mission_status,
        perception_mode=context.perception_mode,
        vehicle_status_stamp_ns=context.vehicle_status_stamp_ns,
    )
