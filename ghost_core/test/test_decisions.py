"""Decision layer (ADR-0021): the reference policy, rationale hashes, and sinks."""

from __future__ import annotations

import dataclasses

from ghost_core_test import examples as ex
import pytest

from ghost_core.contracts import Decision, DecisionContext
from ghost_core.decisions import (
    decide_with_rationale,
    DECISION_TABLE,
    Policy,
    REFERENCE_POLICY_ID,
    UncertaintyAwareReferencePolicy,
)
from ghost_core.errors import ContractError
from ghost_core.hashing import canonical_json
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.wire import message_address, to_msg_dict

KNOWN, UNCERTAIN, UNKNOWN = SelfAssessmentLevel
POLICY = UncertaintyAwareReferencePolicy()


def test_decision_table() -> None:
    """KNOWN -> PROCEED, UNCERTAIN -> HOLD, UNKNOWN -> ABSTAIN_UNCERTAIN."""
    assert dict(DECISION_TABLE) == {KNOWN: DecisionKind.PROCEED, UNCERTAIN: DecisionKind.HOLD,
                                    UNKNOWN: DecisionKind.ABSTAIN_UNCERTAIN}


@pytest.mark.parametrize(('adjusted', 'kind', 'reason'), [
    (KNOWN, DecisionKind.PROCEED, 'adjusted_level_known'),
    (UNCERTAIN, DecisionKind.HOLD, 'adjusted_level_uncertain'),
    (UNKNOWN, DecisionKind.ABSTAIN_UNCERTAIN, 'adjusted_level_unknown'),
])
def test_reference_policy_decides_on_the_adjusted_level(
    adjusted: SelfAssessmentLevel, kind: DecisionKind, reason: str
) -> None:
    """The calibrated (adjusted) level decides, whatever the raw level says."""
    calibrated = dataclasses.replace(ex.calibrated(KNOWN), adjusted_overall_level=adjusted)
    decision = POLICY.decide(DecisionContext.from_calibrated(calibrated, None))
    assert decision == Decision(kind, ex.STAMP_NS, reason)


def test_reference_policy_on_raw_only() -> None:
    """Without calibration the raw level decides, and the reason says so."""
    decision = POLICY.decide(DecisionContext.from_raw(ex.raw(UNCERTAIN), None))
    assert (decision.kind, decision.reason) == (DecisionKind.HOLD, 'raw_level_uncertain')


def test_reference_policy_abstains_without_assessment() -> None:
    """No assessment at all: ABSTAIN_UNCERTAIN, reason no_self_assessment."""
    decision = POLICY.decide(DecisionContext(ex.STAMP_NS, 'map', *ex.UNKNOWN_VEHICLE))
    assert (decision.kind, decision.reason) == (DecisionKind.ABSTAIN_UNCERTAIN,
                                                'no_self_assessment')


def test_rationale_hashes_both_assessments() -> None:
    """self_assessment_sha256 = H(raw), calibrated_assessment_sha256 = H(calibrated)."""
    calibrated = ex.calibrated()
    rationale = decide_with_rationale(POLICY, DecisionContext.from_calibrated(calibrated, None))
    assert rationale.self_assessment_sha256 == message_address(calibrated.raw_assessment)
    assert rationale.calibrated_assessment_sha256 == message_address(calibrated)
    assert rationale.policy_id == REFERENCE_POLICY_ID
    assert REFERENCE_POLICY_ID == 'uncertainty_aware_reference_v1'
    assert rationale.stamp_ns == rationale.decision.decision_stamp_ns == ex.STAMP_NS
    assert rationale.frame_id == calibrated.frame_id


def test_rationale_claims_only_what_the_context_had() -> None:
    """Raw only: no calibrated hash; nothing: no hash at all."""
    raw_only = decide_with_rationale(POLICY, DecisionContext.from_raw(ex.raw(), None))
    assert raw_only.self_assessment_sha256 == message_address(ex.raw())
    assert raw_only.calibrated_assessment_sha256 is None
    bare = decide_with_rationale(
        POLICY, DecisionContext(ex.STAMP_NS, 'map', *ex.UNKNOWN_VEHICLE))
    assert bare.self_assessment_sha256 is None is bare.calibrated_assessment_sha256


def test_decide_with_rationale_is_pure() -> None:
    """Same (policy, context) gives byte-equal canonical JSON."""
    context = DecisionContext.from_calibrated(ex.calibrated(), None)
    first = decide_with_rationale(POLICY, context)
    second = decide_with_rationale(UncertaintyAwareReferencePolicy(), context)
    assert canonical_json(to_msg_dict(first)) == canonical_json(to_msg_dict(second))


class LatePolicy:
    """A broken policy that stamps its decision one ns late."""

    policy_id = 'late_policy_v1'

    def decide(self, context: DecisionContext) -> Decision:
        """Return a decision for the wrong cycle."""
        return Decision(DecisionKind.HOLD, context.stamp_ns + 1, 'late')


def test_a_decision_for_another_cycle_cannot_be_justified() -> None:
    """The rationale contract refuses a decision whose stamp differs from the context's."""
    with pytest.raises(ContractError, match='decision_stamp_ns'):
        decide_with_rationale(LatePolicy(), DecisionContext.from_raw(ex.raw(), None))


def test_protocols_are_runtime_checkable() -> None:
    """The reference policy is a Policy."""
    assert isinstance(POLICY, Policy)
    assert isinstance(LatePolicy(), Policy)
    assert UncertaintyAwareReferencePolicy() == POLICY
